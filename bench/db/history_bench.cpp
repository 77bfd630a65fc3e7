// Run history benchmarks (docs/performance.md, section "History"):
//  - ingest rate: batched transactions vs one transaction per row (the reference);
//  - reading a 1,000,000-sample series: min/max-preserving decimation (C++ scan over the
//    clustered index range) vs SQL GROUP BY (reference) vs the full read, and a zoom step.
#include <benchmark/benchmark.h>
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

IngestBatch batchOf(std::uint64_t first, std::uint64_t count, const std::string& node) {
    IngestBatch batch;
    batch.nodeId = node;
    batch.samples.reserve(count);
    for (std::uint64_t seq = first; seq < first + count; ++seq) {
        const double v = 6.0e11 + 1.0e9 * std::sin(static_cast<double>(seq) * 1e-3);
        batch.samples.push_back(IngestSample{seq, kT0 + static_cast<std::int64_t>(seq) * kDt, "",
                                             "host.mem.used_bytes", "bytes", v, v - 1e6, v + 1e6,
                                             -1});
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
        auto id = (*history)->findSeries("n1", "", "host.mem.used_bytes");
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

// Reference: the same buckets with GROUP BY in SQL (min/max/count and first/last time only; the
// first/last values and extreme times would need a second pass).
void BM_QuerySqlGroupBy1M(benchmark::State& state) {
    auto& f = million();
    auto db = runplane::sqlite::Database::open(f.path);
    if (!f.error.empty() || !db.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    const std::int64_t width =
        bucketWidth(kT0 + kDt, kT0 + 1'000'000 * kDt, static_cast<int>(state.range(0)));
    auto stmt = (*db)->prepare(
        "SELECT t_ns / ?2 AS b, count(*), min(t_ns), max(t_ns), min(min), max(max) "
        "FROM samples WHERE series_id = ?1 GROUP BY b ORDER BY b;");
    std::size_t rows = 0;
    for (auto _ : state) {
        stmt->bind(1, f.seriesId).bind(2, width);
        rows = 0;
        while (true) {
            auto row = stmt->step();
            if (!row.ok() || !*row) {
                break;
            }
            ++rows;
        }
        stmt->reset();
        benchmark::DoNotOptimize(rows);
    }
    state.counters["buckets_out"] = static_cast<double>(rows);
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_QuerySqlGroupBy1M)->Arg(2000)->Unit(benchmark::kMillisecond);

// The full read: every sample of the series into memory (what a plot without decimation loads).
void BM_FullRead1M(benchmark::State& state) {
    auto& f = million();
    auto db = runplane::sqlite::Database::open(f.path);
    if (!f.error.empty() || !db.ok()) {
        state.SkipWithError("fixture failed");
        return;
    }
    auto stmt = (*db)->prepare(
        "SELECT t_ns, value, min, max, step FROM samples WHERE series_id = ?1 ORDER BY t_ns;");
    std::vector<SeriesPoint> points;
    for (auto _ : state) {
        points.clear();
        stmt->bind(1, f.seriesId);
        while (true) {
            auto row = stmt->step();
            if (!row.ok() || !*row) {
                break;
            }
            points.push_back(SeriesPoint{stmt->columnInt(0), stmt->columnDouble(1),
                                         stmt->columnDouble(2), stmt->columnDouble(3),
                                         stmt->columnInt(4)});
        }
        stmt->reset();
        benchmark::DoNotOptimize(points.data());
    }
    state.counters["points_out"] = static_cast<double>(points.size());
    state.SetItemsProcessed(state.iterations() * 1'000'000);
}
BENCHMARK(BM_FullRead1M)->Unit(benchmark::kMillisecond);

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
