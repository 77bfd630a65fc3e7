#pragma once
// The sampled series the daemon writes, and their units, spoken once (issue #22). The names are
// stored in the history (series_registry.name) and are matched by the CLI and the GUI, so they
// are a file format: existing history files carry them, they never change. Metric series from
// the workload's log ("eval/gsm8k", "train/loss") are named by the workload and are not here.
// Plain C++ (no Qt, no protobuf).

#include <array>
#include <optional>
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

/// A series' unit as a type: what a Sample carries on the wire (v1::Unit mirrors it; only
/// backend/control/node_convert.cpp and the daemon's collector map the two).
enum class Unit { None, Bytes, Percent, Seconds, Hertz };

/// The stored spelling (series_registry.unit): "", "bytes", "%", "s", "Hz".
constexpr const char* toString(Unit unit) {
    switch (unit) {
        case Unit::Bytes:
            return unit::kBytes;
        case Unit::Percent:
            return unit::kPercent;
        case Unit::Seconds:
            return unit::kSeconds;
        case Unit::Hertz:
            return unit::kHertz;
        case Unit::None:
            break;
    }
    return "";
}

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

/// Per process role (issue 43; docs/daemon.md, "Process roles"), node-level:
/// "role.<role>.<leaf>" (role = trainer, rollout, router, ray, driver, other or a role-table
/// row's own name, [a-z][a-z0-9_]*); a rollout engine's RSS "role.rollout.engine.<id>.rss_bytes";
/// GPU memory by role "gpu.<index>.role.<role>.mem.used_bytes"; the walk itself "roles.<leaf>".
inline constexpr const char* kRolePrefix = "role.";
inline constexpr const char* kRolePattern = "role.*";  // a History::listSeries filter
inline constexpr const char* kRoleRss = "rss_bytes";
inline constexpr const char* kRolePss = "pss_bytes";
inline constexpr const char* kRoleSwap = "swap_bytes";
inline constexpr const char* kRoleLocked = "locked_bytes";
inline constexpr const char* kRoleObjectStore = "object_store_bytes";
inline constexpr const char* kRoleProcesses = "processes";
inline constexpr const char* kRoleUnreadable = "unreadable";
inline constexpr const char* kRolesScanned = "roles.scanned";
inline constexpr const char* kRolesVanished = "roles.vanished";
inline constexpr const char* kRolesSkipped = "roles.skipped";
inline constexpr const char* kRolesScanSeconds = "roles.scan_seconds";

inline std::string role(std::string_view roleName, std::string_view leaf) {
    return kRolePrefix + std::string(roleName) + "." + std::string(leaf);
}
inline std::string roleEngineRss(std::string_view engine) {
    return role("rollout", "engine." + std::string(engine) + "." + kRoleRss);
}
inline std::string gpuRoleMemUsed(long long index, std::string_view roleName) {
    return gpu(index, "role." + std::string(roleName) + "." + kGpuMemUsed);
}
}  // namespace series

/// Inverse of toString (the stored spelling); nullopt for anything else.
constexpr std::optional<Unit> unitFromString(std::string_view text) {
    for (Unit u : {Unit::None, Unit::Bytes, Unit::Percent, Unit::Seconds, Unit::Hertz}) {
        if (text == toString(u)) {
            return u;
        }
    }
    return std::nullopt;
}

/// The unit of a series from its name's suffix, the naming rule: "_bytes" -> bytes,
/// "_percent" or "_pct" -> %, "_seconds" -> s, "_hz" -> Hz, else none (counts, scores, losses).
/// The daemon applies it to a workload's metrics; the controller only to a sample sent without a
/// unit (an older daemon or spool record).
constexpr Unit unitOf(std::string_view name) {
    if (name.ends_with("_bytes")) {
        return Unit::Bytes;
    }
    if (name.ends_with("_percent") || name.ends_with("_pct")) {
        return Unit::Percent;
    }
    if (name.ends_with("_seconds")) {
        return Unit::Seconds;
    }
    if (name.ends_with("_hz")) {
        return Unit::Hertz;
    }
    return Unit::None;
}

namespace series {

/// A series the daemon samples (a whole name, or a GPU series' leaf) and its unit.
struct Sampled {
    std::string_view name;
    Unit unit;
};

/// The series the daemon samples under a whole name (host, run tree), with the unit it sends.
inline constexpr std::array<Sampled, 13> kSampled{{
    {kHostMemTotal, Unit::Bytes},
    {kHostMemAvailable, Unit::Bytes},
    {kHostMemUsed, Unit::Bytes},
    {kHostMemPageCache, Unit::Bytes},
    {kHostMemShmem, Unit::Bytes},
    {kHostSwapUsed, Unit::Bytes},
    {kRunTreeRss, Unit::Bytes},
    {kRunTreePss, Unit::Bytes},
    {kRunTreeProcesses, Unit::None},
    {kRolesScanned, Unit::None},
    {kRolesVanished, Unit::None},
    {kRolesSkipped, Unit::None},
    {kRolesScanSeconds, Unit::Seconds},
}};

/// The leaves of the role series ("role.<role>.<leaf>"), with the unit the daemon sends.
inline constexpr std::array<Sampled, 7> kSampledRole{{
    {kRoleRss, Unit::Bytes},
    {kRolePss, Unit::Bytes},
    {kRoleSwap, Unit::Bytes},
    {kRoleLocked, Unit::Bytes},
    {kRoleObjectStore, Unit::Bytes},
    {kRoleProcesses, Unit::None},
    {kRoleUnreadable, Unit::None},
}};

/// The leaves of the GPU series it samples ("gpu.<i>.<leaf>"; "gpu.<i>.pid.<pid>.<leaf>" for
/// mem.used_bytes), with the unit it sends.
inline constexpr std::array<Sampled, 5> kSampledGpu{{
    {kGpuMemUsed, Unit::Bytes},
    {kGpuMemTotal, Unit::Bytes},
    {kGpuUtil, Unit::Percent},
    {kGpuEccUncorrected, Unit::None},
    {kGpuNvlinkReplays, Unit::None},
}};

/// The unit of a series the daemon samples (kSampled, kSampledGpu); nullopt for any other name
/// (a workload's metric, whose unit is its name's suffix: unitOf).
constexpr std::optional<Unit> sampledUnit(std::string_view name) {
    // Removes "<prefix><digits>." from the front of rest; false (rest unchanged) if absent.
    auto skipIndexed = [](std::string_view& rest, std::string_view prefix) {
        if (!rest.starts_with(prefix)) {
            return false;
        }
        std::size_t end = prefix.size();
        while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') {
            ++end;
        }
        if (end == prefix.size() || end >= rest.size() || rest[end] != '.') {
            return false;
        }
        rest.remove_prefix(end + 1);
        return true;
    };
    // Removes "role.<name>." from the front of rest (name: [a-z][a-z0-9_]*); false if absent.
    auto skipRole = [](std::string_view& rest) {
        constexpr std::string_view prefix = "role.";
        if (!rest.starts_with(prefix) || rest.size() <= prefix.size() ||
            rest[prefix.size()] < 'a' || rest[prefix.size()] > 'z') {
            return false;
        }
        std::size_t end = prefix.size();
        while (end < rest.size() && ((rest[end] >= 'a' && rest[end] <= 'z') ||
                                     (rest[end] >= '0' && rest[end] <= '9') || rest[end] == '_')) {
            ++end;
        }
        if (end >= rest.size() || rest[end] != '.') {
            return false;
        }
        rest.remove_prefix(end + 1);
        return true;
    };
    std::string_view leaf = name;
    if (skipRole(leaf)) {
        // "role.rollout.engine.<id>.rss_bytes": an engine's id is digits.
        if (skipIndexed(leaf, "engine.") && leaf != kRoleRss) {
            return std::nullopt;
        }
        for (const Sampled& s : kSampledRole) {
            if (s.name == leaf) {
                return s.unit;
            }
        }
        return std::nullopt;
    }
    if (!skipIndexed(leaf, kGpuPrefix)) {
        for (const Sampled& s : kSampled) {
            if (s.name == name) {
                return s.unit;
            }
        }
        return std::nullopt;
    }
    if (skipIndexed(leaf, "pid.") && leaf != kGpuMemUsed) {
        return std::nullopt;
    }
    if (leaf.starts_with("role.")) {
        return skipRole(leaf) && leaf == kGpuMemUsed ? std::optional<Unit>(Unit::Bytes)
                                                     : std::nullopt;
    }
    for (const Sampled& s : kSampledGpu) {
        if (s.name == leaf) {
            return s.unit;
        }
    }
    return std::nullopt;
}

}  // namespace series

}  // namespace runplane::telemetry
