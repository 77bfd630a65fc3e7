#pragma once
// Host memory for the colocated backups of runplane-smoke: page-aligned anonymous mappings whose
// residency we control exactly (mmap / madvise / munmap), so host RSS follows the backups
// without an allocator cache in between. Plus the process's RSS as the kernel reports it.
// Torch-free.

#include <cstddef>
#include <cstdint>

#include "common/result.h"

namespace runplane::smoke {

/// An anonymous private mapping of `size` bytes. Pages become resident when written and stop
/// being resident after release() (MADV_DONTNEED keeps the mapping, so the same addresses are
/// reused by the next backup: the zero_copy pattern). Move-only owner; not thread-safe.
class HostBuffer {
  public:
    HostBuffer() = default;
    ~HostBuffer();
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;

    static Result<HostBuffer> allocate(std::size_t bytes);

    std::byte* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_data == nullptr; }
    /// Writes one byte per page so every page is resident (real, touched memory).
    void touch();
    /// Drops the pages (contents become zero); the mapping stays for reuse.
    void release();

  private:
    std::byte* m_data = nullptr;
    std::size_t m_size = 0;
};

/// Resident set of this process from /proc/self/status (VmRSS, VmHWM), in MiB; -1 if unknown.
struct ProcessMemory {
    double rssMb = -1;
    double peakRssMb = -1;
};
ProcessMemory readProcessMemory();

}  // namespace runplane::smoke
