#include "compute/smoke/host_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace runplane::smoke {

HostBuffer::~HostBuffer() {
    if (m_data != nullptr) {
        ::munmap(m_data, m_size);
    }
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept : m_data(other.m_data), m_size(other.m_size) {
    other.m_data = nullptr;
    other.m_size = 0;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
        if (m_data != nullptr) {
            ::munmap(m_data, m_size);
        }
        m_data = other.m_data;
        m_size = other.m_size;
        other.m_data = nullptr;
        other.m_size = 0;
    }
    return *this;
}

Result<HostBuffer> HostBuffer::allocate(std::size_t bytes) {
    HostBuffer buffer;
    if (bytes == 0) {
        return buffer;
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return Error{"host backup: mmap of " + std::to_string(bytes) +
                     " bytes failed: " + std::strerror(errno)};
    }
    buffer.m_data = static_cast<std::byte*>(p);
    buffer.m_size = bytes;
    return buffer;
}

void HostBuffer::touch() {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    volatile std::byte* p = m_data;
    for (std::size_t off = 0; off < m_size; off += page) {
        p[off] = std::byte{1};
    }
}

void HostBuffer::release() {
    if (m_data != nullptr) {
        ::madvise(m_data, m_size, MADV_DONTNEED);
    }
}

ProcessMemory readProcessMemory() {
    ProcessMemory mem;
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr) {
        return mem;
    }
    char line[256];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
        long kb = 0;
        if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) {
            mem.rssMb = static_cast<double>(kb) / 1024.0;
        } else if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) {
            mem.peakRssMb = static_cast<double>(kb) / 1024.0;
        }
    }
    std::fclose(f);
    return mem;
}

}  // namespace runplane::smoke
