// issue #17: a node whose state directory was replaced (reinstall, new disk) has a new spool
// incarnation. The controller records a "node_reset" event, ingests the new spool from its first
// seq and keeps both incarnations in the history, apart (exactly once by (node, incarnation,
// seq)). Also: the cursor migration keeps what a version-2 history file holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "backend/control/telemetry_ingestor.h"
#include "db/history/history.h"
#include "db/history/schema.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"
#include "tests/support/history_check.h"
#include "tests/support/process.h"

namespace runplane::control {
namespace {

using runplane::testing::builtBinary;
using runplane::testing::Child;
using runplane::testing::Daemon;
using runplane::testing::queryInt;
using runplane::testing::ScratchDir;

template <typename Pred>
bool waitFor(Pred&& pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred();
}

IngestorOptions ingestOptions(const std::string& address, const std::string& history) {
    IngestorOptions o;
    o.address = address;
    o.historyPath = history;
    o.backoffInitial = std::chrono::milliseconds(50);
    o.backoffMax = std::chrono::milliseconds(400);
    return o;
}

// Rows (samples + events with a daemon seq) of one incarnation, and how many distinct seqs.
std::string rowsOf(const std::string& node, std::int64_t incarnation, bool distinct) {
    const std::string inc = std::to_string(incarnation);
    return std::string("SELECT count(") + (distinct ? "DISTINCT seq" : "*") +
           ") FROM (SELECT s.seq FROM samples s JOIN series r ON r.id = s.series_id WHERE "
           "r.node_id = '" +
           node + "' AND s.incarnation = " + inc +
           " UNION ALL SELECT seq FROM events WHERE node_id = '" + node +
           "' AND incarnation = " + inc + " AND seq IS NOT NULL);";
}

// Before: the controller kept asking for from_seq beyond the new spool's end (OUT_OF_RANGE),
// retried forever and stored nothing from the new spool.
TEST(NodeReset, ReplacedStateDirectoryIsANewIncarnationKeptApart) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    Daemon daemon(state, "node-r");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    {
        TelemetryIngestor ingestor(ingestOptions(address, history));
        ASSERT_TRUE(ingestor.start().ok());
        // Well beyond what the new spool will hold when the controller first asks.
        ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= 150; }))
            << ingestor.status().lastError;
        ingestor.stop();
    }
    const std::int64_t oldInc =
        queryInt(history, "SELECT incarnation FROM ingest_cursor WHERE node_id = 'node-r';");
    ASSERT_NE(oldInc, 0);
    const std::int64_t oldRows = queryInt(history, rowsOf("node-r", oldInc, false));
    ASSERT_GE(oldRows, 150);
    daemon.stop();
    std::filesystem::remove_all(state);
    ASSERT_EQ(daemon.start(), address) << daemon.error();

    TelemetryIngestor ingestor(ingestOptions(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] {
        const auto s = ingestor.status();
        return s.nodeResets == 1 && s.cursor >= 30;
    })) << ingestor.status().lastError;
    const IngestorStatus status = ingestor.status();
    ingestor.stop();
    daemon.stop();
    EXPECT_NE(static_cast<std::int64_t>(status.spoolIncarnation), oldInc);
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM events WHERE node_id = 'node-r' AND kind = "
                       "'node_reset';"),
              1);
    EXPECT_EQ(queryInt(history, "SELECT count(*) FROM ingest_cursor WHERE node_id = 'node-r';"), 2);
    // The old incarnation is untouched; the new one starts at seq 1, each exactly once.
    EXPECT_EQ(queryInt(history, rowsOf("node-r", oldInc, false)), oldRows);
    const auto newInc = static_cast<std::int64_t>(status.spoolIncarnation);
    const std::int64_t newRows = queryInt(history, rowsOf("node-r", newInc, false));
    EXPECT_GE(newRows, 30);
    EXPECT_EQ(queryInt(history, rowsOf("node-r", newInc, true)), newRows);
    EXPECT_EQ(queryInt(history,
                       "SELECT min(s.seq) FROM samples s JOIN series r ON r.id = s.series_id "
                       "WHERE r.node_id = 'node-r' AND s.incarnation = " +
                           std::to_string(newInc) + ";"),
              1);
}

// The same through runplanectl watch: the second watch stores the new spool and says why; a
// watch that can store nothing exits non-zero.
TEST(NodeReset, WatchAfterAResetStoresTheNewSpoolAndSaysSo) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    Daemon daemon(state, "node-w");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string ctl = builtBinary("backend/cli/runplanectl");
    {
        Child w = Child::spawn({ctl, "watch", address, "--history", history, "--seconds", "3"},
                               dir.file("w1.out"), dir.file("w1.err"));
        ASSERT_EQ(w.wait(std::chrono::seconds(20)), 0) << w.stderrText();
    }
    daemon.stop();
    std::filesystem::remove_all(state);
    ASSERT_EQ(daemon.start(), address) << daemon.error();
    Child w = Child::spawn({ctl, "watch", address, "--history", history, "--seconds", "3"},
                           dir.file("w2.out"), dir.file("w2.err"));
    ASSERT_EQ(w.wait(std::chrono::seconds(20)), 0) << w.stderrText();
    EXPECT_NE(w.stderrText().find("spool was replaced"), std::string::npos) << w.stderrText();
    EXPECT_EQ(queryInt(history, "SELECT count(*) FROM ingest_cursor WHERE node_id = 'node-w';"), 2);
    daemon.stop();
    // Nothing to store (no daemon): exit status 1 and a line that says so.
    Child none = Child::spawn({ctl, "watch", address, "--history", history, "--seconds", "1"},
                              dir.file("w3.out"), dir.file("w3.err"));
    EXPECT_EQ(none.wait(std::chrono::seconds(20)), 1) << none.stderrText();
    EXPECT_NE(none.stderrText().find("nothing was stored"), std::string::npos) << none.stderrText();
}

// A version-2 file (made by the real version-1 and -2 migrations) keeps its cursor, events and
// samples through the migration to incarnations, as incarnation 0; a new incarnation may then
// reuse the same seqs without colliding.
TEST(NodeReset, CursorMigrationKeepsAVersionTwoFile) {
    ScratchDir dir;
    const std::string path = dir.file("old.sqlite");
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok()) << db.error();
        auto version = db::applyMigrations(**db, db::migrations().first(2), false);
        ASSERT_TRUE(version.ok()) << version.error();
        ASSERT_EQ(*version, 2);
        ASSERT_TRUE((*db)
                        ->exec("INSERT INTO ingest_cursor VALUES ('n', 3, 100);"
                               "INSERT INTO series(id, node_id, run_id, name) "
                               "VALUES (1, 'n', '', 'host.mem.used_bytes');"
                               "INSERT INTO samples(series_id, t_ns, seq, value, min, max) "
                               "VALUES (1, 10, 1, 5, 5, 5), (1, 20, 2, 6, 6, 6);"
                               "INSERT INTO events(node_id, seq, t_ns, kind) "
                               "VALUES ('n', 3, 30, 'info');")
                        .ok());
    }
    auto history = db::History::open(path);
    ASSERT_TRUE(history.ok()) << history.error();
    auto version = (*history)->schemaVersion();
    ASSERT_TRUE(version.ok());
    EXPECT_EQ(*version, db::kSchemaVersion);
    auto cursor = (*history)->latestCursor(db::NodeId{"n"});
    ASSERT_TRUE(cursor.ok() && cursor->has_value());
    EXPECT_EQ((*cursor)->incarnation, 0u);
    EXPECT_EQ((*cursor)->lastSeq, 3u);
    // A new incarnation reuses seqs 1..3: stored next to the old rows, not dropped as duplicates.
    ASSERT_TRUE((*history)->recordNodeReset(db::NodeId{"n"}, **cursor, 42, "reset").ok());
    db::IngestBatch batch;
    batch.nodeId = db::NodeId{"n"};
    batch.incarnation = 42;
    batch.samples.push_back({1, 40, db::RunId{}, "host.mem.used_bytes", "bytes", 7, 7, 7, -1});
    batch.events.push_back({3, 50, db::RunId{}, "info", "new", {}});
    batch.throughSeq = 3;
    auto stored = (*history)->ingest(batch);
    ASSERT_TRUE(stored.ok()) << stored.error();
    EXPECT_EQ(stored->samplesInserted, 1u);
    EXPECT_EQ(stored->eventsInserted, 1u);
    history->reset();
    EXPECT_EQ(queryInt(path, "SELECT count(*) FROM samples WHERE incarnation = 0;"), 2);
    EXPECT_EQ(queryInt(path, "SELECT count(*) FROM samples WHERE incarnation = 42;"), 1);
    EXPECT_EQ(queryInt(path, "SELECT count(*) FROM events WHERE seq = 3;"), 2);
    EXPECT_EQ(queryInt(path, "SELECT last_seq FROM ingest_cursor WHERE incarnation = 0;"), 3);
    EXPECT_EQ(queryInt(path, "SELECT last_seq FROM ingest_cursor WHERE incarnation = 42;"), 3);
    EXPECT_EQ(queryInt(path, "SELECT count(*) FROM events WHERE kind = 'node_reset';"), 1);
}

}  // namespace
}  // namespace runplane::control
