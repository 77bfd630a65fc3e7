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
