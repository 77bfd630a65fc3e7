#pragma once
// The agent suite's names for tests/support: a real runplaned per test (DaemonProcess, on
// 127.0.0.1:0 or another listen address), scratch dirs, one-shot commands, plus the one thing
// only this suite needs, a gRPC stub on a started daemon.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "runplane/v1/agent.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/wait.h"

namespace runplane::agent::testing {

using runplane::testing::DaemonProcess;
using runplane::testing::runCommand;

/// A scratch dir named runplane-agent-XXXXXX.
class TempDir : public runplane::testing::TempDir {
  public:
    TempDir() : runplane::testing::TempDir("runplane-agent") {}
};

inline std::string daemonBinary() {
    return runplane::testing::builtBinary("backend/daemon/runplaned");
}

/// Reads a whole file ("" when missing).
inline std::string slurp(const std::string& path) {
    return runplane::testing::readFile(path);
}

/// A plaintext stub on the daemon's address.
inline std::unique_ptr<v1::Agent::Stub> agentStub(const DaemonProcess& daemon) {
    return v1::Agent::NewStub(
        grpc::CreateChannel(daemon.address(), grpc::InsecureChannelCredentials()));
}

/// Polls `predicate` every 20 ms until it holds or `timeout` passes.
template <typename F>
bool waitFor(F predicate, std::chrono::milliseconds timeout) {
    return runplane::testing::waitUntil(predicate, timeout, std::chrono::milliseconds(20));
}

}  // namespace runplane::agent::testing
