// GUI plot benchmarks (issue 10, docs/performance.md "GUI plots"), offscreen:
//  - LoadAndDraw1M: query a 1,000,000-sample series of a real SQLite history through the same
//    path the pages use (db::History::querySeries with maxBuckets = plot width, toPointSeries,
//    showHostMemory) and draw it (TimeSeriesPlot::flush = rebuild + replot), 1400 x 500 px.
//  - OpenLoadAndDraw1M: the same through a freshly opened read-only connection each time.
//  - ZoomStep: the same for a range 20 % narrower than the previous one (what a wheel step asks).
//  - Reference: drawing all 1,000,000 raw points without decimation (what a plot without
//    min/max-preserving queries would do).
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QDir>
#include <QTemporaryDir>

#include <cmath>
#include <memory>

#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/pages/plot_builders.h"
#include "gui/widgets/time_series_plot.h"

namespace {

using namespace runplane;
using namespace runplane::gui;

constexpr std::int64_t kT0 = 1'767'261'600'000'000'000;
constexpr std::int64_t kDt = 100'000'000;  // 10 Hz: 1,000,000 samples = 27.8 h
constexpr int kSamples = 1'000'000;
constexpr int kWidth = 1400;

struct Fixture {
    QTemporaryDir dir;
    std::unique_ptr<db::History> history;
    db::SeriesInfo info;
    std::string error;

    Fixture() {
        auto h = db::History::open(dir.filePath(QStringLiteral("bench.sqlite")).toStdString());
        if (!h) {
            error = h.error();
            return;
        }
        history = std::move(*h);
        for (int first = 0; first < kSamples; first += 50'000) {
            db::IngestBatch batch;
            batch.nodeId = "node-a";
            for (int i = first; i < first + 50'000; ++i) {
                const double v =
                    6.2e11 + 2e10 * std::sin(i * 1e-3) + (i == kSamples / 2 ? 3e11 : 0);
                batch.samples.push_back(db::IngestSample{static_cast<std::uint64_t>(i + 1),
                                                         kT0 + i * kDt, "", "host.mem.used_bytes",
                                                         "bytes", v, v - 1e9, v + 1e9, -1});
            }
            batch.throughSeq = static_cast<std::uint64_t>(first + 50'000);
            if (auto r = history->ingest(batch); !r) {
                error = r.error();
                return;
            }
        }
        db::SeriesFilter f;
        f.nodeId = NodeId{"node-a"};
        f.name = "host.mem.used_bytes";
        auto series = history->listSeries(f);
        if (!series || series->empty()) {
            error = "series missing";
            return;
        }
        info = series->front();
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

void draw(TimeSeriesPlot& plot, const PointSeries& s) {
    MemoryLines lines;
    lines.ramBytes = 956e9;
    lines.healthyLowBytes = 600e9;  // the seed's 600-650 GB peaks, alarm at 750 GB
    lines.healthyHighBytes = 650e9;
    lines.alarmBytes = 750e9;
    showHostMemory(plot, {s}, lines, {}, {});
    plot.flush();
}

void BM_LoadAndDraw1M(benchmark::State& state) {
    Fixture& f = fixture();
    if (!f.error.empty()) {
        state.SkipWithError(f.error.c_str());
        return;
    }
    TimeSeriesPlot plot;
    plot.resize(kWidth, 500);
    size_t points = 0;
    for (auto _ : state) {
        auto s = loadSeries(*f.history, f.info, 0, 0, kWidth);
        if (!s) {
            state.SkipWithError(s.error().c_str());
            return;
        }
        points = s->t.size();
        draw(plot, *s);
    }
    state.counters["points_drawn"] = static_cast<double>(points);
    state.counters["source_samples"] = kSamples;
}

// The same with a fresh read-only connection each time (SQLite's page cache starts empty; the
// file itself is in the OS page cache, as it is for a GUI reading a history it just wrote).
void BM_OpenLoadAndDraw1M(benchmark::State& state) {
    Fixture& f = fixture();
    if (!f.error.empty()) {
        state.SkipWithError(f.error.c_str());
        return;
    }
    TimeSeriesPlot plot;
    plot.resize(kWidth, 500);
    db::OpenOptions readOnly;
    readOnly.readOnly = true;
    for (auto _ : state) {
        auto h = db::History::open(f.history->path(), readOnly);
        if (!h) {
            state.SkipWithError(h.error().c_str());
            return;
        }
        auto s = loadSeries(**h, f.info, 0, 0, kWidth);
        if (!s) {
            state.SkipWithError(s.error().c_str());
            return;
        }
        draw(plot, *s);
    }
}

void BM_ZoomStep(benchmark::State& state) {
    Fixture& f = fixture();
    if (!f.error.empty()) {
        state.SkipWithError(f.error.c_str());
        return;
    }
    TimeSeriesPlot plot;
    plot.resize(kWidth, 500);
    double lo = nsToSeconds(kT0);
    double hi = nsToSeconds(kT0 + static_cast<std::int64_t>(kSamples) * kDt);
    for (auto _ : state) {
        const double centre = (lo + hi) / 2;
        const double half = (hi - lo) * 0.4;  // one wheel step: 20 % narrower
        double nlo = centre - half;
        double nhi = centre + half;
        if (nhi - nlo < 60) {  // restart from the full range once zoomed to a minute
            nlo = nsToSeconds(kT0);
            nhi = nsToSeconds(kT0 + static_cast<std::int64_t>(kSamples) * kDt);
        }
        lo = nlo;
        hi = nhi;
        auto s = loadSeries(*f.history, f.info, lo, hi, kWidth);
        if (!s) {
            state.SkipWithError(s.error().c_str());
            return;
        }
        plot.setVisibleRange(lo, hi);
        draw(plot, *s);
    }
}

void BM_ReferenceDrawAllRawPoints(benchmark::State& state) {
    Fixture& f = fixture();
    if (!f.error.empty()) {
        state.SkipWithError(f.error.c_str());
        return;
    }
    TimeSeriesPlot plot;
    plot.resize(kWidth, 500);
    for (auto _ : state) {
        auto s = loadSeries(*f.history, f.info, 0, 0, kSamples);  // 4 x buckets > samples: raw
        if (!s) {
            state.SkipWithError(s.error().c_str());
            return;
        }
        draw(plot, *s);
    }
}

}  // namespace

BENCHMARK(BM_LoadAndDraw1M)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_OpenLoadAndDraw1M)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ZoomStep)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ReferenceDrawAllRawPoints)->Unit(benchmark::kMillisecond)->Iterations(3);

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
