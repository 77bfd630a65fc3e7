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
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

constexpr int kRuns = 40;

QString longName(int i) {
    return QStringLiteral(
               "qwen3-30b-a3b grpo lora r%1 on gsm8k+math, rollout 64x8, kl 0.001, "
               "colocated, second attempt after the weight-sync fix")
        .arg(i);
}

/// Runs with long names, every third failed with a long CUDA OOM cause.
void writeHistory(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    for (int i = 0; i < kRuns; ++i) {
        test::SyntheticRunSpec spec;
        spec.runId = "run-" + std::to_string(i);
        spec.name = longName(i).toStdString();
        spec.seconds = 90;
        spec.nodes = {"node-" + std::to_string(i)};
        spec.gpusPerNode = 1;
        spec.evalSteps = 3;
        spec.plantSpike = false;
        spec.startNs += static_cast<std::int64_t>(i) * 3600 * 1'000'000'000LL;
        auto written = test::writeSyntheticRun(**h, spec);
        ASSERT_TRUE(written) << written.error();
        if (i % 3 == 0) {
            db::IngestBatch batch;
            batch.nodeId = db::NodeId{spec.nodes.front()};
            db::IngestEvent oom;
            oom.tNs = spec.startNs + 80 * 1'000'000'000LL;
            oom.runId = db::RunId{spec.runId};
            oom.kind = "cuda_oom";
            oom.message =
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 "
                "has a total capacity of 79.10 GiB of which 1.20 GiB is free. Of the allocated "
                "memory 74.31 GiB is allocated by PyTorch";
            batch.events.push_back(oom);
            ASSERT_TRUE((*h)->ingest(batch));
            db::RunRecord run;
            run.id = db::RunId{spec.runId};
            run.name = spec.name;
            run.state = db::RunState::Failed;
            run.startedNs = spec.startNs;
            run.endedNs = spec.startNs + spec.seconds * 1'000'000'000LL;
            run.nodes = spec.nodes;
            run.message = "exit 1";
            ASSERT_TRUE((*h)->upsertRun(run));
        }
    }
}

/// The width a cell needs to show `text` whole (the delegate's margins).
int neededWidth(const QTableView& view, const QString& text) {
    const int margin = view.style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, &view) + 1;
    return QFontMetrics(view.font()).horizontalAdvance(text) + 2 * margin;
}

/// What is wrong with the list's columns now ("" when none).
std::string columnProblems(QTableView* table) {
    std::string problems;
    if (table->horizontalScrollBar()->isVisible() || table->horizontalScrollBar()->maximum() > 0) {
        problems += "horizontal scroll bar (maximum " +
                    std::to_string(table->horizontalScrollBar()->maximum()) + "); ";
    }
    const QFontMetrics metrics(table->horizontalHeader()->font());
    int total = 0;
    for (int c = 0; c < RunListModel::ColumnCount; ++c) {
        if (table->isColumnHidden(c)) {
            continue;
        }
        total += table->columnWidth(c);
        const QString title = table->model()->headerData(c, Qt::Horizontal).toString();
        if (table->columnWidth(c) < metrics.horizontalAdvance(title)) {
            problems += "'" + title.toStdString() + "' " + std::to_string(table->columnWidth(c)) +
                        " px < its header's " + std::to_string(metrics.horizontalAdvance(title)) +
                        " px; ";
        }
    }
    if (total > table->viewport()->width()) {
        problems += "columns " + std::to_string(total) + " px in a " +
                    std::to_string(table->viewport()->width()) + " px list; ";
    }
    return problems;
}

}  // namespace

TEST(RunsPageColumns, ManyLongRunsFit1280x720WithoutHorizontalScroll) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    ASSERT_NO_FATAL_FAILURE(writeHistory(history));
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
    // At the default columns the short ones are whole (a date cut to "2026-0…" is not
    // readable) and the run name keeps at least 110 px.
    for (int c : {RunListModel::StateColumn, RunListModel::StartColumn, RunListModel::PeakColumn,
                  RunListModel::EvalColumn}) {
        for (int r = 0; r < table->model()->rowCount(); ++r) {
            const QString text = table->model()->index(r, c).data().toString();
            EXPECT_GE(table->columnWidth(c), neededWidth(*table, text))
                << "'" << text.toStdString() << "' is cut";
        }
    }
    EXPECT_GE(table->columnWidth(RunListModel::NameColumn), 110);
    // Long texts elide: narrower than the text, which the model (and the tooltip) keeps whole.
    const QModelIndex first = table->model()->index(0, RunListModel::NameColumn);
    EXPECT_LT(table->columnWidth(RunListModel::NameColumn),
              table->fontMetrics().horizontalAdvance(first.data().toString()));
    EXPECT_TRUE(first.data().toString().startsWith(QStringLiteral("qwen3-30b-a3b grpo lora")));
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
