#include "compute/gpu/probe/probe_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "compute/gpu/json_text.h"

extern char** environ;

namespace runplane::compute::probe {
namespace {

using json::quote;

std::string number(double value) {
    if (!std::isfinite(value))
        return "0";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

std::string stringArray(const std::vector<std::string>& values) {
    std::string out = "[";
    for (std::size_t k = 0; k < values.size(); ++k)
        out += (k ? "," : "") + quote(values[k]);
    return out + "]";
}

}  // namespace

double percentile(std::vector<double> values, double p) {
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
    const std::size_t index = rank < 1.0 ? 0 : static_cast<std::size_t>(rank) - 1;
    return values[std::min(index, values.size() - 1)];
}

std::vector<std::pair<std::string, std::string>> probeEnvironment() {
    std::vector<std::pair<std::string, std::string>> env;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string text = *entry;
        const auto eq = text.find('=');
        if (eq == std::string::npos)
            continue;
        const std::string key = text.substr(0, eq);
        if (key.rfind("NCCL_", 0) == 0 || key == "CUDA_VISIBLE_DEVICES") {
            env.emplace_back(key, text.substr(eq + 1));
        }
    }
    std::sort(env.begin(), env.end());
    return env;
}

std::string ProbeReport::toJson() const {
    std::string out = "{\"tool\":\"runplane-nccl-probe\",\"schema\":1";
    out += ",\"argv\":" + stringArray(argv);
    out += ",\"env\":{";
    for (std::size_t k = 0; k < env.size(); ++k) {
        out += (k ? "," : "") + quote(env[k].first) + ":" + quote(env[k].second);
    }
    out += "},\"nccl_version\":" + quote(ncclVersion) +
           ",\"nccl_version_code\":" + std::to_string(ncclVersionCode) +
           ",\"nccl_library\":" + quote(ncclLibrary) +
           ",\"cuda_runtime_version\":" + std::to_string(cudaRuntimeVersion) +
           ",\"cuda_driver_version\":" + std::to_string(cudaDriverVersion) +
           ",\"mode\":" + quote(mode) + ",\"world_size\":" + std::to_string(worldSize) +
           ",\"first_rank\":" + std::to_string(firstRank) +
           ",\"local_ranks\":" + std::to_string(localRanks);
    out += ",\"gpus\":[";
    for (std::size_t k = 0; k < gpus.size(); ++k) {
        const auto& gpu = gpus[k];
        out += (k ? "," : "") + std::string("{\"device\":") + std::to_string(gpu.device) +
               ",\"name\":" + quote(gpu.name) + ",\"pci_bus_id\":" + quote(gpu.pciBusId) +
               ",\"memory_total_bytes\":" + std::to_string(gpu.memoryTotalBytes) +
               ",\"compute_capability\":" +
               quote(std::to_string(gpu.ccMajor) + "." + std::to_string(gpu.ccMinor)) + "}";
    }
    out += "],\"p2p_access\":[";
    for (std::size_t i = 0; i < p2pAccess.size(); ++i) {
        out += i ? ",[" : "[";
        for (std::size_t j = 0; j < p2pAccess[i].size(); ++j) {
            out += (j ? "," : "") + std::to_string(p2pAccess[i][j]);
        }
        out += "]";
    }
    out += "],\"nics\":[";
    for (std::size_t k = 0; k < nics.size(); ++k) {
        out += (k ? "," : "") + std::string("{\"name\":") + quote(nics[k].name) +
               ",\"link_layer\":" + quote(nics[k].linkLayer) +
               ",\"rate_gbps\":" + number(nics[k].rateGbps) +
               ",\"active\":" + (nics[k].active ? "true" : "false") + "}";
    }
    out += "],\"settings\":{\"collectives\":" + stringArray(collectives) +
           ",\"min_bytes\":" + std::to_string(minBytes) +
           ",\"max_bytes\":" + std::to_string(maxBytes) +
           ",\"warmup_iters\":" + std::to_string(warmupIters) +
           ",\"iters\":" + std::to_string(iters) + ",\"dtype\":\"float32\"}";
    out += ",\"rows\":[";
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& row = rows[k];
        out += (k ? "," : "") + std::string("{\"collective\":") + quote(row.collective) +
               ",\"bytes\":" + std::to_string(row.bytes) +
               ",\"count\":" + std::to_string(row.count) +
               ",\"iters\":" + std::to_string(row.iters) + ",\"time_us_p50\":" + number(row.p50) +
               ",\"time_us_p95\":" + number(row.p95) + ",\"time_us_min\":" + number(row.min) +
               ",\"time_us_mean\":" + number(row.mean) + ",\"algbw_gbps\":" + number(row.algbw) +
               ",\"busbw_gbps\":" + number(row.busbw) +
               ",\"correct\":" + (row.correct ? "true" : "false") +
               ",\"mismatches\":" + std::to_string(row.mismatches) + "}";
    }
    out += "],\"skipped\":[";
    for (std::size_t k = 0; k < skipped.size(); ++k) {
        out += (k ? "," : "") + std::string("{\"collective\":") + quote(skipped[k].collective) +
               ",\"bytes\":" + std::to_string(skipped[k].bytes) +
               ",\"reason\":" + quote(skipped[k].reason) + "}";
    }
    out += "],\"verdict\":" + quote(verdict) + ",\"verdict_status\":" + quote(verdictStatus) +
           ",\"unavailable\":" + quote(unavailable) + ",\"error\":" + quote(error) + "}";
    return out;
}

}  // namespace runplane::compute::probe
