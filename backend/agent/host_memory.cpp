#include "backend/agent/host_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace runplane::agent {
namespace {

// "MemTotal:       32791740 kB" -> bytes; returns false when the line does not match `key`.
bool fieldValue(std::string_view line, std::string_view key, std::uint64_t& out) {
    if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 ||
        line[key.size()] != ':') {
        return false;
    }
    std::size_t i = key.size() + 1;
    while (i < line.size() && line[i] == ' ') {
        ++i;
    }
    std::uint64_t value = 0;
    bool any = false;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
        value = value * 10 + static_cast<std::uint64_t>(line[i] - '0');
        ++i;
        any = true;
    }
    if (!any) {
        return false;
    }
    const bool kib = line.find("kB", i) != std::string_view::npos;
    out = kib ? value * 1024 : value;
    return true;
}

}  // namespace

Result<HostMemory> parseMeminfo(std::string_view text) {
    HostMemory m;
    bool haveTotal = false, haveAvailable = false, haveFree = false;
    std::uint64_t swapFree = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) {
            continue;
        }
        switch (line[0]) {
            case 'M':
                haveTotal = haveTotal || fieldValue(line, "MemTotal", m.totalBytes);
                haveAvailable = haveAvailable || fieldValue(line, "MemAvailable", m.availableBytes);
                haveFree = haveFree || fieldValue(line, "MemFree", m.freeBytes);
                break;
            case 'B':
                fieldValue(line, "Buffers", m.buffersBytes);
                break;
            case 'C':
                fieldValue(line, "Cached", m.cachedBytes);
                break;
            case 'S':
                fieldValue(line, "Shmem", m.shmemBytes);
                fieldValue(line, "SwapTotal", m.swapTotalBytes);
                fieldValue(line, "SwapFree", swapFree);
                break;
            default:
                break;
        }
    }
    if (!haveTotal) {
        return Error{"no MemTotal line"};
    }
    if (!haveAvailable) {
        // Kernels before 3.14 lack MemAvailable; approximate as the kernel did then.
        if (!haveFree) {
            return Error{"neither MemAvailable nor MemFree present"};
        }
        m.availableBytes = m.freeBytes + m.buffersBytes + m.cachedBytes;
    }
    m.availableBytes = std::min(m.availableBytes, m.totalBytes);
    m.usedBytes = m.totalBytes - m.availableBytes;
    m.pageCacheBytes = m.cachedBytes + m.buffersBytes;
    m.swapUsedBytes = m.swapTotalBytes >= swapFree ? m.swapTotalBytes - swapFree : 0;
    return m;
}

Result<HostMemory> readHostMemory(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error{path + ": " + std::strerror(errno)};
    }
    std::array<char, 8192> buf{};
    std::size_t total = 0;
    while (total < buf.size()) {
        const ssize_t n = ::read(fd, buf.data() + total, buf.size() - total);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        total += static_cast<std::size_t>(n);
    }
    ::close(fd);
    auto parsed = parseMeminfo(std::string_view(buf.data(), total));
    if (!parsed) {
        return Error{path + ": " + parsed.error()};
    }
    return parsed;
}

}  // namespace runplane::agent
