// releaseStartupPages (startup_pages.h): the executable's read-only mappings leave the resident
// set, the program keeps running from them (they fault back in), and nothing else is touched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "backend/agent/startup_pages.h"

namespace runplane::agent {
namespace {

// Resident kB of this executable's mappings, split into read-only and writable ones.
struct ExeResident {
    long readOnly = 0, writable = 0;
};

ExeResident exeResident() {
    char path[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
    const std::string exe(path, n > 0 ? static_cast<std::size_t>(n) : 0);
    ExeResident r;
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool ours = false, writable = false;
    while (std::getline(smaps, line)) {
        if (line.find(':') > line.find(' ')) {  // a mapping's header line
            ours = line.size() >= exe.size() &&
                   line.compare(line.size() - exe.size(), exe.size(), exe) == 0;
            writable = line.find(" rw") != std::string::npos;
        } else if (ours && line.rfind("Rss:", 0) == 0) {
            (writable ? r.writable : r.readOnly) += std::stol(line.substr(4));
        }
    }
    return r;
}

int fib(int k) {
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

TEST(StartupPages, ReadOnlyMappingsLeaveTheResidentSetAndTheProgramRunsOn) {
    const ExeResident before = exeResident();
    ASSERT_GT(before.readOnly, 0);
    const ReleasedPages released = releaseStartupPages();
    const ExeResident after = exeResident();
    EXPECT_GE(released.segments, 2u) << "code and constants at least";
    EXPECT_GT(released.bytes, 0u);
    // Only the pages this check itself ran fault back before it reads smaps.
    EXPECT_LT(after.readOnly, before.readOnly);
    // Writable data (relocated, copy-on-write) is never dropped: it would lose its contents.
    EXPECT_EQ(after.writable, before.writable);
    // Code runs on from the page cache, and constants read back unchanged.
    EXPECT_EQ(fib(20), 6765);
    static const char kText[] = "runplaned read-only data";
    EXPECT_EQ(std::string(kText), "runplaned read-only data");
}

}  // namespace
}  // namespace runplane::agent
