#pragma once
// The sampled series the daemon writes, and their units, spoken once (issue #22). The names are
// stored in the history (series_registry.name) and are matched by the CLI and the GUI, so they
// are a file format: existing history files carry them, they never change. Metric series from
// the workload's log ("eval/gsm8k", "train/loss") are named by the workload and are not here.
// Plain C++ (no Qt, no protobuf).

#include <string>
#include <string_view>

namespace runplane::telemetry {

/// The units a series can be stored with (series_registry.unit; "" for a plain number).
namespace unit {
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kPercent = "%";
inline constexpr const char* kSeconds = "s";
inline constexpr const char* kHertz = "Hz";
}  // namespace unit

namespace series {
/// Node-level host memory (/proc/meminfo, bytes): used = MemTotal - MemAvailable.
inline constexpr const char* kHostPrefix = "host.";
inline constexpr const char* kHostMemPattern = "host.mem.*";  // a History::listSeries filter
inline constexpr const char* kHostMemTotal = "host.mem.total_bytes";
inline constexpr const char* kHostMemAvailable = "host.mem.available_bytes";
inline constexpr const char* kHostMemUsed = "host.mem.used_bytes";
inline constexpr const char* kHostMemPageCache = "host.mem.page_cache_bytes";
inline constexpr const char* kHostMemShmem = "host.mem.shmem_bytes";
inline constexpr const char* kHostSwapUsed = "host.swap.used_bytes";

/// Per run: its process tree (bytes, and a count).
inline constexpr const char* kRunTreeRss = "run.tree.rss_bytes";
inline constexpr const char* kRunTreePss = "run.tree.pss_bytes";
inline constexpr const char* kRunTreeProcesses = "run.tree.processes";

/// Per GPU: "gpu.<index>.<leaf>", node-level; per process on a GPU:
/// "gpu.<index>.pid.<pid>.mem.used_bytes", under the run whose tree holds the pid.
inline constexpr const char* kGpuPrefix = "gpu.";
inline constexpr const char* kGpuPattern = "gpu.*";  // a History::listSeries filter
inline constexpr const char* kGpuMemUsed = "mem.used_bytes";
inline constexpr const char* kGpuMemTotal = "mem.total_bytes";
inline constexpr const char* kGpuUtil = "util_percent";
inline constexpr const char* kGpuEccUncorrected = "ecc.uncorrected";
inline constexpr const char* kGpuNvlinkReplays = "nvlink.replay_errors";

inline std::string gpu(long long index, std::string_view leaf) {
    return kGpuPrefix + std::to_string(index) + "." + std::string(leaf);
}
inline std::string gpuProcessMemUsed(long long index, long long pid) {
    return gpu(index, "pid." + std::to_string(pid) + "." + kGpuMemUsed);
}
}  // namespace series

/// The unit of a series from its name's suffix, the daemon's naming rule: "_bytes" -> bytes,
/// "_percent" or "_pct" -> %, "_seconds" -> s, "_hz" -> Hz, else "" (counts, scores, losses).
constexpr const char* unitOf(std::string_view name) {
    if (name.ends_with("_bytes")) {
        return unit::kBytes;
    }
    if (name.ends_with("_percent") || name.ends_with("_pct")) {
        return unit::kPercent;
    }
    if (name.ends_with("_seconds")) {
        return unit::kSeconds;
    }
    if (name.ends_with("_hz")) {
        return unit::kHertz;
    }
    return "";
}

}  // namespace runplane::telemetry
