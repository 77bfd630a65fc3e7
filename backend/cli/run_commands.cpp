// runplanectl submit / stop / logs / runs: start runs on a daemon and record them (recipe
// snapshot + provenance) in the run history; list what the history holds.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "backend/analysis/run_metrics.h"
#include "backend/cli/command_registry.h"
#include "backend/cli/connection_flags.h"
#include "backend/cli/planned_roles.h"
#include "backend/cli/run_annotations_cli.h"
#include "backend/cli/run_lineage_cli.h"
#include "backend/control/controller.h"
#include "backend/control/history_location.h"
#include "backend/control/text_format.h"
#include "backend/plan/recipe.h"
#include "common/build_info.h"
#include "common/units/units.h"
#include "db/history/history.h"
#include "db/history/run_cause.h"
#include "db/history/run_lineage.h"

namespace {

using namespace runplane::control;
using nlohmann::json;
using runplane::units::formatBytes;
using runplane::units::formatDuration;
namespace fs = std::filesystem;

// ---------------------------------------------------------------- provenance helpers

std::vector<std::string> ownCommandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> args;
    std::string arg;
    while (std::getline(in, arg, '\0')) {
        args.push_back(arg);
    }
    return args;
}

// The git revision of the repository holding `path` (reads .git directly; no subprocess).
std::string gitRevision(const fs::path& path) {
    std::error_code ec;
    for (fs::path dir = fs::absolute(path, ec).parent_path(); !dir.empty();
         dir = dir.parent_path()) {
        const fs::path git = dir / ".git";
        if (fs::is_directory(git, ec)) {
            std::ifstream head(git / "HEAD");
            std::string line;
            std::getline(head, line);
            if (line.rfind("ref: ", 0) != 0) {
                return line;  // detached HEAD
            }
            const std::string ref = line.substr(5);
            std::ifstream refFile(git / ref);
            std::string rev;
            if (std::getline(refFile, rev) && !rev.empty()) {
                return rev;
            }
            std::ifstream packed(git / "packed-refs");
            while (std::getline(packed, line)) {
                if (line.size() > 41 && line.compare(41, std::string::npos, ref) == 0) {
                    return line.substr(0, 40);
                }
            }
            return "";
        }
        if (dir == dir.root_path()) {
            break;
        }
    }
    return "";
}

std::string hostName() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

// ---------------------------------------------------------------- submit

struct SubmitOptions {
    std::string address;
    std::string recipe;
    std::vector<std::string> argv;
    std::vector<std::string> env;
    std::string history;
    std::string name;
    std::string runId;
    std::string workdir;
    std::string roleRows;    // a file of the run's own role rows
    std::string recipesDir;  // the model catalog's directory ("" next to the executable)
    std::string resumes;     // RUN[@STEP]: lineage (docs/history.md "Run lineage")
    std::string forks;
    double sampleHz = 0;
    bool json = false;
    runplane::cli::ConnectionFlags connection;
};

void runSubmit(SubmitOptions options, runplane::cli::CliContext& context) {
    auto fail = [&](const std::string& message, int code) {
        std::cerr << "runplanectl submit: " << message << "\n";
        context.exitCode = code;
    };
    auto connection = runplane::cli::resolveConnection(options.connection);
    if (!connection.ok()) {
        return fail(connection.error(), 2);
    }
    options.address = runplane::cli::resolveAddress(options.address, *connection);
    if (options.sampleHz == 0) {
        options.sampleHz = connection->telemetryHz;
    }
    SubmitSpec spec;
    spec.address = options.address;
    spec.name = options.name;
    spec.run.runId = runplane::RunId{options.runId};
    spec.run.workdir = options.workdir;
    spec.run.sampleHz = options.sampleHz;
    spec.run.argv = options.argv;
    std::string recipeName;
    std::optional<runplane::plan::Recipe> parsedRecipe;
    if (!options.recipe.empty()) {
        std::ifstream in(options.recipe, std::ios::binary);
        if (!in) {
            return fail(options.recipe + ": cannot read the recipe file", 2);
        }
        std::ostringstream text;
        text << in.rdbuf();
        spec.run.recipeYaml = text.str();
        auto recipe = runplane::plan::parseRecipe(spec.run.recipeYaml, options.recipe);
        if (!recipe.ok()) {
            return fail(recipe.error(), 2);
        }
        recipeName = recipe->name;
        parsedRecipe = *recipe;
        for (const auto& [key, value] : recipe->environment.env) {
            spec.run.env[key] = value;
        }
        // The plan by role for the daemon (node 0: submit starts a run on one node).
        std::string why;
        spec.run.plannedRoles =
            runplane::cli::plannedRolesOfSnapshot(spec.run.recipeYaml, options.recipesDir, 0, why);
        if (spec.run.plannedRoles.empty()) {
            std::cerr << "note: no plan by role sent to the daemon: " << why << "\n";
        }
        if (spec.run.argv.empty() && !recipe->launcher.argv.empty()) {
            spec.run.argv = recipe->launcher.argv;
            if (spec.run.workdir.empty()) {
                spec.run.workdir = recipe->launcher.workdir;
            }
        }
    }
    std::string rowsFile;
    if (!options.roleRows.empty()) {
        std::ifstream in(options.roleRows, std::ios::binary);
        if (!in) {
            return fail(options.roleRows + ": cannot read the role rows file", 2);
        }
        std::ostringstream text;
        text << in.rdbuf();
        rowsFile = text.str();
    }
    // Checked by the daemon (role_rows:LINE: ...).
    spec.run.roleRows =
        runplane::cli::roleRowsOf(rowsFile, parsedRecipe ? &*parsedRecipe : nullptr);
    for (const auto& pair : options.env) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) {
            return fail("--env '" + pair + "': expected KEY=VALUE", 2);
        }
        spec.run.env[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    if (spec.run.argv.empty()) {
        return fail(
            options.recipe.empty()
                ? "nothing to run: give --recipe FILE or the command after --"
                : options.recipe + ": the recipe has no launcher.argv; give the command after --",
            2);
    }
    if (spec.name.empty()) {
        spec.name = recipeName;
    }
    if (const std::string bad = runplane::cli::checkNamedParent(options.history, options.resumes,
                                                                options.forks);
        !bad.empty()) {  // the parent must be known before anything starts
        return fail(bad, 2);
    }
    json provenance = {{"controller_argv", ownCommandLine()},
                       {"controller_host", hostName()},
                       {"argv", spec.run.argv},
                       {"env", spec.run.env},
                       {"workdir", spec.run.workdir},
                       {"versions",
                        {{"runplanectl", runplane::buildInfo().version},
                         {"runplanectl_commit", runplane::buildInfo().commit}}}};
    if (!options.recipe.empty()) {
        provenance["recipe_path"] = fs::absolute(options.recipe).string();
        provenance["git_rev"] = gitRevision(options.recipe);
    }
    spec.provenanceJson = provenance.dump();

    ControllerOptions controllerOptions;
    controllerOptions.historyPath = options.history;
    controllerOptions.ingestTelemetry = false;
    controllerOptions.client = connection->client;
    auto controller = std::make_unique<Controller>(controllerOptions);
    auto record = controller->submitRun(spec);
    if (!record.ok()) {
        return fail(record.error(), 1);
    }
    controller.reset();  // closes its history before the lineage is written on another connection
    const std::string lineage =
        runplane::cli::recordLaunchLineage(options.history, record->id.value(), options.resumes,
                                           options.forks, spec.run.argv, spec.run.workdir);
    if (!lineage.empty()) {
        std::cerr << "runplanectl submit: " << lineage << "\n";
    }
    if (options.json) {
        std::cout << json{{"run_id", record->id.value()},
                          {"name", record->name},
                          {"status", std::string(runplane::db::toString(record->state))},
                          {"address", options.address},
                          {"nodes", record->nodes},
                          {"history", options.history},
                          {"message", record->message}}
                         .dump(2)
                  << "\n";
    } else {
        std::cout << "started run " << record->id.value() << " on " << options.address << " ("
                  << runplane::db::toString(record->state)
                  << (record->message.empty() ? "" : ": " + record->message) << "), recorded in "
                  << options.history << "\n";
    }
    context.exitCode = 0;
}

// ---------------------------------------------------------------- stop / logs

struct StopOptions {
    std::string address;
    std::string runId;
    double grace = 10;
    std::string history;
    runplane::cli::ConnectionFlags connection;
};

void runStop(const StopOptions& options, runplane::cli::CliContext& context) {
    auto connection = runplane::cli::resolveConnection(options.connection);
    if (!connection.ok()) {
        std::cerr << "runplanectl stop: " << connection.error() << "\n";
        context.exitCode = 2;
        return;
    }
    ControllerOptions controllerOptions;
    controllerOptions.historyPath = options.history;
    controllerOptions.ingestTelemetry = false;
    controllerOptions.client = connection->client;
    Controller controller(controllerOptions);
    auto stopped = controller.stopRun(runplane::cli::resolveAddress(options.address, *connection),
                                      runplane::RunId{options.runId}, options.grace);
    if (!stopped.ok()) {
        std::cerr << "runplanectl stop: " << stopped.error() << "\n";
        context.exitCode = 1;
        return;
    }
    std::cout << "run " << stopped->runId.value() << ": " << toString(stopped->state)
              << (stopped->message.empty() ? "" : " (" + stopped->message + ")") << "\n";
}

struct LogsOptions {
    std::string address;
    std::string runId;
    bool stderrStream = false;
    bool follow = false;
    std::uint64_t from = 0;
    std::string history;
    bool fromHistory = false;
    runplane::cli::ConnectionFlags connection;
};

// The output the controller stored in the history while the run streamed: true when printed,
// false when the history holds none of it, an error saying why the history cannot tell (missing,
// damaged, unreadable: issue 41 — never "no stored output" for a history that could not be read).
runplane::Result<bool> printStoredLog(const LogsOptions& options, const std::string& why) {
    std::error_code ec;
    if (options.history.empty() || !fs::exists(options.history, ec)) {
        return runplane::Error{"no history file at " + options.history};
    }
    runplane::db::OpenOptions open;
    open.readOnly = true;
    auto history = runplane::db::History::open(options.history, open);
    if (!history.ok()) {
        return runplane::Error{history.error()};
    }
    const std::string stream = options.stderrStream ? "stderr" : "stdout";
    auto stored = (*history)->readRunLog(runplane::RunId{options.runId}, stream, options.from);
    if (!stored.ok()) {
        return runplane::Error{stored.error()};
    }
    if (stored->text.empty() && stored->endOffset == 0) {
        return false;
    }
    std::string missing;
    if (!stored->missing.empty()) {
        missing = ", " + std::to_string(stored->missingBytes()) + " bytes missing in " +
                  std::to_string(stored->missing.size()) + " range" +
                  (stored->missing.size() == 1 ? "" : "s") + " (";
        for (std::size_t i = 0; i < stored->missing.size(); ++i) {
            missing += (i == 0 ? "" : ", ") + std::to_string(stored->missing[i].first) + ".." +
                       std::to_string(stored->missing[i].second);
        }
        missing += "), marked where they fall";
    }
    std::cerr << "runplanectl logs: " << why << "; showing the " << stream << " stored in "
              << options.history << " (bytes " << stored->firstOffset << ".." << stored->endOffset
              << (stored->truncated ? ", older bytes dropped by the bound" : "") << missing
              << ")\n";
    const std::string shown = stored->shown();
    std::cout.write(shown.data(), static_cast<std::streamsize>(shown.size()));
    std::cout.flush();
    return true;
}

void runLogs(const LogsOptions& options, runplane::cli::CliContext& context) {
    if (options.fromHistory) {
        auto printed = printStoredLog(options, "--from-history");
        if (!printed.ok()) {
            std::cerr << "runplanectl logs: " << printed.error() << "\n";
            context.exitCode = 1;
        } else if (!*printed) {
            std::cerr << "runplanectl logs: no stored output of run " << options.runId << " in "
                      << options.history << "\n";
            context.exitCode = 1;
        }
        return;
    }
    auto connection = runplane::cli::resolveConnection(options.connection);
    if (!connection.ok()) {
        std::cerr << "runplanectl logs: " << connection.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto client = NodeClient::create(runplane::cli::resolveAddress(options.address, *connection),
                                     connection->client);
    if (!client.ok()) {
        std::cerr << "runplanectl logs: " << client.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto status = (*client)->tailLogs(
        runplane::RunId{options.runId},
        options.stderrStream ? LogStreamKind::Stderr : LogStreamKind::Stdout, options.from,
        options.follow, [](const LogChunkInfo& chunk) {
            std::cout.write(chunk.data.data(), static_cast<std::streamsize>(chunk.data.size()));
            std::cout.flush();
            return true;
        });
    if (!status.ok()) {
        // A finished run's output outlives its daemon: fall back to what the history stored.
        std::string storedProblem;
        if (!options.follow) {
            auto printed = printStoredLog(options, status.error());
            if (printed.ok() && *printed) {
                return;
            }
            if (!printed.ok() && runplane::db::saysHistoryDamaged(printed.error())) {
                storedProblem = printed.error();
            }
        }
        std::cerr << "runplanectl logs: " << status.error() << "\n";
        if (!storedProblem.empty()) {
            std::cerr << "runplanectl logs: and the stored copy cannot be read: " << storedProblem
                      << "\n";
        }
        context.exitCode = 1;
    }
}

// ---------------------------------------------------------------- runs

struct RunsOptions {
    std::string history;
    bool json = false;
    std::string output;  // "" (cells cut at control::kTableCellWidth) or "wide" (whole cells)
};

void runRuns(const RunsOptions& options, runplane::cli::CliContext& context) {
    std::error_code ec;
    if (!fs::exists(options.history, ec)) {
        std::cerr << "runplanectl runs: no history at " << options.history
                  << " yet (nothing recorded)\n";
        if (options.json) {
            std::cout << "[]\n";
        }
        return;
    }
    runplane::db::OpenOptions open;
    open.readOnly = true;
    auto history = runplane::db::History::open(options.history, open);
    if (!history.ok()) {
        std::cerr << "runplanectl runs: " << history.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto runs = (*history)->listRuns();
    if (!runs.ok()) {
        std::cerr << "runplanectl runs: " << runs.error() << "\n";
        context.exitCode = 2;
        return;
    }
    json out = json::array();
    std::vector<std::vector<std::string>> rows = {{"ID", "NAME", "STATUS", "NODES", "STARTED",
                                                   "DURATION", "PEAK HOST MEM", "PRIMARY EVAL",
                                                   "CAUSE", "DIAGNOSIS", "LINEAGE"}};
    std::map<std::string, runplane::db::History::RunParent> parents;
    if (auto links = (*history)->runParents(); links.ok()) {
        for (auto& l : *links) {
            parents[l.runId] = std::move(l);
        }
    }
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const std::int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
    for (const auto& run : *runs) {
        auto peaks = (*history)->runPeaks(run.id);
        // The run's own analysis settings, from the recipe it was submitted with.
        const runplane::plan::Analysis analysis = runplane::metrics::analysisOf(run.recipeYaml);
        auto metrics =
            runplane::metrics::runMetricsByKind(**history, run.id, "eval/", analysis.metricKinds);
        json j = {{"id", run.id.value()},
                  {"name", run.name},
                  {"status", std::string(runplane::db::toString(run.state))},
                  {"nodes", run.nodes},
                  {"started_ns", run.startedNs},
                  {"ended_ns", run.endedNs},
                  {"message", run.message},
                  {"provenance", json::parse(run.provenanceJson, nullptr, false)},
                  {"peaks", json::array()},
                  {"evals", json::array()}};
        // The table shows the highest node's peak and the node count (as the GUI's run list): a
        // cell of 256 joined values, cut at 40 characters, showed the first nodes, not the
        // highest. Every node's peak stays in --json.
        std::string peakText;
        if (peaks.ok() && !peaks->empty()) {
            double highest = peaks->front().peak;
            for (const auto& p : *peaks) {
                j["peaks"].push_back(
                    {{"node_id", p.nodeId.value()}, {"peak", p.peak}, {"t_ns", p.peakNs}});
                highest = std::max(highest, p.peak);
            }
            peakText = formatBytes(highest);
            if (peaks->size() > 1) {
                peakText += " (max of " + std::to_string(peaks->size()) + " nodes)";
            }
        }
        // The run's primary eval metric (analysis.primary_metric, else the first score-kind
        // eval/* series), best by its direction; every eval/* series with its kind stays in the
        // JSON.
        std::string evalText;
        j["primary_eval"] = nullptr;
        if (metrics.ok()) {
            for (const auto& r : *metrics) {
                const auto& m = r.summary;
                j["evals"].push_back(
                    {{"node_id", m.nodeId.value()},
                     {"series", m.series},
                     {"kind", std::string(runplane::metrics::kindName(r.info.kind))},
                     {"direction", std::string(runplane::metrics::directionName(r.info.direction))},
                     {"last", m.last},
                     {"last_step", m.lastStep},
                     {"best", m.bestStep >= 0 ? json(m.best) : json(nullptr)},
                     {"best_step", m.bestStep}});
            }
            // A primary metric outside eval/ (e.g. train/reward) is read on its own.
            const std::string& preferred = analysis.primaryMetric;
            if (!preferred.empty() && preferred.rfind("eval/", 0) != 0) {
                auto extra = runplane::metrics::runMetricsByKind(**history, run.id, preferred,
                                                                 analysis.metricKinds);
                if (extra.ok()) {
                    for (auto& r : *extra) {
                        if (r.summary.series == preferred) {
                            metrics->push_back(std::move(r));
                        }
                    }
                }
            }
            if (const auto* primary =
                    runplane::metrics::primaryMetric(*metrics, preferred, analysis.metricKinds)) {
                const auto& m = primary->summary;
                j["primary_eval"] = m.series;
                char text[160];
                if (m.bestStep >= 0) {
                    std::snprintf(text, sizeof text, "%s best %.3f@%lld last %.3f",
                                  m.series.c_str(), m.best, static_cast<long long>(m.bestStep),
                                  m.last);
                } else {  // a kind without a better direction has no best
                    std::snprintf(text, sizeof text, "%s last %.3f", m.series.c_str(), m.last);
                }
                evalText = text;
            }
        }
        // Why the run failed, in one line, from its log's failure events (db/history/run_cause.h).
        std::string causeText;
        j["cause"] = nullptr;
        if (auto cause = runplane::db::runCause(**history, run.id); cause.ok() && *cause) {
            const auto& c = **cause;
            j["cause"] = {{"kind", c.kind}, {"summary", c.summary}, {"t_ns", c.tNs}};
            causeText = c.summary;
        }
        // The verdict of the run's newest diagnosis (docs/diagnosis.md), beside the cause.
        std::string diagnosisText;
        j["diagnosis"] = nullptr;
        if (auto diagnoses = (*history)->listDiagnoses(run.id, false);
            diagnoses.ok() && !diagnoses->empty()) {
            const auto& d = diagnoses->front();
            j["diagnosis"] = {
                {"id", d.id}, {"t_ns", d.tNs}, {"trigger", d.trigger}, {"headline", d.headline}};
            diagnosisText = d.headline;
        }
        std::string lineageText;
        j["lineage"] = nullptr;
        if (const auto p = parents.find(run.id.value()); p != parents.end()) {
            const auto& l = p->second;
            j["lineage"] = {
                {"parent", l.parentId}, {"kind", l.kind}, {"step", l.step}, {"source", l.source}};
            lineageText = runplane::cli::lineageCell(l.kind, l.parentId, l.step);
        }
        out.push_back(std::move(j));
        const std::int64_t end = run.endedNs > 0 ? run.endedNs : nowNs;
        std::string nodes;
        for (const auto& n : run.nodes) {
            nodes += (nodes.empty() ? "" : ",") + n;
        }
        if (const json prov = json::parse(run.provenanceJson, nullptr, false);
            nodes.empty() && prov.is_object() && prov.contains("origin") &&
            prov["origin"].is_object()) {  // an imported run (docs/imports.md)
            nodes = "import:" + prov["origin"].value("format", std::string("?"));
        }
        rows.push_back({run.id.value(), run.name, std::string(runplane::db::toString(run.state)),
                        nodes, formatLocalTime(run.startedNs),
                        formatDuration(static_cast<double>(end - run.startedNs) / 1e9),
                        peakText.empty() ? "-" : peakText, evalText.empty() ? "-" : evalText,
                        causeText.empty() ? "-" : causeText,
                        diagnosisText.empty() ? "-" : diagnosisText,
                        lineageText.empty() ? "-" : lineageText});
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
        return;
    }
    std::cout << runplane::control::formatTable(rows, options.output == "wide");
}

const bool kRunGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto submit = std::make_shared<SubmitOptions>();
        submit->history = defaultHistoryPath();
        auto* submitCmd = app.add_subcommand(
            "submit", "Start a run on a daemon and record it (recipe snapshot, provenance)");
        submitCmd->add_option("address", submit->address, "Daemon HOST:PORT or --cluster node name")
            ->required();
        runplane::cli::addConnectionFlags(submitCmd, submit->connection);
        submitCmd->add_option("command", submit->argv,
                              "The command to run, after -- (executed without a shell)");
        submitCmd->add_option("--recipe", submit->recipe, "Recipe YAML (kept with the run)");
        submitCmd->add_option("--env", submit->env, "KEY=VALUE for the run's environment");
        submitCmd->add_option("--history", submit->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        submitCmd->add_option("--name", submit->name, "Run name in the history");
        submitCmd->add_option("--run-id", submit->runId, "Run id (default: generated)");
        submitCmd->add_option("--workdir", submit->workdir, "Working directory under the run root");
        submitCmd->add_option("--recipes", submit->recipesDir,
                              "Recipes directory with models/ (default: next to runplanectl)");
        submitCmd->add_option("--role-rows", submit->roleRows,
                              "File of this run's own process-role rows (--role-table syntax)");
        submitCmd->add_option("--resumes", submit->resumes,
                              "RUN[@STEP]: this run resumes RUN's checkpoint (lineage)");
        submitCmd->add_option("--forks", submit->forks,
                              "RUN[@STEP]: this run forks from RUN at STEP (lineage)");
        submitCmd->add_option("--hz", submit->sampleHz, "Telemetry rate for this run (0..10 Hz)")
            ->check(CLI::Range(0.0, 10.0));
        submitCmd->add_flag("--json", submit->json, "Print JSON");
        submitCmd->callback([submit, &context] { runSubmit(*submit, context); });

        auto stop = std::make_shared<StopOptions>();
        stop->history = defaultHistoryPath();
        auto* stopCmd =
            app.add_subcommand("stop", "Stop a run (SIGTERM, then SIGKILL after grace)");
        stopCmd->add_option("address", stop->address, "Daemon HOST:PORT or --cluster node name")
            ->required();
        runplane::cli::addConnectionFlags(stopCmd, stop->connection);
        stopCmd->add_option("run-id", stop->runId, "Run id")->required();
        stopCmd->add_option("--grace", stop->grace, "Seconds between SIGTERM and SIGKILL")
            ->capture_default_str();
        stopCmd->add_option("--history", stop->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        stopCmd->callback([stop, &context] { runStop(*stop, context); });

        auto logs = std::make_shared<LogsOptions>();
        auto* logsCmd = app.add_subcommand("logs", "Print a run's captured stdout (or stderr)");
        logsCmd->add_option("address", logs->address, "Daemon HOST:PORT or --cluster node name")
            ->required();
        runplane::cli::addConnectionFlags(logsCmd, logs->connection);
        logsCmd->add_option("run-id", logs->runId, "Run id")->required();
        logsCmd->add_flag("--stderr", logs->stderrStream, "The stderr log instead of stdout");
        logsCmd->add_flag("-f,--follow", logs->follow, "Keep following while the run lives");
        logsCmd->add_option("--from", logs->from, "Start at this byte offset");
        logs->history = defaultHistoryPath();
        logsCmd
            ->add_option("--history", logs->history,
                         "History whose stored output is shown when the daemon cannot answer "
                         "($RUNPLANE_HISTORY)")
            ->capture_default_str();
        logsCmd->add_flag("--from-history", logs->fromHistory,
                          "Read the stored output only (no daemon call)");
        logsCmd->callback([logs, &context] { runLogs(*logs, context); });

        auto runs = std::make_shared<RunsOptions>();
        runs->history = defaultHistoryPath();
        auto* runsCmd = app.add_subcommand("runs", "List the runs recorded in the history");
        runsCmd->add_option("--history", runs->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        runsCmd->add_flag("--json", runs->json, "Print JSON");
        runsCmd->add_option("-o,--output", runs->output, "wide: print long cells whole")
            ->check(CLI::IsMember({"wide"}));
        runplane::cli::addRunAnnotationCommands(*runsCmd, context);
        runplane::cli::addRunLineageCommands(*runsCmd, context);
        runsCmd->callback([runs, runsCmd, &context] {
            if (runsCmd->get_subcommands().empty()) {  // not `runs tag|note|show|parent`
                runRuns(*runs, context);
            }
        });
    });

}  // namespace
