#pragma once
// tests/support: wait until a condition holds, polling, with a timeout (no fixed sleeps in tests).

#include <chrono>
#include <thread>

namespace runplane::testing {

/// Polls `predicate` every `poll` until it holds or `timeout` passes; returns its last value.
template <typename Pred>
bool waitUntil(Pred&& predicate, std::chrono::milliseconds timeout = std::chrono::seconds(20),
               std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (predicate()) {
            return true;
        }
        std::this_thread::sleep_for(poll);
    }
    return predicate();
}

}  // namespace runplane::testing
