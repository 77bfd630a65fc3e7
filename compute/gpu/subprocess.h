#pragma once
// Child processes for compute/: helpers that load foreign libraries (libnccl, CUDA) run in their
// own process so that a crash or hang there never takes the caller down. posix_spawn based, so it
// is safe to use from any thread of a multi-threaded daemon. Reaps its own children with waitpid:
// the caller must not set SIGCHLD to SIG_IGN (exit statuses would be lost: a waitpid error).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace runplane::compute {

/// What to run. argv[0] without a '/' is looked up on the caller's PATH.
struct ProcessSpec {
    std::vector<std::string> argv;
    /// Complete environment ("K=V"); nullopt = inherit the caller's.
    std::optional<std::vector<std::string>> env;
    std::chrono::milliseconds timeout{20000};
    /// Output beyond this many bytes per stream is read and dropped (the child is never blocked).
    std::size_t maxOutputBytes = 64u << 20;
};

/// How it ended. Exactly one of: spawnError set; timedOut; termSignal != 0; exitCode >= 0.
struct ProcessResult {
    std::string spawnError;
    bool timedOut = false;
    int exitCode = -1;
    int termSignal = 0;
    std::string out, err;

    bool succeeded() const {
        return spawnError.empty() && !timedOut && termSignal == 0 && exitCode == 0;
    }
    /// "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 20 s", ...
    std::string describeEnd() const;
};

/// Runs to completion (or kills the child's whole process group at the timeout). Never throws.
ProcessResult runProcess(const ProcessSpec& spec);

/// A running child whose stdout the caller reads; stderr goes to /dev/null. The child leads its own
/// process group. The destructor kills the group (SIGKILL) and reaps it.
class SpawnedProcess {
  public:
    SpawnedProcess() = default;
    ~SpawnedProcess();
    SpawnedProcess(const SpawnedProcess&) = delete;
    SpawnedProcess& operator=(const SpawnedProcess&) = delete;

    /// Starts the child; returns an error text on failure.
    std::optional<std::string> start(const ProcessSpec& spec);
    /// Reads stdout up to and excluding the first '\n' (nullopt on EOF or after `timeout`).
    std::optional<std::string> readLine(std::chrono::milliseconds timeout);
    /// Hands ownership of the process to the caller (no kill in the destructor); returns its pid.
    int release();
    int pid() const { return m_pid; }

  private:
    int m_pid = -1;
    int m_outFd = -1;
    std::string m_buffer;
};

/// The caller's environment as "K=V" strings.
std::vector<std::string> currentEnvironment();

/// Ends a process group started by SpawnedProcess/runProcess (SIGKILL) and reaps its leader.
void killProcessGroup(int pid);

}  // namespace runplane::compute
