// Issue 23 item 6: retention on a real SQLite file. Old raw samples go, rollups, eval metrics,
// events and pinned runs stay, a dry run changes nothing, queries still see the pruned era, and
// the version-3 -> 4 migration keeps every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "db/history/history.h"
#include "db/history/rollup.h"
#include "db/history/schema.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using runplane::testing::ScratchDir;

constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::int64_t kDay = 86'400 * kSec;
// "Now" for the tests: a fixed day, 30 days of data before it.
constexpr std::int64_t kNow = 20'000 * kDay;
constexpr std::int64_t kStart = kNow - 30 * kDay;
constexpr std::int64_t kStep = 60 * kSec;  // one sample a minute: 43,200 per series
constexpr double kSpike = 1e12;
constexpr std::int64_t kSpikeT = kStart + 3 * kDay + 17 * kStep;
// The pinned run: day 5..6.
constexpr std::int64_t kPinnedFrom = kStart + 5 * kDay;
constexpr std::int64_t kPinnedTo = kStart + 6 * kDay;

std::int64_t scalar(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << (stmt.ok() ? "" : stmt.error());
    auto row = stmt->step();
    EXPECT_TRUE(row.ok() && *row);
    return stmt->columnInt(0);
}

std::int64_t seriesId(History& h, const std::string& run, const std::string& name) {
    auto id = h.findSeries(NodeId{"n1"}, RunId{run}, name);
    EXPECT_TRUE(id.ok() && *id) << name;
    return id.ok() && *id ? **id : 0;
}

// Node n1: node-level host memory (with one spike on day 3), an unpinned old run with a loss and
// an eval series, a pinned run with a loss series, and an event per day.
void fill(History& h) {
    RunRecord old;
    old.id = RunId{"old-run"};
    old.startedNs = kStart;
    old.endedNs = kStart + 2 * kDay;
    old.state = RunState::Finished;
    old.nodes = {"n1"};
    ASSERT_TRUE(h.upsertRun(old).ok());
    RunRecord pinned = old;
    pinned.id = RunId{"pinned-run"};
    pinned.startedNs = kPinnedFrom;
    pinned.endedNs = kPinnedTo;
    ASSERT_TRUE(h.upsertRun(pinned).ok());
    ASSERT_TRUE(h.setPinned(RunId{"pinned-run"}, true).ok());

    std::uint64_t seq = 0;
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    auto flush = [&] {
        batch.throughSeq = seq;
        auto r = h.ingest(batch);
        ASSERT_TRUE(r.ok()) << r.error();
        batch.samples.clear();
        batch.events.clear();
    };
    auto add = [&](const std::string& run, const std::string& name, std::int64_t t, double v) {
        IngestSample s;
        s.seq = ++seq;
        s.tNs = t;
        s.runId = RunId{run};
        s.series = name;
        s.value = s.min = s.max = v;
        batch.samples.push_back(s);
    };
    for (std::int64_t t = kStart; t < kNow; t += kStep) {
        add("", "host.mem.used_bytes", t, t == kSpikeT ? kSpike : 1.0);
        if (t < kStart + 2 * kDay) {
            add("old-run", "train/loss", t, 2.0);
            if ((t - kStart) % kDay == 0) {
                add("old-run", "eval/gsm8k", t, 0.5);
            }
        }
        if (t >= kPinnedFrom && t <= kPinnedTo) {
            add("pinned-run", "train/loss", t, 3.0);
        }
        if ((t - kStart) % kDay == 0) {
            IngestEvent e;
            e.seq = ++seq;
            e.tNs = t;
            e.kind = "info";
            e.message = "day";
            batch.events.push_back(e);
        }
        if (batch.samples.size() >= 5000) {
            flush();
        }
    }
    flush();
}

std::string count(std::int64_t series, const std::string& extra = "") {
    return "SELECT count(*) FROM samples WHERE series_id = " + std::to_string(series) + extra + ";";
}

TEST(Retention, DefaultsAndSettings) {
    ScratchDir dir;
    auto h = History::open(dir.file("h.sqlite"));
    ASSERT_TRUE(h.ok()) << h.error();
    auto policy = (*h)->retention();
    ASSERT_TRUE(policy.ok()) << policy.error();
    EXPECT_EQ(policy->rawDays, 14);
    EXPECT_EQ(policy->rollupDays, 365);
    ASSERT_TRUE((*h)->setRetention({3, 30}).ok());
    EXPECT_EQ((*h)->retention()->rawDays, 3);
    EXPECT_EQ((*h)->retention()->rollupDays, 30);
    auto zero = (*h)->setRetention({0, 30});
    ASSERT_FALSE(zero.ok());
    EXPECT_NE(zero.error().find("raw days 0 is out of range 1..36500"), std::string::npos)
        << zero.error();
    auto inverted = (*h)->setRetention({40, 30});
    ASSERT_FALSE(inverted.ok());
    EXPECT_NE(inverted.error().find("must not exceed rollup days"), std::string::npos);
    EXPECT_EQ((*h)->retention()->rawDays, 3);  // unchanged by the refused calls
    auto unknown = (*h)->setPinned(RunId{"nope"}, true);
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().find("no run with id 'nope'"), std::string::npos);
}

TEST(Retention, PruneKeepsRollupsEvalEventsAndPinnedRuns) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    fill(h);
    const std::int64_t mem = seriesId(h, "", "host.mem.used_bytes");
    const std::int64_t oldLoss = seriesId(h, "old-run", "train/loss");
    const std::int64_t eval = seriesId(h, "old-run", "eval/gsm8k");
    const std::int64_t pinnedLoss = seriesId(h, "pinned-run", "train/loss");
    const std::int64_t memBefore = scalar(path, count(mem));
    const std::int64_t evalBefore = scalar(path, count(eval));
    const std::int64_t pinnedBefore = scalar(path, count(pinnedLoss));
    const std::int64_t eventsBefore = scalar(path, "SELECT count(*) FROM events;");
    const std::int64_t pinnedWindowBefore =
        scalar(path, count(mem, " AND t_ns BETWEEN " + std::to_string(kPinnedFrom) + " AND " +
                                    std::to_string(kPinnedTo)));
    ASSERT_EQ(memBefore, 30 * 1440);

    PruneOptions options;
    options.nowNs = kNow;
    options.batchRows = 1000;  // many small transactions
    int pauses = 0;
    options.betweenBatches = [&] {
        ++pauses;
        return true;
    };
    auto report = h.prune(options);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_TRUE(report->complete);
    const std::int64_t cutoff = report->rawCutoffNs;
    EXPECT_LE(cutoff, kNow - 14 * kDay);
    EXPECT_GT(cutoff, kNow - 14 * kDay - 4 * kDay);  // rounded down to the 3.03-day grid
    const std::string old = " AND t_ns < " + std::to_string(cutoff);
    // Old raw samples of the node are gone except during the pinned run; recent ones all stay.
    EXPECT_EQ(scalar(path, count(mem, old)), pinnedWindowBefore);
    EXPECT_EQ(scalar(path, count(mem, " AND t_ns >= " + std::to_string(cutoff))),
              (kNow - cutoff) / kStep);
    EXPECT_EQ(scalar(path, count(oldLoss)), 0);
    // Eval metrics, the pinned run and every event are kept.
    EXPECT_EQ(scalar(path, count(eval)), evalBefore);
    EXPECT_EQ(scalar(path, count(pinnedLoss)), pinnedBefore);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM events;"), eventsBefore);
    EXPECT_EQ(report->samplesDeleted,
              memBefore - scalar(path, count(mem)) + 2 * 1440 /* old-run loss */);
    EXPECT_GE(report->transactions, report->samplesDeleted / 1000);
    EXPECT_GE(pauses, 10);
    // Rollups: the fine cells of the old era went, the 64 s and coarser cells stayed.
    const std::string cells =
        "SELECT count(*) FROM sample_rollup WHERE series_id = " + std::to_string(mem) + " AND ";
    EXPECT_EQ(scalar(path, cells + "level < 2 AND cell * (1 << (3 * level)) * 1000000000 < " +
                               std::to_string(cutoff)),
              0);
    EXPECT_GT(scalar(path, cells + "level = 2 AND cell * 64000000000 < " + std::to_string(cutoff)),
              0);
    EXPECT_EQ(report->fineRollupsDeleted, 0);  // since v6 no 1 s / 8 s cells are stored
    EXPECT_EQ(report->rollupsDeleted, 0);      // nothing is older than 365 days
    // The space is given back (the file was created with incremental auto-vacuum): no free page
    // is left inside. (The file need not shrink here: since v7 the prune first writes the rollup
    // cells of the unsealed chunks it deletes, and this test's constant series compress to
    // chunks smaller than those cells.)
    EXPECT_GT(report->bytesBefore, 0);
    EXPECT_EQ(report->freeBytesAfter, 0);

    // The pruned era still reads, from the rollups: the day-3 spike survives.
    auto points = h.querySeries({mem, std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max(), 500});
    ASSERT_TRUE(points.ok()) << points.error();
    EXPECT_TRUE(points->decimated);
    ASSERT_FALSE(points->points.empty());
    EXPECT_LT(points->points.front().tNs, kStart + kDay);
    EXPECT_TRUE(std::any_of(points->points.begin(), points->points.end(),
                            [](const SeriesPoint& p) { return p.value == kSpike; }));
    EXPECT_EQ(points->sourceCount, memBefore);  // cells still count what they summarise
    // Zoomed into the pruned era (one hour): the cells' real samples.
    auto hour = h.querySeries({mem, kStart + 3 * kDay, kStart + 3 * kDay + 3600 * kSec, 100});
    ASSERT_TRUE(hour.ok()) << hour.error();
    EXPECT_FALSE(hour->points.empty());
    for (const auto& p : hour->points) {
        EXPECT_GE(p.tNs, kStart + 3 * kDay);
        EXPECT_LE(p.tNs, kStart + 3 * kDay + 3600 * kSec);
    }
    // Eval summaries still work on the old run.
    auto metrics = h.runMetrics(RunId{"old-run"});
    ASSERT_TRUE(metrics.ok());
    ASSERT_EQ(metrics->size(), 1u);
    EXPECT_EQ((*metrics)[0].best, 0.5);

    // A second prune has nothing left to do.
    auto again = h.prune(options);
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(again->rowsDeleted(), 0);
}

TEST(Retention, DryRunCountsAndDeletesNothing) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    fill(h);
    const std::int64_t samples = scalar(path, "SELECT count(*) FROM samples;");
    const std::int64_t cells = scalar(path, "SELECT count(*) FROM sample_rollup;");
    PruneOptions options;
    options.nowNs = kNow;
    options.dryRun = true;
    auto dry = h.prune(options);
    ASSERT_TRUE(dry.ok()) << dry.error();
    EXPECT_TRUE(dry->dryRun);
    EXPECT_GT(dry->samplesDeleted, 0);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), samples);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM sample_rollup;"), cells);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM series_horizon;"), 0);
    EXPECT_EQ(dry->bytesAfter, dry->bytesBefore);
    options.dryRun = false;
    auto real = h.prune(options);
    ASSERT_TRUE(real.ok()) << real.error();
    EXPECT_EQ(real->samplesDeleted, dry->samplesDeleted);
    EXPECT_EQ(real->fineRollupsDeleted, dry->fineRollupsDeleted);
    EXPECT_EQ(samples - scalar(path, "SELECT count(*) FROM samples;"), real->samplesDeleted);
}

TEST(Retention, RollupCutoffAndUnpinning) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    fill(h);
    ASSERT_TRUE(h.setRetention({1, 7}).ok());
    ASSERT_TRUE(h.setPinned(RunId{"pinned-run"}, false).ok());
    EXPECT_FALSE((*h.run(RunId{"pinned-run"}))->pinned);
    PruneOptions options;
    options.nowNs = kNow;
    options.vacuum = true;
    auto report = h.prune(options);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_GT(report->rollupsDeleted, 0);
    const std::int64_t mem = seriesId(h, "", "host.mem.used_bytes");
    const std::int64_t pinnedLoss = seriesId(h, "pinned-run", "train/loss");
    EXPECT_EQ(scalar(path, count(pinnedLoss)), 0);  // no longer pinned: pruned like the rest
    EXPECT_EQ(
        scalar(path, "SELECT count(*) FROM sample_rollup WHERE series_id = " + std::to_string(mem) +
                         " AND cell * (1 << (3 * level)) * "
                         "1000000000 < " +
                         std::to_string(report->rollupCutoffNs)),
        0);
    EXPECT_EQ(report->freeBytesAfter, 0);  // VACUUM left no free page
    EXPECT_LT(report->bytesAfter, report->bytesBefore);
}

// The space figures of docs/history.md: one series at 10 Hz for 6 hours, pruned past its raw
// retention (VACUUM for an exact size): what a series-day costs raw and after retention.
TEST(Retention, SpaceOfOneSeriesDayRawAndRetained) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    PruneOptions measure;
    measure.dryRun = true;
    const std::int64_t empty = h.prune(measure)->bytesBefore;
    constexpr std::int64_t kHours = 6;
    constexpr std::int64_t kPeriod = kSec / 10;
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    std::uint64_t seq = 0;
    for (std::int64_t t = kStart; t < kStart + kHours * 3600 * kSec; t += kPeriod) {
        IngestSample s;
        s.seq = ++seq;
        s.tNs = t;
        s.series = "host.mem.used_bytes";
        s.value = s.min = s.max = static_cast<double>(1'000'000'000 + (seq * 7919) % 65536);
        batch.samples.push_back(s);
        if (batch.samples.size() == 10'000) {
            batch.throughSeq = seq;
            ASSERT_TRUE(h.ingest(batch).ok());
            batch.samples.clear();
        }
    }
    batch.throughSeq = seq;
    ASSERT_TRUE(h.ingest(batch).ok());
    PruneOptions prune;
    prune.nowNs = kNow + 60 * kDay;  // everything is past raw_days, nothing past rollup_days
    prune.trustClock = true;         // the clock is 90 days ahead of these samples on purpose
    prune.vacuum = true;
    auto report = h.prune(prune);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(report->samplesDeleted, static_cast<std::int64_t>(seq));
    const double perDay = 24.0 / static_cast<double>(kHours);
    const double rawPerDay = static_cast<double>(report->bytesBefore - empty) * perDay;
    const double keptPerDay = static_cast<double>(report->bytesAfter - empty) * perDay;
    std::printf(
        "one series at 10 Hz: %.1f MB/day raw (with rollups), %.1f kB/day retained; "
        "%lld samples, %lld + %lld rows deleted\n",
        rawPerDay / 1e6, keptPerDay / 1e3, static_cast<long long>(seq),
        static_cast<long long>(report->samplesDeleted),
        static_cast<long long>(report->fineRollupsDeleted));
    // Chunks (v6): this gauge's 16 noisy low bits cost ~4 bytes a sample, 864,000 samples a day
    // (v5's rows and 1 s cells cost ~40). The 64 s cells: a few hundred bytes a minute.
    EXPECT_LT(rawPerDay, 864'000 * 5.0);
    EXPECT_LT(keptPerDay, 1440 * 500.0);
    // The retained cells still answer a whole-range query with the right extremes.
    auto id = h.findSeries(NodeId{"n1"}, RunId(), "host.mem.used_bytes");
    ASSERT_TRUE(id.ok() && *id);
    auto points = h.querySeries({**id, std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max(), 100});
    ASSERT_TRUE(points.ok()) << points.error();
    EXPECT_EQ(points->sourceCount, static_cast<std::int64_t>(seq));
}

// A version-3 file (before retention) with a row in every table opens as version 4 with every
// row intact, runs unpinned, and the default policy.
// Issue 41 item 6: a controller whose clock runs 30 days ahead of its data. The prune is refused
// (it would delete every raw sample), a dry run too; within the horizon the cutoff is measured
// from the newest sample stored, never from the clock; --trust-clock prunes by the clock.
TEST(Retention, ClockThirtyDaysAheadOfTheDataPrunesNothing) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    fill(h);  // one sample a minute from kNow - 30 days to kNow
    const std::int64_t samples = scalar(path, "SELECT count(*) FROM samples;");
    const std::int64_t newest = scalar(path, "SELECT max(t_ns) FROM samples;");
    PruneOptions ahead;
    ahead.nowNs = kNow + 30 * kDay;
    for (const bool dry : {true, false}) {
        ahead.dryRun = dry;
        auto refused = h.prune(ahead);
        ASSERT_FALSE(refused.ok()) << "dry run " << dry;
        EXPECT_NE(refused.error().find(path + ": refusing to prune: the clock"), std::string::npos)
            << refused.error();
        EXPECT_NE(refused.error().find("days ahead of the newest sample stored"), std::string::npos)
            << refused.error();
        EXPECT_NE(refused.error().find("--trust-clock"), std::string::npos) << refused.error();
    }
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), samples);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM series_horizon;"), 0);

    // 10 days ahead (within the 14-day horizon): the cutoff is the newest sample minus 14 days.
    PruneOptions within;
    within.nowNs = kNow + 10 * kDay;
    within.dryRun = true;
    auto measured = h.prune(within);
    ASSERT_TRUE(measured.ok()) << measured.error();
    EXPECT_EQ(measured->newestSampleNs, newest);
    EXPECT_LE(measured->rawCutoffNs, newest - 14 * kDay);
    EXPECT_GT(measured->rawCutoffNs, newest - 14 * kDay - 4 * kDay);  // the 3.03-day grid
    // Nothing newer than the newest sample minus the horizon would go.
    EXPECT_EQ(measured->samplesDeleted,
              scalar(path, "SELECT count(*) FROM samples WHERE t_ns < " +
                               std::to_string(measured->rawCutoffNs) +
                               " AND series_id NOT IN (SELECT id FROM series WHERE run_id = "
                               "'pinned-run' OR name LIKE 'eval/%') AND NOT (t_ns BETWEEN " +
                               std::to_string(kPinnedFrom) + " AND " + std::to_string(kPinnedTo) +
                               " AND series_id IN (SELECT id FROM "
                               "series WHERE run_id = ''));"));

    PruneOptions trusted = ahead;
    trusted.dryRun = false;
    trusted.trustClock = true;
    auto pruned = h.prune(trusted);
    ASSERT_TRUE(pruned.ok()) << pruned.error();
    EXPECT_GT(pruned->samplesDeleted, 0);
}

TEST(Retention, MigrationFromVersion3KeepsEveryRow) {
    ScratchDir dir;
    const std::string path = dir.file("v3.sqlite");
    const char* tables[] = {
        "runs",   "nodes",        "series", "samples", "sample_rollup WHERE level >= 2",
        "events", "ingest_cursor"};
    std::vector<std::int64_t> before;
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE(applyMigrations(**db, migrations().first(3), false).ok());
        ASSERT_TRUE(
            (*db)
                ->exec("INSERT INTO runs(id, name, status, started_ns) VALUES "
                       "('r1', 'one', 'finished', 5), ('r2', 'two', 'running', 6);"
                       "INSERT INTO nodes(node_id, address) VALUES ('n1', 'h:1');"
                       "INSERT INTO series(id, node_id, run_id, name) VALUES "
                       "(1, 'n1', '', 'host.mem.used_bytes'), (2, 'n1', 'r1', 'eval/x');"
                       "INSERT INTO samples(series_id, t_ns, seq, value, min, max) VALUES "
                       "(1, 10, 1, 1, 1, 1), (1, 20, 2, 2, 2, 2), (2, 30, 3, 0.5, 0.5, 0.5);"
                       "INSERT INTO events(node_id, seq, t_ns, kind) VALUES "
                       "('n1', 4, 40, 'info');"
                       "INSERT INTO ingest_cursor(node_id, incarnation, last_seq, "
                       "updated_ns) VALUES ('n1', 0, 4, 1);")
                .ok());
        ASSERT_TRUE(backfillRollups(**db).ok());
        for (const char* table : tables) {
            auto stmt = (*db)->prepare(std::string("SELECT count(*) FROM ") + table + ";");
            ASSERT_TRUE(stmt.ok());
            ASSERT_TRUE(stmt->step().ok());
            before.push_back(stmt->columnInt(0));
        }
    }
    ASSERT_GT(before[4], 0);  // rollup cells exist
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    EXPECT_EQ(*(*opened)->schemaVersion(), kSchemaVersion);
    for (std::size_t i = 0; i < std::size(tables); ++i) {
        EXPECT_EQ(scalar(path, std::string("SELECT count(*) FROM ") + tables[i] + ";"), before[i])
            << tables[i];
    }
    auto runs = (*opened)->listRuns();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_FALSE((*runs)[0].pinned);
    EXPECT_EQ((*opened)->retention()->rawDays, 14);
    EXPECT_EQ(scalar(path, "SELECT value FROM samples WHERE series_id = 1 AND seq = 2;"), 2);
}

}  // namespace
}  // namespace runplane::db
