// issue 19 "everyday polish": the workspace persists across restarts (QSettings in a temporary
// INI file: a window is built, changed, destroyed, and a new one built on the same file), and
// the menus carry the standard shortcuts and do what they say. Real MainWindow with its four
// pages (createMainWindow, as `runplane` builds it), offscreen.
#include <gtest/gtest.h>

#include <QAction>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "db/history/history.h"
#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using test::waitUntil;

namespace {

class Workspace : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(m_dir.isValid());
        m_history = m_dir.filePath(QStringLiteral("history.sqlite"));
        auto h = db::History::open(m_history.toStdString());
        ASSERT_TRUE(h) << h.error();
        for (int i = 0; i < 2; ++i) {
            test::SyntheticRunSpec spec;
            spec.runId = i == 0 ? "run-a" : "run-b";
            spec.name = spec.runId;
            spec.seconds = 400;
            spec.gpusPerNode = 1;
            spec.startNs += i * 3600LL * 1000000000LL;
            ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
        }
        AppSettings::setFileOverride(m_dir.filePath(QStringLiteral("settings.ini")));
    }
    void TearDown() override { AppSettings::setFileOverride(QString()); }

    template <typename T>
    static T* page(MainWindow& w) {
        for (int i = 0; i < w.tabs()->count(); ++i) {
            if (auto* p = qobject_cast<T*>(w.tabs()->widget(i))) {
                return p;
            }
        }
        return nullptr;
    }
    std::unique_ptr<MainWindow> open() {
        auto w = createMainWindow(m_history, {});
        w->resize(1500, 950);
        w->show();
        return w;
    }

    QTemporaryDir m_dir;
    QString m_history;
};

QSplitter* firstSplitter(QWidget* w) {
    return w->findChildren<QSplitter*>().value(0);
}

}  // namespace

TEST_F(Workspace, StateSurvivesARestart) {
    QByteArray runsSplitter;
    {
        auto w = open();
        RunsPage* runs = page<RunsPage>(*w);
        ComparePage* compare = page<ComparePage>(*w);
        ASSERT_TRUE(runs && compare);
        ASSERT_TRUE(waitUntil(
            [&] { return runs->runListsApplied() > 0 && compare->runListsApplied() > 0; }, 15000));
        ASSERT_TRUE(runs->selectRun(QStringLiteral("run-b")));
        ASSERT_TRUE(waitUntil([&] { return runs->snapshotsApplied() > 0; }, 15000));
        runs->runView()->setMetricAxisIndex(1);
        runs->runView()->showMetric(QStringLiteral("train/loss"));
        runs->runView()->tabs()->setCurrentIndex(2);
        firstSplitter(runs)->setSizes({333, 1100});
        runsSplitter = firstSplitter(runs)->saveState();
        runs->table()->setColumnWidth(0, 222);
        ASSERT_TRUE(compare->selectRuns({QStringLiteral("run-a"), QStringLiteral("run-b")}));
        ASSERT_TRUE(waitUntil([&] { return compare->comparisonsApplied() > 0; }, 15000));
        compare->setMetric(QStringLiteral("eval/aime"));
        compare->setAxis(CompareAxis::WallTime);
        compare->setSmoothing(0.3);
        w->setCurrentPage(QStringLiteral("Compare"));
        ASSERT_EQ(compare->metric(), QStringLiteral("eval/aime"));
        w->saveWorkspace();
    }  // the window and its pages are gone

    auto w = open();
    RunsPage* runs = page<RunsPage>(*w);
    ComparePage* compare = page<ComparePage>(*w);
    ASSERT_TRUE(runs && compare);
    EXPECT_EQ(w->tabs()->tabText(w->tabs()->currentIndex()), QStringLiteral("Compare"));
    ASSERT_TRUE(waitUntil([&] { return runs->snapshotsApplied() > 0; }, 15000))
        << "the saved run was not selected again";
    EXPECT_EQ(runs->selectedRunId(), QStringLiteral("run-b"));
    EXPECT_EQ(runs->runView()->snapshot()->run.id, QStringLiteral("run-b"));
    EXPECT_EQ(runs->runView()->metricKey(), QStringLiteral("train/loss"));
    EXPECT_EQ(runs->runView()->metricAxisIndex(), 1);
    EXPECT_EQ(runs->runView()->tabs()->currentIndex(), 2);
    EXPECT_EQ(firstSplitter(runs)->saveState(), runsSplitter);
    EXPECT_EQ(runs->table()->columnWidth(0), 222);
    // A list refresh keeps the user's column widths (no resize to contents any more).
    runs->refreshRuns();
    const int lists = runs->runListsApplied();
    ASSERT_TRUE(waitUntil([&] { return runs->runListsApplied() > lists; }, 15000));
    EXPECT_EQ(runs->table()->columnWidth(0), 222);

    ASSERT_TRUE(waitUntil([&] { return compare->comparisonsApplied() > 0; }, 15000));
    EXPECT_EQ(compare->selectedRunIds().size(), 2);
    EXPECT_TRUE(compare->selectedRunIds().contains(QStringLiteral("run-a")));
    EXPECT_EQ(compare->metric(), QStringLiteral("eval/aime"));
    EXPECT_EQ(compare->axis(), CompareAxis::WallTime);
    EXPECT_DOUBLE_EQ(compare->smoothing(), 0.3);
}

TEST_F(Workspace, MenusCarryStandardShortcutsAndDoTheThing) {
    auto w = open();
    w->activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(w.get()));
    DesignPage* design = page<DesignPage>(*w);
    RunsPage* runs = page<RunsPage>(*w);
    ASSERT_TRUE(design && runs);
    ASSERT_TRUE(waitUntil([&] { return design->catalogReady(); }, 15000));

    auto keysOf = [](QAction* a) { return a->shortcuts(); };
    EXPECT_TRUE(keysOf(w->menuAction(Page::Action::Open)).contains(QKeySequence("Ctrl+O")));
    EXPECT_TRUE(keysOf(w->menuAction(Page::Action::Save)).contains(QKeySequence("Ctrl+S")));
    EXPECT_TRUE(keysOf(w->menuAction(Page::Action::SaveAs)).contains(QKeySequence("Ctrl+Shift+S")));
    EXPECT_TRUE(keysOf(w->menuAction(Page::Action::Undo)).contains(QKeySequence("Ctrl+Z")));
    EXPECT_FALSE(keysOf(w->menuAction(Page::Action::Redo)).isEmpty());
    EXPECT_TRUE(keysOf(w->menuAction(Page::Action::Find)).contains(QKeySequence("Ctrl+F")));
    // The page's own actions gave their keys to the menu: one owner per key.
    EXPECT_TRUE(design->standardAction(Page::Action::Open)->shortcut().isEmpty());
    ASSERT_EQ(w->pageActions().size(), 5u);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(w->pageActions()[static_cast<size_t>(i)]->shortcut(),
                  QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)));
    }

    // View: Ctrl+3 typed into the window shows the Runs page, Ctrl+1 the Design page.
    QTest::keyClick(w.get(), Qt::Key_3, Qt::ControlModifier);
    EXPECT_EQ(w->currentPage(), runs);
    QTest::keyClick(w.get(), Qt::Key_1, Qt::ControlModifier);
    EXPECT_EQ(w->currentPage(), design);

    // Find runs (Ctrl+F) from the Design page: the Runs page with its filter focused.
    QTest::keyClick(w.get(), Qt::Key_F, Qt::ControlModifier);
    EXPECT_EQ(w->currentPage(), runs);
    EXPECT_TRUE(waitUntil([&] { return runs->filterEdit()->hasFocus(); }, 2000));

    // File → Open recipe from the Runs page: the Design page opens the file.
    const QString copy = m_dir.filePath(QStringLiteral("smoke.yaml"));
    ASSERT_TRUE(QFile::copy(
        test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/recipes/smoke-local.yaml"), copy));
    design->setPathPrompt([copy](bool) { return copy; });
    design->setUnsavedPrompt([] { return QMessageBox::Discard; });
    w->menuAction(Page::Action::Open)->trigger();
    EXPECT_EQ(w->currentPage(), design);
    ASSERT_TRUE(waitUntil([&] { return design->path() == copy; }, 10000));

    // Edit → Undo / Redo act on the Design page's undo stack.
    plan::Recipe changed = design->recipe();
    changed.batch.rolloutBatchSize = 32;
    design->setRecipe(changed, QStringLiteral("rollout_batch_size 32"));
    ASSERT_TRUE(design->isModified());
    EXPECT_TRUE(w->menuAction(Page::Action::Undo)->isEnabled());
    const int index = design->undoStack()->index();
    w->menuAction(Page::Action::Undo)->trigger();
    EXPECT_EQ(design->undoStack()->index(), index - 1);
    EXPECT_EQ(design->recipe().batch.rolloutBatchSize, 64);
    EXPECT_TRUE(w->menuAction(Page::Action::Redo)->isEnabled());
    w->menuAction(Page::Action::Redo)->trigger();
    EXPECT_EQ(design->recipe().batch.rolloutBatchSize, 32);

    // File → Save writes the opened file.
    w->menuAction(Page::Action::Save)->trigger();
    ASSERT_TRUE(waitUntil([&] { return !design->isModified(); }, 10000));
    QFile f(copy);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_TRUE(f.readAll().contains("rollout_batch_size: 32"));
}
