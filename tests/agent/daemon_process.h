#pragma once
// Test helper: a real runplaned process on 127.0.0.1:0 (or another listen address), its bound
// address read from the first stdout line, plus stub helpers. Kills the daemon (SIGTERM, then
// SIGKILL) on destruction unless it was already stopped.

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::agent::testing {

/// A fresh temporary directory, removed (recursively) on destruction.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

std::string daemonBinary();

class DaemonProcess {
  public:
    /// Starts runplaned with --state-dir stateDir plus extraArgs; waits for the listening line.
    /// On failure, error() says why (including the daemon's stderr) and ok() is false.
    /// gpuTelemetry = false passes --no-gpu (the default: tests do not depend on this host's GPUs).
    DaemonProcess(const std::string& stateDir, std::vector<std::string> extraArgs = {},
                  std::string listen = "127.0.0.1:0", bool gpuTelemetry = false);
    ~DaemonProcess();
    bool ok() const { return m_port > 0; }
    const std::string& error() const { return m_error; }
    const std::string& address() const { return m_address; }
    int port() const { return m_port; }
    pid_t pid() const { return m_pid; }
    /// All stdout lines seen so far after the first (e.g. the metrics address).
    std::string stdoutRest();
    std::string stderrText() const;

    void kill9();
    /// SIGTERM and wait; returns the exit status from waitpid.
    int terminate();

    std::unique_ptr<v1::Agent::Stub> stub() const;

  private:
    pid_t m_pid = -1;
    int m_stdout = -1;
    int m_port = 0;
    std::string m_address;
    std::string m_error;
    std::string m_stderrPath;
    std::string m_buffer;
};

/// Runs a process to completion and returns its exit code and stdout+stderr (for openssl).
int runCommand(const std::vector<std::string>& argv, std::string* output);

/// Reads a whole file ("" when missing).
std::string slurp(const std::string& path);

/// Polls `predicate` every 20 ms until it holds or `timeout` passes.
template <typename F>
bool waitFor(F predicate, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (predicate()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return predicate();
}

}  // namespace runplane::agent::testing
