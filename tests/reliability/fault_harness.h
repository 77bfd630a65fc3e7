#pragma once
// The reliability suite's harness (docs/reliability.md): one real runplaned (tests/support), a
// controller that submits real shell runs and records them in a real SQLite history, an ingest
// either in this process (TelemetryIngestor, so the fault VFS applies) or as a `runplanectl
// watch` child (so it can be killed), and the two checks every fault ends with: the history
// holds the node's seqs exactly once from 1 through its cursor (0 lost, 0 duplicated by
// (node, incarnation, seq), no gap event), and the run's recorded status is its true one.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/control/controller.h"
#include "backend/control/telemetry_ingestor.h"
#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/history_check.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace runplane::reliability {

using runplane::testing::Child;
using runplane::testing::Daemon;
using runplane::testing::waitUntil;

/// A shell run printing `steps` metric lines 0.1 s apart, then exiting with `exitCode`.
std::vector<std::string> stepsRun(int steps, int exitCode);

class FaultTest : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;

    /// Starts the daemon (node id "node-f") on a free loopback port; asserts it came up.
    void startDaemon();
    /// Submits a run through the controller (recorded in the history).
    void submit(const std::string& runId, const std::vector<std::string>& argv);
    /// An in-process ingest of `address` (default: the daemon) into the history.
    control::TelemetryIngestor& ingest(const std::string& address = "");
    /// A `runplanectl watch` child ingesting the daemon into the history (`binary`: another
    /// build of runplanectl, relative to the build folder; `env` added to its environment).
    Child watch(const std::string& tag, const std::string& binary = "backend/cli/runplanectl",
                const std::vector<std::string>& env = {});
    /// The stored cursor of the node (raw SQL on the history file; -1 when unreadable).
    std::int64_t storedCursor() const;
    /// The run as the history records it (nullopt when absent or unreadable).
    std::optional<db::RunRecord> run(const std::string& runId) const;
    /// Waits until the history says the run ended.
    bool waitRunEnded(const std::string& runId,
                      std::chrono::milliseconds timeout = std::chrono::seconds(40)) const;
    /// The attrs JSON of every process_exit event of the run.
    std::vector<std::string> exitEvents(const std::string& runId) const;
    /// The two checks: exactly-once continuity of the node's seqs, and the run's true status
    /// (state and message, and exactly one process_exit event with that exit code).
    void expectExactlyOnce() const;
    /// A copy of the history taken at a cut holds whole batches only: intact, no seq missing
    /// below its cursor or stored twice, no row beyond the cursor. Returns that cursor.
    std::uint64_t expectWholeBatchesOnly(const std::string& copy) const;
    /// A `runplanectl watch` (tagged `tag`) ingests until r1 ends, then stops (SIGTERM); r1 ended
    /// as stepsRun(..., 3) does and every record was stored exactly once.
    void watchUntilR1EndsThenCheck(const std::string& tag);
    /// After a process under the fault VFS powered off at a cut (CUTS/powered-off names the cut's
    /// folder): `path` and its WAL become the cut's first torn copy, as the disk held them; the
    /// -shm goes (shared memory does not survive a cut).
    void putBackTheTornCopy(const std::string& cuts, const std::string& path) const;
    /// PRAGMA integrity_check of the history (or another file): "ok" when intact.
    std::string integrity(const std::string& path = "") const;
    void expectTrueStatus(const std::string& runId, db::RunState state, const std::string& message,
                          const std::string& exitCodeAttr) const;
    /// The pid of the run's supervisor or child, from its supervisor.json.
    pid_t runPid(const std::string& runId, const std::string& key) const;

    runplane::testing::ScratchDir m_dir;
    std::string m_history;
    std::string m_state;
    std::unique_ptr<Daemon> m_daemon;
    std::string m_address;
    std::unique_ptr<control::Controller> m_controller;
    std::vector<std::unique_ptr<control::TelemetryIngestor>> m_ingestors;
};

}  // namespace runplane::reliability
