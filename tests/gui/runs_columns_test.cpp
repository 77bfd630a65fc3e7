// issue 46: the run list fits the Runs page at 1280×720 with no horizontal scroll bar, with many
// runs whose names and failure causes are long: every default column is at least as wide as its
// header (readable), long texts elide (the whole text in the model, hence the tooltip), and a
// column shown from the header's menu, or a narrower window, is fitted again. The real main
// window, offscreen, over a real history file. Once the user drags a column's edge, the widths
// are theirs.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "db/history/history.h"
#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"
#include "gui/models/run_models.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/long_runs_fixture.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

constexpr int kRuns = test::kLongRuns;
using test::neededWidth;

std::string columnProblems(QTableView* table) {
    return test::runColumnProblems(table);
}

}  // namespace

TEST(RunsPageColumns, ManyLongRunsFit1280x720WithoutHorizontalScroll) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    ASSERT_NO_FATAL_FAILURE(test::writeLongRunsHistory(history));
    std::unique_ptr<MainWindow> window = createMainWindow(history, {});
    window->resize(1280, 720);
    window->show();
    auto* runs = window->findChild<RunsPage*>();
    ASSERT_NE(runs, nullptr);
    // The list arrives while another page may be current: the columns are fitted when the
    // list is shown at its real width.
    ASSERT_TRUE(test::waitUntil([&] { return runs->runsModel()->rowCount() == kRuns; }, 20000));
    window->setCurrentPage(QStringLiteral("Runs"));
    test::pump(300);
    QTableView* table = runs->table();
    ASSERT_TRUE(table->isVisible());
    EXPECT_LE(window->width(), 1280);
    EXPECT_TRUE(table->verticalScrollBar()->isVisible()) << "expected more runs than rows shown";
    for (int c : {RunListModel::NameColumn, RunListModel::StateColumn, RunListModel::StartColumn,
                  RunListModel::PeakColumn, RunListModel::EvalColumn, RunListModel::CauseColumn}) {
        EXPECT_FALSE(table->isColumnHidden(c)) << c;
    }
    EXPECT_EQ(columnProblems(table), "");
    test::expectWholeColumnsAndAnElidedName(
        table, {RunListModel::StateColumn, RunListModel::StartColumn, RunListModel::PeakColumn,
                RunListModel::EvalColumn});
    EXPECT_TRUE(window->grab().save(test::screenshotPath(QStringLiteral("runs-list-1280.png"))));

    // A hidden column shown (as the header's context menu does): still no scroll bar.
    table->setColumnHidden(RunListModel::DurationColumn, false);
    runs->refreshRuns();
    ASSERT_TRUE(test::waitUntil([&] { return runs->runListsApplied() >= 2; }, 10000));
    test::pump(200);
    EXPECT_EQ(columnProblems(table), "") << "with Duration shown";

    // From 1920×1080 down to 1280×720: fitted again.
    window->resize(1920, 1080);
    test::pump(200);
    EXPECT_EQ(columnProblems(table), "") << "at 1920x1080";
    window->resize(1280, 720);
    test::pump(300);
    EXPECT_EQ(columnProblems(table), "") << "back at 1280x720";

    // The user drags a column's edge: from then on the widths are theirs, not refitted.
    QHeaderView* header = table->horizontalHeader();
    const QPoint edge(header->sectionViewportPosition(RunListModel::NameColumn) +
                          header->sectionSize(RunListModel::NameColumn) - 1,
                      header->height() / 2);
    QTest::mousePress(header->viewport(), Qt::LeftButton, {}, edge);
    header->resizeSection(RunListModel::NameColumn, 420);  // as the drag does
    QTest::mouseRelease(header->viewport(), Qt::LeftButton, {}, edge);
    runs->refreshRuns();
    const int lists = runs->runListsApplied();
    ASSERT_TRUE(test::waitUntil([&] { return runs->runListsApplied() > lists; }, 10000));
    window->resize(1300, 740);
    test::pump(200);
    EXPECT_EQ(table->columnWidth(RunListModel::NameColumn), 420);
    AppSettings::setFileOverride(QString());
}
