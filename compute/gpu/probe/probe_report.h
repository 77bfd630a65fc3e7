#pragma once
// The probe's JSON report (schema in docs/nccl-health.md) and the statistics that fill it.
// Plain C++17, no CUDA: compiled by the host compiler.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compute/gpu/nccl_verdict.h"

namespace runplane::compute::probe {

struct ProbeGpu {
    int device = 0;
    std::string name, pciBusId;
    std::uint64_t memoryTotalBytes = 0;
    int ccMajor = 0, ccMinor = 0;
};

/// One measured (collective, size). Times in microseconds per iteration; bandwidths in GB/s
/// (1e9 bytes/s) from the p50 time.
struct ProbeRow {
    std::string collective;
    std::uint64_t bytes = 0, count = 0;
    unsigned iters = 0;
    double p50 = 0, p95 = 0, min = 0, mean = 0, algbw = 0, busbw = 0;
    bool correct = false;
    unsigned long long mismatches = 0;
};

struct ProbeSkip {
    std::string collective;
    std::uint64_t bytes = 0;
    std::string reason;
};

/// Everything the probe prints. One instance per run; not thread-safe.
struct ProbeReport {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // NCCL_* and CUDA_VISIBLE_DEVICES
    std::string ncclVersion, ncclLibrary;
    int ncclVersionCode = 0, cudaRuntimeVersion = 0, cudaDriverVersion = 0;
    std::string mode = "single-process";  // or "multi-node"
    unsigned worldSize = 0, firstRank = 0, localRanks = 0;
    std::vector<ProbeGpu> gpus;
    std::vector<std::vector<int>> p2pAccess;  // [i][j] = cudaDeviceCanAccessPeer(i, j)
    std::vector<NcclNic> nics;
    std::vector<std::string> collectives;
    std::uint64_t minBytes = 0, maxBytes = 0;
    unsigned warmupIters = 0, iters = 0;
    std::vector<ProbeRow> rows;
    std::vector<ProbeSkip> skipped;
    std::string verdict, verdictStatus;
    std::string unavailable, error;

    std::string toJson() const;
};

/// Nearest-rank percentile: sorted[ceil(p/100 * N) - 1]; 0 for an empty set.
double percentile(std::vector<double> values, double p);

/// NCCL_* variables and CUDA_VISIBLE_DEVICES of this process, sorted by name.
std::vector<std::pair<std::string, std::string>> probeEnvironment();

}  // namespace runplane::compute::probe
