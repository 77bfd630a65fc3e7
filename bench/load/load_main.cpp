// bench_load (issue 20, docs/performance.md "Load"): N simulated nodes (bench/load/sim_cluster.h)
// drive one real controller (a child process: the GUI's ClusterPage + RunsPage offscreen, or
// the bare control::Controller) that writes a real SQLite history. Per second: ingest lag
// p50/p99 (ack time - sample time), samples stored, spool backlog, the controller's RSS, the
// latency of a history reader, and the GUI pages' paint times. At the end: every sample of every
// series is read back (0 lost, 0 duplicated). Prints a self-describing JSON report.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/load/controller_child.h"
#include "bench/load/load_stats.h"
#include "bench/load/sim_cluster.h"
#include "common/thread_role.h"
#include "db/history/history.h"

namespace fs = std::filesystem;
using namespace runplane;
using namespace runplane::bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
    int nodes = 256;
    double hz = 10;
    int series = 32;
    int seconds = 600;
    std::string controller = "gui";
    std::string workdir;
    std::string report;
    bool check = false;
    int drainSeconds = 120;
    bool sigtermUnderLoad = false;
    bool inlineCheckpoints = false;
    bool unsyncedCommits = false;
    int clusterNice = 0;
    int backgroundNice = threads::kGuiBackgroundNice;
    int guiSliceUs = 0;
    bool paintApart = false;
    bool paintIntoOneImage = false;
    bool platformStyle = false;
    bool styledDelegates = false;
    std::string savePages;
};

long rssKiB(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

// CPU seconds (user + system) of a process, or of one of its threads, from /proc (-1 if gone).
double cpuSeconds(const std::string& statPath) {
    std::ifstream in(statPath);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');  // the command name may hold spaces
    if (paren == std::string::npos) {
        return -1;
    }
    std::istringstream fields(text.substr(paren + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14 || i == 15) {  // utime, stime
            ticks += std::stod(field);
        }
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU seconds of a process' threads by thread name (/proc/PID/task/*/comm: "history-writer",
// "ingest", ...; unnamed threads carry the program's name).
std::map<std::string, double> cpuByThreadName(int pid) {
    std::map<std::string, double> out;
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        const double cpu = cpuSeconds((task.path() / "stat").string());
        if (!name.empty() && cpu >= 0) {
            out[name] += cpu;
        }
    }
    return out;
}

// Lowers every thread of this process but the calling one (the simulated nodes' gRPC threads,
// the generator, the probes) to `nice` (Linux's nice is per thread; a thread they start
// inherits it). The calling thread keeps its priority, so a controller it forks later does not
// inherit it. Returns how many threads were lowered.
int reniceOtherThreads(int nice) {
    const auto self = static_cast<pid_t>(syscall(SYS_gettid));
    int lowered = 0;
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
        const auto tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
        if (tid != self && setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) == 0) {
            ++lowered;
        }
    }
    return lowered;
}

std::string firstLine(const std::string& path, const std::string& prefix) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(prefix, 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    }
    return {};
}

// The child: this binary again, in --child mode, its stdout a pipe read by a thread.
struct Child {
    pid_t pid = -1;
    int out = -1;
};

Child spawnChild(const Args& args, const std::string& profile, const std::string& history,
                 const std::string& runId) {
    int fds[2];
    if (pipe(fds) != 0) {
        return {};
    }
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        std::vector<std::string> argv = {"/proc/self/exe", "--child",  args.controller,
                                         "--profile",      profile,    "--history",
                                         history,          "--run-id", runId};
        if (args.inlineCheckpoints) {
            argv.emplace_back("--inline-checkpoints");
        }
        if (args.unsyncedCommits) {
            argv.emplace_back("--unsynced-commits");
        }
        argv.emplace_back("--background-nice");
        argv.emplace_back(std::to_string(args.backgroundNice));
        argv.emplace_back("--gui-slice-us");
        argv.emplace_back(std::to_string(args.guiSliceUs));
        if (args.paintApart) {
            argv.emplace_back("--paint-apart");
        }
        if (args.paintIntoOneImage) {
            argv.emplace_back("--paint-into-one-image");
        }
        if (args.platformStyle) {
            argv.emplace_back("--platform-style");
        }
        if (args.styledDelegates) {
            argv.emplace_back("--styled-delegates");
        }
        if (!args.savePages.empty()) {
            argv.emplace_back("--save-pages");
            argv.emplace_back(args.savePages);
        }
        std::vector<char*> raw;
        for (auto& a : argv) {
            raw.push_back(a.data());
        }
        raw.push_back(nullptr);
        execv("/proc/self/exe", raw.data());
        _exit(127);
    }
    close(fds[1]);
    return Child{pid, fds[0]};
}

int stopChild(pid_t pid) {
    kill(pid, SIGTERM);
    for (int i = 0; i < 300; ++i) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    return 137;
}

// Reads the history once a second on its own connection, as a second GUI or `runplanectl`
// would: the newest minute of one node's memory series at plot width, and the run list.
class HistoryProbe {
  public:
    HistoryProbe(std::string path, std::string nodeId)
        : m_path(std::move(path)), m_nodeId(std::move(nodeId)) {
        m_thread = std::thread([this] { loop(); });
    }
    ~HistoryProbe() { stop(); }
    void stop() {
        m_stop = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }
    std::vector<double> take() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_latencies, {});
    }
    std::uint64_t failures() const { return m_failures; }
    std::string lastError() {
        std::lock_guard lock(m_mutex);
        return m_error;
    }

  private:
    void loop() {
        std::unique_ptr<db::History> history;
        while (!m_stop) {
            const auto begin = Clock::now();
            std::string error;
            if (!history) {
                auto h = db::History::open(m_path, db::OpenOptions{true, 5000});
                if (h) {
                    history = std::move(*h);
                } else {
                    error = h.error();
                }
            }
            if (history) {
                error = query(*history);
            }
            const double ms =
                std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
            {
                std::lock_guard lock(m_mutex);
                if (error.empty()) {
                    m_latencies.push_back(ms);
                } else {
                    ++m_failures;
                    m_error = error;
                }
            }
            std::this_thread::sleep_until(begin + std::chrono::seconds(1));
        }
    }
    std::string query(db::History& history) {
        auto runs = history.listRuns();
        if (!runs) {
            return runs.error();
        }
        auto id = history.findSeries(NodeId{m_nodeId}, RunId(), SimCluster::seriesName(0));
        if (!id) {
            return id.error();
        }
        if (!*id) {
            return {};  // not ingested yet: the run list was read
        }
        const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
        auto points = history.querySeries(db::SeriesQuery{**id, now - 60'000'000'000, now, 1400});
        return points ? std::string() : points.error();
    }

    std::string m_path, m_nodeId;
    std::atomic<bool> m_stop{false};
    std::atomic<std::uint64_t> m_failures{0};
    std::mutex m_mutex;
    std::vector<double> m_latencies;
    std::string m_error;
    std::thread m_thread;
};

// The child's JSON lines (GUI paint times), collected by a thread.
class ChildReader {
  public:
    explicit ChildReader(int fd) : m_fd(fd) {
        m_thread = std::thread([this] { loop(); });
    }
    ~ChildReader() {
        if (m_thread.joinable()) {
            m_thread.join();
        }
        close(m_fd);
    }
    std::vector<nlohmann::json> take() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_lines, {});
    }

  private:
    void loop() {
        std::string buffer;
        char chunk[4096];
        ssize_t n = 0;
        while ((n = read(m_fd, chunk, sizeof chunk)) > 0) {
            buffer.append(chunk, static_cast<std::size_t>(n));
            std::size_t nl = 0;
            while ((nl = buffer.find('\n')) != std::string::npos) {
                auto j = nlohmann::json::parse(buffer.substr(0, nl), nullptr, false);
                buffer.erase(0, nl + 1);
                if (!j.is_discarded()) {
                    std::lock_guard lock(m_mutex);
                    m_lines.push_back(std::move(j));
                }
            }
        }
    }
    int m_fd;
    std::mutex m_mutex;
    std::vector<nlohmann::json> m_lines;
    std::thread m_thread;
};

// One line per second on stderr for whoever watches the run (the report is the JSON on stdout).
void printProgress(const nlohmann::json& row) {
    const auto gui = row.value("gui", nlohmann::json::object());
    std::fprintf(stderr,
                 "t=%4d s  lag p50 %7.1f p99 %7.1f ms  stored %6llu/s  backlog %8llu  rss %7.1f "
                 "MiB  reader %6.1f ms  paint cluster %6.1f runs %6.1f ms  stall %6.1f ms\n",
                 row.value("t", 0), row.value("lag_p50_ms", 0.0), row.value("lag_p99_ms", 0.0),
                 static_cast<unsigned long long>(row.value("stored", 0ULL)),
                 static_cast<unsigned long long>(row.value("backlog", 0ULL)),
                 row.value("rss_mib", 0.0), row.value("reader_ms", 0.0),
                 gui.value("cluster_paint_ms", 0.0), gui.value("runs_paint_ms", 0.0),
                 gui.value("stall_max_ms", 0.0));
}

std::string writeProfile(const std::string& dir, const SimCluster& cluster, double hz) {
    const std::string path = dir + "/cluster.yaml";
    std::ofstream out(path);
    out << "# bench_load: simulated nodes on loopback\ntelemetry_hz: " << hz << "\nnodes:\n";
    int i = 0;
    for (const auto& address : cluster.addresses()) {
        out << "  - address: " << address << "\n    name: sim-" << i++ << "\n";
    }
    return path;
}

// A temporary directory of the bench's own, removed (with the history in it) when the run ends.
struct OwnTempDir {
    std::string path;
    OwnTempDir(const OwnTempDir&) = delete;
    OwnTempDir& operator=(const OwnTempDir&) = delete;
    OwnTempDir() = default;
    ~OwnTempDir() {
        if (!path.empty()) {
            std::error_code ignored;
            fs::remove_all(path, ignored);
        }
    }
};

int runParent(const Args& args) {
    std::string workdir = args.workdir;
    OwnTempDir ownDir;  // without --workdir: each run used to leave its history under /tmp
    if (workdir.empty()) {
        char tmpl[] = "/tmp/bench_load.XXXXXX";
        if (mkdtemp(tmpl) == nullptr) {
            std::cerr << "bench_load: cannot create a directory under /tmp\n";
            return 1;
        }
        workdir = tmpl;
        ownDir.path = workdir;
    }
    fs::create_directories(workdir);
    const std::string historyPath = workdir + "/history.sqlite";
    fs::remove(historyPath);
    const std::string runId = "load-run";

    SimCluster cluster(SimOptions{args.nodes, args.hz, args.series, runId});
    if (std::string error = cluster.start(); !error.empty()) {
        std::cerr << "bench_load: " << error << "\n";
        return 1;
    }
    const std::string profile = writeProfile(workdir, cluster, args.hz);
    {
        auto history = db::History::open(historyPath);
        if (!history) {
            std::cerr << "bench_load: " << history.error() << "\n";
            return 1;
        }
        db::RunRecord run;
        run.id = RunId{runId};
        run.name = "bench_load " + std::to_string(args.nodes) + " nodes";
        run.provenanceJson = "{}";
        run.startedNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
        run.nodes = cluster.nodeIds();
        if (Status s = (*history)->upsertRun(run); !s.ok()) {
            std::cerr << "bench_load: " << s.error() << "\n";
            return 1;
        }
    }
    Child child = spawnChild(args, profile, historyPath, runId);
    if (child.pid <= 0) {
        std::cerr << "bench_load: cannot start the controller process\n";
        return 1;
    }
    auto childOut = std::make_unique<ChildReader>(child.out);
    HistoryProbe probe(historyPath, cluster.nodeIds().front());
    LoadStats stats(LoadParams{args.nodes, args.hz, args.series, args.seconds, args.controller});
    cluster.startGenerator();
    const int reniced = args.clusterNice > 0 ? reniceOtherThreads(args.clusterNice) : 0;
    const auto t0 = Clock::now();
    // The controller's CPU over the load (all its threads, and its main = GUI thread).
    const std::string childStat = "/proc/" + std::to_string(child.pid) + "/stat";
    const std::string guiStat =
        "/proc/" + std::to_string(child.pid) + "/task/" + std::to_string(child.pid) + "/stat";
    const double cpuAtStart = cpuSeconds(childStat);
    const double guiCpuAtStart = cpuSeconds(guiStat);
    const auto threadsAtStart = cpuByThreadName(child.pid);
    for (int s = 1; s <= args.seconds; ++s) {
        std::this_thread::sleep_until(t0 + std::chrono::seconds(s));
        stats.addSecond(s, cluster.take(), rssKiB(child.pid), probe.take(), childOut->take());
        printProgress(stats.lastSecond());
    }
    const double loadSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpuDuringLoad = cpuSeconds(childStat) - cpuAtStart;
    const double guiCpuDuringLoad = cpuSeconds(guiStat) - guiCpuAtStart;
    nlohmann::json threadCores = nlohmann::json::object();
    for (const auto& [name, cpu] : cpuByThreadName(child.pid)) {
        const auto before = threadsAtStart.find(name);
        threadCores[name] =
            (cpu - (before == threadsAtStart.end() ? 0.0 : before->second)) / loadSeconds;
    }
    const std::string loadAverageAtEnd = firstLine("/proc/loadavg", "");
    // SIGTERM while the nodes still stream: how long the controller takes to end, then a new
    // one resumes every node from its committed cursor (nothing lost or doubled across it).
    double stopUnderLoadS = -1;
    int stopUnderLoadRc = 0;
    if (args.sigtermUnderLoad) {
        const auto t = Clock::now();
        stopUnderLoadRc = stopChild(child.pid);
        stopUnderLoadS = std::chrono::duration<double>(Clock::now() - t).count();
        childOut.reset();
        child = spawnChild(args, profile, historyPath, runId);
        if (child.pid <= 0) {
            std::cerr << "bench_load: cannot restart the controller process\n";
            return 1;
        }
        childOut = std::make_unique<ChildReader>(child.out);
    }
    cluster.stopGenerator();
    // Drain: everything generated must be acknowledged (committed) before the counts are read.
    const auto drainStart = Clock::now();
    bool drained = false;
    while (Clock::now() - drainStart < std::chrono::seconds(args.drainSeconds)) {
        drained = true;
        for (int i = 0; i < args.nodes; ++i) {
            drained = drained && cluster.acked(i) == cluster.generated(i);
        }
        stats.addDrain(cluster.take(), probe.take(), childOut->take());
        if (drained) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const double drainS = std::chrono::duration<double>(Clock::now() - drainStart).count();
    probe.stop();
    const long rssEnd = rssKiB(child.pid);
    // How long the controller takes to end on SIGTERM with its streams still busy.
    const auto stopStart = Clock::now();
    const int childRc = stopChild(child.pid);
    const double stopS = std::chrono::duration<double>(Clock::now() - stopStart).count();
    std::vector<std::uint64_t> generated;
    std::vector<int> watchCalls;
    std::vector<std::uint64_t> acked;
    for (int i = 0; i < args.nodes; ++i) {
        generated.push_back(cluster.generated(i));
        watchCalls.push_back(cluster.watchCalls(i));
        acked.push_back(cluster.acked(i));
    }
    const auto nodeIds = cluster.nodeIds();
    cluster.shutdown();
    Verification verified =
        verifyHistory(historyPath, nodeIds, generated, acked, args.series, runId);
    nlohmann::json report = stats.report(drained, drainS, rssEnd, childRc, verified, watchCalls,
                                         probe.failures(), probe.lastError());
    report["summary"]["controller_stop_s"] = stopS;
    // CPU the controller took while the load ran: cores = CPU seconds / wall seconds.
    report["summary"]["controller_cpu"] = {{"seconds", cpuDuringLoad},
                                           {"cores", cpuDuringLoad / loadSeconds},
                                           {"main_thread_cores", guiCpuDuringLoad / loadSeconds},
                                           {"cores_by_thread_name", threadCores},
                                           {"load_average_at_end_of_load", loadAverageAtEnd}};
    if (args.sigtermUnderLoad) {
        report["summary"]["controller_stop_under_load_s"] = stopUnderLoadS;
        report["summary"]["controller_stop_under_load_exit"] = stopUnderLoadRc;
    }
    report["cluster_nice"] = {{"nice", args.clusterNice}, {"threads", reniced}};
    report["background_nice"] = args.controller == "gui" ? args.backgroundNice : 0;
    report["gui_slice_us"] = args.controller == "gui" ? args.guiSliceUs : 0;
    report["paint_apart"] = args.controller == "gui" && args.paintApart;
    report["paint_into_one_image"] = args.controller == "gui" && args.paintIntoOneImage;
    report["platform_style"] = args.controller == "gui" && args.platformStyle;
    report["styled_delegates"] = args.controller == "gui" && args.styledDelegates;
    report["history_bytes"] = fs::exists(historyPath) ? fs::file_size(historyPath) : 0;
    report["history"] = historyPath;
    report["machine"] = {{"cpus", std::thread::hardware_concurrency()},
                         {"cpu_model", firstLine("/proc/cpuinfo", "model name")}};
    const std::string text = report.dump(2);
    std::cout << text << "\n";
    if (!args.report.empty()) {
        std::ofstream(args.report) << text << "\n";
    }
    if (args.check) {
        const bool ok = drained && verified.error.empty() && verified.lost == 0 &&
                        verified.missingBelowAck == 0 && verified.cursorsBehind == 0 &&
                        verified.duplicated == 0 && stats.guiLines() > 0 && probe.failures() == 0 &&
                        stopUnderLoadRc == 0 && childRc == 0;
        if (!ok) {
            std::cerr << "bench_load --check: FAILED (drained " << drained << ", lost "
                      << verified.lost << ", duplicated " << verified.duplicated << ", gui lines "
                      << stats.guiLines() << ", reader failures " << probe.failures() << ") "
                      << verified.error << "\n";
            return 1;
        }
        std::cerr << "bench_load --check: ok\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        CLI::App app{"bench_load: N simulated runplaned nodes drive one controller (issue 20)"};
        Args args;
        ChildOptions child;
        app.add_option("--nodes", args.nodes, "simulated nodes")->check(CLI::Range(1, 1024));
        app.add_option("--hz", args.hz, "samples per second per series")
            ->check(CLI::Range(0.1, 10.0));
        app.add_option("--series", args.series, "series per node")->check(CLI::Range(1, 512));
        app.add_option("--seconds", args.seconds, "load duration")->check(CLI::Range(1, 86400));
        app.add_option("--controller", args.controller,
                       "gui: ClusterPage + RunsPage offscreen (the GUI's controller); lib: "
                       "control::Controller alone")
            ->check(CLI::IsMember({"gui", "lib"}));
        app.add_option("--workdir", args.workdir,
                       "directory for the history and the profile (default: a temporary "
                       "directory, removed at the end)");
        app.add_option("--report", args.report, "also write the JSON report here");
        app.add_option("--drain-seconds", args.drainSeconds, "wait this long for the backlog")
            ->check(CLI::Range(1, 3600));
        app.add_flag("--sigterm-under-load", args.sigtermUnderLoad,
                     "at the end of the load, SIGTERM the controller while the nodes stream, "
                     "time its exit, and drain with a new one");
        app.add_flag("--check", args.check,
                     "exit 1 unless every sample arrived once, the GUI reported and the "
                     "history stayed readable");
        app.add_option("--cluster-nice", args.clusterNice,
                       "run the simulated nodes' threads (and the bench's own) at this nice "
                       "value, the controller at its own: nodes that would be other machines "
                       "do not take its cores (0: off)")
            ->check(CLI::Range(0, 19));
        app.add_option("--background-nice", args.backgroundNice,
                       "gui: the controller's background threads (ingest, history writer and "
                       "reader) run this many nice levels below its GUI thread, as in the GUI "
                       "(common/thread_role.h; 0: the same, the A/B of that setting)")
            ->check(CLI::Range(0, 19));
        app.add_option("--gui-slice-us", args.guiSliceUs,
                       "gui: the GUI thread asks the kernel for a time slice of this many "
                       "microseconds (EEVDF custom slices, Linux 6.12+; common/thread_role.h; "
                       "0: the kernel's default)")
            ->check(CLI::Range(0, 100000));
        app.add_flag("--paint-apart", args.paintApart,
                     "gui: paint the Runs page half a second after the Cluster page, in its own "
                     "event-loop turn, as the GUI paints the one page its tab shows (default: "
                     "at once after the Cluster page's redraw and paint, as before)");
        app.add_flag("--paint-into-one-image", args.paintIntoOneImage,
                     "gui: paint each page into one image allocated once, as the GUI paints "
                     "into its backing store (default: a new image for every paint, as before)");
        app.add_flag("--platform-style", args.platformStyle,
                     "gui: paint with the platform's style alone, without the GUI's FlatStyle "
                     "(gui/widgets/flat_style.h): the A/B of that style");
        app.add_flag("--styled-delegates", args.styledDelegates,
                     "gui: the pages' tables paint with Qt's QStyledItemDelegate instead of the "
                     "GUI's CachedTextDelegate (gui/widgets/cached_text_delegate.h): the A/B of "
                     "that delegate");
        app.add_option("--save-pages", args.savePages,
                       "gui: save both pages, as painted at the end of the load, to "
                       "DIR/cluster.png and DIR/runs.png (DIR is made if missing)");
        app.add_flag("--unsynced-commits", args.unsyncedCommits,
                     "lib only: the history writer commits with synchronous=NORMAL (fsync at "
                     "checkpoints only) instead of fsyncing the WAL in each commit: the A/B of "
                     "durable commits");
        app.add_flag("--inline-checkpoints", args.inlineCheckpoints,
                     "lib only: the history writer checkpoints the WAL inside its own commits "
                     "(SQLite's automatic checkpoints) instead of on its checkpoint thread: the "
                     "A/B of that thread");
        auto* childFlag =
            app.add_option("--child", child.mode)->group("")->check(CLI::IsMember({"gui", "lib"}));
        app.add_option("--profile", child.profile)->group("");
        app.add_option("--history", child.historyPath)->group("");
        app.add_option("--run-id", child.runId)->group("");
        CLI11_PARSE(app, argc, argv);
        if (childFlag->count() > 0) {
            child.inlineCheckpoints = args.inlineCheckpoints;
            child.unsyncedCommits = args.unsyncedCommits;
            child.backgroundNice = args.backgroundNice;
            child.guiSliceUs = args.guiSliceUs;
            child.paintApart = args.paintApart;
            child.paintIntoOneImage = args.paintIntoOneImage;
            child.platformStyle = args.platformStyle;
            child.styledDelegates = args.styledDelegates;
            child.savePagesDir = args.savePages;
            return runControllerChild(child, argc, argv);
        }
        return runParent(args);
    } catch (const std::exception& e) {
        std::cerr << "bench_load: " << e.what() << "\n";
        return 1;
    }
}
