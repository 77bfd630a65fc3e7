// issue 49: the per-panel smoothing of the Compare page's grid is kept in the workspace. One page
// sets its panels' own EMA weights and saves its workspace into a QSettings file; a fresh page
// restores it (before its run list arrives, as at a start) and, once the runs are compared, every
// panel has its own weight again and draws with it; values that are not weights are ignored.
#include <gtest/gtest.h>

#include <QDoubleSpinBox>
#include <QSettings>

#include <cmath>

#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

// a and b: eval/score, eval/math and eval/code at steps 0, 10, 20.
void writeRuns(const QString& path) {
    const std::vector<test::ExtraSeries> evals = {
        {"eval/score", "", {{0, 1.0}, {10, 0.5}, {20, 0.25}}},
        {"eval/math", "", {{0, 0.125}, {10, 0.5}, {20, 0.75}}},
        {"eval/code", "", {{0, 0.5}, {10, 0.25}, {20, 0.5}}}};
    test::writeRuns(path,
                    {test::evalRun("run-a", "a", 0, evals), test::evalRun("run-b", "b", 1, evals)});
}

int panelOf(const CompareGridView& grid, const char* metric) {
    return static_cast<int>(grid.metrics().indexOf(QString::fromLatin1(metric)));
}

}  // namespace

TEST(CompareGridWorkspace, RestoredWorkspaceHasEachPanelsSmoothing) {
    test::TempHistory history;
    const QString& path = history.path;
    ASSERT_NO_FATAL_FAILURE(writeRuns(path));
    const QString ini = history.dir.filePath(QStringLiteral("workspace.ini"));
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
    const std::vector<double> want = test::ema3(0.5, 1.0, 0.5, 0.25);
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
