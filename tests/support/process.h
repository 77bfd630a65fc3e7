#pragma once
// tests/support (runplane_test_support): child processes for the end-to-end suites (integration,
// reliability, dispatch): real runplaned daemons on 127.0.0.1 (port 0, then the same port on a
// restart over the same state dir) and runplanectl invocations, started with fork/exec (no
// shell), each in its own process group, signalled by pid.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace runplane::testing {

/// Path of a built executable: $RUNPLANE_BINARY_DIR/<relative> (the configured build dir when
/// the variable is not set).
std::string builtBinary(const std::string& relative);
/// $RUNPLANE_SOURCE_DIR, or the configured source dir.
std::string sourceDir();

/// A started child. Its stdout and stderr go to files (readable while it runs). The destructor
/// kills (SIGKILL) and reaps it if it is still running.
class Child {
  public:
    Child() = default;
    Child(Child&& other) noexcept;
    Child& operator=(Child&& other) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    /// Starts argv[0] with the arguments; stdout/stderr to the given files; `env` ("K=V") is
    /// added to (or overrides) the inherited environment.
    static Child spawn(const std::vector<std::string>& argv, const std::string& stdoutFile,
                       const std::string& stderrFile, const std::vector<std::string>& env = {});

    pid_t pid() const { return m_pid; }
    bool running();
    void kill(int signal);
    /// Waits for exit; returns the exit code (128 + signal when killed), nullopt on timeout.
    std::optional<int> wait(std::chrono::milliseconds timeout);
    std::string stdoutText() const;
    std::string stderrText() const;

  private:
    pid_t m_pid = -1;
    std::optional<int> m_exit;
    std::string m_stdout;
    std::string m_stderr;
};

/// Waits until `child` (a runplaned) writes "runplaned listening on ADDRESS" to its stdout and
/// returns ADDRESS; "" when it exits first or `timeout` passes, with why (its stdout and stderr)
/// in *error.
std::string awaitListening(Child& child, std::chrono::milliseconds timeout, std::string* error);

/// A runplaned on 127.0.0.1 with its own state dir; restartable on the same port and state.
class Daemon {
  public:
    Daemon(std::string stateDir, std::string nodeId, double sampleHz = 10);
    /// Flags added to every start (e.g. --stall-seconds), and environment ("K=V", e.g. an
    /// LD_PRELOAD fault shim) for every start.
    void setExtraArgs(std::vector<std::string> args) { m_extraArgs = std::move(args); }
    void setEnv(std::vector<std::string> env) { m_env = std::move(env); }
    /// The executable to start (default: the built runplaned), e.g. an upgraded copy.
    void setBinary(std::string path) { m_binary = std::move(path); }
    pid_t pid() const { return m_child.pid(); }
    /// Starts (port 0 the first time, then the same port); returns "127.0.0.1:PORT" or "" with
    /// the daemon's stderr in error().
    std::string start();
    void kill9();
    void stop();  // SIGTERM and wait
    const std::string& address() const { return m_address; }
    const std::string& error() const { return m_error; }
    Child& child() { return m_child; }

  private:
    std::string m_stateDir;
    std::string m_nodeId;
    double m_sampleHz;
    std::vector<std::string> m_extraArgs;
    std::vector<std::string> m_env;
    std::string m_binary;
    int m_port = 0;
    int m_starts = 0;
    std::string m_address;
    std::string m_error;
    Child m_child;
};

/// Runs runplanectl with args to completion (timeout), returning exit code and output.
struct CtlResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};
CtlResult runCtl(const std::vector<std::string>& args, const std::string& scratchDir,
                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace runplane::testing
