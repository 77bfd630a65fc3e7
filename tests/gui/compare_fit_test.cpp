// issue 46: the Compare page's run list scrolled sideways at 1280×720. The real main window,
// offscreen, over a real history of 40 runs with long names and long failure causes: at
// 1280×720 the list has no horizontal scroll bar, the run name, status, start and peak columns
// are shown and readable (every column at least its header's width, the short cells whole, the
// name at least 110 px and elided, the model keeping it whole for the tooltip); fitted again at
// 1920×1080 and back; once the user drags a column's edge the widths are theirs, in the next
// window too (the saved workspace). Saves
// compare-list-1280x720.png.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/long_runs_fixture.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;

namespace {

QTableView* compareList(ComparePage& page) {
    return page.findChild<QTableView*>(QStringLiteral("compareRunsTable"));
}

}  // namespace

TEST(CompareFit, ManyLongRunsFit1280x720WithoutHorizontalScroll) {
    QTemporaryDir dir;
    ASSERT_NO_FATAL_FAILURE(
        test::writeLongRunsHistory(dir.filePath(QStringLiteral("history.sqlite"))));
    // The list arrives while another page is current: fitted once shown at its real width.
    std::unique_ptr<MainWindow> window = openWindow(dir, kScreens[1], QStringLiteral("Runs"));
    ComparePage* compare = page<ComparePage>(*window);
    ASSERT_NE(compare, nullptr);
    ASSERT_TRUE(test::waitUntil([&] { return compare->runsModel()->rowCount() == test::kLongRuns; },
                                20000));
    window->setCurrentPage(QStringLiteral("Compare"));
    test::pump(300);
    QTableView* table = compareList(*compare);
    ASSERT_NE(table, nullptr);
    ASSERT_TRUE(table->isVisible());
    EXPECT_LE(window->width(), 1280);
    for (int c : {RunListModel::NameColumn, RunListModel::StateColumn, RunListModel::StartColumn,
                  RunListModel::PeakColumn}) {
        EXPECT_FALSE(table->isColumnHidden(c)) << c;
    }
    EXPECT_EQ(test::runColumnProblems(table), "");
    test::expectWholeColumnsAndAnElidedName(
        table, {RunListModel::StateColumn, RunListModel::StartColumn, RunListModel::PeakColumn});
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("compare-list-1280x720.png"))));

    // Two runs compared (the selection label and the plot fill the page): still no scroll bar.
    ASSERT_TRUE(compare->selectRuns({QStringLiteral("run-0"), QStringLiteral("run-1")}));
    ASSERT_TRUE(test::waitUntil([&] { return compare->comparisonsApplied() > 0; }, 10000));
    test::pump(200);
    EXPECT_EQ(test::runColumnProblems(table), "") << "with two runs compared";

    // From 1920×1080 down to 1280×720: fitted again.
    window->resize(kScreens[0]);
    test::pump(200);
    EXPECT_EQ(test::runColumnProblems(table), "") << "at 1920x1080";
    window->resize(kScreens[1]);
    test::pump(300);
    EXPECT_EQ(test::runColumnProblems(table), "") << "back at 1280x720";

    // The user drags a column's edge: from then on the widths are theirs, not refitted, and
    // they stay theirs in the saved workspace.
    QHeaderView* header = table->horizontalHeader();
    const QPoint edge(header->sectionViewportPosition(RunListModel::NameColumn) +
                          header->sectionSize(RunListModel::NameColumn) - 1,
                      header->height() / 2);
    QTest::mousePress(header->viewport(), Qt::LeftButton, {}, edge);
    header->resizeSection(RunListModel::NameColumn, 420);  // as the drag does
    QTest::mouseRelease(header->viewport(), Qt::LeftButton, {}, edge);
    const int lists = compare->runListsApplied();
    compare->refreshRuns();
    ASSERT_TRUE(test::waitUntil([&] { return compare->runListsApplied() > lists; }, 10000));
    window->resize(1300, 740);
    test::pump(200);
    EXPECT_EQ(table->columnWidth(RunListModel::NameColumn), 420);

    // The workspace keeps them: the next window shows the user's widths, not fitted ones.
    window->saveWorkspace();
    window.reset();
    window = openWindow(dir, kScreens[1], QStringLiteral("Compare"));
    compare = page<ComparePage>(*window);
    ASSERT_NE(compare, nullptr);
    ASSERT_TRUE(test::waitUntil([&] { return compare->runsModel()->rowCount() == test::kLongRuns; },
                                20000));
    test::pump(300);
    EXPECT_EQ(compareList(*compare)->columnWidth(RunListModel::NameColumn), 420);
    AppSettings::setFileOverride(QString());
}
