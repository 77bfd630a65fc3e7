#pragma once
// The per-run supervisor process (`runplane-supervisor`): what lets runs outlive the daemon.
// The daemon spawns it with the run's record directory; it double-forks into its own session
// (so it is no longer the daemon's child), becomes a child subreaper, starts the run's argv with
// execve (no shell) in a process group of its own, reports back over a pipe, waits for the run,
// and writes the exit status to <record-dir>/exit.json (atomically). Files it reads and writes
// are listed in docs/daemon.md.

#include <string>

namespace runplane::agent {

/// File names inside a run's record directory (shared by daemon and supervisor).
inline constexpr const char* kSpecFile = "spec.json";
inline constexpr const char* kSupervisorFile = "supervisor.json";
inline constexpr const char* kExitFile = "exit.json";
inline constexpr const char* kStopFile = "stop_requested";
inline constexpr const char* kStdoutFile = "stdout.log";
inline constexpr const char* kStderrFile = "stderr.log";
inline constexpr const char* kSupervisorLog = "supervisor.log";

/// Entry point of runplane-supervisor: `runplane-supervisor --record-dir DIR --handshake-fd N`.
/// Returns the process exit code.
int supervisorMain(int argc, char** argv);

}  // namespace runplane::agent
