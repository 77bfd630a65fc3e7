// issue 19: the memory panel is about this run. Lines come from the run's plan (per-node peak per
// phase) and the daemon's alarm setting, never from fixed fractions of RAM; the y axis follows
// the data with RAM as a reference line. Real SQLite history, real RunView (offscreen). Also the
// Runs page's empty states (no runs yet; a history that cannot be read).
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>

#include <algorithm>

#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/recipe.h"
#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/models/run_derivations.h"
#include "gui/models/run_models.h"
#include "gui/pages/plot_builders.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

TEST(MemoryLines, SmallRunOnASmallMachineIsDrawnToScale) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("h.sqlite")).toStdString();
    auto h = db::History::open(path);
    ASSERT_TRUE(h) << h.error();
    test::SyntheticRunSpec spec;
    spec.runId = "small";
    spec.seconds = 900;
    spec.gpusPerNode = 1;
    spec.ramGB = 25;
    spec.hostScale = 1.5 / 650;  // the 600-700 GB profile scaled to ~1.5 GB
    spec.regressNodeB = false;   // no alarm raised: the daemon's setting is unknown
    spec.plantSpike = false;
    ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    auto snap = loadRunSnapshot(**h, QStringLiteral("small"), 0, 0, 500, defaultModelCatalog());
    ASSERT_TRUE(snap) << snap.error();
    double dataMax = 0;
    for (const PointSeries& s : snap->hostMemory) {
        dataMax = std::max(dataMax, *std::max_element(s.max.begin(), s.max.end()));
    }
    ASSERT_GT(dataMax, 0.5e9);
    ASSERT_LT(dataMax, 3e9);
    // RAM 25 GB; no invented "healthy 15.9-17.2 GB" (600-650/956 of 25 GB) and no alarm line.
    EXPECT_NEAR(snap->lines.ramBytes, 25e9, 1);
    EXPECT_EQ(snap->lines.healthyLowBytes, 0);
    EXPECT_EQ(snap->lines.healthyHighBytes, 0);
    EXPECT_EQ(snap->lines.alarmBytes, 0);
    EXPECT_TRUE(snap->lines.source.contains(QStringLiteral("RAM only")))
        << snap->lines.source.toStdString();

    RunView view;
    view.resize(1400, 900);
    view.show();
    view.setSnapshot(std::make_shared<const RunSnapshot>(std::move(*snap)));
    TimeSeriesPlot* plot = view.hostMemoryPlot();
    plot->flush();
    EXPECT_EQ(plot->alarmLineCount(), 1);  // RAM, as a reference
    const auto [lo, hi] = plot->yRange();  // GB
    EXPECT_EQ(lo, 0);
    EXPECT_GE(hi, dataMax / 1e9);
    EXPECT_LT(hi, 1.2 * dataMax / 1e9);  // the axis follows the data, not the 25 GB of RAM

    // Phases in their own lane under the data (not full-height stripes), the legend above it.
    ASSERT_GT(plot->phaseCount(), 0);
    const QRect data = plot->dataRect();
    const QRect lane = plot->phaseLaneRect();
    const QRect legend = plot->legendRect();
    ASSERT_FALSE(lane.isEmpty());
    EXPECT_GT(lane.top(), data.bottom()) << "the lane must lie below the data area";
    EXPECT_LE(lane.height(), 20);
    EXPECT_EQ(lane.left(), data.left());  // aligned with the data's x axis
    EXPECT_EQ(lane.right(), data.right());
    ASSERT_FALSE(legend.isEmpty());
    EXPECT_FALSE(legend.intersects(data)) << "the legend must not cover the data";
    EXPECT_LT(legend.bottom(), data.top());
    // A plot without phases has no lane.
    TimeSeriesPlot bare;
    bare.resize(600, 300);
    bare.setSeries({PlotSeries{QStringLiteral("x"), Qt::blue, {1, 2, 3}, {1, 2, 1}, {}, {}}});
    bare.flush();
    EXPECT_TRUE(bare.phaseLaneRect().isEmpty());
}

TEST(MemoryLines, LinesComeFromThePlanAndTheDaemonsAlarm) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("h.sqlite")).toStdString();
    auto h = db::History::open(path);
    ASSERT_TRUE(h) << h.error();
    test::SyntheticRunSpec spec;  // 956 GB nodes; node-b regresses: an alarm at 750 GB
    spec.seconds = 1800;
    spec.gpusPerNode = 1;
    spec.recipeYaml = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_FALSE(spec.recipeYaml.empty());
    ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    const plan::ModelCatalog* catalog = defaultModelCatalog();
    ASSERT_NE(catalog, nullptr);
    auto snap = loadRunSnapshot(**h, QString::fromStdString(spec.runId), 0, 0, 500, catalog);
    ASSERT_TRUE(snap) << snap.error();

    // The daemon's threshold (threshold_bytes of its memory_alarm event), not 750/956 of RAM.
    EXPECT_NEAR(snap->lines.alarmBytes, 750e9, 1);
    // Planned per-node peak per phase, computed here from the planner directly.
    auto recipe = plan::parseRecipe(spec.recipeYaml, "recipe");
    ASSERT_TRUE(recipe) << recipe.error();
    auto shape = plan::resolveModel(*recipe, *catalog);
    ASSERT_TRUE(shape) << shape.error();
    const plan::MemoryPlan memory = plan::planMemory(*recipe, *shape);
    ASSERT_EQ(snap->lines.plannedPhases.size(), plan::kPhases.size());
    double low = 0;
    double high = 0;
    for (size_t i = 0; i < plan::kPhases.size(); ++i) {
        double peak = 0;
        for (const plan::NodeMemory& n : memory.nodes) {
            peak = std::max(peak, n.phases[i].total());
        }
        EXPECT_EQ(snap->lines.plannedPhases[i].phase,
                  QString::fromUtf8(plan::toString(plan::kPhases[i])));
        EXPECT_DOUBLE_EQ(snap->lines.plannedPhases[i].bytes, peak);
        if (plan::kPhases[i] != plan::Phase::Load) {
            low = low == 0 ? peak : std::min(low, peak);
            high = std::max(high, peak);
        }
    }
    EXPECT_DOUBLE_EQ(snap->lines.healthyLowBytes, low);
    EXPECT_DOUBLE_EQ(snap->lines.healthyHighBytes, high);
    EXPECT_DOUBLE_EQ(snap->lines.plannedPeakBytes, memory.peakBytes);
}

TEST(MemoryLines, TheRecipesAlarmLineWins) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("h.sqlite")).toStdString();
    auto h = db::History::open(path);
    ASSERT_TRUE(h) << h.error();
    test::SyntheticRunSpec spec;  // node-b regresses: the daemon raises its alarm at 750 GB
    spec.seconds = 1800;
    spec.gpusPerNode = 1;
    spec.recipeYaml = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_FALSE(spec.recipeYaml.empty());
    ASSERT_EQ(spec.recipeYaml.find("analysis:"), std::string::npos);
    spec.recipeYaml += "analysis:\n  memory_alarm_gb: 700\n";
    ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    auto snap =
        loadRunSnapshot(**h, QString::fromStdString(spec.runId), 0, 0, 500, defaultModelCatalog());
    ASSERT_TRUE(snap) << snap.error();
    // analysis.memory_alarm_gb (decimal GB), before the daemon's 750 GB and the plan's line.
    EXPECT_DOUBLE_EQ(snap->lines.alarmBytes, 700e9);
    EXPECT_TRUE(snap->lines.source.contains(QStringLiteral("analysis.memory_alarm_gb")))
        << snap->lines.source.toStdString();
    // The memory panel draws it, labelled in decimal GB.
    const std::vector<AlarmLine> lines = alarmLinesGB(snap->lines);
    const auto alarm = std::find_if(lines.begin(), lines.end(), [](const AlarmLine& a) {
        return a.label.startsWith(QStringLiteral("sustained alarm"));
    });
    ASSERT_NE(alarm, lines.end());
    EXPECT_EQ(alarm->label, QStringLiteral("sustained alarm 700.0 GB"));
    EXPECT_DOUBLE_EQ(alarm->y, 700);
    // Time above the alarm is measured against the recipe's line (node-b regresses past it).
    double above = 0;
    for (const NodePeakRow& p : snap->peaks) {
        above = std::max(above, p.secondsAboveAlarm);
    }
    EXPECT_GT(above, 0);

    RunView view;
    view.resize(1400, 900);
    view.show();
    view.setSnapshot(std::make_shared<const RunSnapshot>(std::move(*snap)));
    view.hostMemoryPlot()->flush();
    EXPECT_EQ(view.hostMemoryPlot()->alarmLineCount(), static_cast<int>(lines.size()));
}

TEST(RunsPageEmptyStates, EmptyAndCorruptHistoriesSayWhatToDo) {
    QTemporaryDir dir;
    const QString empty = dir.filePath(QStringLiteral("empty.sqlite"));
    ASSERT_TRUE(db::History::open(empty.toStdString()));
    {
        RunsPage page(empty);
        ASSERT_TRUE(test::waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
        EXPECT_TRUE(page.bannerText().contains(QStringLiteral("make demo")))
            << page.bannerText().toStdString();
        EXPECT_TRUE(page.bannerText().contains(empty));
    }
    const QString corrupt = dir.filePath(QStringLiteral("corrupt.sqlite"));
    {
        QFile f(corrupt);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(8192, 'x'));
    }
    RunsPage page(corrupt);
    ASSERT_TRUE(test::waitUntil([&] { return !page.bannerText().isEmpty(); }, 10000));
    const QString banner = page.bannerText();
    EXPECT_TRUE(banner.contains(corrupt)) << banner.toStdString();
    EXPECT_TRUE(banner.contains(QStringLiteral("not a database"))) << banner.toStdString();
    QFile f(corrupt);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_EQ(f.readAll(), QByteArray(8192, 'x'));  // left as it was
}

// "Runs table shows its key columns without scrolling": run, status, start, peak host memory
// and the primary eval fit the list's default width even with a long run name (elided).
TEST(RunsPageColumns, KeyColumnsFitWithoutScrolling) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec spec;
        spec.name = "a very long run name that a user typed to describe the experiment in full";
        spec.seconds = 300;
        spec.gpusPerNode = 1;
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    }
    RunsPage page(path);
    page.resize(1700, 1000);
    page.show();
    ASSERT_TRUE(test::waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    test::pump(100);
    QTableView* table = page.table();
    for (int c : {RunListModel::NameColumn, RunListModel::StateColumn, RunListModel::StartColumn,
                  RunListModel::PeakColumn, RunListModel::EvalColumn}) {
        EXPECT_FALSE(table->isColumnHidden(c)) << c;
    }
    int total = 0;
    for (int c = 0; c < RunListModel::ColumnCount; ++c) {
        total += table->isColumnHidden(c) ? 0 : table->columnWidth(c);
    }
    std::string widths;
    for (int c = 0; c < RunListModel::ColumnCount; ++c) {
        widths += std::to_string(table->isColumnHidden(c) ? -1 : table->columnWidth(c)) + " ";
    }
    EXPECT_LE(total, table->viewport()->width()) << widths;
    EXPECT_EQ(table->horizontalScrollBar()->maximum(), 0) << widths;
    // The name gave way: narrower than its text, which stays whole in the model.
    EXPECT_LT(table->columnWidth(RunListModel::NameColumn),
              table->fontMetrics().horizontalAdvance(
                  page.runsModel()->index(0, RunListModel::NameColumn).data().toString()));
}

// issue 20: past kHostMemoryBandedNodes nodes the host-memory plot draws lines without bands
// (hundreds of nodes). A one-sample peak inside a decimation bucket must still be drawn: each
// node's line is its buckets' maxima, read from a real history the way the Cluster page reads it.
TEST(HostMemoryPlot, ManyNodesKeepEveryBucketsPeak) {
    QTemporaryDir dir;
    auto h = db::History::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(h) << h.error();
    constexpr int kNodes = 16;
    constexpr int kSamples = 6000;  // 10 min at 10 Hz
    constexpr std::int64_t kT0 = 1'767'261'600'000'000'000;
    QStringList nodeIds;
    std::vector<double> peaks;
    for (int n = 0; n < kNodes; ++n) {
        db::IngestBatch batch;
        batch.nodeId = db::NodeId{"node-" + std::to_string(n)};
        nodeIds << QString::fromStdString(batch.nodeId.value());
        const int peakAt = 1000 + 317 * n;  // inside a bucket, never its last sample
        peaks.push_back(7.0e11 + 1e9 * n);
        for (int i = 0; i < kSamples; ++i) {
            double v = 5.0e11 + 1e9 * ((i + n) % 10);
            v = i == peakAt ? peaks.back() : v;
            batch.samples.push_back(db::IngestSample{static_cast<std::uint64_t>(i + 1),
                                                     kT0 + i * 100'000'000LL, db::RunId{},
                                                     "host.mem.used_bytes", "bytes", v, v, v, -1});
        }
        batch.throughSeq = kSamples;
        ASSERT_TRUE((*h)->ingest(batch));
    }
    const double t0 = kT0 * 1e-9;
    const NodeMemoryResult memory =
        loadNodeHostMemory(**h, nodeIds, t0 - 1, t0 + kSamples * 0.1 + 1, 200);
    ASSERT_TRUE(memory.error.isEmpty()) << memory.error.toStdString();
    ASSERT_EQ(memory.series.size(), static_cast<size_t>(kNodes));
    ASSERT_TRUE(memory.series.front().decimated);  // buckets of many samples each

    TimeSeriesPlot plot;
    plot.resize(1400, 600);
    showHostMemory(plot, memory.series, MemoryLines{}, {}, {});
    plot.flush();
    ASSERT_EQ(plot.series().size(), static_cast<size_t>(kNodes));
    for (int n = 0; n < kNodes; ++n) {
        const PlotSeries& s = plot.series()[static_cast<size_t>(n)];
        EXPECT_FALSE(s.hasBand());
        EXPECT_FALSE(s.antialiased);
        ASSERT_EQ(s.t.size(), s.value.size());
        EXPECT_TRUE(std::is_sorted(s.t.begin(), s.t.end()));
        EXPECT_DOUBLE_EQ(*std::max_element(s.value.begin(), s.value.end()), peaks[n] / 1e9)
            << "node " << n;
        // Every point is its bucket's maximum (what the history returned), never its last value.
        const PointSeries& read = memory.series[static_cast<size_t>(n)];
        ASSERT_EQ(s.value.size(), read.max.size());
        for (size_t i = 0; i < s.value.size(); ++i) {
            EXPECT_DOUBLE_EQ(s.value[i], read.max[i] / 1e9);
        }
    }
    // The y axis reaches the highest peak (it follows the data, peaks included).
    EXPECT_GE(plot.yRange().second, peaks.back() / 1e9);
}

// The peaks table sizes its columns from the rows in view (a 256-node refresh measured every row
// before), and again when it scrolls: a long node id further down is shown whole once in view.
TEST(RunViewPeaks, ColumnsFitTheRowsScrolledIntoView) {
    RunView view;
    view.resize(1400, 900);
    view.show();
    auto snapshot = std::make_shared<RunSnapshot>();
    snapshot->run.id = QStringLiteral("r");
    const QString longId = QStringLiteral("gpu-node-with-a-much-longer-name-0255.cluster.example");
    for (int n = 0; n < 256; ++n) {
        NodePeakRow peak;
        peak.nodeId = n == 255 ? longId : QStringLiteral("node-%1").arg(n);
        peak.peakBytes = 1e11 + n;
        snapshot->run.nodes << peak.nodeId;
        snapshot->peaks.push_back(peak);
    }
    view.setSnapshot(snapshot);
    QApplication::processEvents();
    QTableView* table = nullptr;
    for (QTableView* t : view.findChildren<QTableView*>()) {
        table = t->model() == view.peaksModel() ? t : table;
    }
    ASSERT_NE(table, nullptr);
    ASSERT_EQ(table->model()->rowCount(), 256);
    const int longWidth = table->fontMetrics().horizontalAdvance(longId);
    // In view: the short ids only, so the node column is narrower than the long id.
    ASSERT_LT(table->rowAt(table->viewport()->height() - 1), 255);
    EXPECT_LT(table->columnWidth(PeaksModel::NodeColumn), longWidth);
    table->verticalScrollBar()->setValue(table->verticalScrollBar()->maximum());
    QApplication::processEvents();
    EXPECT_EQ(table->rowAt(table->viewport()->height() - 1), 255);
    EXPECT_GE(table->columnWidth(PeaksModel::NodeColumn), longWidth);
}
