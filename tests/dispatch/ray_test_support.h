#pragma once
// What the real-Ray dispatch suites share (dispatch_ray_test on loopback, dispatch_netns_test on
// namespace hosts): where the Ray venv is, waiting, and reading a run's output and state through
// a daemon.

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "backend/control/dispatch.h"

namespace runplane::dispatch_testing {

inline std::string envOr(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

/// The venv the ray_venv fixture makes ($RUNPLANE_RAY_VENV overrides).
inline std::string rayVenv() {
    return envOr("RUNPLANE_RAY_VENV", envOr("RUNPLANE_BINARY_DIR", ".") + "/ray-venv");
}

template <typename Pred>
bool waitFor(Pred&& pred, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return pred();
}

/// The run's stdout as far as the daemon has it ("" when unreachable).
inline std::string stdoutOf(const std::string& address, const std::string& runId,
                            const control::NodeClientOptions& options = {}) {
    auto client = control::NodeClient::create(address, options);
    std::string out;
    if (!client.ok()) {
        return out;
    }
    (void)(*client)->tailLogs(RunId{runId}, control::LogStreamKind::Stdout, 0, false,
                              [&](const control::LogChunkInfo& ch) {
                                  out += ch.data;
                                  return true;
                              });
    return out;
}

/// The run's state as the daemon lists it (Unspecified when unreachable or unknown).
inline control::NodeRunState runState(const std::string& address, const std::string& runId,
                                      const control::NodeClientOptions& options = {}) {
    auto client = control::NodeClient::create(address, options);
    if (client.ok()) {
        if (auto runs = (*client)->listRuns(); runs.ok()) {
            for (const auto& r : *runs) {
                if (r.runId.value() == runId) {
                    return r.state;
                }
            }
        }
    }
    return control::NodeRunState::Unspecified;
}

}  // namespace runplane::dispatch_testing
