// runplanectl compare A B ... : the Compare view of 2-10 runs from the history, written as files
// (--csv, --html, --md, --png) without opening a window. The drawing is the GUI's own (Qt and
// QCustomPlot), and runplanectl does not link Qt, so this command runs the `runplane` executable
// headless (`runplane --history H --report TMP --runs A,B,...`, offscreen platform, no display
// needed) and copies the files it wrote to the places asked for. It looks for `runplane` in
// $RUNPLANE_GUI, then beside runplanectl (an install), then at ../../gui/app/runplane (the build
// tree). Exit status: 0 done, 1 a run or the history could not be read, 2 usage / I/O / no GUI.
#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct CompareOptions {
    std::vector<std::string> runs;
    std::string history;
    std::string csv;
    std::string html;
    std::string md;
    std::string png;
    std::string metric;
    std::string baseline;   // the run the report's deltas are against (issue 49)
    std::string groupBy;    // "tags" or a recipe field: one curve per group (issue 49)
    std::string smoothing;  // the curves' EMA weight, passed on as written ("" = the default)
};

constexpr std::size_t kMinRuns = 2;
constexpr std::size_t kMaxRuns = 10;

bool isExecutable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// The runplane executable, or "" with `tried` listing where it looked.
fs::path findRunplane(std::vector<std::string>& tried) {
    if (const char* env = std::getenv("RUNPLANE_GUI"); env != nullptr && *env != '\0') {
        tried.emplace_back(std::string(env) + " ($RUNPLANE_GUI)");
        return isExecutable(env) ? fs::path(env) : fs::path();
    }
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return {};
    }
    for (const fs::path& candidate :
         {self.parent_path() / "runplane",
          self.parent_path().parent_path().parent_path() / "gui" / "app" / "runplane"}) {
        tried.push_back(candidate.lexically_normal().string());
        if (isExecutable(candidate)) {
            return candidate;
        }
    }
    return {};
}

/// The report's plot file of `metric` (the same naming as gui/app/compare_report.cpp plotFile:
/// every character but letters, digits, '-' and '.' becomes '_').
std::string plotFile(const std::string& metric) {
    std::string name = metric;
    for (char& c : name) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.';
        if (!keep) {
            c = '_';
        }
    }
    return "compare_" + name + ".png";
}

/// Runs argv, stdout to /dev/null (the child's "wrote ..." lines are about its temporary
/// directory), stderr passed through. Returns the exit status, or -1 when it could not start.
int runChild(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        return -1;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool copyTo(const fs::path& from, const fs::path& to, std::vector<std::string>& written) {
    std::error_code ec;
    if (to.has_parent_path()) {
        fs::create_directories(to.parent_path(), ec);
    }
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
        std::cerr << "runplanectl compare: " << to.string() << ": cannot write: " << ec.message()
                  << "\n";
        return false;
    }
    written.push_back(to.string());
    return true;
}

/// A report page (html / md) and the plots it references, which go beside it.
bool copyPage(const fs::path& tmp, const std::string& page, const fs::path& to,
              std::vector<std::string>& written) {
    if (!copyTo(tmp / page, to, written)) {
        return false;
    }
    for (const auto& entry : fs::directory_iterator(tmp)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("compare_", 0) == 0 && entry.path().extension() == ".png" &&
            !copyTo(entry.path(), to.parent_path() / name, written)) {
            return false;
        }
    }
    return true;
}

int runCompare(const CompareOptions& o) {
    if (o.csv.empty() && o.html.empty() && o.md.empty() && o.png.empty()) {
        std::cerr << "runplanectl compare: give at least one of --csv, --html, --md, --png\n";
        return 2;
    }
    if (o.runs.size() < kMinRuns || o.runs.size() > kMaxRuns) {
        std::cerr << "runplanectl compare: RUNS: give " << kMinRuns << " to " << kMaxRuns
                  << " run ids, got " << o.runs.size() << "\n";
        return 2;
    }
    std::error_code ec;
    if (!fs::exists(o.history, ec)) {
        std::cerr << "runplanectl compare: --history " << o.history << ": no such history file\n";
        return 1;
    }
    std::vector<std::string> tried;
    const fs::path gui = findRunplane(tried);
    if (gui.empty()) {
        std::cerr << "runplanectl compare: the `runplane` executable (built with the GUI) draws "
                     "the comparison, and it was not found; looked at:";
        for (const std::string& t : tried) {
            std::cerr << " " << t;
        }
        std::cerr << ". Build the runplane target or set $RUNPLANE_GUI.\n";
        return 2;
    }
    std::string tmpl = (fs::temp_directory_path(ec) / "runplanectl-compare-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
        std::cerr << "runplanectl compare: cannot create a temporary directory in "
                  << fs::temp_directory_path(ec).string() << "\n";
        return 2;
    }
    const fs::path tmp = tmpl;
    std::string runs;
    for (const std::string& r : o.runs) {
        runs += (runs.empty() ? "" : ",") + r;
    }
    std::vector<std::string> args = {
        gui.string(), "--history", fs::absolute(o.history, ec).string(), "--report", tmp.string(),
        "--runs",     runs};
    if (!o.baseline.empty()) {
        args.insert(args.end(), {"--baseline", o.baseline});
    }
    if (!o.groupBy.empty()) {
        args.insert(args.end(), {"--group-by", o.groupBy});
    }
    if (!o.smoothing.empty()) {
        args.insert(args.end(), {"--smoothing", o.smoothing});  // runplane checks the value
    }
    const int rc = runChild(args);
    int status = 0;
    std::vector<std::string> written;
    if (rc != 0) {
        std::cerr << "runplanectl compare: " << gui.string()
                  << (rc < 0 ? " could not be started" : " --report failed (see above)") << "\n";
        status = rc == 1 ? 1 : 2;
    } else {
        bool ok = true;
        if (!o.csv.empty()) {
            ok = ok && copyTo(tmp / "compare.csv", o.csv, written);
        }
        if (ok && !o.html.empty()) {
            ok = copyPage(tmp, "report.html", o.html, written);
        }
        if (ok && !o.md.empty()) {
            ok = copyPage(tmp, "report.md", o.md, written);
        }
        if (ok && !o.png.empty()) {
            fs::path plot;
            if (!o.metric.empty()) {
                plot = tmp / plotFile(o.metric);
            } else {
                // The first score metric's plot (the report draws one per score-kind eval/*).
                for (const auto& entry : fs::directory_iterator(tmp)) {
                    const std::string name = entry.path().filename().string();
                    if (name.rfind("compare_", 0) == 0 && entry.path().extension() == ".png" &&
                        (plot.empty() || entry.path() < plot)) {
                        plot = entry.path();
                    }
                }
            }
            if (plot.empty() || !fs::exists(plot, ec)) {
                std::cerr << "runplanectl compare: --png: "
                          << (o.metric.empty()
                                  ? std::string("these runs have no score-kind eval/* series")
                                  : "no score-kind eval/* plot for --metric " + o.metric)
                          << "\n";
                ok = false;
            } else {
                ok = copyTo(plot, o.png, written);
            }
        }
        status = ok ? 0 : 2;
    }
    fs::remove_all(tmp, ec);
    for (const std::string& w : written) {
        std::cout << "wrote " << w << "\n";
    }
    return status;
}

const bool kCompareGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto o = std::make_shared<CompareOptions>();
        o->history = runplane::control::defaultHistoryPath();
        auto* cmd = app.add_subcommand(
            "compare",
            "Compare 2-10 runs without a window: eval score curves (debiased EMA), host-memory "
            "peaks per run, recipe diff. Drawn by the `runplane` executable run headless "
            "(looked for in $RUNPLANE_GUI, beside runplanectl, then ../../gui/app/runplane)");
        cmd->add_option("runs", o->runs, "Run ids (see `runplanectl runs`)")->required();
        cmd->add_option("--history", o->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        cmd->add_option("--csv", o->csv,
                        "Write the plotted points of every score metric (run_id, run_name, "
                        "metric, x, value, smoothed)");
        cmd->add_option("--html", o->html, "Write the report page (its plots go beside it)");
        cmd->add_option("--md", o->md, "Write the report as Markdown (its plots go beside it)");
        cmd->add_option("--png", o->png,
                        "Write one overlay plot: --metric's, else the first score metric's");
        cmd->add_option("--metric", o->metric, "The eval metric of --png, e.g. eval/gsm8k");
        cmd->add_option("--baseline", o->baseline,
                        "The run the deltas are against (one of the runs; default: the first)");
        cmd->add_option("--group-by", o->groupBy,
                        "Group the runs: tags, or a recipe field that differs (mean, min-max band "
                        "per group in the plots, and the report's Groups table)");
        cmd->add_option("--smoothing", o->smoothing,
                        "The curves' EMA weight, 0 (none) to 0.99 (default 0.6, as the Compare "
                        "page)");
        cmd->callback([o, &context] { context.exitCode = runCompare(*o); });
    });

}  // namespace
