// Tests of the run history (runplane_db) against real SQLite files.
#include "db/history/history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using runplane::testing::readAll;
using runplane::testing::ScratchDir;
using runplane::testing::writeAll;

std::unique_ptr<History> openOrDie(const std::string& path) {
    auto history = History::open(path);
    EXPECT_TRUE(history.ok()) << (history.ok() ? "" : history.error());
    return history.ok() ? std::move(*history) : nullptr;
}

IngestBatch makeBatch(const std::string& node, std::uint64_t firstSeq, std::uint64_t lastSeq,
                      const std::string& series = "host.mem.used_bytes") {
    IngestBatch batch;
    batch.nodeId = NodeId{node};
    for (std::uint64_t seq = firstSeq; seq <= lastSeq; ++seq) {
        IngestSample s;
        s.seq = seq;
        s.tNs = static_cast<std::int64_t>(seq) * 1'000'000'000;
        s.series = series;
        s.unit = "bytes";
        s.value = static_cast<double>(seq);
        s.min = s.value - 0.5;
        s.max = s.value + 0.5;
        batch.samples.push_back(s);
    }
    batch.throughSeq = lastSeq;
    return batch;
}

std::int64_t scalar(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << (stmt.ok() ? "" : stmt.error());
    auto row = stmt->step();
    EXPECT_TRUE(row.ok() && *row);
    return stmt->columnInt(0);
}

TEST(History, CreatesCurrentSchemaInWalMode) {
    ScratchDir dir;
    const std::string path = dir.file("sub/dir/history.sqlite");
    auto history = openOrDie(path);
    ASSERT_TRUE(history);
    auto version = history->schemaVersion();
    ASSERT_TRUE(version.ok());
    EXPECT_EQ(*version, kSchemaVersion);
    auto db = sqlite::Database::open(path);
    ASSERT_TRUE(db.ok());
    auto mode = (*db)->prepare("PRAGMA journal_mode;");
    ASSERT_TRUE(mode.ok());
    ASSERT_TRUE(mode->step().ok());
    EXPECT_EQ(mode->columnText(0), "wal");
    // Reopening an up-to-date file applies nothing.
    history.reset();
    auto again = openOrDie(path);
    ASSERT_TRUE(again);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM schema_version;"), kSchemaVersion);
}

TEST(History, RunsRoundTripNewestFirst) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    RunRecord a;
    a.id = RunId{"run-a"};
    a.name = "first";
    a.recipeYaml = "model: qwen3-0.6b\n";
    a.provenanceJson = R"({"argv":["runplane-smoke"],"git_rev":"abc"})";
    a.startedNs = 100;
    a.nodes = {"node-1", "node-2"};
    RunRecord b = a;
    b.id = RunId{"run-b"};
    b.name = "second";
    b.startedNs = 200;
    ASSERT_TRUE(history->upsertRun(a).ok());
    ASSERT_TRUE(history->upsertRun(b).ok());
    ASSERT_TRUE(
        history->updateRunState(RunId{"run-a"}, RunState::DaemonLost, 150, "daemon gone").ok());
    auto runs = history->listRuns();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_EQ((*runs)[0].id.value(), "run-b");
    const RunRecord& got = (*runs)[1];
    EXPECT_EQ(got.name, "first");
    EXPECT_EQ(got.recipeYaml, a.recipeYaml);
    EXPECT_EQ(got.provenanceJson, a.provenanceJson);
    EXPECT_EQ(got.state, RunState::DaemonLost);
    EXPECT_EQ(got.endedNs, 150);
    EXPECT_EQ(got.message, "daemon gone");
    EXPECT_EQ(got.nodes, a.nodes);
    auto missing = history->updateRunState(RunId{"nope"}, RunState::Failed, 1, "");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("nope"), std::string::npos);
    EXPECT_EQ(runStateFromString("daemon_lost"), RunState::DaemonLost);
    EXPECT_EQ(toString(RunState::Failed), "failed");
}

TEST(History, NodesUpsert) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    ASSERT_TRUE(history->upsertNode({NodeId{"n1"}, "127.0.0.1:1000", "host-a", "{}", 5}).ok());
    ASSERT_TRUE(
        history->upsertNode({NodeId{"n1"}, "127.0.0.1:2000", "host-a", R"({"x":1})", 6}).ok());
    auto nodes = history->listNodes();
    ASSERT_TRUE(nodes.ok());
    ASSERT_EQ(nodes->size(), 1u);
    EXPECT_EQ((*nodes)[0].address, "127.0.0.1:2000");
    EXPECT_EQ((*nodes)[0].infoJson, R"({"x":1})");
}

TEST(History, IngestIsIdempotentByNodeAndSeq) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto history = openOrDie(path);
    auto first = history->ingest(makeBatch("n1", 1, 100));
    ASSERT_TRUE(first.ok()) << first.error();
    EXPECT_EQ(first->samplesInserted, 100u);
    EXPECT_EQ(first->cursor, 100u);
    // The same batch again (a redelivery after a reconnect) stores nothing.
    auto again = history->ingest(makeBatch("n1", 1, 100));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->samplesInserted, 0u);
    EXPECT_EQ(again->duplicatesSkipped, 100u);
    // An overlapping batch stores only the new part.
    auto overlap = history->ingest(makeBatch("n1", 51, 150));
    ASSERT_TRUE(overlap.ok());
    EXPECT_EQ(overlap->samplesInserted, 50u);
    EXPECT_EQ(overlap->cursor, 150u);
    // The same seq twice inside one batch: the UNIQUE constraint keeps one.
    IngestBatch twice = makeBatch("n1", 151, 151);
    twice.samples.push_back(twice.samples.front());
    auto dup = history->ingest(twice);
    ASSERT_TRUE(dup.ok());
    EXPECT_EQ(dup->samplesInserted, 1u);
    EXPECT_EQ(dup->duplicatesSkipped, 1u);
    // Another node's seqs are independent.
    auto other = history->ingest(makeBatch("n2", 1, 10));
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other->samplesInserted, 10u);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 161);
    EXPECT_EQ(scalar(path,
                     "SELECT count(DISTINCT seq) FROM samples s JOIN series r ON "
                     "r.id = s.series_id WHERE r.node_id = 'n1';"),
              151);
    auto cursor = history->ingestCursor(NodeId{"n1"});
    ASSERT_TRUE(cursor.ok());
    EXPECT_EQ(*cursor, 151u);
    auto none = history->ingestCursor(NodeId{"unknown"});
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, 0u);
}

TEST(History, EventsAreIdempotentAndControllerGapsKept) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    batch.events.push_back({5, 50, RunId{"run-1"}, "phase", "rollout", {{"phase", "rollout"}}});
    batch.events.push_back({0, 40, RunId{}, "gap", "records 1..4 missing", {{"first_seq", "1"}}});
    ASSERT_TRUE(history->ingest(batch).ok());
    auto again = history->ingest(batch);
    ASSERT_TRUE(again.ok());
    // The daemon's event (seq 5) is a duplicate; a controller-made event (seq 0) has no seq
    // identity, the ingestor never re-sends one (it is committed with the cursor).
    EXPECT_EQ(again->eventsInserted, 1u);
    auto events = history->listEvents(EventFilter{});
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 3u);
    EXPECT_EQ((*events)[0].kind, "gap");
    EXPECT_FALSE((*events)[0].seq.has_value());
    EXPECT_EQ((*events)[2].kind, "phase");
    EXPECT_EQ((*events)[2].seq, 5u);
    EventFilter byRun;
    byRun.runId = RunId{"run-1"};
    auto run = history->listEvents(byRun);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->size(), 1u);
    EventFilter range;
    range.t0Ns = 45;
    range.t1Ns = 60;
    EXPECT_EQ(history->listEvents(range)->size(), 1u);
}

namespace {

// events.attrs_json of every event, in seq order.
std::vector<std::string> storedAttrs(const std::string& path, const std::string& nodeId) {
    std::vector<std::string> texts;
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare("SELECT attrs_json FROM events WHERE node_id = ?1 ORDER BY seq;");
    EXPECT_TRUE(stmt.ok());
    stmt->bind(1, nodeId);
    while (true) {
        auto row = stmt->step();
        EXPECT_TRUE(row.ok());
        if (!row.ok() || !*row) {
            break;
        }
        texts.push_back(stmt->columnText(0));
    }
    return texts;
}

}  // namespace

TEST(History, EventAttributesKeepTheirJsonTypes) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto history = openOrDie(path);
    // A daemon's string attributes, a dispatch step's bool, an NCCL probe summary's numbers and
    // nested environment, and none at all.
    const EventAttrs gap = {{"last_seq", "4"}, {"first_seq", "1"}};
    const EventAttrs step = {{"node", "10.0.0.2:7070"}, {"ok", false}};
    const EventAttrs probe = {{"ranks", 8},
                              {"world_size", 16},
                              {"nccl_env", {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_HCA", "mlx5"}}},
                              {"error", ""}};
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    batch.events.push_back({1, 10, RunId{"run-1"}, "gap", "records 1..4 missing", gap});
    batch.events.push_back({2, 20, RunId{"run-1"}, "dispatch.ray_stop", "unreachable", step});
    batch.events.push_back({3, 30, RunId{"run-1"}, "nccl_probe", "healthy", probe});
    batch.events.push_back({4, 40, RunId{"run-1"}, "info", "no attributes", {}});
    batch.throughSeq = 4;
    ASSERT_TRUE(history->ingest(batch).ok());
    // The bytes the callers stored when they dumped the JSON themselves: compact, keys sorted,
    // a bool a bool and a number a number.
    EXPECT_EQ(
        storedAttrs(path, "n1"),
        (std::vector<std::string>{
            R"({"first_seq":"1","last_seq":"4"})", R"({"node":"10.0.0.2:7070","ok":false})",
            R"({"error":"","nccl_env":{"NCCL_DEBUG":"WARN","NCCL_IB_HCA":"mlx5"},"ranks":8,"world_size":16})",
            "{}"}));
    auto events = history->listEvents(EventFilter{});
    ASSERT_TRUE(events.ok()) << events.error();
    ASSERT_EQ(events->size(), 4u);
    EXPECT_EQ((*events)[0].attrs, gap);
    EXPECT_EQ((*events)[1].attrs, step);
    EXPECT_TRUE((*events)[1].attrs.at("ok").is_boolean());
    EXPECT_EQ((*events)[2].attrs, probe);
    EXPECT_TRUE((*events)[2].attrs.at("ranks").is_number_integer());
    EXPECT_TRUE((*events)[2].attrs.at("nccl_env").is_object());
    EXPECT_TRUE((*events)[3].attrs.empty());
    // One attribute as text, whatever its type.
    EXPECT_EQ(attrText((*events)[0].attrs, "first_seq"), "1");
    EXPECT_EQ(attrText((*events)[1].attrs, "ok"), "false");
    EXPECT_EQ(attrText((*events)[2].attrs, "ranks"), "8");
    EXPECT_EQ(attrText((*events)[2].attrs, "nccl_env"),
              R"({"NCCL_DEBUG":"WARN","NCCL_IB_HCA":"mlx5"})");
    EXPECT_EQ(attrText((*events)[2].attrs, "absent"), "");
    EXPECT_EQ(eventAttrs({{"state", "RUN_STATE_FAILED"}}),
              (EventAttrs{{"state", "RUN_STATE_FAILED"}}));
}

TEST(History, EventsStoredBeforeTheMapReadBackUnchanged) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto history = openOrDie(path);
    // Rows as the callers wrote them when they handed the history JSON text (a daemon event, a
    // dispatch step, an NCCL probe summary with its nested report, a probe row, an empty object),
    // and text that is not an object.
    const std::vector<std::string> old = {
        R"({"phase":"rollout","step":"7"})",
        R"({"node":"a:1","ok":false})",
        R"({"address":"a:1","error":"","first_rank":0,"library":"/usr/lib/libnccl.so.2","nccl_env":{"NCCL_DEBUG":"WARN"},"nccl_version":"2.21.5","ranks":8,"report":{"busbw":341.5,"gpus":[{"index":0,"nvlink":true}]},"world_size":8})",
        R"({"busbw_gbps":"341.500000","bytes":"1073741824","collective":"all_reduce","correct":"true"})",
        "{}",
    };
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok());
        auto insert = (*db)->prepare(
            "INSERT INTO events(node_id, incarnation, seq, t_ns, run_id, kind, message, "
            "attrs_json) VALUES ('n1', 0, ?1, ?1, 'r', 'info', 'm', ?2);");
        ASSERT_TRUE(insert.ok());
        for (std::size_t i = 0; i <= old.size(); ++i) {
            insert->bind(1, static_cast<std::int64_t>(i + 1))
                .bind(2, i < old.size() ? old[i] : std::string("not json"));
            ASSERT_TRUE(insert->run().ok());
        }
    }
    auto events = history->listEvents(EventFilter{});
    ASSERT_TRUE(events.ok()) << events.error();
    ASSERT_EQ(events->size(), old.size() + 1);
    EXPECT_EQ((*events)[0].attrs, (EventAttrs{{"phase", "rollout"}, {"step", "7"}}));
    EXPECT_EQ((*events)[1].attrs, (EventAttrs{{"node", "a:1"}, {"ok", false}}));
    EXPECT_EQ((*events)[2].attrs.at("ranks"), 8);
    EXPECT_EQ((*events)[2].attrs.at("report").at("gpus").at(0).at("nvlink"), true);
    EXPECT_TRUE(events->back().attrs.empty());  // "not json"
    // Each old row's attributes, as read, are exactly its stored JSON, and storing them again
    // writes the same bytes.
    IngestBatch again;
    again.nodeId = NodeId{"n2"};
    for (std::size_t i = 0; i < old.size(); ++i) {
        EXPECT_EQ(nlohmann::json((*events)[i].attrs), nlohmann::json::parse(old[i])) << old[i];
        again.events.push_back({i + 1, 100, RunId{"r"}, "info", "m", (*events)[i].attrs});
    }
    again.throughSeq = old.size();
    ASSERT_TRUE(history->ingest(again).ok());
    EXPECT_EQ(storedAttrs(path, "n2"), old);
}

TEST(History, FailedBatchLeavesNothingBehind) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto history = openOrDie(path);
    ASSERT_TRUE(history->ingest(makeBatch("n1", 1, 5)).ok());
    {
        // Fault injection: staging the next batch's samples fails inside the transaction.
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE((*db)
                        ->exec("CREATE TRIGGER fail_seq_8 BEFORE INSERT ON staged BEGIN "
                               "SELECT RAISE(ABORT, 'injected'); END;")
                        .ok());
    }
    IngestBatch batch = makeBatch("n1", 6, 10, "new.series");
    auto failed = history->ingest(batch);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().find("injected"), std::string::npos);
    EXPECT_NE(failed.error().find(path), std::string::npos);
    EXPECT_EQ(*history->ingestCursor(NodeId{"n1"}), 5u);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 5);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM series WHERE name = 'new.series';"), 0);
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE((*db)->exec("DROP TRIGGER fail_seq_8;").ok());
    }
    // The retry succeeds and the series created by the rolled-back attempt is not reused.
    auto retried = history->ingest(batch);
    ASSERT_TRUE(retried.ok()) << retried.error();
    EXPECT_EQ(retried->samplesInserted, 5u);
    auto id = history->findSeries(NodeId{"n1"}, RunId(), "new.series");
    ASSERT_TRUE(id.ok() && id->has_value());
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples WHERE series_id = " +
                               std::to_string(**id) + ";"),
              5);
}

TEST(History, NanValuesAreStoredAndReadBack) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    IngestBatch batch = makeBatch("n1", 1, 3, "train/loss");
    batch.samples[1].value = std::numeric_limits<double>::quiet_NaN();
    batch.samples[1].min = batch.samples[1].max = batch.samples[1].value;
    ASSERT_TRUE(history->ingest(batch).ok());
    auto id = history->findSeries(NodeId{"n1"}, RunId(), "train/loss");
    ASSERT_TRUE(id.ok() && id->has_value());
    auto points = history->querySeries(SeriesQuery{**id});
    ASSERT_TRUE(points.ok());
    ASSERT_EQ(points->points.size(), 3u);
    EXPECT_TRUE(std::isnan(points->points[1].value));
    EXPECT_EQ(points->points[2].value, 3.0);
}

TEST(History, ListSeriesWithExtent) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    ASSERT_TRUE(history->ingest(makeBatch("n1", 1, 10)).ok());
    IngestBatch metrics = makeBatch("n1", 11, 12, "eval/gsm8k");
    for (auto& s : metrics.samples) {
        s.runId = RunId{"run-1"};
    }
    ASSERT_TRUE(history->ingest(metrics).ok());
    auto all = history->listSeries(SeriesFilter{});
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 2u);
    SeriesFilter nodeLevel;
    nodeLevel.runId = RunId();
    auto host = history->listSeries(nodeLevel);
    ASSERT_EQ(host->size(), 1u);
    EXPECT_EQ((*host)[0].count, 10);
    EXPECT_EQ((*host)[0].firstNs, 1'000'000'000);
    EXPECT_EQ((*host)[0].lastNs, 10'000'000'000);
    EXPECT_EQ((*host)[0].unit, "bytes");
    SeriesFilter evals;
    evals.name = "eval/*";
    EXPECT_EQ(history->listSeries(evals)->size(), 1u);
}

TEST(History, RunMetricsLastAndBest) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    const double acc[] = {0.2, 0.7, 0.5};
    const double loss[] = {2.0, 0.5, 0.9};
    for (int i = 0; i < 3; ++i) {
        batch.samples.push_back({static_cast<std::uint64_t>(2 * i + 1), (i + 1) * 1000,
                                 RunId{"run-1"}, "eval/arith", "", acc[i], acc[i], acc[i],
                                 (i + 1) * 10});
        batch.samples.push_back({static_cast<std::uint64_t>(2 * i + 2), (i + 1) * 1000,
                                 RunId{"run-1"}, "train/loss", "", loss[i], loss[i], loss[i],
                                 (i + 1) * 10});
    }
    ASSERT_TRUE(history->ingest(batch).ok());
    auto evals = history->runMetrics(RunId{"run-1"});
    ASSERT_TRUE(evals.ok());
    ASSERT_EQ(evals->size(), 1u);
    EXPECT_EQ((*evals)[0].last, 0.5);
    EXPECT_EQ((*evals)[0].lastStep, 30);
    EXPECT_EQ((*evals)[0].best, 0.7);
    EXPECT_EQ((*evals)[0].bestStep, 20);
    auto losses = history->runMetrics(RunId{"run-1"}, "train/");
    ASSERT_TRUE(losses.ok());
    ASSERT_EQ(losses->size(), 1u);
    EXPECT_EQ((*losses)[0].best, 0.5);  // lower is better for a loss
    EXPECT_EQ((*losses)[0].bestStep, 20);
}

TEST(History, PeaksPerNodeAndPerRun) {
    ScratchDir dir;
    auto history = openOrDie(dir.file("h.sqlite"));
    IngestBatch a = makeBatch("n1", 1, 100);
    a.samples[40].max = 1e12;  // a spike inside one interval, at t = 41 s
    ASSERT_TRUE(history->ingest(a).ok());
    ASSERT_TRUE(history->ingest(makeBatch("n2", 1, 100)).ok());
    auto peaks = history->nodePeaks("host.mem.used_bytes", 0, 200'000'000'000);
    ASSERT_TRUE(peaks.ok());
    ASSERT_EQ(peaks->size(), 2u);
    EXPECT_EQ((*peaks)[0].nodeId.value(), "n1");
    EXPECT_EQ((*peaks)[0].peak, 1e12);
    EXPECT_EQ((*peaks)[0].peakNs, 41'000'000'000);
    EXPECT_EQ((*peaks)[1].peak, 100.5);
    ASSERT_TRUE(history->upsertNode({NodeId{"n2"}, "127.0.0.1:9", "h2", "{}", 1}).ok());
    RunRecord run;
    run.id = RunId{"r"};
    run.startedNs = 50'000'000'000;
    run.endedNs = 60'000'000'000;
    run.nodes = {"n1", "127.0.0.1:9"};  // a node id and an address both match
    ASSERT_TRUE(history->upsertRun(run).ok());
    auto runPeaks = history->runPeaks(RunId{"r"});
    ASSERT_TRUE(runPeaks.ok()) << runPeaks.error();
    ASSERT_EQ(runPeaks->size(), 2u);
    EXPECT_EQ((*runPeaks)[0].peak, 60.5);  // the spike at 41 s is outside the run's window
    EXPECT_EQ((*runPeaks)[1].peak, 60.5);
}

// issue 2: a corrupt history file gives a clear error naming it and is never modified.
TEST(History, CorruptFileIsRefusedAndUntouched) {
    ScratchDir dir;
    const std::string garbage = dir.file("garbage.sqlite");
    writeAll(garbage, std::string(8192, 'x') + "not a database at all");
    const std::string before = readAll(garbage);
    auto opened = History::open(garbage);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().find(garbage), std::string::npos) << opened.error();
    EXPECT_NE(opened.error().find("not a database"), std::string::npos) << opened.error();
    EXPECT_EQ(readAll(garbage), before);
    EXPECT_FALSE(std::filesystem::exists(garbage + "-wal"));

    // A real history whose header was damaged: refused, bytes unchanged.
    const std::string damaged = dir.file("damaged.sqlite");
    {
        auto history = openOrDie(damaged);
        ASSERT_TRUE(history->ingest(makeBatch("n1", 1, 2000)).ok());
    }
    {
        // Checkpoint the WAL into the main file so all data lives there.
        auto db = sqlite::Database::open(damaged);
        ASSERT_TRUE((*db)->exec("PRAGMA wal_checkpoint(TRUNCATE);").ok());
    }
    std::string bytes = readAll(damaged);
    ASSERT_GT(bytes.size(), 4096u);
    for (int i = 0; i < 16; ++i) {
        bytes[static_cast<std::size_t>(i)] = '#';
    }
    writeAll(damaged, bytes);
    auto refused = History::open(damaged);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find(damaged), std::string::npos) << refused.error();
    EXPECT_EQ(readAll(damaged), bytes);
}

TEST(History, ForeignDatabaseIsRefusedAndUntouched) {
    ScratchDir dir;
    const std::string path = dir.file("other.sqlite");
    {
        sqlite::Database::Options options;
        options.wal = false;
        auto db = sqlite::Database::open(path, options);
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE((*db)->exec("CREATE TABLE t(x); INSERT INTO t VALUES (1);").ok());
    }
    const std::string before = readAll(path);
    auto opened = History::open(path);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().find(path), std::string::npos);
    EXPECT_NE(opened.error().find("not a Runplane history"), std::string::npos);
    EXPECT_EQ(readAll(path), before);
}

// issue 2: a file written by a newer Runplane is refused with a clear error, not modified.
TEST(History, NewerSchemaIsRefused) {
    ScratchDir dir;
    const std::string path = dir.file("newer.sqlite");
    {
        auto history = openOrDie(path);
        ASSERT_TRUE(history->ingest(makeBatch("n1", 1, 10)).ok());
    }
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE((*db)
                        ->exec("INSERT INTO schema_version VALUES (99, 0, 'from the future');"
                               "PRAGMA wal_checkpoint(TRUNCATE);")
                        .ok());
    }
    const std::string before = readAll(path);
    auto opened = History::open(path);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.error().find(path), std::string::npos);
    EXPECT_NE(opened.error().find("99"), std::string::npos);
    EXPECT_NE(opened.error().find("newer"), std::string::npos) << opened.error();
    EXPECT_EQ(readAll(path), before);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 10);
}

// beginRead/endRead (issue 20): the reads in between see one snapshot, so a series' count from
// listSeries and the samples querySeries returns agree even while another connection writes.
TEST(History, ReadSnapshotHoldsUntilEndRead) {
    ScratchDir dir;
    auto writer = openOrDie(dir.file("h.sqlite"));
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->ingest(makeBatch("node-a", 1, 10)).ok());
    auto reader = openOrDie(dir.file("h.sqlite"));
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->endRead().ok());  // without beginRead: nothing to end
    ASSERT_TRUE(reader->beginRead().ok());
    auto before = reader->listSeries({});
    ASSERT_TRUE(before.ok() && before->size() == 1u);
    EXPECT_EQ(before->front().count, 10);
    ASSERT_TRUE(writer->ingest(makeBatch("node-a", 11, 15)).ok());
    auto inside = reader->querySeries(SeriesQuery{before->front().id});
    ASSERT_TRUE(inside.ok()) << inside.error();
    EXPECT_EQ(inside->sourceCount, 10);  // the snapshot: not the 5 written meanwhile
    auto listedInside = reader->listSeries({});
    ASSERT_TRUE(listedInside.ok());
    EXPECT_EQ(listedInside->front().count, 10);
    ASSERT_TRUE(reader->endRead().ok());
    auto after = reader->querySeries(SeriesQuery{before->front().id});
    ASSERT_TRUE(after.ok()) << after.error();
    EXPECT_EQ(after->sourceCount, 15);
}

TEST(History, ReadOnlyOpenNeverCreates) {
    ScratchDir dir;
    auto missing = History::open(dir.file("absent.sqlite"), OpenOptions{true, 1000});
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("absent.sqlite"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.file("absent.sqlite")));
    { auto created = openOrDie(dir.file("h.sqlite")); }
    auto readOnly = History::open(dir.file("h.sqlite"), OpenOptions{true, 1000});
    ASSERT_TRUE(readOnly.ok()) << readOnly.error();
    EXPECT_TRUE((*readOnly)->listRuns().ok());
    RunRecord run;
    run.id = RunId{"x"};
    EXPECT_FALSE((*readOnly)->upsertRun(run).ok());
}

}  // namespace
}  // namespace runplane::db

namespace runplane::db {
namespace {

// Several connections (an ingest thread, the CLI, the GUI reader) opening a new file at once
// all succeed; the migrations run once.
TEST(History, ConcurrentOpenOfANewFileMigratesOnce) {
    ScratchDir dir;
    for (int round = 0; round < 5; ++round) {
        const std::string path = dir.file("race-" + std::to_string(round) + ".sqlite");
        std::vector<std::thread> threads;
        std::vector<std::string> errors(4);
        for (int i = 0; i < 4; ++i) {
            threads.emplace_back([&, i] {
                auto history = History::open(path);
                if (!history.ok()) {
                    errors[static_cast<std::size_t>(i)] = history.error();
                    return;
                }
                auto ingested = (*history)->ingest(makeBatch("n" + std::to_string(i), 1, 10));
                if (!ingested.ok()) {
                    errors[static_cast<std::size_t>(i)] = ingested.error();
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        for (const auto& e : errors) {
            EXPECT_TRUE(e.empty()) << e;
        }
        EXPECT_EQ(scalar(path, "SELECT count(*) FROM schema_version;"), kSchemaVersion);
        EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 40);
    }
}

}  // namespace
}  // namespace runplane::db
