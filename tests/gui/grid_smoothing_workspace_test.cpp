// issue 49: the per-panel smoothing of the Compare page's grid is kept in the workspace. One page
// sets its panels' own EMA weights and saves its workspace into a QSettings file; a fresh page
// restores it (before its run list arrives, as at a start) and, once the runs are compared, every
// panel has its own weight again and draws with it; values that are not weights are ignored.
#include <gtest/gtest.h>

#include <QDoubleSpinBox>
#include <QSettings>
#include <QTemporaryDir>

#include <cmath>

#include "db/history/history.h"
#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

void writeRuns(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    test::SyntheticRunSpec a;
    a.runId = "run-a";
    a.name = "a";
    a.seconds = 300;
    a.standardEvals = false;
    a.plantSpike = false;
    a.regressNodeB = false;
    a.extra = {{"eval/score", "", {{0, 1.0}, {10, 0.5}, {20, 0.25}}},
               {"eval/math", "", {{0, 0.125}, {10, 0.5}, {20, 0.75}}},
               {"eval/code", "", {{0, 0.5}, {10, 0.25}, {20, 0.5}}}};
    ASSERT_TRUE(test::writeSyntheticRun(**h, a));
    test::SyntheticRunSpec b = a;
    b.runId = "run-b";
    b.name = "b";
    b.startNs += 3600LL * 1000000000LL;
    ASSERT_TRUE(test::writeSyntheticRun(**h, b));
}

int panelOf(const CompareGridView& grid, const char* metric) {
    return static_cast<int>(grid.metrics().indexOf(QString::fromLatin1(metric)));
}

// The documented EMA (docs/gui.md) of three evenly spaced points.
std::vector<double> ema3(double w, double y1, double y2, double y3) {
    const double a1 = (1 - w) * y1;
    const double a2 = w * a1 + (1 - w) * y2;
    const double a3 = w * a2 + (1 - w) * y3;
    return {a1 / (1 - w), a2 / (1 - w * w), a3 / (1 - w * w * w)};
}

}  // namespace

TEST(CompareGridWorkspace, RestoredWorkspaceHasEachPanelsSmoothing) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    writeRuns(path);
    if (HasFatalFailure()) {
        return;
    }
    const QString ini = dir.filePath(QStringLiteral("workspace.ini"));
    const QStringList runs{QStringLiteral("run-a"), QStringLiteral("run-b")};
    {
        ComparePage page(path);
        page.showGrid(true);
        ASSERT_TRUE(test::openComparePage(page, runs, QSize(1500, 1000)));
        page.setAxis(CompareAxis::Step);
        page.setSmoothing(0.25);
        CompareGridView& grid = *page.grid();
        ASSERT_EQ(grid.panelCount(), 3);
        grid.setPanelSmoothing(panelOf(grid, "eval/score"), 0.5);
        grid.setPanelSmoothing(panelOf(grid, "eval/math"), 0.0);  // its own: raw
        // eval/code follows the page.
        QSettings settings(ini, QSettings::IniFormat);
        settings.beginGroup(QStringLiteral("workspace/Compare"));
        page.saveWorkspace(settings);
        settings.endGroup();
    }

    ComparePage page(path);
    {
        QSettings settings(ini, QSettings::IniFormat);
        settings.beginGroup(QStringLiteral("workspace/Compare"));
        page.restoreWorkspace(settings);
    }
    page.resize(1500, 1000);
    page.show();
    ASSERT_TRUE(test::waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000))
        << "the saved runs were not compared again";
    CompareGridView& grid = *page.grid();
    ASSERT_EQ(grid.panelCount(), 3);
    const int score = panelOf(grid, "eval/score");
    const int math = panelOf(grid, "eval/math");
    const int code = panelOf(grid, "eval/code");
    EXPECT_EQ(grid.panelSmoothing(score), std::optional<double>(0.5));
    EXPECT_EQ(grid.panelSmoothing(math), std::optional<double>(0.0));
    EXPECT_EQ(grid.panelSmoothing(code), std::nullopt);
    EXPECT_EQ(grid.smoothingBox(code)->text(), QStringLiteral("page"));
    EXPECT_DOUBLE_EQ(grid.effectiveSmoothing(code), 0.25);
    // And they draw with it.
    grid.panel(score)->flush();
    grid.panel(math)->flush();
    const PlotSeries* scoreA = test::seriesNamed(*grid.panel(score), QStringLiteral("a"));
    ASSERT_NE(scoreA, nullptr);
    const std::vector<double> want = ema3(0.5, 1.0, 0.5, 0.25);
    ASSERT_EQ(scoreA->value.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(scoreA->value[i], want[i], 1e-12);
    }
    const PlotSeries* mathA = test::seriesNamed(*grid.panel(math), QStringLiteral("a"));
    ASSERT_NE(mathA, nullptr);
    EXPECT_EQ(mathA->value, (std::vector<double>{0.125, 0.5, 0.75}));

    // A workspace edited by hand: a weight out of range, text, and a metric not shown are
    // handled (the first two ignored, the third kept for when it is shown).
    {
        QSettings settings(ini, QSettings::IniFormat);
        settings.beginGroup(QStringLiteral("workspace/Compare"));
        QVariantMap ema;
        ema.insert(QStringLiteral("eval/score"), 5.0);
        ema.insert(QStringLiteral("eval/math"), QStringLiteral("smooth"));
        ema.insert(QStringLiteral("eval/other"), 0.75);
        settings.setValue(QStringLiteral("gridPanelEma"), ema);
        page.restoreWorkspace(settings);
        settings.endGroup();
    }
    EXPECT_EQ(grid.panelSmoothing(score), std::nullopt);
    EXPECT_EQ(grid.panelSmoothing(math), std::nullopt);
    EXPECT_EQ(grid.panelWeights(),
              (std::map<QString, double>{{QStringLiteral("eval/other"), 0.75}}));
}
