// tests/support: LD_PRELOAD shim that moves a process's wall clock (CLOCK_REALTIME, and with it
// std::chrono::system_clock, time() and gettimeofday()) by the offset in nanoseconds written in
// the file $RUNPLANE_FAKE_CLOCK_FILE, re-read at most every 50 ms. Monotonic clocks are left
// alone, as a real clock step (NTP, an operator's `date -s`) leaves them. The reliability suite
// starts runplaned (and so its supervisors and runs) with it to jump the node's clock backwards
// without touching the machine's clock.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);

ClockGettime realClock() {
    static ClockGettime fn = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    return fn;
}

std::atomic<std::int64_t> g_offsetNs{0};
std::atomic<std::int64_t> g_nextReadNs{0};

std::int64_t offsetNs() {
    timespec mono{};
    realClock()(CLOCK_MONOTONIC, &mono);
    const std::int64_t now = mono.tv_sec * 1'000'000'000LL + mono.tv_nsec;
    if (now >= g_nextReadNs.load()) {
        g_nextReadNs = now + 50'000'000;
        if (const char* path = getenv("RUNPLANE_FAKE_CLOCK_FILE")) {
            if (FILE* f = fopen(path, "re")) {
                long long v = 0;
                if (fscanf(f, "%lld", &v) == 1) {
                    g_offsetNs = v;
                }
                fclose(f);
            }
        }
    }
    return g_offsetNs.load();
}

void shift(timespec* ts) {
    const std::int64_t ns = ts->tv_sec * 1'000'000'000LL + ts->tv_nsec + offsetNs();
    ts->tv_sec = ns / 1'000'000'000LL;
    ts->tv_nsec = ns % 1'000'000'000LL;
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t id, timespec* ts) {
    const int rc = realClock()(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        shift(ts);
    }
    return rc;
}

int gettimeofday(struct timeval* tv, void*) {
    timespec ts{};
    const int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t* out) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != nullptr) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
}
