// runplanectl nodes / watch: node inventory from daemons, and live telemetry ingested into the
// run history (through runplane_control).
#include <signal.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "backend/cli/alerts_cli.h"
#include "backend/cli/command_registry.h"
#include "backend/cli/connection_flags.h"
#include "backend/cli/role_alarm_watch.h"
#include "backend/control/diagnose.h"
#include "backend/control/history_location.h"
#include "backend/control/node_client.h"
#include "backend/control/retention_pruner.h"
#include "backend/control/telemetry_ingestor.h"
#include "backend/control/text_format.h"
#include "common/telemetry/series.h"
#include "common/units/units.h"
#include "db/history/history.h"

namespace {

using namespace runplane::control;
using nlohmann::json;
namespace series = runplane::telemetry::series;
using runplane::units::formatBytes;
using runplane::units::formatDuration;

// ---------------------------------------------------------------- nodes

struct NodesOptions {
    std::vector<std::string> addresses;
    bool json = false;
    std::string output;  // "" (cells cut at control::kTableCellWidth) or "wide"
    double timeoutSeconds = 5;
    runplane::cli::ConnectionFlags connection;
};

std::string gpuText(const NodeSummary& node) {
    if (node.gpus.empty()) {
        return "none: " + (node.gpusUnavailableReason.empty() ? std::string("no GPU reported")
                                                              : node.gpusUnavailableReason);
    }
    std::map<std::string, int> byName;
    for (const auto& gpu : node.gpus) {
        ++byName[gpu.name + " (" + formatBytes(static_cast<double>(gpu.memoryTotalBytes)) + ")"];
    }
    std::string text;
    for (const auto& [name, count] : byName) {
        text += (text.empty() ? "" : ", ") + std::to_string(count) + "x " + name;
    }
    return text;
}

std::string ncclText(const NodeSummary& node) {
    if (node.ncclLibraries.empty()) {
        return "none found";
    }
    std::string text;
    for (const auto& lib : node.ncclLibraries) {
        std::string item = lib.error.empty() ? lib.version : "unusable";
        item += lib.selected ? "* (" : " (";
        item += lib.source + ": " + lib.path + ")";
        text += (text.empty() ? "" : "; ") + item;
    }
    return text;
}

json nodeJson(const NodeSummary& node) {
    json j = {{"address", node.address},
              {"node_id", node.nodeId.value()},
              {"hostname", node.hostname},
              {"cpu_arch", node.cpuArch},
              {"cpu_cores", node.cpuCores},
              {"host_ram_bytes", node.hostRamBytes},
              {"kernel", node.kernel},
              {"gpus", json::array()},
              {"gpus_unavailable_reason", node.gpusUnavailableReason},
              {"nccl_libraries", json::array()},
              {"daemon_version", node.daemonVersion},
              {"build_commit", node.buildCommit},
              {"build_date", node.buildDate},
              {"protocol_version", node.protocolVersion}};
    for (const auto& gpu : node.gpus) {
        j["gpus"].push_back({{"index", gpu.index},
                             {"name", gpu.name},
                             {"uuid", gpu.uuid},
                             {"pci_bus_id", gpu.pciBusId},
                             {"memory_total_bytes", gpu.memoryTotalBytes},
                             {"memory_used_bytes", gpu.memoryUsedBytes},
                             {"utilization_percent", gpu.utilizationPercent}});
    }
    for (const auto& lib : node.ncclLibraries) {
        j["nccl_libraries"].push_back({{"path", lib.path},
                                       {"source", lib.source},
                                       {"version", lib.version},
                                       {"version_code", lib.versionCode},
                                       {"error", lib.error},
                                       {"selected", lib.selected}});
    }
    return j;
}

void runNodes(const NodesOptions& options, runplane::cli::CliContext& context) {
    auto connection = runplane::cli::resolveConnection(options.connection);
    auto addresses =
        connection.ok() ? runplane::cli::addressesOrProfile(options.addresses, *connection, "nodes")
                        : runplane::Result<std::vector<std::string>>(
                              runplane::Error{connection.ok() ? "" : connection.error()});
    if (!addresses.ok()) {
        std::cerr << "runplanectl nodes: " << addresses.error() << "\n";
        context.exitCode = 2;
        return;
    }
    NodeClientOptions clientOptions = connection->client;
    clientOptions.callTimeout =
        std::chrono::milliseconds(static_cast<long long>(options.timeoutSeconds * 1000));
    // Ask every daemon at once: one slow node does not delay the others.
    std::vector<std::future<runplane::Result<NodeSummary>>> answers;
    for (const auto& address : *addresses) {
        answers.push_back(std::async(std::launch::async, [address, clientOptions] {
            auto client = NodeClient::create(address, clientOptions);
            if (!client.ok()) {
                return runplane::Result<NodeSummary>(runplane::Error{client.error()});
            }
            return (*client)->getNode();
        }));
    }
    json out = json::array();
    std::vector<std::vector<std::string>> rows = {
        {"ADDRESS", "HOSTNAME", "ARCH", "CORES", "RAM", "KERNEL", "GPUS", "NCCL", "DAEMON"}};
    std::vector<std::string> errors;
    for (std::size_t i = 0; i < answers.size(); ++i) {
        auto node = answers[i].get();
        if (!node.ok()) {
            errors.push_back(node.error());
            out.push_back({{"address", (*addresses)[i]}, {"error", node.error()}});
            rows.push_back(
                {(*addresses)[i], "-", "-", "-", "-", "-", "-", "-", "error: " + node.error()});
            continue;
        }
        out.push_back(nodeJson(*node));
        rows.push_back(
            {node->address, node->hostname, node->cpuArch, std::to_string(node->cpuCores),
             formatBytes(static_cast<double>(node->hostRamBytes)), node->kernel, gpuText(*node),
             ncclText(*node),
             node->daemonVersion + " (protocol v" + std::to_string(node->protocolVersion) + ")"});
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << formatTable(rows, options.output == "wide");
    }
    for (const auto& error : errors) {
        std::cerr << "runplanectl nodes: " << error << "\n";
    }
    context.exitCode = errors.empty() ? 0 : 1;
}

// ---------------------------------------------------------------- watch

struct WatchOptions {
    std::string address;
    std::string history;
    double seconds = 0;
    double sampleHz = 0;
    bool json = false;
    std::string consumer;
    std::string alerts;  // rules file (docs/alerts.md); empty: the default one if it exists
    bool noDiagnose = false;
    double phaseCheckSeconds = 60;  // the phase-overrun check's period (docs/diagnosis.md)
    double phaseMarginSeconds = runplane::diagnosis::kPhaseMarginSeconds;
    bool noRoleAlarms = false;
    std::string recipesDir;  // the catalog the role alarms plan with
    int roleAlarmReports = 3;
    runplane::cli::ConnectionFlags connection;
};

// Prints one line per host-memory reading; fed from the ingest thread after each commit.
class MemoryPrinter {
  public:
    explicit MemoryPrinter(bool json) : m_json(json) {}

    void onUpdate(const TelemetryUpdate& update) {
        std::lock_guard lock(m_mutex);
        for (const auto& s : update.samples) {
            if (!s.runId.empty() || s.sample.series.rfind(series::kHostPrefix, 0) != 0) {
                continue;
            }
            if (m_pendingT != 0 && s.tNs != m_pendingT) {
                flush(update.nodeId);
            }
            m_pendingT = s.tNs;
            m_values[s.sample.series] = s.sample;
        }
        flush(update.nodeId);
        for (const auto& e : update.events) {
            if (m_json) {
                std::cout << json{{"t_ns", e.tNs},
                                  {"node_id", update.nodeId.value()},
                                  {"event", e.kind},
                                  {"message", e.message},
                                  {"run_id", e.runId.value()},
                                  {"seq", e.seq}}
                                 .dump()
                          << std::endl;
            } else {
                std::cout << formatTimeOfDay(e.tNs) << "  " << update.nodeId.value() << "  event "
                          << e.kind << ": " << e.message << std::endl;
            }
        }
    }

    int lines() const {
        std::lock_guard lock(m_mutex);
        return m_lines;
    }

  private:
    double value(const char* name, bool max = false) const {
        auto it = m_values.find(name);
        if (it == m_values.end()) {
            return std::nan("");
        }
        return max ? it->second.max : it->second.value;
    }

    void flush(const runplane::NodeId& node) {
        const std::string& nodeId = node.value();
        if (m_pendingT == 0 || m_values.find(series::kHostMemUsed) == m_values.end()) {
            m_values.clear();
            m_pendingT = 0;
            return;
        }
        if (m_json) {
            json j = {{"t_ns", m_pendingT}, {"node_id", nodeId}};
            for (const auto& [series, sample] : m_values) {
                j[series] = {{"value", sample.value}, {"min", sample.min}, {"max", sample.max}};
            }
            std::cout << j.dump() << std::endl;
        } else {
            std::cout << formatTimeOfDay(m_pendingT) << "  " << nodeId << "  used "
                      << formatBytes(value(series::kHostMemUsed)) << " (max "
                      << formatBytes(value(series::kHostMemUsed, true)) << ")"
                      << "  available " << formatBytes(value(series::kHostMemAvailable))
                      << "  page cache " << formatBytes(value(series::kHostMemPageCache))
                      << "  shmem " << formatBytes(value(series::kHostMemShmem)) << "  total "
                      << formatBytes(value(series::kHostMemTotal)) << std::endl;
        }
        ++m_lines;
        m_values.clear();
        m_pendingT = 0;
    }

    bool m_json;
    mutable std::mutex m_mutex;
    std::int64_t m_pendingT = 0;
    std::map<std::string, SampleInfo> m_values;
    int m_lines = 0;
};

void runWatch(const WatchOptions& options, runplane::cli::CliContext& context) {
    // Block SIGINT/SIGTERM before the ingest thread starts (it inherits the mask), then wait
    // for them here: Ctrl-C stops the ingest cleanly with everything committed.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    auto connection = runplane::cli::resolveConnection(options.connection);
    std::vector<std::string> given;
    if (!options.address.empty()) {
        given.push_back(options.address);
    }
    auto addresses = connection.ok()
                         ? runplane::cli::addressesOrProfile(given, *connection, "watch")
                         : runplane::Result<std::vector<std::string>>(
                               runplane::Error{connection.ok() ? "" : connection.error()});
    if (addresses.ok() && addresses->size() != 1) {
        addresses = runplane::Error{"the profile lists " + std::to_string(addresses->size()) +
                                    " nodes; give the ADDRESS to watch"};
    }
    if (!addresses.ok()) {
        std::cerr << "runplanectl watch: " << addresses.error() << "\n";
        context.exitCode = 2;
        return;
    }
    // A history that fails its integrity check is not written into (issue 41): say where it is
    // damaged and stop, non-zero. (A new file has nothing to check.)
    if (std::error_code ec; std::filesystem::exists(options.history, ec)) {
        runplane::db::OpenOptions readOnly;
        readOnly.readOnly = true;
        auto existing = runplane::db::History::open(options.history, readOnly);
        auto problems = existing.ok() ? (*existing)->quickCheck()
                                      : runplane::Result<std::vector<std::string>>(
                                            runplane::Error{existing.ok() ? "" : existing.error()});
        if (!existing.ok() && runplane::db::saysHistoryDamaged(existing.error())) {
            std::cerr << "runplanectl watch: " << existing.error() << "; not writing into it\n";
            context.exitCode = 1;
            return;
        }
        existing = runplane::Error{"closed"};  // the check's connection goes before the writer's
        std::vector<std::string> found;
        if (!problems.ok() && runplane::db::saysHistoryDamaged(problems.error())) {
            found.push_back(problems.error());
        } else if (problems.ok()) {
            found = *problems;
        }
        if (!found.empty()) {
            std::cerr << "runplanectl watch: " << options.history
                      << ": the history fails its integrity check (PRAGMA quick_check:";
            for (const auto& p : found) {
                std::cerr << "\n  " << p;
            }
            std::cerr << "\n); not writing into a damaged history. Keep it for inspection; "
                         "`sqlite3 "
                      << options.history
                      << " .recover` salvages what is readable, or move it aside and watch "
                         "into a new history\n";
            context.exitCode = 1;
            return;
        }
        // Other errors (read-only, locked, a newer schema) are the writer's to report below.
    }
    MemoryPrinter printer(options.json);
    std::mutex statusMutex;
    std::string lastReported;
    auto lastReportedAt = std::chrono::steady_clock::now();
    IngestorOptions ingest;
    ingest.address = addresses->front();
    ingest.historyPath = options.history;
    ingest.sampleHz = options.sampleHz > 0 ? options.sampleHz : connection->telemetryHz;
    ingest.client = connection->client;
    ingest.client.consumer = options.consumer;  // empty: watch-<history hash>@<host>
    ingest.consumerRole = "watch";
    // Memory by role against each run's plan, phase by phase (issue 43): alarms that name the
    // cause, stored with the batch that raised them (role_alarm_watch.h).
    std::shared_ptr<runplane::cli::RoleAlarmWatch> roleAlarms;
    if (!options.noRoleAlarms) {
        runplane::cli::RoleAlarmWatchOptions ro;
        ro.historyPath = options.history;
        ro.recipesDir = options.recipesDir;
        ro.sustainSamples = options.roleAlarmReports;
        roleAlarms = std::make_shared<runplane::cli::RoleAlarmWatch>(ro);
        ingest.deriveEvents = [roleAlarms](const runplane::db::IngestBatch& batch) {
            return roleAlarms->onBatch(batch);
        };
    }
    // A run's first stall and its failure start a diagnosis of the run (docs/diagnosis.md).
    runplane::control::DiagnosisTrigger::Options diagnose;
    diagnose.historyPath = options.history;
    diagnose.base.client = connection->client;
    diagnose.onDone = [](const runplane::RunId& run, const std::string& trigger,
                         const runplane::Result<runplane::diagnosis::RunDiagnosis>& d) {
        std::cerr << "runplanectl watch: diagnosis of run " << run.value() << " (" << trigger
                  << "): " << (d ? d->verdict.headline : d.error()) << std::endl;
    };
    diagnose.phaseRule.marginSeconds = options.phaseMarginSeconds;
    runplane::control::DiagnosisTrigger trigger(diagnose);
    IngestorCallbacks callbacks;
    callbacks.onTelemetry = [&](const TelemetryUpdate& update) {
        printer.onUpdate(update);
        // The runs seen are checked for a phase overrun periodically (the GUI's controller does
        // the same: gui/models/cluster_service.cpp).
        if (!options.noDiagnose) {
            trigger.onLiveEvents(update.events);
        }
    };
    callbacks.onStatus = [&](const IngestorStatus& status) {
        std::lock_guard lock(statusMutex);
        std::string line;
        if (status.state == IngestState::Streaming && lastReported.rfind("streaming", 0) != 0) {
            line = "streaming from " + status.address +
                   (status.node ? " (" + status.node->hostname + ", node " +
                                      status.node->nodeId.value() + ")"
                                : std::string()) +
                   " into " + options.history + ", resuming after seq " +
                   std::to_string(status.cursor);
        } else if ((status.state == IngestState::Backoff || status.state == IngestState::Failed) &&
                   !status.lastError.empty()) {
            line = status.lastError +
                   (status.state == IngestState::Backoff ? "; retrying" : std::string());
        }
        // A line is said when it changes, and an unchanged error again every 10 s: a watch
        // waiting on a lock or a full disk says so while it waits (issue 41).
        const auto now = std::chrono::steady_clock::now();
        if (!line.empty() &&
            (line != lastReported || (status.state != IngestState::Streaming &&
                                      now - lastReportedAt >= std::chrono::seconds(10)))) {
            std::cerr << "runplanectl watch: " << line << std::endl;
            lastReported = line;
            lastReportedAt = now;
        }
    };
    TelemetryIngestor ingestor(ingest, callbacks);
    // Retention runs online while watching: at start, then hourly, in small batches.
    PrunerOptions pruneOptions;
    pruneOptions.historyPath = options.history;
    std::atomic<bool> damagedByPrune{false};
    pruneOptions.onError = [&damagedByPrune](const std::string& error) {
        std::cerr << "runplanectl watch: retention: " << error << std::endl;
        if (runplane::db::saysHistoryDamaged(error)) {
            damagedByPrune = true;  // a damaged chunk the prune found: stop writing
        }
    };
    RetentionPruner pruner(pruneOptions);
    auto alertSender = runplane::cli::startWatchAlerts(options.alerts, options.history);
    if (!alertSender.ok()) {
        std::cerr << "runplanectl watch: alerts: " << alertSender.error() << "\n";
        context.exitCode = 2;
        return;
    }
    pruner.start();
    if (auto s = ingestor.start(); !s.ok()) {
        std::cerr << "runplanectl watch: " << s.error() << "\n";
        context.exitCode = 2;
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(options.seconds * 1000));
    const auto phasePeriod =
        std::chrono::milliseconds(static_cast<long long>(options.phaseCheckSeconds * 1000));
    auto nextPhaseCheck = std::chrono::steady_clock::now() + phasePeriod;
    while (true) {
        if (ingestor.status().state == IngestState::Failed || damagedByPrune) {
            break;
        }
        // A run whose current phase has lasted past its limit is diagnosed, once per episode
        // (docs/diagnosis.md, "Phase overrun").
        if (!options.noDiagnose && std::chrono::steady_clock::now() >= nextPhaseCheck) {
            nextPhaseCheck = std::chrono::steady_clock::now() + phasePeriod;
            const std::int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count();
            for (const auto& [run, overrun] : trigger.checkPhases(nowNs)) {
                std::cerr << "runplanectl watch: run " << run.value() << ": "
                          << runplane::control::DiagnosisTrigger::describe(overrun)
                          << "; diagnosing" << std::endl;
            }
        }
        if (options.seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        timespec wait{0, 200'000'000};
        if (sigtimedwait(&signals, nullptr, &wait) > 0) {
            break;
        }
    }
    ingestor.stop();
    pruner.stop();
    if (*alertSender) {
        (*alertSender)->stop();
    }
    if (const auto pruned = pruner.totals(); pruned.rowsDeleted() > 0) {
        std::cerr << "runplanectl watch: retention deleted " << pruned.rowsDeleted()
                  << " old rows (" << pruned.samplesDeleted << " raw samples), file "
                  << formatBytes(static_cast<double>(pruned.bytesBefore)) << " -> "
                  << formatBytes(static_cast<double>(pruned.bytesAfter)) << std::endl;
    }
    const IngestorStatus status = ingestor.status();
    std::cerr << "runplanectl watch: stored " << status.recordsStored << " records ("
              << status.duplicatesSkipped << " duplicates skipped, " << status.gapsRecorded
              << " gaps recorded), cursor " << status.cursor << std::endl;
    if (status.nodeResets > 0) {
        std::cerr << "runplanectl watch: the node's spool was replaced (state directory reset); "
                     "a node_reset event was recorded and the new spool ingested from its start"
                  << std::endl;
    }
    if (damagedByPrune || runplane::db::saysHistoryDamaged(status.lastError)) {
        std::cerr << "runplanectl watch: stopped: " << options.history
                  << " is damaged; nothing more was written into it. Keep it for inspection; "
                     "`sqlite3 "
                  << options.history
                  << " .recover` salvages what is readable, or move it aside and watch into a "
                     "new history"
                  << std::endl;
        context.exitCode = 1;
        return;
    }
    // Nothing stored is a failure whatever the reason (a watch that stored nothing proves
    // nothing); the last error says why.
    if (status.state == IngestState::Failed || status.recordsStored + status.gapsRecorded == 0) {
        if (status.recordsStored + status.gapsRecorded == 0) {
            std::cerr << "runplanectl watch: nothing was stored"
                      << (status.lastError.empty() ? std::string()
                                                   : " (last error: " + status.lastError + ")")
                      << std::endl;
        }
        context.exitCode = 1;
    }
}

const bool kNodeGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto nodes = std::make_shared<NodesOptions>();
        auto* nodesCmd = app.add_subcommand(
            "nodes", "Show the inventory of one or more runplaned daemons (GetNode)");
        nodesCmd->add_option("address", nodes->addresses,
                             "Daemon addresses HOST:PORT (default: the --cluster nodes)");
        runplane::cli::addConnectionFlags(nodesCmd, nodes->connection);
        nodesCmd->add_flag("--json", nodes->json, "Print JSON instead of a table");
        nodesCmd->add_option("-o,--output", nodes->output, "wide: print long cells whole")
            ->check(CLI::IsMember({"wide"}));
        nodesCmd->add_option("--timeout", nodes->timeoutSeconds, "Seconds to wait for each daemon")
            ->capture_default_str();
        nodesCmd->callback([nodes, &context] { runNodes(*nodes, context); });

        auto watch = std::make_shared<WatchOptions>();
        watch->history = defaultHistoryPath();
        auto* watchCmd = app.add_subcommand(
            "watch", "Ingest a daemon's telemetry into the history and print host memory live");
        watchCmd->add_option("address", watch->address,
                             "Daemon address HOST:PORT (default: a one-node --cluster)");
        runplane::cli::addConnectionFlags(watchCmd, watch->connection);
        watchCmd->add_option("--history", watch->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        watchCmd->add_option("--seconds", watch->seconds, "Stop after N seconds (0: until Ctrl-C)");
        watchCmd->add_option("--hz", watch->sampleHz, "Requested host sampling rate (1..10)")
            ->check(CLI::Range(0.0, 10.0));
        watchCmd->add_flag("--json", watch->json, "Print one JSON object per line");
        watchCmd->add_flag("--no-diagnose", watch->noDiagnose,
                           "Do not diagnose a run on its first stall, its failure or a phase "
                           "overrun");
        watchCmd
            ->add_option("--phase-check-seconds", watch->phaseCheckSeconds,
                         "How often the runs seen are checked for a phase lasting past its "
                         "limit (docs/diagnosis.md)")
            ->check(CLI::Range(0.1, 86400.0))
            ->capture_default_str();
        watchCmd
            ->add_option("--phase-margin", watch->phaseMarginSeconds,
                         "Seconds in the phase limit max(3 x median, median + margin)")
            ->check(CLI::Range(0.0, 86400.0))
            ->capture_default_str();
        watchCmd->add_option("--consumer", watch->consumer,
                             "The daemon-side cursor name of this watcher (default "
                             "watch-<history hash>@<host>); records are kept until every "
                             "watcher's cursor acknowledged them");
        watchCmd->add_option("--alerts", watch->alerts,
                             "Alert rules file (default ~/.config/runplane/alerts.yaml when it "
                             "exists; docs/alerts.md)");
        watchCmd->add_flag("--no-role-alarms", watch->noRoleAlarms,
                           "Do not compare memory by role with the runs' plans");
        watchCmd->add_option("--recipes", watch->recipesDir,
                             "Recipes directory holding models/, for the role alarms' plans "
                             "(default: next to the executable)");
        watchCmd
            ->add_option("--role-alarm-reports", watch->roleAlarmReports,
                         "Reports in a row a role alarm must hold before it is recorded")
            ->check(CLI::Range(1, 3600))
            ->capture_default_str();
        watchCmd->callback([watch, &context] { runWatch(*watch, context); });
    });

}  // namespace
