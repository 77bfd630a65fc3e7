// runplanectl nccl ...: which libnccl a run would load (+ the version gate) and the local
// bus-bandwidth probe, both through runplane_compute; `nccl probe ADDR...` runs the probe through
// daemons (runplane_control) and stores it in the history.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "backend/cli/command_registry.h"
#include "backend/cli/connection_flags.h"
#include "backend/control/history_location.h"
#include "backend/control/nccl_probe.h"
#include "compute/gpu/nccl_gate.h"
#include "compute/gpu/nccl_probe.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/subprocess.h"

namespace {

using namespace runplane::compute;
using nlohmann::json;

struct ResolveOptions {
    std::vector<std::string> env;
    bool cleanEnv = false;
    std::string python;
    std::string minVersion = formatNcclVersion(kNcclMinVersionCrossNodeCudaGraph);
    bool json = false;
};

struct ProbeOptions {
    std::string collectives = "all_reduce";
    std::string minBytes = "8M", maxBytes = "1G";
    unsigned warmup = 5, iters = 20;
    std::string ncclLibrary;
    bool json = false;
};

// "8M" -> 8 MiB; plain numbers are bytes; K/M/G are powers of 1024 (an optional "iB" is allowed).
bool parseSize(const std::string& text, std::uint64_t& out) {
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &used);
    } catch (const std::exception&) {
        return false;
    }
    std::string suffix = text.substr(used);
    if (suffix.size() == 3 && suffix.substr(1) == "iB")
        suffix = suffix.substr(0, 1);
    unsigned shift = 0;
    if (suffix == "K" || suffix == "k")
        shift = 10;
    else if (suffix == "M")
        shift = 20;
    else if (suffix == "G")
        shift = 30;
    else if (!suffix.empty() || text.empty() || text[0] == '-')
        return false;
    out = static_cast<std::uint64_t>(value) << shift;
    return true;
}

void runResolve(const ResolveOptions& options, runplane::cli::CliContext& context) {
    NcclResolveConfig config;
    if (!options.cleanEnv) {
        for (const auto& entry : currentEnvironment()) {
            const auto eq = entry.find('=');
            if (eq != std::string::npos)
                config.env[entry.substr(0, eq)] = entry.substr(eq + 1);
        }
    }
    for (const auto& pair : options.env) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::cerr << "--env '" << pair << "': expected KEY=VALUE\n";
            context.exitCode = 2;
            return;
        }
        config.env[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    config.python = options.python;
    const int minVersion = parseNcclVersionCode(options.minVersion);
    if (minVersion == 0) {
        std::cerr << "--min-version '" << options.minVersion << "': expected MAJOR.MINOR.PATCH\n";
        context.exitCode = 2;
        return;
    }
    const auto libraries = resolveNcclLibraries(config);
    const NcclGateResult gate = checkNcclRequirement(libraries, minVersion);
    if (options.json) {
        json out = {{"libraries", json::array()},
                    {"gate",
                     {{"min_version", formatNcclVersion(minVersion)},
                      {"pass", gate.pass},
                      {"message", gate.message}}}};
        for (const auto& lib : libraries) {
            out["libraries"].push_back({{"path", lib.path},
                                        {"source", std::string(toString(lib.source))},
                                        {"version_code", lib.versionCode},
                                        {"version", lib.version},
                                        {"error", lib.error},
                                        {"selected", lib.selected}});
        }
        std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
        if (libraries.empty())
            std::cout << "no libnccl.so.2 found\n";
        for (const auto& lib : libraries) {
            std::printf("%s %-21s %-8s %s%s\n", lib.selected ? "*" : " ",
                        std::string(toString(lib.source)).c_str(),
                        lib.error.empty() ? lib.version.c_str() : "-", lib.path.c_str(),
                        lib.error.empty() ? "" : ("  (" + lib.error + ")").c_str());
        }
        std::cout << (gate.pass ? "gate PASS: " : "gate FAIL: ") << gate.message << "\n";
    }
    context.exitCode = gate.pass ? 0 : 1;
}

// The sweep flags shared by probe-local and probe; false (exit 2, flag named) on bad input.
bool readSweep(const ProbeOptions& options, std::vector<std::string>* collectives,
               std::uint64_t* minBytes, std::uint64_t* maxBytes,
               runplane::cli::CliContext& context) {
    collectives->clear();
    std::string item;
    for (std::size_t k = 0; k <= options.collectives.size(); ++k) {
        if (k == options.collectives.size() || options.collectives[k] == ',') {
            if (!item.empty())
                collectives->push_back(item);
            item.clear();
        } else {
            item += options.collectives[k];
        }
    }
    if (!parseSize(options.minBytes, *minBytes)) {
        std::cerr << "--min-bytes '" << options.minBytes
                  << "': expected bytes, e.g. 8388608 or 8M\n";
        context.exitCode = 2;
        return false;
    }
    if (!parseSize(options.maxBytes, *maxBytes)) {
        std::cerr << "--max-bytes '" << options.maxBytes
                  << "': expected bytes, e.g. 1073741824 or 1G\n";
        context.exitCode = 2;
        return false;
    }
    return true;
}

void runProbe(const ProbeOptions& options, runplane::cli::CliContext& context) {
    NcclProbeConfig config;
    if (!readSweep(options, &config.collectives, &config.minBytes, &config.maxBytes, context)) {
        return;
    }
    config.warmupIters = options.warmup;
    config.iters = options.iters;
    config.ncclLibrary = options.ncclLibrary;
    const auto outcome = runNcclProbe(config);
    if (!outcome) {
        std::cerr << "nccl probe-local: " << outcome.error() << "\n";
        context.exitCode = 2;
        return;
    }
    bool allCorrect = true;
    for (const auto& row : outcome->rows)
        allCorrect = allCorrect && row.correct;
    if (options.json) {
        json out = {{"nccl_version", outcome->ncclVersion},
                    {"nccl_library", outcome->ncclLibraryPath},
                    {"ranks", outcome->ranks},
                    {"gpus", outcome->gpuNames},
                    {"env", outcome->ncclEnv},
                    {"verdict", outcome->verdict},
                    {"unavailable", outcome->unavailableReason},
                    {"rows", json::array()}};
        for (const auto& row : outcome->rows) {
            out["rows"].push_back({{"collective", row.collective},
                                   {"bytes", row.bytes},
                                   {"time_us_p50", row.timeUsP50},
                                   {"time_us_p95", row.timeUsP95},
                                   {"algbw_gbps", row.algbwGBps},
                                   {"busbw_gbps", row.busbwGBps},
                                   {"correct", row.correct}});
        }
        std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else if (!outcome->unavailableReason.empty()) {
        std::cout << outcome->unavailableReason << "\n";
    } else {
        std::cout << "NCCL " << outcome->ncclVersion << " (" << outcome->ncclLibraryPath << "), "
                  << outcome->ranks << " rank(s)";
        if (!outcome->gpuNames.empty())
            std::cout << ": " << outcome->gpuNames.front();
        std::cout << "\n";
        std::printf("%-15s %14s %12s %12s %12s %12s  %s\n", "collective", "bytes", "p50 us",
                    "p95 us", "algbw GB/s", "busbw GB/s", "correct");
        for (const auto& row : outcome->rows) {
            std::printf("%-15s %14llu %12.1f %12.1f %12.2f %12.2f  %s\n", row.collective.c_str(),
                        static_cast<unsigned long long>(row.bytes), row.timeUsP50, row.timeUsP95,
                        row.algbwGBps, row.busbwGBps, row.correct ? "yes" : "NO");
        }
        std::cout << "verdict: " << outcome->verdict << "\n";
    }
    context.exitCode = outcome->unavailableReason.empty() && allCorrect ? 0 : 1;
}

struct RemoteProbeOptions : ProbeOptions {
    std::vector<std::string> addresses;
    std::string history = runplane::control::defaultHistoryPath();
    std::string runId;
    bool noHistory = false;
    double timeout = 900;
    runplane::cli::ConnectionFlags connection;
};

void runRemoteProbe(const RemoteProbeOptions& options, runplane::cli::CliContext& context) {
    namespace control = runplane::control;
    control::NcclProbeSpec spec;
    if (!readSweep(options, &spec.collectives, &spec.minBytes, &spec.maxBytes, context)) {
        return;
    }
    spec.warmupIters = options.warmup;
    spec.iters = options.iters;
    spec.ncclLibrary = options.ncclLibrary;
    auto connection = runplane::cli::resolveConnection(options.connection);
    auto addresses =
        connection.ok()
            ? runplane::cli::addressesOrProfile(options.addresses, *connection, "nccl probe")
            : runplane::Result<std::vector<std::string>>(
                  runplane::Error{connection.ok() ? "" : connection.error()});
    if (!addresses.ok()) {
        std::cerr << "nccl probe: " << addresses.error() << "\n";
        context.exitCode = 2;
        return;
    }
    const auto probe = control::probeNcclAcross(
        *addresses, spec, connection->client,
        std::chrono::seconds(static_cast<long>(std::max(1.0, options.timeout))));
    if (!options.noHistory) {
        if (runplane::Status s = control::recordNcclProbe(options.history, options.runId, probe);
            !s.ok()) {
            std::cerr << "nccl probe: not recorded in the history: " << s.error() << "\n";
        }
    }
    if (options.json) {
        json nodes = json::array();
        for (const auto& n : probe.nodes) {
            json rows = json::array();
            for (const auto& r : n.report.rows) {
                rows.push_back({{"collective", r.collective},
                                {"bytes", r.bytes},
                                {"time_us_p50", r.timeUsP50},
                                {"time_us_p95", r.timeUsP95},
                                {"algbw_gbps", r.algbwGbps},
                                {"busbw_gbps", r.busbwGbps},
                                {"correct", r.correct}});
            }
            nodes.push_back({{"address", n.address},
                             {"node_id", n.nodeId},
                             {"gpus", n.gpus},
                             {"first_rank", n.firstRank},
                             {"error", n.error},
                             {"nccl_version", n.report.ncclVersion},
                             {"library", n.report.libraryPath},
                             {"verdict", n.report.verdict},
                             {"rows", rows}});
        }
        std::cout << json{{"world_size", probe.worldSize},
                          {"error", probe.error},
                          {"measured", probe.measured()},
                          {"nodes", nodes}}
                         .dump(2)
                  << "\n";
    } else {
        if (!probe.error.empty()) {
            std::cout << "error: " << probe.error << "\n";
        }
        for (const auto& n : probe.nodes) {
            std::cout << n.address << (n.nodeId.empty() ? "" : " (" + n.nodeId + ")") << ": "
                      << n.gpus << " GPU(s)";
            if (probe.worldSize > 0) {
                std::cout << ", ranks " << n.firstRank << ".." << n.firstRank + n.gpus - 1 << " of "
                          << probe.worldSize;
            }
            std::cout << (n.report.ncclVersion.empty() ? "" : ", NCCL " + n.report.ncclVersion)
                      << "\n";
            for (const auto& r : n.report.rows) {
                std::printf(
                    "  %-15s %12llu B  p50 %10.1f us  p95 %10.1f us  algbw %8.2f  busbw "
                    "%8.2f GB/s  %s\n",
                    r.collective.c_str(), static_cast<unsigned long long>(r.bytes), r.timeUsP50,
                    r.timeUsP95, r.algbwGbps, r.busbwGbps, r.correct ? "ok" : "WRONG");
            }
            if (!n.error.empty()) {
                std::cout << "  " << n.error << "\n";
            } else if (!n.report.verdict.empty()) {
                std::cout << "  verdict: " << n.report.verdict << "\n";
            }
        }
    }
    // 0 measured and correct; 3 nothing to measure (no GPU / NCCL); 1 otherwise.
    bool unavailable = probe.error.empty();
    for (const auto& n : probe.nodes) {
        unavailable = unavailable && n.reachable && n.report.rows.empty() &&
                      n.report.verdict.rfind("unavailable", 0) == 0;
    }
    context.exitCode = probe.measured() ? 0 : unavailable ? 3 : 1;
}

const bool kNcclGroup = runplane::cli::registerCommands([](CLI::App& app,
                                                           runplane::cli::CliContext& context) {
    CLI::App* nccl = app.add_subcommand(
        "nccl",
        "NCCL health: which libnccl a run loads (version gate) and the local bandwidth probe");
    nccl->require_subcommand(1);

    auto resolveOptions = std::make_shared<ResolveOptions>();
    CLI::App* resolve = nccl->add_subcommand(
        "resolve",
        "Every libnccl.so.2 a run with this environment would see, in loader order, and "
        "the version gate (exit 1 when it fails)");
    resolve->add_option("--env", resolveOptions->env,
                        "KEY=VALUE of the run's environment (repeatable; overrides this shell's)");
    resolve->add_flag("--clean-env", resolveOptions->cleanEnv,
                      "start from an empty environment instead of this shell's");
    resolve->add_option("--python", resolveOptions->python,
                        "the run's Python (default: python3 on the run's PATH)");
    resolve->add_option("--min-version", resolveOptions->minVersion,
                        "required NCCL version (default 2.30.7: cross-node CUDA-graph engines)");
    resolve->add_flag("--json", resolveOptions->json, "print JSON");
    resolve->callback([resolveOptions, &context] { runResolve(*resolveOptions, context); });

    auto probeOptions = std::make_shared<ProbeOptions>();
    CLI::App* probe = nccl->add_subcommand(
        "probe-local", "Bus-bandwidth probe over this host's GPUs (runplane-nccl-probe)");
    probe->add_option("--collectives", probeOptions->collectives,
                      "comma list of all_reduce, all_gather, reduce_scatter, all_to_all");
    probe->add_option("--min-bytes", probeOptions->minBytes, "smallest size (e.g. 8M)");
    probe->add_option("--max-bytes", probeOptions->maxBytes,
                      "largest size (e.g. 1G); sizes double");
    probe->add_option("--warmup", probeOptions->warmup, "warm-up iterations per size");
    probe->add_option("--iters", probeOptions->iters, "timed iterations per size");
    probe->add_option("--nccl-lib", probeOptions->ncclLibrary,
                      "libnccl.so.2 to measure (default: the loader's)");
    probe->add_flag("--json", probeOptions->json, "print JSON");
    probe->callback([probeOptions, &context] { runProbe(*probeOptions, context); });

    auto remote = std::make_shared<RemoteProbeOptions>();
    CLI::App* remoteCmd = nccl->add_subcommand(
        "probe",
        "Bus-bandwidth probe through daemons: one address measures its GPUs; several form one "
        "NCCL world (the ncclUniqueId handed out over gRPC). Stored in the history. Exit 0 "
        "measured and correct, 3 nothing to measure (no GPU/NCCL), 1 otherwise");
    remoteCmd->add_option("addresses", remote->addresses,
                          "Daemon addresses HOST:PORT (default: the --cluster nodes)");
    remoteCmd->add_option("--collectives", remote->collectives,
                          "comma list of all_reduce, all_gather, reduce_scatter, all_to_all");
    remoteCmd->add_option("--min-bytes", remote->minBytes, "smallest size (e.g. 8M)");
    remoteCmd->add_option("--max-bytes", remote->maxBytes, "largest size (e.g. 1G)");
    remoteCmd->add_option("--warmup", remote->warmup, "warm-up iterations per size");
    remoteCmd->add_option("--iters", remote->iters, "timed iterations per size");
    remoteCmd->add_option("--nccl-lib", remote->ncclLibrary,
                          "libnccl.so.2 on the nodes (default: what each daemon resolves)");
    remoteCmd->add_option("--timeout", remote->timeout, "seconds per daemon call")
        ->capture_default_str();
    remoteCmd->add_option("--history", remote->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    remoteCmd->add_option("--run-id", remote->runId, "Attach the results to this run");
    remoteCmd->add_flag("--no-history", remote->noHistory, "do not store the results");
    runplane::cli::addConnectionFlags(remoteCmd, remote->connection);
    remoteCmd->add_flag("--json", remote->json, "print JSON");
    remoteCmd->callback([remote, &context] { runRemoteProbe(*remote, context); });
});

}  // namespace
