#include "common/thread_role.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace runplane::threads {

namespace {

constexpr int kMaxNice = 19;  // Linux: nice values run from -20 to 19
std::atomic<int> g_levels{0};
// The nice value background threads take (the setter's own plus the levels); unset while
// g_levels is 0.
std::atomic<int> g_target{0};

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

}  // namespace runplane::threads
