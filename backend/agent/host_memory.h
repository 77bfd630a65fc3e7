#pragma once
// Host memory from /proc/meminfo, and the small pure parser behind it (unit-tested on fixtures).
// Formulas (docs/daemon.md): used = MemTotal - MemAvailable; page cache = Cached + Buffers
// (Cached already contains Shmem, reported separately as shmem); swap used = SwapTotal - SwapFree.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace runplane::agent {

/// One reading of /proc/meminfo, in bytes. Plain value type.
struct HostMemory {
    std::uint64_t totalBytes = 0;
    std::uint64_t availableBytes = 0;
    std::uint64_t usedBytes = 0;       // total - available
    std::uint64_t pageCacheBytes = 0;  // Cached + Buffers
    std::uint64_t shmemBytes = 0;      // Shmem (tmpfs, /dev/shm; also counted in Cached)
    std::uint64_t swapUsedBytes = 0;   // SwapTotal - SwapFree
    std::uint64_t buffersBytes = 0;
    std::uint64_t cachedBytes = 0;
    std::uint64_t freeBytes = 0;
    std::uint64_t swapTotalBytes = 0;
};

/// Parses meminfo text; Error names the missing field ("no MemTotal line").
Result<HostMemory> parseMeminfo(std::string_view text);

/// Reads and parses the file (default /proc/meminfo). Allocation-free after the first call on
/// the same thread is not promised; it is cheap (one read of ~1.5 KiB).
Result<HostMemory> readHostMemory(const std::string& path = "/proc/meminfo");

}  // namespace runplane::agent
