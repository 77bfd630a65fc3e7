// issue 46: the rest of the afternoon, end to end through the real main window (offscreen) at
// 1920×1080 and 1280×720: import a launch script through the Design page's Import action (our
// own slime-style fixture tests/gui/data/run-qwen3-4B-defaults.sh) and edit three fields (the
// preview follows each); break a layout (EP 32 on 16 GPUs: live validation flags it in the
// findings, the launch banner, the memory charts and the topology tab) and fix it (every flag
// gone); watch a live run through a daemon restart: a REAL runplaned (tests/support Daemon,
// restartable on its port) is stopped while the run goes on, the run's view says the daemon is
// unreachable, keeps what it had and shows the silence as a gap, and once the daemon is back
// the same view goes on with new samples and no stale "unreachable". Needs no LibTorch.
#include <gtest/gtest.h>

#include <QAction>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFile>
#include <QHeaderView>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <algorithm>

#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"
#include "gui/models/findings_model.h"
#include "gui/models/node_table_model.h"
#include "gui/models/run_models.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/recipe_form.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/memory_budget_chart.h"
#include "gui/widgets/series_gaps.h"
#include "gui/widgets/topology_view.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"
#include "tests/support/process.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::linesWithFlag;
using runplane::gui::test::waitUntil;

namespace {

QString src() {
    return test::envPath("RUNPLANE_SOURCE_DIR");
}
QString bin() {
    return test::envPath("RUNPLANE_BINARY_DIR");
}

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

/// One edit through the form, and the planning pass it starts.
void edit(DesignPage& d, const std::function<void()>& change) {
    const int before = d.planPasses();
    change();
    ASSERT_TRUE(waitUntil([&] { return d.planPasses() > before; }, 15000)) << "no new plan";
}

QAction* actionNamed(QWidget& w, const QString& text) {
    for (QAction* a : w.findChildren<QAction*>()) {
        if (a->text() == text) {
            return a;
        }
    }
    return nullptr;
}

const PointSeries* hostSeries(const RunSnapshot& s) {
    return s.hostMemory.empty() ? nullptr : &s.hostMemory.front();
}

QString clusterState(ClusterPage& cluster) {
    return cluster.model()->rowCount() > 0 ? cluster.model()->row(0).state : QString();
}

}  // namespace

TEST(Afternoon, ImportAScriptBreakAndFixALayout) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    std::unique_ptr<MainWindow> window =
        createMainWindow(dir.filePath(QStringLiteral("history.sqlite")), {});
    window->show();
    DesignPage* d = page<DesignPage>(*window);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(waitUntil([&] { return d->catalogReady(); }, 20000));
    window->setCurrentPage(QStringLiteral("Design"));
    d->setUnsavedPrompt([] { return QMessageBox::Discard; });

    // 1. Import a launch script as the user does: the toolbar's Import action, its file chosen.
    const QString script = src() + QStringLiteral("/tests/gui/data/run-qwen3-4B-defaults.sh");
    d->setPathPrompt([&](bool save) { return save ? QString() : script; });
    QAction* import = actionNamed(*d, QStringLiteral("Import launch script…"));
    ASSERT_NE(import, nullptr);
    QString importError = QStringLiteral("(pending)");
    QObject::connect(d, &DesignPage::scriptImported, d,
                     [&](const QString&, const QString& e) { importError = e; });
    import->trigger();
    ASSERT_TRUE(waitUntil([&] { return importError != QStringLiteral("(pending)"); }, 20000));
    ASSERT_TRUE(importError.isEmpty()) << importError.toStdString();
    EXPECT_EQ(d->recipe().name, "run-qwen3-4B-defaults");
    EXPECT_DOUBLE_EQ(d->recipe().algorithm.lr, 1e-6);
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Design: imported script"));
    }

    // 2. Three edits: each reaches the launch, once, with the field's value.
    auto* lr = qobject_cast<QDoubleSpinBox*>(d->form()->editor(QStringLiteral("algorithm.lr")));
    auto* eps =
        qobject_cast<QDoubleSpinBox*>(d->form()->editor(QStringLiteral("algorithm.eps_clip")));
    auto* rollout =
        qobject_cast<QSpinBox*>(d->form()->editor(QStringLiteral("batch.rollout_batch_size")));
    ASSERT_TRUE(lr && eps && rollout);
    edit(*d, [&] { lr->setValue(2e-6); });
    edit(*d, [&] { eps->setValue(0.25); });
    edit(*d, [&] { rollout->setValue(64); });
    const QString preview = d->launchPreviewText();
    EXPECT_EQ(linesWithFlag(preview, QStringLiteral("--lr")),
              QStringList{QStringLiteral("--lr 2e-06")})
        << preview.toStdString();
    EXPECT_EQ(linesWithFlag(preview, QStringLiteral("--eps-clip")),
              QStringList{QStringLiteral("--eps-clip 0.25")});
    EXPECT_EQ(linesWithFlag(preview, QStringLiteral("--rollout-batch-size")),
              QStringList{QStringLiteral("--rollout-batch-size 64")});

    // 3. Break a layout: EP 32 on the 16 GPUs of a MoE recipe. Live validation flags it
    // everywhere its results appear; the window still fits.
    ASSERT_TRUE(openRecipe(*d, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml")));
    ASSERT_EQ(d->findingsModel()->errorCount(), 0);
    ASSERT_TRUE(d->topologyView()->data().invalidReason.isEmpty());
    const auto cellsBefore = d->topologyView()->data().cells.size();
    ASSERT_GT(cellsBefore, 0U);
    auto* ep = qobject_cast<QSpinBox*>(d->form()->editor(QStringLiteral("trainer.ep")));
    ASSERT_NE(ep, nullptr);
    const int epBefore = ep->value();
    edit(*d, [&] { ep->setValue(32); });
    EXPECT_GE(d->findingsModel()->errorCount(), 1);
    EXPECT_TRUE(d->launchInvalidReason().contains(QStringLiteral("trainer.ep")))
        << d->launchInvalidReason().toStdString();
    EXPECT_TRUE(d->hostChart()->invalidReason().startsWith(QStringLiteral("Invalid design: ")));
    EXPECT_FALSE(d->topologyView()->data().invalidReason.isEmpty());
    // The memory chart's banner is on screen and no taller than its text: the bars keep the room.
    d->viewTabs()->setCurrentWidget(d->hostChart());
    test::pump(100);
    auto* banner = d->hostChart()->findChild<QLabel*>(QStringLiteral("invalidBanner"));
    ASSERT_NE(banner, nullptr);
    EXPECT_TRUE(banner->isVisible());
    EXPECT_LE(banner->height(), banner->heightForWidth(banner->width()) + 2)
        << "banner " << banner->height() << " px of " << d->hostChart()->height();
    EXPECT_TRUE(d->topologyView()->data().cells.empty()) << "a grid of ranks that cannot exist";
    // The topology tab (the grid sits in a scroll area) says why it draws no grid.
    QTabWidget* tabs = d->viewTabs();
    for (int i = 0; i < tabs->count(); ++i) {
        if (tabs->widget(i)->isAncestorOf(d->topologyView())) {
            tabs->setCurrentIndex(i);
        }
    }
    test::pump(100);
    EXPECT_TRUE(d->topologyView()->isVisible());
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Design: EP 32 (invalid)"));
    }
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("afternoon-invalid-layout.png"))));

    // 4. Fixed by hand (the field set back): every flag gone, the grid back.
    edit(*d, [&] { ep->setValue(epBefore); });
    EXPECT_EQ(d->findingsModel()->errorCount(), 0);
    EXPECT_TRUE(d->launchInvalidReason().isEmpty()) << d->launchInvalidReason().toStdString();
    EXPECT_TRUE(d->hostChart()->invalidReason().isEmpty());
    EXPECT_TRUE(d->gpuChart()->invalidReason().isEmpty());
    EXPECT_TRUE(d->topologyView()->data().invalidReason.isEmpty());
    EXPECT_EQ(d->topologyView()->data().cells.size(), cellsBefore);
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Design: EP fixed"));
    }
    AppSettings::setFileOverride(QString());
}

TEST(Afternoon, WatchARunThroughADaemonRestart) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    const QString end = dir.filePath(QStringLiteral("end"));
    runplane::testing::Daemon daemon(dir.filePath(QStringLiteral("state")).toStdString(),
                                     "afternoon-restart", 5);
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    const QString address = QString::fromStdString(daemon.address());
    std::unique_ptr<MainWindow> window = createMainWindow(history, {address});
    window->resize(kScreens[1]);
    window->show();
    RunsPage* runs = page<RunsPage>(*window);
    ClusterPage* cluster = page<ClusterPage>(*window);
    ASSERT_TRUE(runs && cluster);

    // A run that lives until the test ends it, submitted as a user does.
    QProcess submit;
    submit.start(bin() + QStringLiteral("/backend/cli/runplanectl"),
                 {QStringLiteral("submit"), address, QStringLiteral("--history"), history,
                  QStringLiteral("--run-id"), QStringLiteral("afternoon-restart"),
                  QStringLiteral("--name"), QStringLiteral("through a daemon restart"),
                  QStringLiteral("--"), QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                  QStringLiteral("echo '[runplane-phase] rollout'\n"
                                 "while [ ! -e '%1' ]; do sleep 0.1; done\n")
                      .arg(end)});
    ASSERT_TRUE(submit.waitForFinished(60000));
    ASSERT_EQ(submit.exitCode(), 0) << submit.readAllStandardError().toStdString();

    window->setCurrentPage(QStringLiteral("Runs"));
    ASSERT_TRUE(waitUntil(
        [&] {
            runs->refreshRuns();
            test::pump(200);
            return runs->runsModel()->rowCount() == 1;
        },
        30000));
    ASSERT_TRUE(runs->selectRun(QStringLiteral("afternoon-restart")));
    RunView* view = runs->runView();
    ASSERT_TRUE(waitUntil(
        [&] {
            auto s = view->snapshot();
            return s && hostSeries(*s) != nullptr && hostSeries(*s)->t.size() >= 10;
        },
        60000))
        << "no host memory for the run";
    EXPECT_FALSE(view->headerText().contains(QStringLiteral("unreachable")))
        << view->headerText().toStdString();
    const double firstT = hostSeries(*view->snapshot())->t.front();

    // The daemon stops; the run goes on. After the silence threshold the view says so.
    daemon.stop();
    const double stoppedAt = nowSeconds();
    ASSERT_TRUE(waitUntil(
        [&] { return view->headerText().contains(QStringLiteral("daemon unreachable since")); },
        40000))
        << view->headerText().toStdString();
    EXPECT_NE(clusterState(*cluster), QStringLiteral("streaming"));
    EXPECT_EQ(stateName(runs->runsModel()->run(QStringLiteral("afternoon-restart"))->state),
              QStringLiteral("running"));
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Runs: daemon unreachable"));
    }
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("afternoon-unreachable.png"))));

    // Back on its port: the same view goes on with new samples; what it had is kept, the
    // silence is a gap, and nothing says "unreachable" any more.
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    const double restartedAt = nowSeconds();
    ASSERT_TRUE(waitUntil(
        [&] {
            auto s = view->snapshot();
            const PointSeries* host = s ? hostSeries(*s) : nullptr;
            return host != nullptr && !host->t.empty() && host->t.back() > restartedAt + 2 &&
                   !view->headerText().contains(QStringLiteral("unreachable"));
        },
        60000))
        << view->headerText().toStdString();
    auto s = view->snapshot();
    const PointSeries& host = *hostSeries(*s);
    EXPECT_LE(host.t.front(), firstT + 1) << "the samples from before the stop were dropped";
    EXPECT_TRUE(std::any_of(host.t.begin(), host.t.end(),
                            [&](double t) { return t < stoppedAt && t > firstT; }));
    bool gapCovers = false;
    for (const auto& [a, b] : findGaps(host.t)) {
        gapCovers = gapCovers || (a <= stoppedAt + 1 && b >= restartedAt - 1);
    }
    EXPECT_TRUE(gapCovers) << "the silence is not a gap";
    EXPECT_TRUE(view->headerText().contains(QStringLiteral("running")))
        << view->headerText().toStdString();
    EXPECT_TRUE(
        waitUntil([&] { return clusterState(*cluster) == QStringLiteral("streaming"); }, 20000))
        << clusterState(*cluster).toStdString();
    for (QSize s2 : kScreens) {
        expectFits(window.get(), s2, QStringLiteral("Runs: daemon back"));
        // The run list fits too: no horizontal scroll, every column at least its header.
        test::pump(100);
        QTableView* table = runs->table();
        EXPECT_FALSE(table->horizontalScrollBar()->isVisible()) << s2.width();
        const QFontMetrics metrics(table->horizontalHeader()->font());
        for (int c = 0; c < RunListModel::ColumnCount; ++c) {
            const QString title = table->model()->headerData(c, Qt::Horizontal).toString();
            EXPECT_TRUE(table->isColumnHidden(c) ||
                        table->columnWidth(c) >= metrics.horizontalAdvance(title))
                << title.toStdString() << " " << table->columnWidth(c) << " px at " << s2.width();
        }
    }
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("afternoon-restarted.png"))));

    // The run ends: list and header agree.
    QFile(end).open(QIODevice::WriteOnly);
    ASSERT_TRUE(waitUntil(
        [&] {
            runs->refreshRuns();
            test::pump(300);
            const RunRow* row = runs->runsModel()->run(QStringLiteral("afternoon-restart"));
            return row != nullptr && stateName(row->state) == QStringLiteral("finished");
        },
        60000));
    EXPECT_TRUE(
        waitUntil([&] { return view->headerText().contains(QStringLiteral("finished")); }, 20000))
        << view->headerText().toStdString();
    AppSettings::setFileOverride(QString());
}
