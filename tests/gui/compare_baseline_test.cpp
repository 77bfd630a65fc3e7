// issue 49: the Compare page's baseline and metrics grid. Two runs with known eval values written
// to a real SQLite history; the table's deltas (last, best, at a step) and the difference curve
// are checked exactly (values chosen to be exact in binary); the grid's panels, their series and
// the synchronised zoom and hover through real wheel and mouse events.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QMouseEvent>
#include <QProcess>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "db/history/history.h"
#include "gui/models/compare_baseline.h"
#include "gui/models/compare_model.h"
#include "gui/models/history_queries.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::rowOf;
using runplane::gui::test::seriesNamed;
using runplane::gui::test::waitUntil;

namespace {

const QString kMetric = QStringLiteral("eval/score");

// base: steps 0,10,20 = 0.5, 0.75, 0.625 (last 0.625, best 0.75).
// other: steps 0,10,15,20 = 0.25, 0.875, 0.9375, 1.0 (last 1.0, best 1.0).
void writeRuns(const QString& path) {
    test::writeRuns(
        path, {test::evalRun("run-base", "base", 0,
                             {{"eval/score", "", {{0, 0.5}, {10, 0.75}, {20, 0.625}}},
                              {"eval/math", "", {{0, 0.125}, {20, 0.25}}},
                              {"train/loss", "", {{0, 2.0}, {20, 1.0}}}},
                             600),
               test::evalRun("run-other", "other", 1,
                             {{"eval/score", "", {{0, 0.25}, {10, 0.875}, {15, 0.9375}, {20, 1.0}}},
                              {"eval/math", "", {{0, 0.375}, {20, 0.5}}},
                              {"train/loss", "", {{0, 3.0}, {20, 1.5}}}},
                             600)});
}

int columnOf(const CompareModel& m, const QString& startsWith) {
    for (int c = 1; c < m.columnCount(); ++c) {
        if (m.headerData(c, Qt::Horizontal).toString().startsWith(startsWith)) {
            return c;
        }
    }
    return -1;
}

}  // namespace

TEST(CompareBaseline, TableShowsExactDeltasAndDifferenceCurve) {
    test::TempHistory temp;
    ASSERT_NO_FATAL_FAILURE(writeRuns(temp.path));
    ComparePage page(temp.path);
    QAbstractItemModelTester tester(page.compareModel(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_TRUE(
        test::openComparePage(page, {QStringLiteral("run-base"), QStringLiteral("run-other")}));
    page.setAxis(CompareAxis::Step);
    page.setMetric(kMetric);
    page.setSmoothing(0);
    const CompareModel& m = *page.compareModel();
    // No baseline yet: no delta rows.
    EXPECT_EQ(rowOf(m, QStringLiteral("Δ eval/score last vs baseline")), -1);

    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDeltaStep(10);
    EXPECT_EQ(page.baselineRunId(), QStringLiteral("run-base"));
    const int baseCol = columnOf(m, QStringLiteral("base"));
    const int otherCol = columnOf(m, QStringLiteral("other"));
    ASSERT_GT(baseCol, 0);
    ASSERT_GT(otherCol, 0);
    EXPECT_EQ(m.headerData(baseCol, Qt::Horizontal).toString(), QStringLiteral("base (baseline)"));
    EXPECT_EQ(m.headerData(otherCol, Qt::Horizontal).toString(), QStringLiteral("other"));

    const int lastRow = rowOf(m, QStringLiteral("Δ eval/score last vs baseline"));
    const int bestRow = rowOf(m, QStringLiteral("Δ eval/score best vs baseline"));
    const int stepRow = rowOf(m, QStringLiteral("Δ eval/score at step 10 vs baseline"));
    ASSERT_GE(lastRow, 0);
    ASSERT_GE(bestRow, 0);
    ASSERT_GE(stepRow, 0);
    EXPECT_LT(stepRow, m.summaryRowCount());  // summary rows, above the recipe diff
    // other − base: last 1.0 − 0.625, best 1.0 − 0.75, at step 10: 0.875 − 0.75.
    EXPECT_EQ(m.index(lastRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.375);
    EXPECT_EQ(m.index(bestRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.25);
    EXPECT_EQ(m.index(stepRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.125);
    EXPECT_EQ(m.index(lastRow, otherCol).data().toString(), QStringLiteral("+0.3750"));
    EXPECT_EQ(m.index(bestRow, otherCol).data().toString(), QStringLiteral("+0.2500"));
    EXPECT_EQ(m.index(stepRow, otherCol).data().toString(), QStringLiteral("+0.1250"));
    EXPECT_EQ(m.index(lastRow, baseCol).data().toString(), QStringLiteral("baseline"));

    // A step only one run has: no delta.
    page.setDeltaStep(15);
    const int step15 = rowOf(m, QStringLiteral("Δ eval/score at step 15 vs baseline"));
    ASSERT_GE(step15, 0);
    EXPECT_FALSE(m.index(step15, otherCol).data(CompareModel::DeltaRole).isValid());
    EXPECT_EQ(m.index(step15, otherCol).data().toString(), QStringLiteral("–"));

    // The other run as baseline: the signs flip.
    page.setBaselineRun(QStringLiteral("run-other"));
    const int lastRow2 = rowOf(m, QStringLiteral("Δ eval/score last vs baseline"));
    ASSERT_GE(lastRow2, 0);
    EXPECT_EQ(m.index(lastRow2, columnOf(m, QStringLiteral("base")))
                  .data(CompareModel::DeltaRole)
                  .toDouble(),
              -0.375);
    EXPECT_EQ(m.index(lastRow2, columnOf(m, QStringLiteral("base"))).data().toString(),
              QStringLiteral("−0.3750"));

    // Difference curves against run-base: other − base at other's steps; step 15 against the
    // baseline interpolated between 0.75 (10) and 0.625 (20) = 0.6875.
    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDifferenceCurves(true);
    page.plot()->flush();
    const std::vector<PlotSeries>& series = page.plot()->series();
    const PlotSeries* diff = nullptr;
    for (const PlotSeries& s : series) {
        if (s.name == QStringLiteral("other − baseline")) {
            diff = &s;
        }
    }
    ASSERT_NE(diff, nullptr);
    EXPECT_EQ(diff->t, (std::vector<double>{0, 10, 15, 20}));
    EXPECT_EQ(diff->value, (std::vector<double>{-0.25, 0.125, 0.25, 0.375}));
    EXPECT_EQ(series.size(), 2u);  // the baseline's zero line and the other run's difference

    // Clearing the baseline removes the delta rows and the difference curves.
    page.setBaselineRun(QString());
    EXPECT_EQ(rowOf(m, QStringLiteral("Δ eval/score last vs baseline")), -1);
    page.plot()->flush();
    for (const PlotSeries& s : page.plot()->series()) {
        EXPECT_FALSE(s.name.endsWith(QStringLiteral("baseline"))) << s.name.toStdString();
    }
    test::pump(200);
    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDifferenceCurves(false);
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare-baseline.png"))));
}

namespace {

QWidget* canvasOf(TimeSeriesPlot* plot) {
    for (QWidget* w : plot->findChildren<QWidget*>()) {
        if (QString::fromLatin1(w->metaObject()->className()) == QStringLiteral("QCustomPlot")) {
            return w;
        }
    }
    return nullptr;
}

}  // namespace

TEST(CompareGrid, PanelPerEvalMetricWithSynchronisedZoomAndHover) {
    test::TempHistory temp;
    ASSERT_NO_FATAL_FAILURE(writeRuns(temp.path));
    ComparePage page(temp.path);
    page.showGrid(true);
    ASSERT_TRUE(test::openComparePage(
        page, {QStringLiteral("run-base"), QStringLiteral("run-other")}, QSize(1500, 1000)));
    page.setAxis(CompareAxis::Step);
    page.setSmoothing(0);
    CompareGridView& grid = *page.grid();
    // Every eval metric, not train/loss (not asked for).
    ASSERT_EQ(grid.panelCount(), 2);
    QStringList metrics = grid.metrics();
    std::sort(metrics.begin(), metrics.end());
    EXPECT_EQ(metrics, (QStringList{QStringLiteral("eval/math"), QStringLiteral("eval/score")}));
    // A chosen other metric adds its panel.
    page.setGridExtraMetrics({QStringLiteral("train/loss"), QStringLiteral("no/such")});
    ASSERT_EQ(grid.panelCount(), 3);
    EXPECT_EQ(grid.metrics().back(), QStringLiteral("train/loss"));

    // Each panel: one line per run with that metric's own points, its own y range.
    const std::vector<std::pair<QString, std::pair<std::vector<double>, std::vector<double>>>>
        expected = {
            {QStringLiteral("eval/math"), {{0.125, 0.25}, {0.375, 0.5}}},
            {QStringLiteral("eval/score"), {{0.5, 0.75, 0.625}, {0.25, 0.875, 0.9375, 1.0}}},
            {QStringLiteral("train/loss"), {{2.0, 1.0}, {3.0, 1.5}}},
        };
    for (const auto& [metric, values] : expected) {
        const int at = static_cast<int>(grid.metrics().indexOf(metric));
        ASSERT_GE(at, 0) << metric.toStdString();
        TimeSeriesPlot* panel = grid.panel(at);
        panel->flush();
        ASSERT_EQ(panel->seriesCount(), 2) << metric.toStdString();
        const PlotSeries* base = seriesNamed(*panel, QStringLiteral("base"));
        const PlotSeries* other = seriesNamed(*panel, QStringLiteral("other"));
        ASSERT_NE(base, nullptr);
        ASSERT_NE(other, nullptr);
        EXPECT_EQ(base->value, values.first) << metric.toStdString();
        EXPECT_EQ(other->value, values.second) << metric.toStdString();
        const auto [ylo, yhi] = panel->yRange();
        const auto [mn, mx] = std::minmax_element(values.second.begin(), values.second.end());
        EXPECT_LE(ylo, std::min(*mn, *std::min_element(values.first.begin(), values.first.end())));
        EXPECT_GE(yhi, *mx);
        EXPECT_LT(yhi, 4.0) << metric.toStdString();  // not a shared axis with train/loss
    }
    const auto [lossLo, lossHi] = grid.panel(2)->yRange();
    EXPECT_GT(lossLo, 0.5);  // train/loss's own axis, not the scores'

    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare-grid.png"))));

    // A real wheel zoom on the first panel: the others follow to the same x-range.
    QWidget* canvas = canvasOf(grid.panel(0));
    ASSERT_NE(canvas, nullptr);
    const auto [lo0, hi0] = grid.panel(1)->visibleRange();
    const QPointF at(canvas->width() * 0.6, canvas->height() / 2.0);
    QWheelEvent wheel(at, canvas->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(canvas, &wheel);
    const auto [zlo, zhi] = grid.panel(0)->visibleRange();
    EXPECT_LT(zhi - zlo, hi0 - lo0);  // zoomed in
    for (int i = 1; i < grid.panelCount(); ++i) {
        ASSERT_TRUE(waitUntil(
            [&] {
                const auto r = grid.panel(i)->visibleRange();
                return r.first == zlo && r.second == zhi;
            },
            3000))
            << "panel " << i << " did not follow the zoom";
        EXPECT_FALSE(grid.panel(i)->isFollowing());
    }

    // Hovering the second panel draws the cursor at the same x in every panel.
    QWidget* canvas1 = canvasOf(grid.panel(1));
    ASSERT_NE(canvas1, nullptr);
    const QPointF hover(canvas1->width() * 0.5, canvas1->height() / 2.0);
    QMouseEvent move(QEvent::MouseMove, hover, canvas1->mapToGlobal(hover), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(canvas1, &move);
    const double x = grid.panel(1)->cursorX();
    ASSERT_FALSE(std::isnan(x));
    EXPECT_GE(x, zlo);
    EXPECT_LE(x, zhi);
    for (int i = 0; i < grid.panelCount(); ++i) {
        EXPECT_EQ(grid.panel(i)->cursorX(), x) << "panel " << i;
    }
}

namespace {

std::pair<int, QString> runplanectl(const QStringList& args) {
    QProcess p;
    p.start(test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/backend/cli/runplanectl"),
            args);
    EXPECT_TRUE(p.waitForFinished(60000)) << p.errorString().toStdString();
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())};
}

QStringList filtered(db::History& history, const QString& text) {
    auto rows = loadRunList(history);
    EXPECT_TRUE(rows) << rows.error();
    RunListModel model;
    model.setRuns(std::move(*rows));
    RunFilterProxy proxy;
    proxy.setSourceModel(&model);
    proxy.setText(text);
    QStringList ids;
    for (int r = 0; r < proxy.rowCount(); ++r) {
        ids << proxy.index(r, 0).data(RunListModel::RunIdRole).toString();
    }
    ids.sort();
    return ids;
}

}  // namespace

// `runplanectl runs tag / note` write the history; the run filter (Runs and Compare pages)
// finds runs by tag and by words of the note.
TEST(RunTags, CliTagsAndNotesAreStoredAndSearchedByTheRunFilter) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(writeRuns(path));
    const QString h = QStringLiteral("--history");
    auto [c1, o1] = runplanectl({QStringLiteral("runs"), QStringLiteral("tag"),
                                 QStringLiteral("run-base"), QStringLiteral("lr-sweep"), h, path});
    ASSERT_EQ(c1, 0) << o1.toStdString();
    auto [c2, o2] = runplanectl({QStringLiteral("runs"), QStringLiteral("tag"),
                                 QStringLiteral("run-other"), QStringLiteral("lr-sweep"), h, path});
    ASSERT_EQ(c2, 0) << o2.toStdString();
    auto [c3, o3] = runplanectl({QStringLiteral("runs"), QStringLiteral("tag"),
                                 QStringLiteral("run-other"), QStringLiteral("keep"), h, path});
    ASSERT_EQ(c3, 0) << o3.toStdString();
    auto [c4, o4] =
        runplanectl({QStringLiteral("runs"), QStringLiteral("note"), QStringLiteral("run-base"),
                     QStringLiteral("diverged after the warmup; rerun with clip 0.5"), h, path});
    ASSERT_EQ(c4, 0) << o4.toStdString();
    // Bad input: a tag with a space, an unknown run; both exit 2 naming the problem.
    auto [c5, o5] = runplanectl({QStringLiteral("runs"), QStringLiteral("tag"),
                                 QStringLiteral("run-base"), QStringLiteral("two words"), h, path});
    EXPECT_EQ(c5, 2);
    EXPECT_TRUE(o5.contains(QStringLiteral("tag 'two words'"))) << o5.toStdString();
    auto [c6, o6] = runplanectl({QStringLiteral("runs"), QStringLiteral("note"),
                                 QStringLiteral("run-nope"), QStringLiteral("x"), h, path});
    EXPECT_EQ(c6, 2);
    EXPECT_TRUE(o6.contains(QStringLiteral("no run 'run-nope'"))) << o6.toStdString();
    // `runs` alone still lists the runs.
    auto [c7, o7] = runplanectl({QStringLiteral("runs"), h, path});
    EXPECT_EQ(c7, 0) << o7.toStdString();
    EXPECT_TRUE(o7.contains(QStringLiteral("run-base"))) << o7.toStdString();

    auto history = db::History::open(path.toStdString());
    ASSERT_TRUE(history) << history.error();
    auto notes = (*history)->runAnnotations();
    ASSERT_TRUE(notes) << notes.error();
    ASSERT_EQ(notes->size(), 2u);
    EXPECT_EQ((*notes)[0].first, "run-base");
    EXPECT_EQ((*notes)[0].second.tags, (std::vector<std::string>{"lr-sweep"}));
    EXPECT_EQ((*notes)[0].second.note, "diverged after the warmup; rerun with clip 0.5");
    EXPECT_EQ((*notes)[1].first, "run-other");
    EXPECT_EQ((*notes)[1].second.tags, (std::vector<std::string>{"keep", "lr-sweep"}));

    const QStringList both{QStringLiteral("run-base"), QStringLiteral("run-other")};
    EXPECT_EQ(filtered(**history, QStringLiteral("lr-sweep")), both);
    EXPECT_EQ(filtered(**history, QStringLiteral("KEEP")),
              QStringList{QStringLiteral("run-other")});
    EXPECT_EQ(filtered(**history, QStringLiteral("warmup")),
              QStringList{QStringLiteral("run-base")});
    EXPECT_TRUE(filtered(**history, QStringLiteral("nothing-like-this")).isEmpty());

    // Removing a tag and clearing the note take them out of the search.
    auto [c8, o8] =
        runplanectl({QStringLiteral("runs"), QStringLiteral("tag"), QStringLiteral("run-other"),
                     QStringLiteral("keep"), QStringLiteral("--remove"), h, path});
    ASSERT_EQ(c8, 0) << o8.toStdString();
    auto [c9, o9] = runplanectl({QStringLiteral("runs"), QStringLiteral("note"),
                                 QStringLiteral("run-base"), QString(), h, path});
    ASSERT_EQ(c9, 0) << o9.toStdString();
    EXPECT_TRUE(filtered(**history, QStringLiteral("keep")).isEmpty());
    EXPECT_TRUE(filtered(**history, QStringLiteral("warmup")).isEmpty());
    EXPECT_EQ(filtered(**history, QStringLiteral("lr-sweep")), both);
}

// A history that never had a tag (no run_tags table) reads as no annotations, read-only too.
TEST(RunTags, HistoryWithoutTheTablesReadsAsNone) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(writeRuns(path));
    db::OpenOptions ro;
    ro.readOnly = true;
    auto history = db::History::open(path.toStdString(), ro);
    ASSERT_TRUE(history) << history.error();
    auto notes = (*history)->runAnnotations();
    ASSERT_TRUE(notes) << notes.error();
    EXPECT_TRUE(notes->empty());
    EXPECT_EQ(filtered(**history, QStringLiteral("base")), QStringList{QStringLiteral("run-base")});
}
