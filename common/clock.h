#pragma once
// The clocks every library reads: one spelling, so a test or a fault injector has one place to
// look. Header-only (library runplane_clock).

#include <chrono>
#include <cstdint>

namespace runplane::clock {

/// Unix time in nanoseconds: what samples, events, runs and history rows are stamped with.
inline std::int64_t unixNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// Monotonic nanoseconds for durations and deadlines (never compared with unix times).
inline std::int64_t steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace runplane::clock
