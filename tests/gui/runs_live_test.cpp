// issue 10: the Runs page following a REAL run: runplaned on loopback supervises the real
// runplane-smoke workload (LibTorch GRPO + LoRA, a few steps on the CPU), the controller ingests
// its telemetry into a real SQLite history, and the page shows host memory with phases, eval
// points and the log tail while the run is live. Saves docs/screenshots/runs-live.png.
// Skipped (with the reason) where runplane-smoke was not built (no LibTorch).
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QTabWidget>
#include <QTemporaryDir>

#include <fstream>
#include <sstream>

#include "backend/control/controller.h"
#include "gui/models/run_models.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

TEST(RunsPageLive, FollowsARealSmokeRunThroughARealDaemon) {
    const QString smoke =
        test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/compute/smoke/runplane-smoke");
    if (!QFileInfo(smoke).isExecutable()) {
        GTEST_SKIP() << smoke.toStdString() << " was not built (LibTorch unavailable)";
    }
    test::DaemonProcess daemon(QStringLiteral("gui-live-node"), 5);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));

    control::ControllerOptions options;
    options.historyPath = history.toStdString();
    options.sampleHz = 5;
    control::Controller controller(options);
    ASSERT_TRUE(controller.addNode(daemon.address().toStdString()));

    std::ifstream in(test::envPath("RUNPLANE_SOURCE_DIR").toStdString() +
                     "/recipes/smoke-local.yaml");
    std::stringstream recipe;
    recipe << in.rdbuf();
    control::SubmitSpec spec;
    spec.address = daemon.address().toStdString();
    spec.name = "smoke (gui live test)";
    spec.run.runId = "gui-live-smoke";
    spec.run.recipeYaml = recipe.str();
    spec.run.argv = {smoke.toStdString(),
                     "--layers",
                     "2",
                     "--d-model",
                     "32",
                     "--eval-size",
                     "64",
                     "--sft-steps",
                     "40",
                     "--rollout-batch-size",
                     "4",
                     "--n-samples-per-prompt",
                     "4",
                     "--global-batch-size",
                     "16",
                     "--rl-steps",
                     "8",
                     "--eval-interval",
                     "2",
                     "--backup-scale-mb",
                     "64",
                     "--seed",
                     "1",
                     "--device",
                     "cpu"};
    auto submitted = controller.submitRun(spec);
    ASSERT_TRUE(submitted) << submitted.error();

    RunsPage page(history);
    page.resize(1700, 1000);
    page.show();
    ASSERT_TRUE(waitUntil(
        [&] {
            page.refreshRuns();
            test::pump(200);
            return page.runsModel()->rowCount() == 1;
        },
        20000));
    ASSERT_TRUE(page.selectRun(QStringLiteral("gui-live-smoke")));
    RunView* view = page.runView();
    // Live: host memory and phases arrive while the run goes on, and the view keeps re-reading.
    ASSERT_TRUE(waitUntil(
        [&] {
            auto s = view->snapshot();
            return s && !s->hostMemory.empty() && !s->phases.empty();
        },
        90000))
        << "no host memory / phases for the run";
    const int applied = page.snapshotsApplied();
    ASSERT_TRUE(waitUntil([&] { return page.snapshotsApplied() >= applied + 2; }, 10000));
    EXPECT_TRUE(view->isFollowing());
    // Eval points (the daemon parses the workload's log into eval/* series).
    ASSERT_TRUE(waitUntil(
        [&] {
            auto s = view->snapshot();
            if (!s) {
                return false;
            }
            for (const PointSeries& m : s->metrics) {
                if (m.name.startsWith(QStringLiteral("eval/")) && m.t.size() >= 2) {
                    return true;
                }
            }
            return false;
        },
        120000))
        << "no eval series";
    view->hostMemoryPlot()->flush();
    EXPECT_GE(view->hostMemoryPlot()->seriesCount(), 1);
    EXPECT_GE(view->hostMemoryPlot()->phaseCount(), 2);
    EXPECT_GE(view->peaksModel()->rowCount(), 1);
    test::pump(500);
    EXPECT_TRUE(page.grab().save(test::envPath("RUNPLANE_SOURCE_DIR") +
                                 QStringLiteral("/docs/screenshots/runs-live.png")));
    // The log tail comes from the daemon over gRPC.
    view->tabs()->setCurrentIndex(3);
    ASSERT_TRUE(waitUntil([&] { return view->logText().contains(QStringLiteral("eval")); }, 30000))
        << view->logText().left(500).toStdString();
    view->setLogFilter(QStringLiteral("eval"));
    for (const QString& line : view->logText().split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        EXPECT_TRUE(line.contains(QStringLiteral("eval"), Qt::CaseInsensitive))
            << line.toStdString();
    }
    controller.stopAll();
}
