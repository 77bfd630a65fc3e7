// Chunk storage (schemas 6 and 7): the v5 -> v7 migration loses nothing, and ingest into chunks
// keeps exactly-once, out-of-order times and every value bit-exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/history/rollup.h"
#include "db/history/schema.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using testing::ScratchDir;

// One sample row as SQL sees it (NULL = NaN), compared bit-exactly.
using Row = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::uint64_t,
                       std::uint64_t, std::uint64_t, std::int64_t>;

std::uint64_t realBits(const sqlite::Statement& stmt, int column) {
    return stmt.columnIsNull(column) ? 0xfff8'0000'0000'0001ull
                                     : std::bit_cast<std::uint64_t>(stmt.columnDouble(column));
}

std::vector<Row> readRows(const std::string& path) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(
        "SELECT series_id, incarnation, t_ns, seq, value, min, max, step FROM samples "
        "ORDER BY series_id, incarnation, seq;");
    EXPECT_TRUE(stmt.ok()) << stmt.error();
    std::vector<Row> rows;
    while (true) {
        auto row = stmt->step();
        EXPECT_TRUE(row.ok());
        if (!row.ok() || !*row) {
            break;
        }
        rows.emplace_back(stmt->columnInt(0), stmt->columnInt(1), stmt->columnInt(2),
                          stmt->columnInt(3), realBits(*stmt, 4), realBits(*stmt, 5),
                          realBits(*stmt, 6), stmt->columnInt(7));
    }
    return rows;
}

std::int64_t scalar(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << stmt.error();
    EXPECT_TRUE(stmt->step().ok());
    return stmt->columnInt(0);
}

// A version-5 file made by the real migrations 1..5 and filled the way version 5 stored
// samples: several series, two incarnations reusing seqs, NaN as NULL, equal times,
// out-of-order times, extreme values; then its rollups. Version 6 must keep every row.
TEST(ChunkMigration, Version5SamplesSurviveBitExact) {
    ScratchDir dir;
    const std::string path = dir.file("v5.sqlite");
    std::mt19937_64 rng(5);
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok()) << db.error();
        auto version = applyMigrations(**db, migrations().first(5), false);
        ASSERT_TRUE(version.ok()) << version.error();
        ASSERT_EQ(*version, 5);
        ASSERT_TRUE((*db)
                        ->exec("INSERT INTO series(id, node_id, run_id, name, unit) VALUES "
                               "(1, 'n1', '', 'host.mem.used_bytes', 'bytes'),"
                               "(2, 'n1', 'r1', 'eval/gsm8k', ''),"
                               "(3, 'n2', '', 'gpu0.util', '%');")
                        .ok());
        auto insert = (*db)->prepare(
            "INSERT INTO samples(series_id, t_ns, seq, value, min, max, step, incarnation) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);");
        ASSERT_TRUE(insert.ok());
        ASSERT_TRUE((*db)->exec("BEGIN;").ok());
        const double specials[] = {-0.0,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::denorm_min(),
                                   1e308,
                                   -1e-308};
        std::int64_t seq = 0;
        for (int i = 0; i < 5000; ++i) {
            const std::int64_t series = 1 + i % 3;
            const std::int64_t incarnation = i < 2500 ? 0 : 77;
            if (i == 2500) {
                seq = 0;  // the new incarnation starts its seqs again
            }
            ++seq;
            std::int64_t t = 1'700'000'000'000'000'000 + i * 100'000'000LL;
            if (i % 97 == 0) {
                t -= 50'000'000'000;  // out of order
            }
            if (i % 89 == 0) {
                t = 1'700'000'000'000'000'000;  // equal times
            }
            insert->bind(1, series).bind(2, t).bind(3, seq).bind(8, incarnation);
            insert->bind(7, series == 2 ? static_cast<std::int64_t>(i) : -1);
            const double v = i % 50 == 0   ? specials[(i / 50) % std::size(specials)]
                             : series == 3 ? static_cast<double>(rng() % 101)
                                           : 6e11 + static_cast<double>(rng() % 100000) * 4096;
            if (i % 41 == 0) {
                insert->bindNull(4);  // NaN as version 5 stored it
            } else {
                insert->bind(4, v);
            }
            insert->bind(5, v - static_cast<double>(i % 3));
            insert->bind(6, v + static_cast<double>(i % 5));
            ASSERT_TRUE(insert->run().ok());
        }
        ASSERT_TRUE((*db)->exec("COMMIT;").ok());
        ASSERT_TRUE(backfillRollups(**db).ok());
    }
    const std::vector<Row> before = readRows(path);  // the real v5 table
    ASSERT_EQ(before.size(), 5000u);
    // v6 keeps the 64 s and coarser cells (finer reads decode the chunks).
    const std::int64_t cells = scalar(path, "SELECT count(*) FROM sample_rollup WHERE level >= 2;");

    auto history = History::open(path);
    ASSERT_TRUE(history.ok()) << history.error();
    EXPECT_EQ(*(*history)->schemaVersion(), kSchemaVersion);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM sqlite_master WHERE name = 'samples';"), 0);
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), 5000);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM sample_rollup;"), cells);
    EXPECT_EQ(readRows(path), before);  // the `samples` view over the chunks

    // And through the API: counts, extents and every sample of a full read.
    auto series = (*history)->listSeries(SeriesFilter{});
    ASSERT_TRUE(series.ok()) << series.error();
    std::int64_t total = 0;
    for (const SeriesInfo& info : *series) {
        total += info.count;
        auto points =
            (*history)->querySeries(SeriesQuery{info.id, std::numeric_limits<std::int64_t>::min(),
                                                std::numeric_limits<std::int64_t>::max(), 100'000});
        ASSERT_TRUE(points.ok()) << points.error();
        ASSERT_FALSE(points->decimated);
        ASSERT_EQ(static_cast<std::int64_t>(points->points.size()), info.count);
        EXPECT_EQ(points->points.front().tNs, info.firstNs);
        EXPECT_EQ(points->points.back().tNs, info.lastNs);
        for (std::size_t i = 1; i < points->points.size(); ++i) {
            EXPECT_LE(points->points[i - 1].tNs, points->points[i].tNs);
        }
    }
    EXPECT_EQ(total, 5000);
    auto metrics = (*history)->runMetrics(RunId{"r1"});
    ASSERT_TRUE(metrics.ok()) << metrics.error();
    ASSERT_EQ(metrics->size(), 1u);
    double best = -std::numeric_limits<double>::infinity();
    for (const Row& row : before) {
        if (std::get<0>(row) == 2 && std::get<4>(row) != 0xfff8'0000'0000'0001ull) {
            best = std::max(best, std::bit_cast<double>(std::get<4>(row)));
        }
    }
    EXPECT_EQ((*metrics)[0].best, best);
}

IngestSample sample(std::uint64_t seq, std::int64_t t, double v, const std::string& name = "m") {
    return IngestSample{seq, t, RunId{}, name, "", v, v, v, -1};
}

// Many small batches (heads rewritten in place), a reopen (the head resumes), out-of-order
// times, a repeated seq inside a batch and a replayed batch: each sample is stored once, exact.
TEST(ChunkIngest, ExactlyOnceAndExactThroughHeadsAndReopens) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    std::vector<std::tuple<std::int64_t, std::uint64_t, double>> expected;  // (t, seq, value)
    std::uint64_t seq = 0;
    auto makeBatch = [&](int n) {
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (int i = 0; i < n; ++i) {
            ++seq;
            std::int64_t t = static_cast<std::int64_t>(seq) * 100'000'000;
            if (seq % 13 == 0) {
                t -= 30'000'000'000;  // late sample
            }
            const double v = seq % 17 == 0 ? std::nan("") : static_cast<double>(seq) * 0.1;
            batch.samples.push_back(sample(seq, t, v));
            expected.emplace_back(t, seq, v);
        }
        batch.throughSeq = seq;
        return batch;
    };
    for (int round = 0; round < 3; ++round) {
        auto history = History::open(path);
        ASSERT_TRUE(history.ok()) << history.error();
        for (int b = 0; b < 40; ++b) {
            IngestBatch batch = makeBatch(37);
            if (b == 5) {
                batch.samples.push_back(batch.samples.front());  // repeated inside the batch
            }
            auto stored = (*history)->ingest(batch);
            ASSERT_TRUE(stored.ok()) << stored.error();
            EXPECT_EQ(stored->samplesInserted, 37u);
            if (b == 7) {
                auto again = (*history)->ingest(batch);  // a replay after a reconnect
                ASSERT_TRUE(again.ok());
                EXPECT_EQ(again->samplesInserted, 0u);
            }
        }
    }
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 3 * 40 * 37);
    EXPECT_EQ(scalar(path, "SELECT count(DISTINCT seq) FROM samples;"), 3 * 40 * 37);
    // Heads were continued, not restarted per batch (120 batches, 3 connections).
    // Every chunk but the last one of each connection is full (by samples or by bytes).
    EXPECT_LE(scalar(path, "SELECT count(*) FROM chunks WHERE count < " +
                               std::to_string(kChunkMaxSamples) + " AND length(data) < " +
                               std::to_string(kChunkMaxBytes) + ";"),
              3);
    std::sort(expected.begin(), expected.end());
    auto history = History::open(path);
    auto id = (*history)->findSeries(NodeId{"n1"}, RunId(), "m");
    ASSERT_TRUE(id.ok() && id->has_value());
    auto points =
        (*history)->querySeries(SeriesQuery{**id, std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max(), 100'000});
    ASSERT_TRUE(points.ok()) << points.error();
    ASSERT_EQ(points->points.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(points->points[i].tNs, std::get<0>(expected[i])) << i;
        EXPECT_EQ(std::bit_cast<std::uint64_t>(points->points[i].value),
                  std::bit_cast<std::uint64_t>(std::get<2>(expected[i])))
            << i;
    }
}

// Two connections appending to one series: neither overwrites the other's head.
TEST(ChunkIngest, TwoConnectionsKeepEachOthersSamples) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto a = History::open(path);
    auto b = History::open(path);
    ASSERT_TRUE(a.ok() && b.ok());
    for (std::uint64_t i = 1; i <= 20; ++i) {
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        batch.samples.push_back(sample(i, static_cast<std::int64_t>(i), 1.0));
        batch.throughSeq = i;
        ASSERT_TRUE(((i % 2) ? *a : *b)->ingest(batch).ok());
    }
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), 20);
    EXPECT_EQ(scalar(path, "SELECT sum(seq) FROM samples;"), 210);
}

}  // namespace
}  // namespace runplane::db

namespace runplane::db {
namespace {

// Rollup cells are merged once per sealed chunk (schema 7): with two connections taking turns
// and many small batches, every sample is in the cells or in a chunk's unrolled tail exactly
// once, and a wide (cell-based) query counts all of them and finds a spike in the unsealed head.
TEST(ChunkIngest, CellsHoldEverySampleOnceWhetherSealedOrNot) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto a = History::open(path);
    auto b = History::open(path);
    ASSERT_TRUE(a.ok() && b.ok());
    std::uint64_t seq = 0;
    const std::int64_t step = 10'000'000'000;  // 10 s: 20,000 samples span 2.3 days
    const int total = 20'000;
    const std::uint64_t spikeSeq = total - 100;  // in the last, unsealed chunk
    for (int batchIndex = 0; seq < static_cast<std::uint64_t>(total); ++batchIndex) {
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (int i = 0; i < 41 && seq < static_cast<std::uint64_t>(total); ++i) {
            ++seq;
            batch.samples.push_back(sample(seq, static_cast<std::int64_t>(seq) * step,
                                           seq == spikeSeq ? 1e9 : std::sin(seq * 0.01)));
        }
        batch.throughSeq = seq;
        History& h = batchIndex % 3 == 0 ? **b : **a;
        auto stored = h.ingest(batch);
        ASSERT_TRUE(stored.ok()) << stored.error();
    }
    // Samples not in the cells: the staged ones (the view counts chunks and staged rows).
    const std::int64_t unrolled = scalar(path, "SELECT count(*) FROM samples;") -
                                  scalar(path, "SELECT sum(count) FROM chunks;");
    EXPECT_EQ(scalar(path, "SELECT sum(unrolled) FROM chunks;"), 0);
    EXPECT_GT(unrolled, 0);
    for (int level = 2; level < kRollupLevels; ++level) {
        EXPECT_EQ(scalar(path, "SELECT sum(count) FROM sample_rollup WHERE level = " +
                                   std::to_string(level) + ";") +
                      unrolled,
                  total)
            << "level " << level;
    }
    auto id = (*a)->findSeries(NodeId{"n1"}, RunId(), "m");
    ASSERT_TRUE(id.ok() && id->has_value());
    auto points = (*a)->querySeries(SeriesQuery{**id, std::numeric_limits<std::int64_t>::min(),
                                                std::numeric_limits<std::int64_t>::max(), 300});
    ASSERT_TRUE(points.ok()) << points.error();
    EXPECT_TRUE(points->decimated);
    EXPECT_EQ(points->sourceCount, total);
    EXPECT_TRUE(std::any_of(points->points.begin(), points->points.end(),
                            [](const SeriesPoint& p) { return p.value == 1e9; }));
}

// Range reads take the chunks in index order: no temporary B-tree copying every chunk's blob
// (that sort was ~10 % of a 1 M-point read), and a range cutting through chunks returns exactly
// the samples inside it, in time order.
TEST(ChunkRead, RangeReadsNeedNoSorterAndCutEdgeChunksExactly) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    const int total = 5 * kChunkMaxSamples + 123;
    {
        auto history = History::open(path);
        ASSERT_TRUE(history.ok()) << history.error();
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (int i = 1; i <= total; ++i) {
            batch.samples.push_back(sample(static_cast<std::uint64_t>(i),
                                           static_cast<std::int64_t>(i) * 100'000'000, i * 0.5));
        }
        batch.throughSeq = static_cast<std::uint64_t>(total);
        ASSERT_TRUE((*history)->ingest(batch).ok());
    }
    EXPECT_GE(scalar(path, "SELECT count(*) FROM chunks;"), 5);
    auto db = sqlite::Database::open(path);
    ASSERT_TRUE(db.ok());
    auto plan = (*db)->prepare(std::string("EXPLAIN QUERY PLAN ") + chunk_detail::kRangeChunksSql);
    ASSERT_TRUE(plan.ok()) << plan.error();
    std::string details;
    while (true) {
        auto row = plan->step();
        ASSERT_TRUE(row.ok());
        if (!*row) {
            break;
        }
        details += plan->columnText(3) + "\n";
    }
    EXPECT_NE(details.find("chunks_series_time"), std::string::npos) << details;
    EXPECT_EQ(details.find("TEMP B-TREE"), std::string::npos) << details;

    auto history = History::open(path);
    auto id = (*history)->findSeries(NodeId{"n1"}, RunId(), "m");
    ASSERT_TRUE(id.ok() && id->has_value());
    // From the middle of the first chunk to the middle of the last one.
    const std::int64_t from = 500, to = total - 40;
    auto points =
        (*history)->querySeries(SeriesQuery{**id, from * 100'000'000, to * 100'000'000, 1'000'000});
    ASSERT_TRUE(points.ok()) << points.error();
    ASSERT_EQ(points->points.size(), static_cast<std::size_t>(to - from + 1));
    for (std::int64_t i = from; i <= to; ++i) {
        const SeriesPoint& p = points->points[static_cast<std::size_t>(i - from)];
        ASSERT_EQ(p.tNs, i * 100'000'000) << i;
        ASSERT_EQ(p.value, static_cast<double>(i) * 0.5) << i;
    }
}

}  // namespace
}  // namespace runplane::db
