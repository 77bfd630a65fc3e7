// CPU-side cost of NCCL health: resolving libnccl (child processes per candidate, done in preflight
// and on every GetNode), parsing a full probe report, the verdict, and an NVML sample when NVML is
// absent (the daemon's sampling loop on a GPU-less node). Results: docs/performance.md.
#include <benchmark/benchmark.h>

#include <string>

#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/nccl_probe.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/nccl_verdict.h"

namespace {

using namespace runplane::compute;

// A report of the default GPU-host sweep: 4 collectives x 11 sizes on 8 GPUs.
std::string fullReport() {
    std::string rows;
    for (const char* collective : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
        for (unsigned long long bytes = 8ull << 20; bytes <= 8ull << 30; bytes *= 2) {
            if (!rows.empty())
                rows += ",";
            rows += std::string("{\"collective\":\"") + collective +
                    "\",\"bytes\":" + std::to_string(bytes) +
                    ",\"count\":1,\"iters\":20,\"time_us_p50\":4900.5,\"time_us_p95\":5100.2,"
                    "\"time_us_min\":4800,\"time_us_mean\":4950,\"algbw_gbps\":219.1,"
                    "\"busbw_gbps\":383.4,\"correct\":true,\"mismatches\":0}";
        }
    }
    std::string gpus;
    for (int k = 0; k < 8; ++k) {
        gpus += std::string(k ? "," : "") + "{\"device\":" + std::to_string(k) +
                ",\"name\":\"NVIDIA H200\"}";
    }
    return "{\"tool\":\"runplane-nccl-probe\",\"schema\":1,\"env\":{\"NCCL_NVLS_ENABLE\":\"0\"},"
           "\"nccl_version\":\"2.28.9\",\"nccl_library\":\"/x/libnccl.so.2\",\"world_size\":8,"
           "\"local_ranks\":8,\"gpus\":[" +
           gpus + "],\"nics\":[],\"rows\":[" + rows + "],\"unavailable\":\"\",\"error\":\"\"}";
}

void BM_ParseProbeReport(benchmark::State& state) {
    const std::string report = fullReport();
    for (auto _ : state) {
        auto outcome = parseNcclProbeReport(report);
        benchmark::DoNotOptimize(outcome);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * report.size()));
}
BENCHMARK(BM_ParseProbeReport);

void BM_JudgeProbe(benchmark::State& state) {
    const auto outcome = parseNcclProbeReport(fullReport());
    NcclVerdictInput input;
    input.rows = outcome->rows;
    input.worldSize = input.localRanks = 8;
    input.gpuNames = outcome->gpuNames;
    for (auto _ : state) {
        benchmark::DoNotOptimize(judgeNcclProbe(input));
    }
}
BENCHMARK(BM_JudgeProbe);

// This machine's real search: ldconfig -p plus one runplane-nccl-version child per copy found.
void BM_ResolveSystem(benchmark::State& state) {
    NcclResolveConfig config;
    config.versionHelperPath = COMPUTE_VERSION_HELPER;
    config.env = {{"PATH", "/usr/bin:/bin"}};
    std::size_t found = 0;
    for (auto _ : state) {
        found = resolveNcclLibraries(config).size();
    }
    state.counters["copies"] = static_cast<double>(found);
}
BENCHMARK(BM_ResolveSystem)->Unit(benchmark::kMillisecond);

void BM_QueryGpusAbsentNvml(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(queryGpusFrom("/nonexistent/libnvidia-ml.so.1"));
    }
}
BENCHMARK(BM_QueryGpusAbsentNvml);

}  // namespace

BENCHMARK_MAIN();
