#include "backend/agent/startup_pages.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace runplane::agent {
namespace {

struct Range {
    std::uintptr_t begin, end;
};

// The main program's PT_LOAD segments without PF_W (the first object dl_iterate_phdr reports).
std::vector<Range> readOnlySegments() {
    std::vector<Range> out;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            auto* ranges = static_cast<std::vector<Range>*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) == 0) {
                    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
                    ranges->push_back({begin, begin + ph.p_memsz});
                }
            }
            return 1;  // the main program only
        },
        &out);
    return out;
}

}  // namespace

ReleasedPages releaseStartupPages() {
    ReleasedPages released;
    const auto segments = readOnlySegments();
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    // Each mapping of those segments, with its own check: not writable, and no private
    // (copy-on-write) page in it, so that every page equals the file's.
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    std::uintptr_t lo = 0, hi = 0;
    bool candidate = false;
    while (std::getline(smaps, line)) {
        unsigned long a = 0, b = 0;
        char perms[8] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &a, &b, perms) == 3 &&
            line.find(':') > line.find(' ')) {
            lo = a;
            hi = b;
            candidate = perms[1] != 'w' && perms[3] == 'p';
            bool inside = false;
            for (const Range& r : segments) {
                inside = inside || (lo >= (r.begin & ~(page - 1)) &&
                                    hi <= ((r.end + page - 1) & ~(page - 1)));
            }
            candidate = candidate && inside;
        } else if (candidate && line.rfind("Anonymous:", 0) == 0) {
            if (std::strtoul(line.c_str() + 10, nullptr, 10) == 0 &&
                ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0) {
                released.bytes += hi - lo;
                ++released.segments;
            }
            candidate = false;
        }
    }
    return released;
}

}  // namespace runplane::agent
