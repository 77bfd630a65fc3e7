#include "common/thread_role.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace runplane::threads {

namespace {

constexpr int kMaxNice = 19;  // Linux: nice values run from -20 to 19
std::atomic<int> g_levels{0};
// The nice value background threads take (the setter's own plus the levels); unset while
// g_levels is 0.
std::atomic<int> g_target{0};

// The kernel's struct sched_attr (linux/sched/types.h; glibc 2.36 has no wrapper for the call).
struct SchedAttr {
    std::uint32_t size;
    std::uint32_t policy;
    std::uint64_t flags;
    std::int32_t nice;
    std::uint32_t priority;
    std::uint64_t runtime;  // SCHED_OTHER from Linux 6.12: the thread's slice in ns
    std::uint64_t deadline;
    std::uint64_t period;
    std::uint32_t utilMin;
    std::uint32_t utilMax;
};

bool readOwnAttr(SchedAttr& attr) {
    attr = {};
    return syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0;
}

}  // namespace

int currentThreadNice() {
    // On Linux PRIO_PROCESS with the thread id addresses one thread (getpriority can return -1
    // legitimately, hence errno).
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    return errno == 0 ? nice : 0;
}

void setBackgroundNice(int levels) {
    levels = std::clamp(levels, 0, kMaxNice);
    g_target.store(std::min(currentThreadNice() + levels, kMaxNice));
    g_levels.store(levels);
}

int backgroundNice() {
    return g_levels.load();
}

void enterBackground(const char* name) {
    // Linux refuses (ERANGE) a name over 15 characters rather than cutting it.
    char cut[16] = {};
    std::strncpy(cut, name, sizeof cut - 1);
    pthread_setname_np(pthread_self(), cut);
    if (g_levels.load() == 0) {
        return;
    }
    const int target = g_target.load();
    if (currentThreadNice() < target) {
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), target);
    }
}

bool setOwnSlice(int microseconds) {
    SchedAttr attr;
    if (!readOwnAttr(attr) || attr.policy != SCHED_OTHER) {
        return false;
    }
    attr.size = sizeof attr;
    attr.flags = 0;
    attr.runtime = static_cast<std::uint64_t>(std::max(microseconds, 0)) * 1000;
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

int ownSlice() {
    SchedAttr attr;
    return readOwnAttr(attr) ? static_cast<int>(attr.runtime / 1000) : 0;
}

}  // namespace runplane::threads
