// GUI plot benchmarks (issue 10, docs/performance.md "GUI plots"), offscreen:
//  - LoadAndDraw1M: query a 1,000,000-sample series of a real SQLite history through the same
//    path the pages use (db::History::querySeries with maxBuckets = plot width, toPointSeries,
//    showHostMemory) and draw it (TimeSeriesPlot::flush = rebuild + replot), 1400 x 500 px.
//  - OpenLoadAndDraw1M: the same through a freshly opened read-only connection each time.
//  - ZoomStep: the same for a range 20 % narrower than the previous one (what a wheel step asks).
//  - Reference: drawing all 1,000,000 raw points without decimation (what a plot without
//    min/max-preserving queries would do).
//  - ClusterRedraw256: the Cluster page's host-memory plot of 256 nodes (issue 20), one live
//    refresh = showHostMemory + flush, with the points per node loadNodeHostMemory reads over a
//    10-minute window (64 decimated buckets), values moving each refresh; one planted one-sample
//    peak per node inside a bucket. ClusterRedraw256Raw, the reference in the same run: the same
//    256 lines drawn from every raw sample (6,000 per node).
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QDir>
#include <QHeaderView>
#include <QImage>
#include <QLineEdit>
#include <QStyleFactory>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/pages/plot_builders.h"
#include "gui/pages/run_view.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/flat_style.h"
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
            batch.nodeId = db::NodeId{"node-a"};
            for (int i = first; i < first + 50'000; ++i) {
                const double v =
                    6.2e11 + 2e10 * std::sin(i * 1e-3) + (i == kSamples / 2 ? 3e11 : 0);
                batch.samples.push_back(
                    db::IngestSample{static_cast<std::uint64_t>(i + 1), kT0 + i * kDt, db::RunId{},
                                     "host.mem.used_bytes", "bytes", v, v - 1e9, v + 1e9, -1});
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

// The Cluster page's 256 nodes at 10 Hz over its 10-minute follow window: `buckets` decimated
// buckets per node (min, max, last kept), or the raw samples when buckets = 0. `shift` moves
// every value (a live refresh draws new data into the same graphs).
std::vector<PointSeries> clusterNodes(int buckets, int shift) {
    constexpr int kNodes = 256;
    constexpr int kRaw = 6000;  // 10 min at 10 Hz
    std::vector<PointSeries> nodes;
    nodes.reserve(kNodes);
    for (int n = 0; n < kNodes; ++n) {
        PointSeries s;
        s.nodeId = QStringLiteral("node-%1").arg(n);
        s.name = QStringLiteral("host.mem.used_bytes");
        s.unit = QStringLiteral("bytes");
        auto sample = [&](int i) {
            const double v = 6.0e11 * (1.0 + 0.1 * ((i + n * 7 + shift) % 50) / 50.0);
            return i == (n * 37 + 1000) % kRaw ? v + 2.5e11 : v;  // one peak per node
        };
        const double t0 = 1.767e9;
        if (buckets == 0) {
            for (int i = 0; i < kRaw; ++i) {
                s.t.push_back(t0 + i * 0.1);
                s.value.push_back(sample(i));
                s.min.push_back(sample(i));
                s.max.push_back(sample(i));
                s.step.push_back(-1);
            }
        } else {
            s.decimated = true;
            s.sourceCount = kRaw;
            const int per = kRaw / buckets;
            for (int b = 0; b < buckets; ++b) {
                double lo = 1e300;
                double hi = -1e300;
                for (int i = b * per; i < (b + 1) * per; ++i) {
                    lo = std::min(lo, sample(i));
                    hi = std::max(hi, sample(i));
                }
                s.t.push_back(t0 + (b + 0.5) * per * 0.1);
                s.value.push_back(sample((b + 1) * per - 1));
                s.min.push_back(lo);
                s.max.push_back(hi);
                s.step.push_back(-1);
            }
        }
        nodes.push_back(std::move(s));
    }
    return nodes;
}

void clusterRedraw(benchmark::State& state, int buckets) {
    TimeSeriesPlot plot;
    plot.resize(kWidth, 600);
    plot.setFollowWindow(600);
    plot.show();
    MemoryLines lines;
    lines.ramBytes = 1099511627776.0;  // the simulated nodes' 1 TiB (bench_load)
    // The data sets of a few refreshes, made before timing.
    std::vector<std::vector<PointSeries>> refreshes;
    for (int i = 0; i < 4; ++i) {
        refreshes.push_back(clusterNodes(buckets, i));
    }
    std::size_t i = 0;
    for (auto _ : state) {
        showHostMemory(plot, refreshes[i++ % refreshes.size()], lines, {}, {});
        plot.flush();
    }
    state.counters["lines"] = plot.seriesCount();
    state.counters["points_drawn"] = plot.drawnPointCount();
}

void BM_ClusterRedraw256(benchmark::State& state) {
    clusterRedraw(state, 64);
}

void BM_ClusterRedraw256Raw(benchmark::State& state) {
    clusterRedraw(state, 0);
}

// The live Runs page's once-a-second refresh of a 256-node run: RunView::setSnapshot with new
// host-memory buckets and peaks, then the event loop's layout and paint (offscreen). The
// reference sizes the peaks table's columns as Qt's default ResizeToContents does (up to 1,000
// rows measured on each refresh: here all 256), RunView measures the visible rows.
std::shared_ptr<const RunSnapshot> runSnapshot(int shift) {
    auto snapshot = std::make_shared<RunSnapshot>();
    snapshot->hostMemory = clusterNodes(64, shift);
    snapshot->run.id = QStringLiteral("load-run");
    snapshot->run.startT = 1.767e9;
    snapshot->t0 = 1.767e9;
    snapshot->t1 = 1.767e9 + 600;
    snapshot->lines.ramBytes = 1099511627776.0;
    for (const PointSeries& s : snapshot->hostMemory) {
        snapshot->run.nodes << s.nodeId;
        NodePeakRow peak;
        peak.nodeId = s.nodeId;
        peak.peakBytes = *std::max_element(s.max.begin(), s.max.end()) + shift;
        peak.peakT = s.t.back();
        peak.phase = QStringLiteral("rollout");
        snapshot->peaks.push_back(peak);
    }
    return snapshot;
}

void runViewRefresh(benchmark::State& state, bool measureEveryRow) {
    RunView view;
    view.resize(1400, 900);
    view.show();
    if (measureEveryRow) {
        for (QTableView* table : view.findChildren<QTableView*>()) {
            table->horizontalHeader()->setResizeContentsPrecision(1000);  // Qt's default
        }
    }
    std::vector<std::shared_ptr<const RunSnapshot>> refreshes;
    for (int i = 0; i < 4; ++i) {
        refreshes.push_back(runSnapshot(i));
    }
    std::size_t i = 0;
    view.setSnapshot(refreshes[i++]);
    QApplication::processEvents();
    for (auto _ : state) {
        view.setSnapshot(refreshes[i++ % refreshes.size()]);
        QApplication::processEvents();  // the delayed layout and the paint
    }
}

void BM_RunViewRefresh256(benchmark::State& state) {
    runViewRefresh(state, false);
}

void BM_RunViewRefresh256ReferenceEveryRowSized(benchmark::State& state) {
    runViewRefresh(state, true);
}

// A whole-view paint of that 256-node run (as the load bench paints the Runs page: every child
// into one image), with the view's delegates, against Qt's styled delegate on every table.
void runViewPaint(benchmark::State& state, bool styledDelegates) {
    RunView view;
    view.resize(1400, 900);
    view.show();
    if (styledDelegates) {
        useStyledDelegates(&view);
    }
    view.setSnapshot(runSnapshot(0));
    QApplication::processEvents();
    QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
    for (auto _ : state) {
        view.render(&image);
    }
}

void BM_RunViewPaint256(benchmark::State& state) {
    runViewPaint(state, false);
}

void BM_RunViewPaint256ReferenceStyledDelegate(benchmark::State& state) {
    runViewPaint(state, true);
}

// The Runs page's chrome that Fusion strokes as antialiased rounded rectangles: the run view's
// tab bar (five tabs) and the run filter's line edit, under FlatStyle against Fusion alone.
void chromePaint(benchmark::State& state, bool fusionAlone) {
    std::unique_ptr<QStyle> fusion(QStyleFactory::create(QStringLiteral("Fusion")));
    QTabBar tabs;
    for (const char* name : {"Memory", "NCCL", "Metrics", "Panels", "Log"}) {
        tabs.addTab(QString::fromLatin1(name));
    }
    QLineEdit filter;
    filter.setPlaceholderText(QStringLiteral("filter runs (name, recipe, node, id)"));
    if (fusionAlone) {
        tabs.setStyle(fusion.get());
        filter.setStyle(fusion.get());
    }
    tabs.resize(307, 26);
    filter.resize(439, 22);
    tabs.show();
    filter.show();
    QApplication::processEvents();
    QImage tabsImage(tabs.size(), QImage::Format_ARGB32_Premultiplied);
    QImage filterImage(filter.size(), QImage::Format_ARGB32_Premultiplied);
    for (auto _ : state) {
        tabs.render(&tabsImage);
        filter.render(&filterImage);
    }
}

void BM_RunsChromePaint(benchmark::State& state) {
    chromePaint(state, false);
}

void BM_RunsChromePaintReferenceFusion(benchmark::State& state) {
    chromePaint(state, true);
}

}  // namespace

BENCHMARK(BM_RunViewPaint256)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RunsChromePaint)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_RunsChromePaintReferenceFusion)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_RunViewPaint256ReferenceStyledDelegate)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RunViewRefresh256)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RunViewRefresh256ReferenceEveryRowSized)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ClusterRedraw256)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ClusterRedraw256Raw)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_LoadAndDraw1M)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_OpenLoadAndDraw1M)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ZoomStep)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ReferenceDrawAllRawPoints)->Unit(benchmark::kMillisecond)->Iterations(3);

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    installFlatStyle();  // as runplane's main does
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
