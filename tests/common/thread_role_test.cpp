// threads::setBackgroundNice / enterBackground (common/thread_role.h): names and per-thread nice
// values read back from the kernel, in threads of this process.
#include "common/thread_role.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <string>
#include <thread>

namespace {

using namespace runplane;

struct Seen {
    int nice = -100;
    std::string name;
};

// A thread that enters the background as `name` and reports what the kernel then says of it.
Seen enterOnAThread(const char* name) {
    Seen seen;
    std::thread([&] {
        threads::enterBackground(name);
        seen.nice = threads::currentThreadNice();
        char buffer[32] = {};
        pthread_getname_np(pthread_self(), buffer, sizeof buffer);
        seen.name = buffer;
    }).join();
    return seen;
}

class ThreadRole : public ::testing::Test {
  protected:
    void TearDown() override { threads::setBackgroundNice(0); }  // process-wide: leave it off
};

TEST_F(ThreadRole, BackgroundThreadsRunTheGivenLevelsBelowTheSetter) {
    const int base = threads::currentThreadNice();
    threads::setBackgroundNice(4);
    EXPECT_EQ(threads::backgroundNice(), 4);
    const Seen seen = enterOnAThread("rp-role-test");
    EXPECT_EQ(seen.nice, std::min(base + 4, 19));
    EXPECT_EQ(seen.name, "rp-role-test");
    EXPECT_EQ(threads::currentThreadNice(), base) << "the setter's own priority is unchanged";
}

TEST_F(ThreadRole, OffByDefaultAndWhenSetToZero) {
    const int base = threads::currentThreadNice();
    EXPECT_EQ(enterOnAThread("rp-role-off").nice, base);
    threads::setBackgroundNice(6);
    threads::setBackgroundNice(0);
    EXPECT_EQ(threads::backgroundNice(), 0);
    const Seen seen = enterOnAThread("rp-role-zero");
    EXPECT_EQ(seen.nice, base);
    EXPECT_EQ(seen.name, "rp-role-zero");
}

TEST_F(ThreadRole, LevelsAreClampedToLinuxRange) {
    threads::setBackgroundNice(1000);
    EXPECT_EQ(threads::backgroundNice(), 19);
    EXPECT_EQ(enterOnAThread("rp-role-max").nice, 19);
    threads::setBackgroundNice(-5);
    EXPECT_EQ(threads::backgroundNice(), 0);
}

TEST_F(ThreadRole, ANameLongerThanTheKernelKeepsIsCut) {
    const Seen seen = enterOnAThread("a-name-longer-than-fifteen");
    EXPECT_EQ(seen.name, "a-name-longer-t");
}

}  // namespace

// setOwnSlice: the slice the kernel reports back for the calling thread (a thread of its own, so
// the test process's main thread keeps its default). Skips on kernels without EEVDF's custom
// slices (before Linux 6.12 sched_getattr reports no slice for a SCHED_OTHER thread).
TEST(ThreadSlice, TheKernelReportsTheSliceAskedFor) {
    int before = 0;
    bool set = false;
    int after = 0;
    bool reset = false;
    int restored = 0;
    std::thread([&] {
        before = threads::ownSlice();
        set = threads::setOwnSlice(250);
        after = threads::ownSlice();
        reset = threads::setOwnSlice(0);
        restored = threads::ownSlice();
    }).join();
    if (before == 0) {
        GTEST_SKIP() << "this kernel reports no time slice for SCHED_OTHER threads (Linux < 6.12)";
    }
    ASSERT_TRUE(set);
    EXPECT_EQ(after, 250);
    EXPECT_TRUE(reset);
    EXPECT_EQ(restored, before);  // 0 gives the kernel's default back
}
