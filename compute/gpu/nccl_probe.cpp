// Drives runplane-nccl-probe (a child process: CUDA and NCCL never load into the caller) and reads
// its JSON report. Report schema: docs/nccl-health.md.
#include "compute/gpu/nccl_probe.h"

#include <nlohmann/json.hpp>

#include <set>

#include "compute/gpu/helper_path.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/nccl_verdict.h"
#include "compute/gpu/subprocess.h"

#ifndef RUNPLANE_CUDA_REASON
#define RUNPLANE_CUDA_REASON "CUDA/NCCL not found at build time"
#endif

namespace runplane::compute {
namespace {

constexpr const char* kProbe = "runplane-nccl-probe";
constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES

using nlohmann::json;

std::string tail(const std::string& text, std::size_t max = 2000) {
    return text.size() <= max ? text : "..." + text.substr(text.size() - max);
}

Status validate(const NcclProbeConfig& config) {
    static const std::set<std::string> kKnown = {"all_reduce", "all_gather", "reduce_scatter",
                                                 "all_to_all"};
    if (config.collectives.empty())
        return Error{"collectives: at least one is required"};
    for (std::size_t k = 0; k < config.collectives.size(); ++k) {
        if (kKnown.count(config.collectives[k]) == 0) {
            return Error{"collectives[" + std::to_string(k) + "]: unknown collective '" +
                         config.collectives[k] +
                         "' (known: all_reduce, all_gather, reduce_scatter, all_to_all)"};
        }
    }
    if (config.minBytes == 0)
        return Error{"minBytes: must be > 0"};
    if (config.minBytes > config.maxBytes) {
        return Error{"minBytes: " + std::to_string(config.minBytes) + " is larger than maxBytes " +
                     std::to_string(config.maxBytes)};
    }
    if (config.iters == 0)
        return Error{"iters: must be > 0"};
    if (!config.uniqueId.empty()) {
        if (config.uniqueId.size() != kUniqueIdBytes) {
            return Error{"uniqueId: must be " + std::to_string(kUniqueIdBytes) + " bytes, got " +
                         std::to_string(config.uniqueId.size())};
        }
        if (config.worldSize == 0)
            return Error{"worldSize: must be > 0 with a uniqueId"};
        if (config.firstRank >= config.worldSize) {
            return Error{"firstRank: " + std::to_string(config.firstRank) +
                         " is not below worldSize " + std::to_string(config.worldSize)};
        }
    } else if (config.worldSize != 0 || config.firstRank != 0) {
        return Error{"worldSize/firstRank: only meaningful with a uniqueId (multi-node mode)"};
    }
    return {};
}

std::string unavailableBinary(const std::string& searched) {
#ifdef RUNPLANE_HAVE_CUDA
    return std::string("unavailable: ") + kProbe + " not found (looked in " + searched + ")";
#else
    (void)searched;
    return std::string("unavailable: built without CUDA+NCCL (") + RUNPLANE_CUDA_REASON + ")";
#endif
}

std::vector<std::string> probeEnvironment(const NcclProbeConfig& config) {
    std::map<std::string, std::string> env;
    for (const auto& entry : currentEnvironment()) {
        const auto eq = entry.find('=');
        env[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
    }
    for (const auto& [key, value] : config.env)
        env[key] = value;
    // NVLS multicast binds fail on several hosts (docs/gpu-host.md); keep it off unless asked.
    env.emplace("NCCL_NVLS_ENABLE", "0");
    std::vector<std::string> out;
    for (const auto& [key, value] : env)
        out.push_back(key + "=" + value);
    return out;
}

template <typename T>
Result<T> field(const json& object, const std::string& where, const char* key) {
    const auto it = object.find(key);
    if (it == object.end())
        return Error{"probe report: " + where + key + ": missing"};
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return Error{"probe report: " + where + key + ": wrong type (" + it->type_name() + ")"};
    }
}

}  // namespace

Result<NcclProbeOutcome> parseNcclProbeReport(std::string_view text) {
    json report;
    try {
        report = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        return Error{"probe report is not JSON (byte " + std::to_string(e.byte) + "): " + e.what()};
    }
    if (!report.is_object())
        return Error{"probe report: top level must be an object"};
    NcclProbeOutcome outcome;
    outcome.rawJson = std::string(text);
    if (const auto it = report.find("error");
        it != report.end() && it->is_string() && !it->get<std::string>().empty()) {
        return Error{"runplane-nccl-probe failed: " + it->get<std::string>()};
    }
    if (const auto it = report.find("unavailable");
        it != report.end() && it->is_string() && !it->get<std::string>().empty()) {
        outcome.unavailableReason = it->get<std::string>();
        if (outcome.unavailableReason.rfind("unavailable", 0) != 0) {
            outcome.unavailableReason = "unavailable: " + outcome.unavailableReason;
        }
        return outcome;
    }
    auto version = field<std::string>(report, "", "nccl_version");
    if (!version)
        return Error{version.error()};
    outcome.ncclVersion = *version;
    auto world = field<unsigned>(report, "", "world_size");
    if (!world)
        return Error{world.error()};
    outcome.ranks = *world;
    auto local = field<unsigned>(report, "", "local_ranks");
    if (!local)
        return Error{local.error()};
    if (const auto it = report.find("nccl_library"); it != report.end() && it->is_string()) {
        outcome.ncclLibraryPath = it->get<std::string>();
    }
    if (const auto it = report.find("env"); it != report.end() && it->is_object()) {
        for (const auto& [key, value] : it->items()) {
            if (value.is_string())
                outcome.ncclEnv[key] = value.get<std::string>();
        }
    }
    NcclVerdictInput input;
    input.worldSize = outcome.ranks;
    input.localRanks = *local;
    if (const auto it = report.find("gpus"); it != report.end() && it->is_array()) {
        for (std::size_t k = 0; k < it->size(); ++k) {
            auto name = field<std::string>((*it)[k], "gpus[" + std::to_string(k) + "].", "name");
            if (!name)
                return Error{name.error()};
            outcome.gpuNames.push_back(*name);
        }
    }
    if (const auto it = report.find("nics"); it != report.end() && it->is_array()) {
        for (const auto& entry : *it) {
            NcclNic nic;
            nic.name = entry.value("name", "");
            nic.linkLayer = entry.value("link_layer", "");
            nic.rateGbps = entry.value("rate_gbps", 0.0);
            nic.active = entry.value("active", false);
            input.nics.push_back(nic);
        }
    }
    const auto rows = report.find("rows");
    if (rows == report.end() || !rows->is_array())
        return Error{"probe report: rows: missing or not an array"};
    for (std::size_t k = 0; k < rows->size(); ++k) {
        const json& entry = (*rows)[k];
        const std::string where = "rows[" + std::to_string(k) + "].";
        if (!entry.is_object())
            return Error{"probe report: " + where + ": not an object"};
        NcclProbeRow row;
        auto collective = field<std::string>(entry, where, "collective");
        auto bytes = field<std::uint64_t>(entry, where, "bytes");
        auto p50 = field<double>(entry, where, "time_us_p50");
        auto p95 = field<double>(entry, where, "time_us_p95");
        auto algbw = field<double>(entry, where, "algbw_gbps");
        auto busbw = field<double>(entry, where, "busbw_gbps");
        auto correct = field<bool>(entry, where, "correct");
        for (const std::string* error :
             {collective ? nullptr : &collective.error(), bytes ? nullptr : &bytes.error(),
              p50 ? nullptr : &p50.error(), p95 ? nullptr : &p95.error(),
              algbw ? nullptr : &algbw.error(), busbw ? nullptr : &busbw.error(),
              correct ? nullptr : &correct.error()}) {
            if (error != nullptr)
                return Error{*error};
        }
        row.collective = *collective;
        row.bytes = *bytes;
        row.timeUsP50 = *p50;
        row.timeUsP95 = *p95;
        row.algbwGBps = *algbw;
        row.busbwGBps = *busbw;
        row.correct = *correct;
        outcome.rows.push_back(row);
    }
    input.rows = outcome.rows;
    input.gpuNames = outcome.gpuNames;
    outcome.verdict = judgeNcclProbe(input).text;
    return outcome;
}

Result<NcclProbeOutcome> runNcclProbe(const NcclProbeConfig& config) {
    if (Status valid = validate(config); !valid)
        return Error{valid.error()};
    std::string searched;
    const std::string binary = findHelperExecutable(kProbe, config.probeBinaryPath, &searched);
    if (binary.empty()) {
        NcclProbeOutcome outcome;
        outcome.unavailableReason = unavailableBinary(searched);
        return outcome;
    }
    ProcessSpec spec;
    spec.argv = {binary, "--collectives"};
    std::string list;
    for (const auto& collective : config.collectives)
        list += (list.empty() ? "" : ",") + collective;
    spec.argv.push_back(list);
    for (const auto& [flag, value] :
         {std::pair<const char*, std::uint64_t>{"--min-bytes", config.minBytes},
          {"--max-bytes", config.maxBytes},
          {"--warmup", config.warmupIters},
          {"--iters", config.iters}}) {
        spec.argv.push_back(flag);
        spec.argv.push_back(std::to_string(value));
    }
    if (!config.ncclLibrary.empty()) {
        spec.argv.push_back("--nccl-lib");
        spec.argv.push_back(config.ncclLibrary);
    }
    if (!config.uniqueId.empty()) {
        spec.argv.insert(spec.argv.end(), {"--unique-id", formatNcclUniqueIdHex(config.uniqueId),
                                           "--world-size", std::to_string(config.worldSize),
                                           "--first-rank", std::to_string(config.firstRank)});
    }
    spec.env = probeEnvironment(config);
    spec.timeout = std::chrono::seconds(config.timeoutSeconds);
    const ProcessResult result = runProcess(spec);
    if (!result.spawnError.empty())
        return Error{result.spawnError};
    if (result.timedOut) {
        return Error{std::string(kProbe) + " did not finish within " +
                     std::to_string(config.timeoutSeconds) +
                     " s and was killed (a hang in NCCL init or in a collective?); stderr: " +
                     tail(result.err)};
    }
    if (result.termSignal != 0) {
        return Error{std::string(kProbe) + " " + result.describeEnd() +
                     "; stderr: " + tail(result.err)};
    }
    auto outcome = parseNcclProbeReport(result.out);
    if (!outcome && result.exitCode != 0) {
        return Error{std::string(kProbe) + " ended with " + result.describeEnd() + " (" +
                     outcome.error() + "); stderr: " + tail(result.err)};
    }
    return outcome;
}

NcclUniqueIdLease::NcclUniqueIdLease(int pid, std::vector<unsigned char> id)
    : m_pid(pid), m_id(std::move(id)) {}

NcclUniqueIdLease::~NcclUniqueIdLease() {
    killProcessGroup(m_pid);
}

std::string NcclUniqueIdLease::hex() const {
    return formatNcclUniqueIdHex(m_id);
}

Result<std::unique_ptr<NcclUniqueIdLease>> createNcclUniqueId(const NcclProbeConfig& config,
                                                              std::chrono::seconds hold) {
    std::string searched;
    const std::string binary = findHelperExecutable(kProbe, config.probeBinaryPath, &searched);
    if (binary.empty())
        return Error{unavailableBinary(searched)};
    ProcessSpec spec;
    spec.argv = {binary, "--print-unique-id", "--hold-seconds", std::to_string(hold.count())};
    if (!config.ncclLibrary.empty()) {
        spec.argv.push_back("--nccl-lib");
        spec.argv.push_back(config.ncclLibrary);
    }
    spec.env = probeEnvironment(config);
    SpawnedProcess process;
    if (auto error = process.start(spec))
        return Error{*error};
    const auto line = process.readLine(std::chrono::seconds(60));
    if (!line) {
        return Error{std::string(kProbe) + " --print-unique-id printed no id within 60 s"};
    }
    auto id = parseNcclUniqueIdHex(*line);
    if (!id) {
        return Error{std::string(kProbe) + " --print-unique-id: " + id.error() + " in output '" +
                     tail(*line, 300) + "'"};
    }
    return std::make_unique<NcclUniqueIdLease>(process.release(), std::move(*id));
}

}  // namespace runplane::compute
