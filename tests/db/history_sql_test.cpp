// `runplanectl history sql` (issue 49, docs/history.md "Querying the history in SQL"): the views
// over runs, series, points and events read a real history file; anything but one read-only
// SELECT / WITH is refused and the file is unchanged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "db/history/history.h"
#include "db/history/history_sql.h"
#include "tests/db/test_util.h"

namespace {

using runplane::db::queryHistorySql;
using runplane::testing::readAll;
using runplane::testing::ScratchDir;

void makeHistory(const std::string& path) {
    auto h = runplane::db::History::open(path);
    ASSERT_TRUE(h.ok()) << h.error();
    runplane::db::RunRecord run;
    run.id = runplane::RunId{"r1"};
    run.name = "grpo-7b";
    run.state = runplane::db::RunState::Finished;
    run.startedNs = 1'000'000'000;
    run.endedNs = 11'000'000'000;
    run.provenanceJson = R"({"origin":{"format":"tensorboard"}})";
    ASSERT_TRUE((*h)->upsertRun(run).ok());
    runplane::db::IngestBatch batch;
    batch.nodeId = runplane::NodeId{"n1"};
    for (int i = 0; i < 100; ++i) {
        runplane::db::IngestSample s;
        s.seq = static_cast<std::uint64_t>(i + 1);
        s.tNs = 1'000'000'000 + i * 100'000'000LL;
        s.runId = run.id;
        s.series = i % 2 == 0 ? "train/loss" : "eval/gsm8k";
        s.value = s.min = s.max = i * 0.5;
        s.step = i;
        batch.samples.push_back(s);
    }
    runplane::db::IngestEvent e;
    e.seq = 101;
    e.tNs = 5'000'000'000;
    e.runId = run.id;
    e.kind = "phase";
    e.message = "rollout";
    batch.events.push_back(e);
    batch.throughSeq = 101;
    ASSERT_TRUE((*h)->ingest(batch).ok());
}

TEST(HistorySql, ViewsReadRunsSeriesPointsAndEvents) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    makeHistory(path);
    auto runs = queryHistorySql(path, "SELECT run_id, name, origin, duration_s FROM v_runs");
    ASSERT_TRUE(runs.ok()) << runs.error();
    ASSERT_EQ(runs->columns, (std::vector<std::string>{"run_id", "name", "origin", "duration_s"}));
    ASSERT_EQ(runs->rows.size(), 1u);
    EXPECT_EQ(runs->rows[0][1], "grpo-7b");
    EXPECT_EQ(runs->rows[0][2], "tensorboard");
    EXPECT_EQ(runs->rows[0][3], 10.0);

    auto points = queryHistorySql(
        path,
        "-- per series\nWITH p AS (SELECT * FROM v_points WHERE run_id = 'r1') "
        "SELECT series, count(*), min(step), max(value) FROM p GROUP BY series ORDER BY series");
    ASSERT_TRUE(points.ok()) << points.error();
    ASSERT_EQ(points->rows.size(), 2u);
    EXPECT_EQ(points->rows[0][0], "eval/gsm8k");
    EXPECT_EQ(points->rows[0][1], 50);
    EXPECT_EQ(points->rows[0][2], 1);
    EXPECT_EQ(points->rows[0][3], 49.5);
    EXPECT_EQ(points->rows[1][0], "train/loss");
    EXPECT_EQ(points->rows[1][3], 49.0);

    auto series =
        queryHistorySql(path, "SELECT run_name, node_id, name FROM v_series ORDER BY name");
    ASSERT_TRUE(series.ok());
    ASSERT_EQ(series->rows.size(), 2u);
    EXPECT_EQ(series->rows[0][0], "grpo-7b");
    auto events = queryHistorySql(path, "select kind, message, t_ns from v_events");
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->rows.size(), 1u);
    EXPECT_EQ(events->rows[0][0], "phase");

    runplane::db::SqlQueryOptions few;
    few.maxRows = 3;
    auto cut = queryHistorySql(path, "SELECT * FROM v_points", few);
    ASSERT_TRUE(cut.ok());
    EXPECT_EQ(cut->rows.size(), 3u);
    EXPECT_TRUE(cut->truncated);
}

TEST(HistorySql, WritesAreRefusedAndTheFileIsUnchanged) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    makeHistory(path);
    const std::string before = readAll(path);
    const std::vector<std::pair<std::string, std::string>> refused{
        {"DELETE FROM runs", "begins with DELETE"},
        {"  /* c */ update runs SET name = 'x'", "begins with UPDATE"},
        {"INSERT INTO settings VALUES ('a', 'b')", "begins with INSERT"},
        {"DROP TABLE runs", "begins with DROP"},
        {"PRAGMA user_version = 7", "begins with PRAGMA"},
        {"ATTACH 'other.db' AS o", "begins with ATTACH"},
        {"VACUUM", "begins with VACUUM"},
        {"SELECT 1; DELETE FROM runs", "one statement at a time"},
        {"WITH x AS (SELECT 1) DELETE FROM runs", "would write"},
        {"WITH x AS (SELECT 1) INSERT INTO settings SELECT 'k', 'v' FROM x", "would write"},
        {"", "begins with no keyword"},
    };
    for (const auto& [sql, why] : refused) {
        auto r = queryHistorySql(path, sql);
        ASSERT_FALSE(r.ok()) << sql;
        EXPECT_NE(r.error().find(why), std::string::npos) << sql << ": " << r.error();
    }
    auto still = queryHistorySql(path, "SELECT count(*) FROM runs");
    ASSERT_TRUE(still.ok());
    EXPECT_EQ(still->rows[0][0], 1);
    EXPECT_EQ(readAll(path), before);

    auto missing = queryHistorySql(dir.file("none.sqlite"), "SELECT 1");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), dir.file("none.sqlite") + ": no such history file");
    auto bad = queryHistorySql(path, "SELECT * FROM nope");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), "SQL error: no such table: nope");
}

TEST(HistorySql, ALongQueryIsStoppedAtItsTimeout) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    makeHistory(path);
    runplane::db::SqlQueryOptions quick;
    quick.timeoutMs = 200;
    auto r = queryHistorySql(path,
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                             "SELECT count(*) FROM c",
                             quick);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "the query ran past its 200 ms and was stopped");
}

}  // namespace
