// runplanectl nccl ...: which libnccl a run would load (+ the version gate) and the local
// bus-bandwidth probe, both through runplane_compute. `nccl probe <addr>` (through a daemon) is
// registered by the daemon client's command group.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "backend/cli/command_registry.h"
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

void runProbe(const ProbeOptions& options, runplane::cli::CliContext& context) {
    NcclProbeConfig config;
    config.collectives.clear();
    std::string item;
    for (std::size_t k = 0; k <= options.collectives.size(); ++k) {
        if (k == options.collectives.size() || options.collectives[k] == ',') {
            if (!item.empty())
                config.collectives.push_back(item);
            item.clear();
        } else {
            item += options.collectives[k];
        }
    }
    if (!parseSize(options.minBytes, config.minBytes)) {
        std::cerr << "--min-bytes '" << options.minBytes
                  << "': expected bytes, e.g. 8388608 or 8M\n";
        context.exitCode = 2;
        return;
    }
    if (!parseSize(options.maxBytes, config.maxBytes)) {
        std::cerr << "--max-bytes '" << options.maxBytes
                  << "': expected bytes, e.g. 1073741824 or 1G\n";
        context.exitCode = 2;
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

const bool kRegistered = runplane::cli::registerCommands([](CLI::App& app,
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
});

}  // namespace
