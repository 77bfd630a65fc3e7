// issue 49: each panel of the Compare page's All-metrics grid has its own smoothing. Two runs
// with known values in a real SQLite history; one panel set to its own EMA weight through its
// box draws the documented debiased EMA (docs/gui.md) of its points while the other panels keep
// following the page's weight, also after the page's weight changes and across a redraw.
#include <gtest/gtest.h>

#include <QDoubleSpinBox>
#include <QTest>

#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::ema3;
using runplane::gui::test::seriesNamed;

namespace {

// a and b: eval/score 1.0, 0.5, 0.25 and eval/math 0.125, 0.5, 0.75 at steps 0, 10, 20.
void writeRuns(const QString& path) {
    const std::vector<test::ExtraSeries> evals = {
        {"eval/score", "", {{0, 1.0}, {10, 0.5}, {20, 0.25}}},
        {"eval/math", "", {{0, 0.125}, {10, 0.5}, {20, 0.75}}}};
    test::writeRuns(path,
                    {test::evalRun("run-a", "a", 0, evals), test::evalRun("run-b", "b", 1, evals)});
}

void expectNear(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-12) << "point " << i;
    }
}

}  // namespace

TEST(CompareGridSmoothing, EachPanelHasItsOwnEma) {
    test::TempHistory history;
    ASSERT_NO_FATAL_FAILURE(writeRuns(history.path));
    ComparePage page(history.path);
    page.showGrid(true);
    ASSERT_TRUE(test::openComparePage(page, {QStringLiteral("run-a"), QStringLiteral("run-b")},
                                      QSize(1500, 1000)));
    page.setAxis(CompareAxis::Step);
    page.setSmoothing(0);
    CompareGridView& grid = *page.grid();
    ASSERT_EQ(grid.panelCount(), 2);
    const int score = static_cast<int>(grid.metrics().indexOf(QStringLiteral("eval/score")));
    const int math = static_cast<int>(grid.metrics().indexOf(QStringLiteral("eval/math")));
    ASSERT_GE(score, 0);
    ASSERT_GE(math, 0);
    EXPECT_EQ(grid.panelSmoothing(score), std::nullopt);
    EXPECT_EQ(grid.smoothingBox(score)->text(), QStringLiteral("page"));

    // The score panel's own weight, typed into its box.
    QDoubleSpinBox* box = grid.smoothingBox(score);
    box->selectAll();
    QTest::keyClicks(box, QStringLiteral("0.5"));
    QTest::keyClick(box, Qt::Key_Enter);
    ASSERT_EQ(grid.panelSmoothing(score), std::optional<double>(0.5));
    grid.panel(score)->flush();
    grid.panel(math)->flush();
    const PlotSeries* scoreA = seriesNamed(*grid.panel(score), QStringLiteral("a"));
    ASSERT_NE(scoreA, nullptr);
    expectNear(scoreA->value, ema3(0.5, 1.0, 0.5, 0.25));
    EXPECT_EQ(scoreA->raw, (std::vector<double>{1.0, 0.5, 0.25}));
    EXPECT_NE(seriesNamed(*grid.panel(score), QStringLiteral("a (raw)")), nullptr);
    // The other panel still follows the page: raw.
    const PlotSeries* mathA = seriesNamed(*grid.panel(math), QStringLiteral("a"));
    ASSERT_NE(mathA, nullptr);
    EXPECT_EQ(mathA->value, (std::vector<double>{0.125, 0.5, 0.75}));
    EXPECT_EQ(grid.panel(math)->seriesCount(), 2);

    // The page's weight changes: the math panel follows it, the score panel keeps its own.
    page.setSmoothing(0.25);
    grid.panel(score)->flush();
    grid.panel(math)->flush();
    expectNear(seriesNamed(*grid.panel(math), QStringLiteral("a"))->value,
               ema3(0.25, 0.125, 0.5, 0.75));
    expectNear(seriesNamed(*grid.panel(score), QStringLiteral("a"))->value,
               ema3(0.5, 1.0, 0.5, 0.25));
    EXPECT_EQ(grid.effectiveSmoothing(math), 0.25);
    EXPECT_EQ(grid.effectiveSmoothing(score), 0.5);
    // The overlay uses the page's weight.
    page.setMetric(QStringLiteral("eval/score"));
    page.plot()->flush();
    expectNear(seriesNamed(*page.plot(), QStringLiteral("a"))->value, ema3(0.25, 1.0, 0.5, 0.25));

    test::pump(200);
    EXPECT_TRUE(
        page.grab().save(test::screenshotPath(QStringLiteral("compare-grid-smoothing.png"))));

    // Back to "page": the score panel follows the page again.
    grid.setPanelSmoothing(score, std::nullopt);
    EXPECT_EQ(grid.smoothingBox(score)->text(), QStringLiteral("page"));
    grid.panel(score)->flush();
    expectNear(seriesNamed(*grid.panel(score), QStringLiteral("a"))->value,
               ema3(0.25, 1.0, 0.5, 0.25));
}
