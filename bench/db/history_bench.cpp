// Run history benchmarks (docs/performance.md, section "History"):
//  - ingest rate: batched transactions vs one transaction per row; across 32 series into
//    chunks vs raw SQLite row inserts (C API, prepared, WAL, synchronous=FULL as the history's
//    writers since issue #20, or NORMAL as before: the reference);
//  - bytes per sample on disk for regular 10 Hz telemetry, chunks vs the raw row table;
//  - reading a 1,000,000-sample series: all points (chunks vs raw rows), decimated, a zoom step.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "db/history/decimate.h"
#include "db/history/history.h"
#include "db/sqlite/sqlite.h"

namespace {

using namespace runplane::db;
namespace fs = std::filesystem;

constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
constexpr std::int64_t kDt = 100'000'000;  // 10 Hz

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("runplane-bench-" + std::to_string(getpid()));
    fs::create_directories(dir);
    return dir / name;
}

IngestSample million10Hz(std::uint64_t seq) {
    const double v = 6.0e11 + 1.0e9 * std::sin(static_cast<double>(seq) * 1e-3);
    return IngestSample{seq,     kT0 + static_cast<std::int64_t>(seq) * kDt,
                        RunId{}, "host.mem.used_bytes",
                        "bytes", v,
                        v - 1e6, v + 1e6,
                        -1};
}

IngestBatch batchOf(std::uint64_t first, std::uint64_t count, const std::string& node) {
    IngestBatch batch;
    batch.nodeId = NodeId{node};
    batch.samples.reserve(count);
    for (std::uint64_t seq = first; seq < first + count; ++seq) {
        batch.samples.push_back(million10Hz(seq));
    }
    batch.throughSeq = first + count - 1;
    return batch;
}

void ingestBench(benchmark::State& state, std::uint64_t rowsPerBatch) {
    const std::uint64_t total = static_cast<std::uint64_t>(state.range(0));
    std::uint64_t done = 0;
    int round = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const fs::path path = scratch("ingest-" + std::to_string(rowsPerBatch) + "-" +
                                      std::to_string(round++) + ".sqlite");
        fs::remove(path);
        auto history = History::open(path.string());
        if (!history.ok()) {
            state.SkipWithError(history.error().c_str());
            return;
        }
        std::vector<IngestBatch> batches;
        for (std::uint64_t first = 1; first <= total; first += rowsPerBatch) {
            batches.push_back(batchOf(first, rowsPerBatch, "n1"));
        }
        state.ResumeTiming();
        for (const auto& batch : batches) {
            auto result = (*history)->ingest(batch);
            if (!result.ok()) {
                state.SkipWithError(result.error().c_str());
                return;
            }
        }
        done += total;
        state.PauseTiming();
        history->reset();
        fs::remove(path);
        fs::remove(path.string() + "-wal");
        fs::remove(path.string() + "-shm");
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(done));
}

// Batched: 1,000 samples per transaction (a busy stream's batch size).
void BM_IngestBatched(benchmark::State& state) {
    ingestBench(state, 1000);
}
BENCHMARK(BM_IngestBatched)->Arg(200'000)->Unit(benchmark::kMillisecond)->Iterations(3);

// Reference: one transaction per sample (what a naive per-row insert costs).
void BM_IngestOneTransactionPerRow(benchmark::State& state) {
    ingestBench(state, 1);
}
BENCHMARK(BM_IngestOneTransactionPerRow)->Arg(5'000)->Unit(benchmark::kMillisecond)->Iterations(3);

// ---- 32 series at 10 Hz each, the samples of one node interleaved as its stream sends them.
constexpr int kSeries = 32;

// How late the sampler's 100 ms tick wakes up, i.e. what spreads a real series' timestamps.
// kUniform100us: uniformly 0-100 us (the first model). kSampler: the lateness of the
// collector's loop (condition_variable::wait_until on a steady 100 ms grid) measured on this VM
// under load: p1 88 us, p50 110 us, p90 189 us, p99 2.15 ms, max 8.9 ms (docs/performance.md);
// modelled as 85-185 us for 90 % of ticks, 185 us-2 ms for 9 %, 2-9 ms for 1 %.
enum class Jitter { kNone = 0, kUniform100us = 1, kSampler = 2 };

// A regular 10 Hz gauge as the daemon reports it: an integer (bytes in 4 KiB pages, a count, a
// percentage) that moves now and then, min = max = value; times are the tick plus the jitter,
// stamped at `resolutionNs` (1: ns as the daemon did before; 1000: us, what it stamps now).
struct Telemetry {
    Jitter jitter = Jitter::kNone;
    std::int64_t resolutionNs = 1;
    std::uint64_t state = 88172645463325252ull;
    std::uint64_t next() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    }
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(next() >> 11) % (hi - lo);
    }
    std::int64_t lateness() {
        switch (jitter) {
            case Jitter::kNone:
                return 0;
            case Jitter::kUniform100us:
                return uniform(0, 100'000);
            case Jitter::kSampler: {
                const std::int64_t pick = uniform(0, 100);
                if (pick < 90) {
                    return uniform(85'000, 185'000);
                }
                return pick < 99 ? uniform(185'000, 2'000'000) : uniform(2'000'000, 9'000'000);
            }
        }
        return 0;
    }
    IngestSample sample(std::uint64_t seq, double& level) {
        const std::uint64_t r = next();
        const int series = static_cast<int>((seq - 1) % kSeries);
        const std::int64_t tick = static_cast<std::int64_t>((seq - 1) / kSeries);
        if (r % 4 == 0) {
            level += static_cast<double>(static_cast<std::int64_t>(r >> 40 & 0xff) - 128) * 4096;
        }
        std::int64_t t = kT0 + tick * kDt + lateness();
        t -= t % resolutionNs;
        return IngestSample{
            seq, t, RunId{}, "node.series." + std::to_string(series), "", level, level, level, -1};
    }
};

std::vector<IngestBatch> telemetryBatches(std::uint64_t total, std::uint64_t perBatch,
                                          Jitter jitter = Jitter::kNone,
                                          std::int64_t resolutionNs = 1) {
    Telemetry gen{jitter, resolutionNs};
    std::vector<double> levels(kSeries, 6.0e11);
    std::vector<IngestBatch> batches;
    for (std::uint64_t first = 1; first <= total; first += perBatch) {
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (std::uint64_t seq = first; seq < first + perBatch && seq <= total; ++seq) {
            batch.samples.push_back(gen.sample(seq, levels[(seq - 1) % kSeries]));
        }
        batch.throughSeq = batch.samples.back().seq;
        batches.push_back(std::move(batch));
    }
    return batches;
}

void removeDb(const fs::path& path) {
    fs::remove(path);
    fs::remove(path.string() + "-wal");
    fs::remove(path.string() + "-shm");
    fs::remove(path.string() + "-lock");
}

// Bytes of the file once the WAL is checkpointed into it (free pages not counted).
double fileBytes(sqlite3* db) {
    sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    auto pragma = [&](const char* sql) {
        sqlite3_stmt* stmt = nullptr;
        sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
        sqlite3_step(stmt);
        const double v = static_cast<double>(sqlite3_column_int64(stmt, 0));
        sqlite3_finalize(stmt);
        return v;
    };
    return (pragma("PRAGMA page_count;") - pragma("PRAGMA freelist_count;")) *
           pragma("PRAGMA page_size;");
}

// The reference: v5's row table and unique index, written with the C API directly.
struct RawTable {
    sqlite3* db = nullptr;
    sqlite3_stmt* insertStmt = nullptr;
    // durable: synchronous=FULL, the history's default (db::OpenOptions::durableCommits).
    explicit RawTable(const std::string& path, bool index = true, bool durable = true) {
        removeDb(path);
        if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
            return;
        }
        sqlite3_exec(db, durable ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;",
                     nullptr, nullptr, nullptr);
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL;"
                     "CREATE TABLE samples (series_id INTEGER NOT NULL, t_ns INTEGER NOT NULL, "
                     "seq INTEGER NOT NULL, value REAL, min REAL, max REAL, step INTEGER NOT NULL "
                     "DEFAULT -1, incarnation INTEGER NOT NULL DEFAULT 0, "
                     "PRIMARY KEY (series_id, t_ns, seq)) WITHOUT ROWID;",
                     nullptr, nullptr, nullptr);
        if (index) {
            sqlite3_exec(db,
                         "CREATE UNIQUE INDEX samples_series_seq ON samples(series_id, "
                         "incarnation, seq);",
                         nullptr, nullptr, nullptr);
        }
        sqlite3_prepare_v2(db,
                           "INSERT OR IGNORE INTO samples(series_id, t_ns, seq, value, min, max, "
                           "step, incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0);",
                           -1, &insertStmt, nullptr);
    }
    ~RawTable() {
        sqlite3_finalize(insertStmt);
        sqlite3_close(db);
    }
    bool ok() const { return insertStmt != nullptr; }
    void add(std::int64_t series, const IngestSample& s) {
        sqlite3_bind_int64(insertStmt, 1, series);
        sqlite3_bind_int64(insertStmt, 2, s.tNs);
        sqlite3_bind_int64(insertStmt, 3, static_cast<std::int64_t>(s.seq));
        sqlite3_bind_double(insertStmt, 4, s.value);
        sqlite3_bind_double(insertStmt, 5, s.min);
        sqlite3_bind_double(insertStmt, 6, s.max);
        sqlite3_bind_int64(insertStmt, 7, s.step);
        sqlite3_step(insertStmt);
        sqlite3_reset(insertStmt);
    }
    void commitBatch(const IngestBatch& batch) {
        sqlite3_exec(db, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr);
        for (const IngestSample& s : batch.samples) {
            add(static_cast<std::int64_t>((s.seq - 1) % kSeries) + 1, s);
        }
        sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
    }
    template <typename Make>
    void insert(std::uint64_t total, std::int64_t series, std::uint64_t perTx, Make make) {
        for (std::uint64_t first = 1; first <= total; first += perTx) {
            sqlite3_exec(db, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr);
            for (std::uint64_t seq = first; seq < first + perTx && seq <= total; ++seq) {
                add(series, make(seq));
            }
            sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr);
        }
    }
};

// Ingest across 32 series into the history (chunks), arg: samples per batch.
void BM_Ingest32Series(benchmark::State& state) {
    const std::uint64_t total = 320'000;
    const auto batches = telemetryBatches(total, static_cast<std::uint64_t>(state.range(0)));
    int round = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const fs::path path = scratch("ingest32-" + std::to_string(round++) + ".sqlite");
        removeDb(path);
        auto history = History::open(path.string());
        if (!history.ok()) {
            state.SkipWithError(history.error().c_str());
            return;
        }
        state.ResumeTiming();
        for (const auto& batch : batches) {
            auto result = (*history)->ingest(batch);
            if (!result.ok()) {
                state.SkipWithError(result.error().c_str());
                return;
            }
        }
        state.PauseTiming();
        history->reset();
        removeDb(path);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * total));
}
BENCHMARK(BM_Ingest32Series)->Arg(1000)->Arg(10'000)->Unit(benchmark::kMillisecond)->Iterations(3);

// Reference: the same batches as raw SQLite rows (arg 1: with v5's unique index, 0: without;
// arg 2: synchronous=FULL as the history writes, 0: NORMAL).
void BM_RawSqliteInsert32Series(benchmark::State& state) {
    const std::uint64_t total = 320'000;
    const auto batches = telemetryBatches(total, static_cast<std::uint64_t>(state.range(0)));
    int round = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const fs::path path = scratch("raw32-" + std::to_string(round++) + ".sqlite");
        auto raw =
            std::make_unique<RawTable>(path.string(), state.range(1) != 0, state.range(2) != 0);
        if (!raw->ok()) {
            state.SkipWithError("raw sqlite failed");
            return;
        }
        state.ResumeTiming();
        for (const auto& batch : batches) {
            raw->commitBatch(batch);
        }
        state.PauseTiming();
        raw.reset();
        removeDb(path);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * total));
}
BENCHMARK(BM_RawSqliteInsert32Series)
    ->Args({1000, 1, 1})
    ->Args({10'000, 1, 1})
    ->Args({10'000, 0, 1})
    ->Args({1000, 1, 0})
    ->Args({10'000, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Bytes per sample on disk: one hour of 32 series at 10 Hz (1,152,000 samples), history vs the
// raw row table; args: the jitter model (Jitter) and the stamp resolution in ns.
void BM_BytesPerSample(benchmark::State& state) {
    const std::uint64_t total = 32ull * 36'000;
    const auto batches =
        telemetryBatches(total, 10'000, static_cast<Jitter>(state.range(0)), state.range(1));
    double history = 0;
    double raw = 0;
    for (auto _ : state) {
        const fs::path path = scratch("bytes.sqlite");
        removeDb(path);
        {
            auto h = History::open(path.string());
            for (const auto& batch : batches) {
                (void)(*h)->ingest(batch);
            }
        }
        sqlite3* db = nullptr;
        sqlite3_open(path.c_str(), &db);
        history = fileBytes(db);
        sqlite3_close(db);
        removeDb(path);
        const fs::path rawPath = scratch("bytes-raw.sqlite");
        RawTable table(rawPath.string());
        for (const auto& batch : batches) {
            table.commitBatch(batch);
        }
        raw = fileBytes(table.db);
    }
    state.counters["history_B_per_sample"] = history / static_cast<double>(total);
    state.counters["raw_rows_B_per_sample"] = raw / static_cast<double>(total);
}
BENCHMARK(BM_BytesPerSample)
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 1000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// One shared file with a 1,000,000-sample series for the read benchmarks.
struct MillionFixture {
    std::string path;
    std::int64_t seriesId = 0;
    std::string error;
    MillionFixture() {
        path = scratch("million.sqlite").string();
        fs::remove(path);
        auto history = History::open(path);
        if (!history.ok()) {
            error = history.error();
            return;
        }
        for (std::uint64_t first = 1; first <= 1'000'000; first += 50'000) {
            auto result = (*history)->ingest(batchOf(first, 50'000, "n1"));
            if (!result.ok()) {
                error = result.error();
                return;
            }
        }
        auto id = (*history)->findSeries(NodeId{"n1"}, RunId(), "host.mem.used_bytes");
        seriesId = id.ok() && *id ? **id : 0;
    }
    ~MillionFixture() {
        std::error_code ec;
        fs::remove_all(fs::path(path).parent_path(), ec);
    }
};

MillionFixture& million() {
    static MillionFixture fixture;
    return fixture;
}

void BM_QueryDecimated1M(benchmark::State& state) {
    auto& f = million();
    auto history = History::open(f.path);
    if (!f.error.empty() || !history.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    const int buckets = static_cast<int>(state.range(0));
    std::size_t points = 0;
    for (auto _ : state) {
        auto result = (*history)->querySeries(
            SeriesQuery{f.seriesId, std::numeric_limits<std::int64_t>::min(),
                        std::numeric_limits<std::int64_t>::max(), buckets});
        points = result->points.size();
        benchmark::DoNotOptimize(points);
    }
    state.counters["points_out"] = static_cast<double>(points);
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_QueryDecimated1M)->Arg(2000)->Unit(benchmark::kMillisecond);

// All 1,000,000 points of the series through the public read path (decoded chunks).
void BM_ReadAll1M(benchmark::State& state) {
    auto& f = million();
    auto history = History::open(f.path);
    if (!f.error.empty() || !history.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    std::size_t points = 0;
    for (auto _ : state) {
        // 4 x 300,000 buckets > 1,000,000 samples: returned undecimated.
        auto result = (*history)->querySeries(
            SeriesQuery{f.seriesId, std::numeric_limits<std::int64_t>::min(),
                        std::numeric_limits<std::int64_t>::max(), 300'000});
        points = result->points.size();
        benchmark::DoNotOptimize(result->points.data());
    }
    state.counters["points_out"] = static_cast<double>(points);
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_ReadAll1M)->Unit(benchmark::kMillisecond);

// The same into one SeriesPoints reused across reads (the overload a redrawing plot uses).
void BM_ReadAll1MReused(benchmark::State& state) {
    auto& f = million();
    auto history = History::open(f.path);
    if (!f.error.empty() || !history.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    SeriesPoints result;
    for (auto _ : state) {
        if (!(*history)
                 ->querySeries(SeriesQuery{f.seriesId, std::numeric_limits<std::int64_t>::min(),
                                           std::numeric_limits<std::int64_t>::max(), 300'000},
                               result)
                 .ok()) {
            state.SkipWithError("query failed");
            return;
        }
        benchmark::DoNotOptimize(result.points.data());
    }
    state.counters["points_out"] = static_cast<double>(result.points.size());
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_ReadAll1MReused)->Unit(benchmark::kMillisecond);

// Reference: the same 1,000,000 samples as rows of the v5 table, read with a prepared SELECT.
void BM_RawSqliteReadAll1M(benchmark::State& state) {
    const std::string path = scratch("raw-million.sqlite").string();
    RawTable raw(path);
    if (!raw.ok()) {
        state.SkipWithError("raw sqlite failed");
        return;
    }
    raw.insert(1'000'000, 1, 50'000, [](std::uint64_t seq) { return million10Hz(seq); });
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(raw.db,
                       "SELECT t_ns, seq, value, min, max, step FROM samples WHERE series_id = 1 "
                       "ORDER BY t_ns, seq;",
                       -1, &stmt, nullptr);
    std::vector<SeriesPoint> points;
    for (auto _ : state) {
        points.clear();
        while (sqlite3_step(stmt) == SQLITE_ROW) {
            points.push_back(
                SeriesPoint{sqlite3_column_int64(stmt, 0), sqlite3_column_double(stmt, 2),
                            sqlite3_column_double(stmt, 3), sqlite3_column_double(stmt, 4),
                            sqlite3_column_int64(stmt, 5)});
        }
        sqlite3_reset(stmt);
        benchmark::DoNotOptimize(points.data());
    }
    sqlite3_finalize(stmt);
    state.counters["points_out"] = static_cast<double>(points.size());
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_RawSqliteReadAll1M)->Unit(benchmark::kMillisecond);

// A zoom step: a window of 1 % of the series (10,000 samples), decimated to 2,000 buckets.
void BM_QueryZoom1Percent(benchmark::State& state) {
    auto& f = million();
    auto history = History::open(f.path);
    if (!f.error.empty() || !history.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    std::int64_t offset = 0;
    for (auto _ : state) {
        const std::int64_t t0 = kT0 + (400'000 + offset) * kDt;
        offset = (offset + 1000) % 100'000;
        auto result = (*history)->querySeries(SeriesQuery{f.seriesId, t0, t0 + 10'000 * kDt, 2000});
        benchmark::DoNotOptimize(result->points.size());
    }
}
BENCHMARK(BM_QueryZoom1Percent)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
