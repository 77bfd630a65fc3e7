// /proc/meminfo parsing and the formulas of docs/daemon.md. issue 2, issue 5
#include <gtest/gtest.h>

#include "backend/agent/host_memory.h"
#include "backend/agent/proc_tree.h"

namespace runplane::agent {
namespace {

constexpr const char* kMeminfo =
    "MemTotal:       32791740 kB\n"
    "MemFree:        10000000 kB\n"
    "MemAvailable:   20000000 kB\n"
    "Buffers:          500000 kB\n"
    "Cached:          9000000 kB\n"
    "SwapCached:            0 kB\n"
    "Shmem:           1234567 kB\n"
    "SwapTotal:       2000000 kB\n"
    "SwapFree:        1500000 kB\n"
    "HugePages_Total:       0\n";

TEST(HostMemory, ParsesFieldsAndDerivesUsedPageCacheSwap) {
    auto m = parseMeminfo(kMeminfo);
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->totalBytes, 32791740ull * 1024);
    EXPECT_EQ(m->availableBytes, 20000000ull * 1024);
    EXPECT_EQ(m->usedBytes, (32791740ull - 20000000ull) * 1024);
    EXPECT_EQ(m->pageCacheBytes, (9000000ull + 500000ull) * 1024);
    EXPECT_EQ(m->shmemBytes, 1234567ull * 1024);
    EXPECT_EQ(m->swapUsedBytes, 500000ull * 1024);
}

TEST(HostMemory, OldKernelWithoutMemAvailable) {
    auto m = parseMeminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 200 kB\n");
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->availableBytes, 350u * 1024);
}

TEST(HostMemory, MissingTotalIsAnError) {
    auto m = parseMeminfo("MemFree: 1 kB\n");
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.error().find("MemTotal"), std::string::npos);
    auto f = readHostMemory("/nonexistent/meminfo");
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.error().find("/nonexistent/meminfo"), std::string::npos);
}

TEST(HostMemory, RealProcMeminfo) {
    auto m = readHostMemory();
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_GT(m->totalBytes, 0u);
    EXPECT_LE(m->availableBytes, m->totalBytes);
}

TEST(ProcTree, ParsesStatWithAwkwardCommAndFindsSelf) {
    auto s = parseProcStat(
        "123 (a) b (c)) S 1 123 123 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 "
        "4242 1000 55 18446744073709551615");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->pid, 123);
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->ppid, 1);
    EXPECT_EQ(s->startTicks, 4242u);
    EXPECT_EQ(s->rssPages, 55u);
    auto self = readProcStat(::getpid());
    ASSERT_TRUE(self.has_value());
    EXPECT_TRUE(processAlive(::getpid(), self->startTicks));
    EXPECT_FALSE(processAlive(::getpid(), self->startTicks + 1));
    const auto mem = treeMemory({::getpid()}, true);
    EXPECT_GT(mem.rssBytes, 0u);
}

}  // namespace
}  // namespace runplane::agent
