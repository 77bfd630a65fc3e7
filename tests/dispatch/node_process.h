#pragma once
// The dispatch suite's node: a real runplaned (tests/support DaemonProcess) with a node id, on a
// loopback address, with extra environment variables (e.g. PATH pointing at a `ray`). Stopped on
// destruction. Runs with --no-gpu unless gpuTelemetry (e.g. a node given the tests' fake NVML).

#include <map>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace runplane::dispatch_testing {

using runplane::testing::readFile;

/// A scratch dir named runplane-dispatch-XXXXXX.
class ScratchDir : public runplane::testing::TempDir {
  public:
    ScratchDir() : runplane::testing::TempDir("runplane-dispatch") {}
};

class NodeProcess : public runplane::testing::DaemonProcess {
  public:
    NodeProcess(const std::string& stateDir, const std::string& nodeId, const std::string& listen,
                const std::map<std::string, std::string>& env,
                std::vector<std::string> extraArgs = {}, std::vector<std::string> wrapper = {},
                bool gpuTelemetry = false)
        : DaemonProcess(runplane::testing::DaemonSpec{stateDir, args(nodeId, std::move(extraArgs)),
                                                      listen, gpuTelemetry, envList(env),
                                                      std::move(wrapper)}) {}

  private:
    static std::vector<std::string> args(const std::string& nodeId,
                                         std::vector<std::string> extra) {
        std::vector<std::string> out{"--node-id", nodeId};
        out.insert(out.end(), extra.begin(), extra.end());
        return out;
    }
    static std::vector<std::string> envList(const std::map<std::string, std::string>& env) {
        std::vector<std::string> out;
        for (const auto& [k, v] : env) {
            out.push_back(k + "=" + v);
        }
        return out;
    }
};

}  // namespace runplane::dispatch_testing
