#pragma once
// Run supervision on this node: StartRun / StopRun / ListRuns semantics. Each run has a record
// directory <state-dir>/runs.d/<run-id>/ (spec, supervisor identity, exit status, logs) owned by
// a runplane-supervisor process, so runs outlive the daemon; a new RunManager re-attaches to
// every record it finds and derives each run's true state from the files and the process table.
//
// Thread-safety: all methods may be called from any thread (one internal mutex; stop() waits
// for the grace period without holding it).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/agent/logger.h"
#include "backend/agent/run_role_plan.h"
#include "common/result.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

struct RunManagerOptions {
    std::string stateDir;        // records live in <stateDir>/runs.d
    std::string runRoot;         // working directories are confined under it
    std::string supervisorPath;  // the runplane-supervisor executable
    double defaultGraceSeconds = 10.0;
    double handshakeTimeoutSeconds = 10.0;
};

/// What the telemetry collector needs to know about one run (a value snapshot).
struct RunView {
    std::string runId;
    std::string stdoutPath, stderrPath;
    pid_t supervisorPid = 0;
    std::uint64_t supervisorStartTicks = 0;
    pid_t childPid = 0;
    std::uint64_t childStartTicks = 0;
    v1::RunStatus status;
    double sampleHz = 0;
    /// The run's plan by process role and its own role rows (StartRun; null: none).
    std::shared_ptr<const RunRolePlan> rolePlan;
};

/// See the file comment. Owns no processes directly (the supervisors do).
class RunManager {
  public:
    static Result<std::unique_ptr<RunManager>> open(RunManagerOptions options, Logger& logger);

    /// Starts a run (idempotent per run_id: an existing run with the same argv is returned as it
    /// is; a different argv under the same id is an error). Errors name the offending field.
    Result<v1::RunStatus> start(const v1::StartRunRequest& request);
    /// SIGTERM to the run's whole tree, up to graceSeconds (<= 0: the default), then SIGKILL.
    Result<v1::RunStatus> stop(const std::string& runId, double graceSeconds);
    Result<v1::RunStatus> status(const std::string& runId);
    std::vector<v1::RunStatus> list();
    std::vector<RunView> views();
    /// Path of a run's stdout or stderr log.
    Result<std::string> logPath(const std::string& runId, v1::LogStream stream);

    const RunManagerOptions& options() const { return m_options; }

  private:
    struct Entry {
        std::string runId;
        std::string dir;
        std::vector<std::string> argv;
        v1::RunRole role = v1::RUN_ROLE_UNSPECIFIED;
        double sampleHz = 0;
        std::shared_ptr<const RunRolePlan> rolePlan;  // null: none
        std::int64_t createdNs = 0;
        pid_t supervisorPid = 0;
        std::uint64_t supervisorStartTicks = 0;
        pid_t childPid = 0;
        std::uint64_t childStartTicks = 0;
        std::int64_t startedNs = 0;
        std::string execError;
        std::optional<v1::RunStatus> final;  // cached once the run has ended
    };

    RunManager(RunManagerOptions options, Logger& logger);
    Status loadRecords();
    Result<Entry> loadEntry(const std::string& runId);
    bool loadSupervisorInfo(Entry& e);
    v1::RunStatus refresh(Entry& e);
    Result<v1::RunStatus> spawn(Entry& e);
    std::vector<pid_t> treeOf(const Entry& e);

    RunManagerOptions m_options;
    Logger& m_logger;
    std::string m_recordsDir;
    std::mutex m_mutex;
    std::map<std::string, Entry> m_runs;
};

}  // namespace runplane::agent
