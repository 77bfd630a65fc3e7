#pragma once
// tests/support (runplane_test_support): one runplaned per object, for the suites that start a
// daemon once per test (agent, dispatch, GUI): started in the constructor on a loopback address
// (port 0: the bound address is read from its "runplaned listening on" line), stopped in the
// destructor (SIGTERM, then SIGKILL after 5 s). Also the scratch directories and one-shot
// commands those suites use. Restartable daemons on a fixed port are Daemon (process.h).

#include <sys/types.h>

#include <string>
#include <vector>

#include "tests/support/process.h"

namespace runplane::testing {

/// A fresh directory under the system temp dir ("<prefix>-XXXXXX"), removed recursively on
/// destruction.
class TempDir {
  public:
    explicit TempDir(const std::string& prefix = "runplane-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }
    std::string file(const std::string& name) const { return m_path + "/" + name; }

  private:
    std::string m_path;
};

/// A whole file ("" when it is missing).
std::string readFile(const std::string& path);

/// Runs argv (argv[0] looked up on PATH) to completion; appends its stdout and stderr to
/// *output (when given); returns its exit code, -1 when it could not start or was killed.
int runCommand(const std::vector<std::string>& argv, std::string* output);

/// How a DaemonProcess starts runplaned:
/// `runplaned --listen LISTEN --state-dir STATE [--no-gpu] ARGS...` with `env` ("K=V") added to
/// (or overriding) the inherited environment. Its stdout and stderr go to files next to the
/// state dir (never inside it: a test may make the state dir a full filesystem).
struct DaemonSpec {
    std::string stateDir;
    std::vector<std::string> args;
    std::string listen = "127.0.0.1:0";
    bool gpuTelemetry = false;  // false passes --no-gpu: tests do not depend on this host's GPUs
    std::vector<std::string> env;
    /// A command that runs the daemon instead of exec'ing it directly, e.g. NetnsHosts::onHost's
    /// prefix to run it as a process of a namespace host (argv is appended to it).
    std::vector<std::string> wrapper;
};

class DaemonProcess {
  public:
    explicit DaemonProcess(DaemonSpec spec);
    DaemonProcess(std::string stateDir, std::vector<std::string> args = {},
                  std::string listen = "127.0.0.1:0", bool gpuTelemetry = false);
    ~DaemonProcess();
    DaemonProcess(const DaemonProcess&) = delete;
    DaemonProcess& operator=(const DaemonProcess&) = delete;

    /// Listening; else error() says why, with the daemon's stdout and stderr.
    bool ok() const { return m_port > 0; }
    const std::string& error() const { return m_error; }
    const std::string& address() const { return m_address; }
    int port() const { return m_port; }
    pid_t pid() const { return m_child.pid(); }
    /// Its stdout after the listening line (e.g. the metrics address), as far as written.
    std::string stdoutRest() const;
    std::string stderrText() const;

    void kill9();
    /// SIGTERM and wait; the exit code (128 + signal when killed), -1 when it had not started.
    int terminate();

  private:
    Child m_child;
    int m_port = 0;
    std::string m_address;
    std::string m_error;
};

}  // namespace runplane::testing
