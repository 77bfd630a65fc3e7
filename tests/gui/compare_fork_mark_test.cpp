// issue 49: the fork mark on the Compare plots. A run forked off another at step N is drawn as
// one line through its parent's points (compare_lineage.h); where it leaves the parent the
// Overlay and each grid panel carry a vertical marker at N labelled with the child run, read back
// here from the plot's own QCustomPlot items. A resume joins its parent without a mark. Real
// SQLite history, the real page, offscreen.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include "db/history/history.h"
#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

struct Mark {
    double x = 0;
    QString label;
    bool operator==(const Mark& o) const { return x == o.x && label == o.label; }
};

// The vertical lines of the plot (x where both ends are at the same x) and the text items.
std::vector<double> verticalLines(QCustomPlot& plot) {
    std::vector<double> out;
    for (int i = 0; i < plot.itemCount(); ++i) {
        auto* line = qobject_cast<QCPItemStraightLine*>(plot.item(i));
        if (line != nullptr && line->point1->coords().x() == line->point2->coords().x()) {
            out.push_back(line->point1->coords().x());
        }
    }
    return out;
}

std::vector<Mark> labels(QCustomPlot& plot) {
    std::vector<Mark> out;
    for (int i = 0; i < plot.itemCount(); ++i) {
        if (auto* text = qobject_cast<QCPItemText*>(plot.item(i)); text != nullptr) {
            out.push_back({text->position->coords().x(), text->text()});
        }
    }
    return out;
}

QCustomPlot* canvas(TimeSeriesPlot* plot) {
    plot->flush();
    return plot->findChild<QCustomPlot*>();
}

}  // namespace

TEST(CompareForkMark, ForkedRunShowsAMarkAtTheForkStepLabelledWithTheChild) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(test::writeLineageRuns(path, "run-"));
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        ASSERT_TRUE((*h)->setRunParent({"run-resumed", "run-base", "resume", 20, "user", 1}).ok());
        ASSERT_TRUE((*h)->setRunParent({"run-forked", "run-resumed", "fork", 30, "user", 2}).ok());
    }
    ComparePage page(path);
    ASSERT_TRUE(test::openComparePage(
        page,
        {QStringLiteral("run-base"), QStringLiteral("run-resumed"), QStringLiteral("run-forked")}));
    page.setAxis(CompareAxis::Step);
    page.setMetric(QStringLiteral("eval/score"));
    page.setSmoothing(0);

    // The Overlay: one marker, at the fork step 30, labelled with the child; none at the
    // resume's step 20 (a continuation joins without a mark).
    QCustomPlot* overlay = canvas(page.plot());
    ASSERT_NE(overlay, nullptr);
    EXPECT_EQ(verticalLines(*overlay), (std::vector<double>{30}));
    EXPECT_EQ(labels(*overlay), (std::vector<Mark>{{30, QStringLiteral("fork: forked")}}));
    // The forked run's line passes through the parent's points up to the fork.
    const PlotSeries* forkedLine = test::seriesNamed(*page.plot(), QStringLiteral("forked"));
    ASSERT_NE(forkedLine, nullptr);
    EXPECT_EQ(forkedLine->t, (std::vector<double>{0, 10, 20, 21, 30, 31, 40}));

    // Relative steps: the forked run's curve starts at its ancestors' step 0, so still 30.
    page.setAxis(CompareAxis::RelativeStep);
    EXPECT_EQ(verticalLines(*canvas(page.plot())), (std::vector<double>{30}));

    // The grid's panel of the same metric carries the same mark.
    page.setAxis(CompareAxis::Step);
    page.showGrid(true);
    ASSERT_GE(page.grid()->panelCount(), 1);
    QCustomPlot* panel = canvas(page.grid()->panel(0));
    ASSERT_NE(panel, nullptr);
    EXPECT_EQ(verticalLines(*panel), (std::vector<double>{30}));
    EXPECT_EQ(labels(*panel), (std::vector<Mark>{{30, QStringLiteral("fork: forked")}}));
    page.showGrid(false);
    EXPECT_EQ(verticalLines(*canvas(page.plot())), (std::vector<double>{30}));  // flushed: shown
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare-fork-mark.png"))));

    // Without the forked run among the compared runs, no mark.
    const int before = page.comparisonsApplied();
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-base"), QStringLiteral("run-resumed")}));
    ASSERT_TRUE(test::waitUntil([&] { return page.comparisonsApplied() > before; }, 10000));
    EXPECT_TRUE(verticalLines(*canvas(page.plot())).empty());
}
