// Bus-bandwidth factors and the healthy/degraded verdict. Kept C++17 and dependency-free: the
// probe (nvcc) compiles this file too, so its own report carries the same verdict.
#include "compute/gpu/nccl_verdict.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace runplane::compute {
namespace {

// An NVSwitch baseboard of Hopper SXM GPUs (HGX/DGX H100, H200): 8 GPUs, NVLink4 at 450 GB/s per
// direction per GPU. nccl-tests all-reduce busbw on 8 GPUs: ~370 GB/s (ring/tree) up to ~480 GB/s
// (NVLS, which Runplane disables with NCCL_NVLS_ENABLE=0).
constexpr double kHopperNvswitchLowGBps = 370.0;
constexpr double kHopperNvswitchHighGBps = 480.0;
constexpr unsigned kHopperNvswitchRanks = 8;
// An RDMA NIC delivers 92-96 % of its line rate as all-reduce busbw (NDR 400 Gb/s = 50 GB/s ->
// 46-48).
constexpr double kNicEfficiencyLow = 0.92;
constexpr double kNicEfficiencyHigh = 0.96;

std::string gbps(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

bool contains(const std::string& text, std::string_view word) {
    return text.find(word) != std::string::npos;
}

}  // namespace

double busBandwidthFactor(std::string_view collective, unsigned ranks) {
    if (ranks == 0)
        return 0.0;
    const double n = ranks;
    if (collective == "all_reduce")
        return 2.0 * (n - 1.0) / n;
    if (collective == "all_gather" || collective == "reduce_scatter" ||
        collective == "all_to_all") {
        return (n - 1.0) / n;
    }
    return 0.0;
}

bool isNvswitchHopperName(const std::string& gpuName) {
    return (contains(gpuName, "H100") || contains(gpuName, "H200")) && !contains(gpuName, "PCIe") &&
           !contains(gpuName, "NVL");
}

NcclVerdict judgeNcclProbe(const NcclVerdictInput& input) {
    NcclVerdict verdict;
    if (input.rows.empty()) {
        verdict.status = "n/a";
        verdict.text = "n/a: nothing was measured";
        return verdict;
    }
    std::string wrong;
    for (const auto& row : input.rows) {
        if (!row.correct) {
            wrong += wrong.empty() ? "" : ", ";
            wrong += row.collective + " at " + std::to_string(row.bytes) + " B";
        }
    }
    if (!wrong.empty()) {
        verdict.status = "failed";
        verdict.text = "failed: wrong results from " + wrong;
        return verdict;
    }
    if (input.worldSize <= 1) {
        verdict.status = "n/a";
        verdict.text = "n/a: single GPU, busbw is 0 by definition (results correct)";
        return verdict;
    }
    const NcclProbeRow* peak = nullptr;
    for (const auto& row : input.rows) {
        if (row.collective != "all_reduce" || row.bytes < kNcclJudgeMinBytes)
            continue;
        if (peak == nullptr || row.busbwGBps > peak->busbwGBps)
            peak = &row;
    }
    if (peak == nullptr) {
        verdict.status = "not judged";
        verdict.text = "not judged: results correct, but no all_reduce row of at least " +
                       std::to_string(kNcclJudgeMinBytes >> 20) + " MiB to judge";
        return verdict;
    }
    verdict.peakBusbwGBps = peak->busbwGBps;
    const std::string measured = "all_reduce peak busbw " + gbps(peak->busbwGBps) + " GB/s at " +
                                 std::to_string(peak->bytes) + " B over " +
                                 std::to_string(input.worldSize) + " ranks";

    const bool hopper =
        !input.gpuNames.empty() &&
        std::all_of(input.gpuNames.begin(), input.gpuNames.end(), isNvswitchHopperName);
    const bool crossNode = input.worldSize > input.localRanks;
    double low = 0, high = 0;
    if (!crossNode) {
        if (!hopper || input.worldSize != kHopperNvswitchRanks) {
            verdict.status = "not judged";
            verdict.text =
                "not judged: " + measured + "; no profile for " + std::to_string(input.worldSize) +
                " x " +
                (input.gpuNames.empty() ? std::string("unknown GPU") : input.gpuNames.front()) +
                " (profiles: 8 x H100/H200 SXM NVSwitch, multi-node RDMA)";
            return verdict;
        }
        verdict.profile = "8 x H100/H200 SXM NVSwitch";
        low = kHopperNvswitchLowGBps;
        high = kHopperNvswitchHighGBps;
    } else {
        double lineRateGBps = 0;
        unsigned active = 0;
        for (const auto& nic : input.nics) {
            if (!nic.active)
                continue;
            ++active;
            lineRateGBps += nic.rateGbps / 8.0;
        }
        if (active == 0) {
            verdict.status = "not judged";
            verdict.text = "not judged: " + measured +
                           "; cross-node but no active InfiniBand/RoCE port on this node (sockets "
                           "only, no profile)";
            return verdict;
        }
        verdict.profile = "multi-node RDMA, " + std::to_string(active) + " active NIC port(s), " +
                          gbps(lineRateGBps * 8.0) + " Gb/s in total";
        low = lineRateGBps * kNicEfficiencyLow;
        high = lineRateGBps * kNicEfficiencyHigh;
        if (hopper && input.localRanks == kHopperNvswitchRanks) {  // NVLink can cap it too
            low = std::min(low, kHopperNvswitchLowGBps);
            high = std::min(high, kHopperNvswitchHighGBps);
        }
    }
    verdict.expectedLowGBps = low;
    verdict.expectedHighGBps = high;
    verdict.thresholdGBps = kNcclHealthyFraction * low;
    const std::string expectation = "profile " + verdict.profile + " expects " + gbps(low) + "-" +
                                    gbps(high) + " GB/s, healthy from " +
                                    gbps(verdict.thresholdGBps) + " GB/s";
    if (peak->busbwGBps >= verdict.thresholdGBps) {
        verdict.status = "healthy";
        verdict.text = "healthy: " + measured + "; " + expectation;
    } else {
        verdict.status = "degraded";
        verdict.text = "degraded: " + measured + " (" + gbps(100.0 * peak->busbwGBps / low) +
                       " % of the expected low end); " + expectation;
    }
    return verdict;
}

}  // namespace runplane::compute
