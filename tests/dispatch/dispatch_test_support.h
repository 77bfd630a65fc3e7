#pragma once
// Shared set-up for the dispatch tests: N real daemons on distinct loopback addresses, each with
// the test's fake `ray` first on PATH and its own FAKE_RAY_NODE / FAKE_RAY_VERSION.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/dispatch/node_process.h"

namespace runplane::dispatch_testing {

inline std::string fakeRayDir() {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    return std::string(src != nullptr ? src : ".") + "/tests/dispatch/fakebin";
}

struct Cluster {
    ScratchDir dir;
    std::vector<std::unique_ptr<NodeProcess>> nodes;
    std::string state() const { return dir.path() + "/ray-state"; }
    std::string calls() const { return readFile(state() + "/calls.log"); }

    /// versions[i] is node i's Ray version; extraEnv[i] (optional) more env for node i;
    /// gpuTelemetry[i] (optional, default false: --no-gpu) lets node i read NVML.
    void start(const std::vector<std::string>& versions,
               const std::vector<std::map<std::string, std::string>>& extraEnv = {},
               const std::vector<bool>& gpuTelemetry = {}) {
        std::filesystem::create_directories(state());
        for (std::size_t i = 0; i < versions.size(); ++i) {
            const std::string id = "n" + std::to_string(i);
            std::map<std::string, std::string> env{
                {"PATH", fakeRayDir() + ":/usr/local/bin:/usr/bin:/bin"},
                {"FAKE_RAY_STATE", state()},
                {"FAKE_RAY_NODE", id},
                {"FAKE_RAY_HEAD_NODE", "n0"},
                {"FAKE_RAY_VERSION", versions[i]}};
            if (i < extraEnv.size()) {
                for (const auto& [k, v] : extraEnv[i]) {
                    env[k] = v;
                }
            }
            const std::string listen = "127.0.0." + std::to_string(i + 1) + ":0";
            const bool gpus = i < gpuTelemetry.size() && gpuTelemetry[i];
            nodes.push_back(std::make_unique<NodeProcess>(dir.path() + "/" + id, id, listen, env,
                                                          std::vector<std::string>{},
                                                          std::vector<std::string>{}, gpus));
        }
    }
    std::vector<std::string> addresses() const {
        std::vector<std::string> out;
        for (const auto& n : nodes) {
            out.push_back(n->address());
        }
        return out;
    }
};

}  // namespace runplane::dispatch_testing
