// issue 49: grouping on the Compare page. Four runs written to a real SQLite history, two recipe
// learning rates and tags set through the history's API; grouped by the recipe field and by tags,
// the overlay draws one mean curve per group with its min–max band, checked exactly at every step
// (values chosen to be exact in binary; a run between its points is interpolated linearly, a run
// that ended earlier no longer counts).
#include <gtest/gtest.h>

#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_groups.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::seriesNamed;
using runplane::gui::test::waitUntil;

TEST(CompareGroups, MeanCurveWithMinMaxBandPerGroup) {
    test::TempHistory history;
    ASSERT_NO_FATAL_FAILURE(test::writeGroupRuns(history.path));
    ComparePage page(history.path);
    ASSERT_TRUE(test::openComparePage(page, {QStringLiteral("run-a"), QStringLiteral("run-b"),
                                             QStringLiteral("run-c"), QStringLiteral("run-d")}));
    page.setAxis(CompareAxis::Step);
    page.setMetric(QStringLiteral("eval/score"));
    page.setSmoothing(0);
    page.plot()->flush();
    EXPECT_EQ(page.plot()->seriesCount(), 4);  // ungrouped: a line per run

    // The box offers tags and the recipe field that differs (the learning rate), nothing else.
    const QStringList keys = page.groupByKeys();
    ASSERT_EQ(keys.size(), 2) << keys.join(QStringLiteral(" | ")).toStdString();
    EXPECT_EQ(keys[0], kGroupByTags);
    const QString lrKey = keys[1];
    EXPECT_TRUE(lrKey.endsWith(QStringLiteral("lr"))) << lrKey.toStdString();

    page.setGroupBy(lrKey);
    EXPECT_EQ(page.groupBy(), lrKey);
    page.plot()->flush();
    ASSERT_EQ(page.plot()->seriesCount(), 2);
    const PlotSeries* low = seriesNamed(*page.plot(), lrKey + QStringLiteral(" = 1e-05 (2 runs)"));
    const PlotSeries* high = seriesNamed(*page.plot(), lrKey + QStringLiteral(" = 2e-05 (2 runs)"));
    ASSERT_NE(low, nullptr);
    ASSERT_NE(high, nullptr);
    ASSERT_TRUE(low->hasBand());
    ASSERT_TRUE(high->hasBand());
    // lr 1e-5: a and b (b interpolated to 0.375 at step 10).
    EXPECT_EQ(low->t, (std::vector<double>{0, 10, 20}));
    EXPECT_EQ(low->value, (std::vector<double>{0.375, 0.5625, 0.75}));
    EXPECT_EQ(low->min, (std::vector<double>{0.25, 0.375, 0.5}));
    EXPECT_EQ(low->max, (std::vector<double>{0.5, 0.75, 1.0}));
    // lr 2e-5: c and d; d ended at step 10, so step 20 is c's alone.
    EXPECT_EQ(high->t, (std::vector<double>{0, 10, 20}));
    EXPECT_EQ(high->value, (std::vector<double>{0.3125, 0.4375, 0.375}));
    EXPECT_EQ(high->min, (std::vector<double>{0.125, 0.25, 0.375}));
    EXPECT_EQ(high->max, (std::vector<double>{0.5, 0.625, 0.375}));
    EXPECT_NE(low->color, high->color);
    EXPECT_TRUE(page.plot()->yRange().first <= 0.125 && page.plot()->yRange().second >= 1.0);

    // The All-metrics grid groups the same way: its eval/score panel draws the same groups.
    page.showGrid(true);
    ASSERT_EQ(page.grid()->panelCount(), 1);
    page.grid()->panel(0)->flush();
    const PlotSeries* gridLow =
        seriesNamed(*page.grid()->panel(0), lrKey + QStringLiteral(" = 1e-05 (2 runs)"));
    ASSERT_NE(gridLow, nullptr);
    EXPECT_EQ(gridLow->value, low->value);
    EXPECT_EQ(gridLow->min, low->min);
    EXPECT_EQ(gridLow->max, low->max);
    EXPECT_EQ(page.grid()->panel(0)->seriesCount(), 2);
    page.showGrid(false);

    // How many runs stand behind each point of the lr 2e-5 group.
    const std::vector<RunGroup> groups = groupRuns(page.data(), lrKey);
    ASSERT_EQ(groups.size(), 2u);
    const RunGroup& g = groups[0].label.endsWith(QStringLiteral("2e-05")) ? groups[0] : groups[1];
    ASSERT_EQ(g.label, lrKey + QStringLiteral(" = 2e-05"));
    const GroupCurve c =
        groupCurve(page.data(), g, QStringLiteral("eval/score"), CompareAxis::Step, 0);
    EXPECT_EQ(c.count, (std::vector<int>{2, 2, 1}));

    // By tags: sweep-a {a, b}, sweep-b {c}, untagged {d}.
    page.setGroupBy(kGroupByTags);
    page.plot()->flush();
    ASSERT_EQ(page.plot()->seriesCount(), 3);
    const PlotSeries* sweepA = seriesNamed(*page.plot(), QStringLiteral("tags: sweep-a (2 runs)"));
    const PlotSeries* sweepB = seriesNamed(*page.plot(), QStringLiteral("tags: sweep-b (1 run)"));
    const PlotSeries* untagged = seriesNamed(*page.plot(), QStringLiteral("(untagged) (1 run)"));
    ASSERT_NE(sweepA, nullptr);
    ASSERT_NE(sweepB, nullptr);
    ASSERT_NE(untagged, nullptr);
    EXPECT_EQ(sweepA->value, (std::vector<double>{0.375, 0.5625, 0.75}));
    EXPECT_EQ(sweepB->value, (std::vector<double>{0.125, 0.25, 0.375}));
    EXPECT_EQ(sweepB->min, sweepB->value);  // one run: the band is the line
    EXPECT_EQ(untagged->t, (std::vector<double>{0, 10}));
    EXPECT_EQ(untagged->value, (std::vector<double>{0.5, 0.625}));

    test::pump(200);
    page.setGroupBy(lrKey);
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare-groups.png"))));

    // Back to one line per run, in the grid too.
    page.setGroupBy(QString());
    page.plot()->flush();
    EXPECT_EQ(page.plot()->seriesCount(), 4);
    page.grid()->panel(0)->flush();
    EXPECT_EQ(page.grid()->panel(0)->seriesCount(), 4);
}
