// Compare page at 300 runs (issue 49, docs/results/2026-12-06-compare-300-runs.md), offscreen.
// A real SQLite history with 300 runs, each with 12 metrics (6 eval/* of 200 points every 10
// steps, 6 train/* of 2,000 points), stored through the import path (imports::storeImportedRun,
// the same ingest as every run). Timed, with 10 runs selected:
//  - RunsList300: the runs list refresh (loadRunList over 300 runs + RunListModel::setRuns).
//  - CompareLoad10: the Compare page's data layer (loadCompare: run rows, recipes, every metric
//    series of the 10 runs through db::History's chunk reads).
//  - GridRedraw10x12: the 12-panel grid (CompareGridView::setData with the 6 eval metrics and 6
//    train metrics, debiased EMA 0.6, every panel rebuilt and replotted, the widget painted).
//  - CompareSwitch10x12: load + redraw, what selecting a run costs end to end.
//  - ReferenceRawSql10x12 (the reference, same run): the same 120 series read the generic way a
//    tracker backend serves a metric history (one SQL row per point: SELECT step, t, value FROM
//    the documented v_points view per run and metric, as MLflow's get-history and Aim's query
//    paths do) on a read-only connection, then the same grid drawn.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QImage>
#include <QTemporaryDir>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/history/history.h"
#include "db/history/history_sql.h"
#include "db/imports/run_import.h"
#include "gui/models/compare_data.h"
#include "gui/models/history_queries.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_grid.h"
#include "gui/widgets/flat_style.h"
#include "gui/widgets/time_series_plot.h"

namespace {

using namespace runplane;
using namespace runplane::gui;

constexpr int kRuns = 300;
constexpr int kSelected = 10;
constexpr int kEvalPoints = 200;    // every 10 steps
constexpr int kTrainPoints = 2000;  // every step
constexpr std::int64_t kT0 = 1'767'261'600'000'000'000;

struct Fixture {
    QTemporaryDir dir;
    std::unique_ptr<db::History> history;
    QStringList selected;
    QStringList trainMetrics;
    std::string error;
    std::size_t points = 0;

    Fixture() {
        auto h = db::History::open(dir.filePath(QStringLiteral("bench.sqlite")).toStdString());
        if (!h) {
            error = h.error();
            return;
        }
        history = std::move(*h);
        for (int m = 0; m < 6; ++m) {
            trainMetrics << QStringLiteral("train/metric_%1").arg(m);
        }
        for (int r = 0; r < kRuns; ++r) {
            imports::ImportedRun run;
            run.format = "jsonl";
            run.name = "run " + std::to_string(r);
            char hex[17];  // the run id is "import-" + the first 16 hex digits
            std::snprintf(hex, sizeof hex, "%016x", r + 1);
            run.contentSha256 = hex + std::string(48, '0');
            const std::int64_t start = kT0 + static_cast<std::int64_t>(r) * 3'600'000'000'000;
            for (int m = 0; m < 6; ++m) {
                imports::ImportedSeries eval{"eval/metric_" + std::to_string(m), {}};
                for (int i = 0; i < kEvalPoints; ++i) {
                    eval.points.push_back(
                        {i * 10, start + i * 10'000'000'000LL,
                         0.3 + 0.5 * (1 - std::exp(-i / 60.0)) + 0.01 * r / kRuns});
                }
                imports::ImportedSeries train{"train/metric_" + std::to_string(m), {}};
                for (int i = 0; i < kTrainPoints; ++i) {
                    train.points.push_back(
                        {i, start + i * 1'000'000'000LL,
                         2.0 * std::exp(-i / 700.0) + 0.05 * std::sin(i * 0.1 + m)});
                }
                points += eval.points.size() + train.points.size();
                run.series.push_back(std::move(eval));
                run.series.push_back(std::move(train));
            }
            auto stored = imports::storeImportedRun(*history, run, kT0);
            if (!stored) {
                error = stored.error();
                return;
            }
            if (r % (kRuns / kSelected) == 0) {
                selected << QString::fromStdString(stored->runId.value());
            }
        }
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

void redraw(CompareGridView& grid, const CompareData& data, const QStringList& extra) {
    grid.setData(data, extra, CompareAxis::Step, 0.6);
    for (int i = 0; i < grid.panelCount(); ++i) {
        grid.panel(i)->flush();
    }
    const QImage image = grid.grab().toImage();
    benchmark::DoNotOptimize(image.constBits());
}

#define FIXTURE_OR_SKIP(f)                    \
    Fixture& f = fixture();                   \
    if (!f.error.empty()) {                   \
        state.SkipWithError(f.error.c_str()); \
        return;                               \
    }

void BM_RunsList300(benchmark::State& state) {
    FIXTURE_OR_SKIP(f);
    RunListModel model;
    for (auto _ : state) {
        auto rows = loadRunList(*f.history);
        if (!rows) {
            state.SkipWithError(rows.error().c_str());
            return;
        }
        model.setRuns(std::move(*rows));
    }
    state.counters["runs"] = model.rowCount();
}

void BM_CompareLoad10(benchmark::State& state) {
    FIXTURE_OR_SKIP(f);
    for (auto _ : state) {
        auto data = loadCompare(*f.history, f.selected);
        if (!data) {
            state.SkipWithError(data.error().c_str());
            return;
        }
        benchmark::DoNotOptimize(data->runs.size());
    }
    state.counters["history_points"] = static_cast<double>(f.points);
}

void BM_GridRedraw10x12(benchmark::State& state) {
    FIXTURE_OR_SKIP(f);
    auto data = loadCompare(*f.history, f.selected);
    if (!data) {
        state.SkipWithError(data.error().c_str());
        return;
    }
    CompareGridView grid;
    grid.resize(1600, 1000);
    grid.show();
    redraw(grid, *data, f.trainMetrics);
    for (auto _ : state) {
        redraw(grid, *data, f.trainMetrics);
    }
    state.counters["panels"] = grid.panelCount();
}

void BM_CompareSwitch10x12(benchmark::State& state) {
    FIXTURE_OR_SKIP(f);
    CompareGridView grid;
    grid.resize(1600, 1000);
    grid.show();
    for (auto _ : state) {
        auto data = loadCompare(*f.history, f.selected);
        if (!data) {
            state.SkipWithError(data.error().c_str());
            return;
        }
        redraw(grid, *data, f.trainMetrics);
    }
    state.counters["panels"] = grid.panelCount();
}

void BM_ReferenceRawSql10x12(benchmark::State& state) {
    FIXTURE_OR_SKIP(f);
    auto shape = loadCompare(*f.history, f.selected);  // run rows; the series are replaced
    if (!shape) {
        state.SkipWithError(shape.error().c_str());
        return;
    }
    CompareGridView grid;
    grid.resize(1600, 1000);
    grid.show();
    db::SqlQueryOptions options;
    options.maxRows = 10'000'000;
    for (auto _ : state) {
        CompareData data = *shape;
        for (CompareRun& run : data.runs) {
            for (PointSeries& s : run.metrics) {
                auto rows =
                    db::queryHistorySql(f.history->path(),
                                        "SELECT step, t_ns, value FROM v_points WHERE run_id = '" +
                                            run.run.id.toStdString() + "' AND series = '" +
                                            s.name.toStdString() + "' ORDER BY t_ns",
                                        options);
                if (!rows) {
                    state.SkipWithError(rows.error().c_str());
                    return;
                }
                s.t.clear();
                s.value.clear();
                s.step.clear();
                for (const auto& row : rows->rows) {
                    s.step.push_back(row[0].get<double>());
                    s.t.push_back(row[1].get<double>() * 1e-9);
                    s.value.push_back(row[2].is_null() ? NAN : row[2].get<double>());
                }
                s.min = s.value;
                s.max = s.value;
            }
        }
        redraw(grid, data, f.trainMetrics);
    }
}

}  // namespace

BENCHMARK(BM_RunsList300)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_CompareLoad10)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_GridRedraw10x12)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_CompareSwitch10x12)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ReferenceRawSql10x12)->Unit(benchmark::kMillisecond)->MinTime(2.0);

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    installFlatStyle();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
