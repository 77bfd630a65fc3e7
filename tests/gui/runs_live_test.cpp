// issue 10: the Runs page following a REAL run: runplaned on loopback supervises the real
// runplane-smoke workload (LibTorch GRPO + LoRA, a few steps on the CPU), the controller ingests
// its telemetry into a real SQLite history, and the page shows host memory with phases, eval
// points and the log tail while the run is live. Saves screenshot runs-live.png.
// Skipped (with the reason) where runplane-smoke was not built (no LibTorch).
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QTabWidget>
#include <QTemporaryDir>

#include <fstream>
#include <memory>
#include <sstream>

#include "backend/control/controller.h"
#include "gui/models/compare_model.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

std::string readRecipe(const std::string& name) {
    std::ifstream in(test::envPath("RUNPLANE_SOURCE_DIR").toStdString() + "/recipes/" + name);
    std::stringstream recipe;
    recipe << in.rdbuf();
    return recipe.str();
}

/// A short CPU configuration of the real workload (a few seconds on 2 cores).
std::vector<std::string> shortSmokeArgv(const QString& smoke, int loraRank, double loraAlpha) {
    return {smoke.toStdString(),
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
            "--lora-rank",
            std::to_string(loraRank),
            "--lora-alpha",
            std::to_string(loraAlpha),
            "--seed",
            "1",
            "--device",
            "cpu"};
}

/// The workload's default learning configuration cut to 30 rollouts (what the smoke test's eval
/// rise runs, about 30 s on 2 cores), memory stand-ins off, with this LoRA rank.
std::vector<std::string> learningSmokeArgv(const QString& smoke, int loraRank, double loraAlpha) {
    return {smoke.toStdString(),
            "--rl-steps",
            "30",
            "--eval-interval",
            "10",
            "--backup-scale-mb",
            "0",
            "--lora-rank",
            std::to_string(loraRank),
            "--lora-alpha",
            std::to_string(loraAlpha),
            "--seed",
            "1",
            "--device",
            "cpu"};
}

/// The built workload, or "" where it was not built (no LibTorch).
QString smokeBinary() {
    const QString smoke =
        test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/compute/smoke/runplane-smoke");
    return QFileInfo(smoke).isExecutable() ? smoke : QString();
}

/// One real daemon on loopback and a controller ingesting it (5 Hz) into a fresh history.
struct LiveNode {
    explicit LiveNode(const QString& nodeId) : daemon(nodeId, 5) {
        control::ControllerOptions options;
        options.historyPath = history.toStdString();
        options.sampleHz = 5;
        controller = std::make_unique<control::Controller>(options);
    }
    /// Empty when the node is up and ingested; else why not.
    std::string start() {
        if (!daemon.ok()) {
            return daemon.error().toStdString();
        }
        return controller->addNode(daemon.address().toStdString())
                   ? std::string()
                   : "controller did not take " + daemon.address().toStdString();
    }
    std::string address() const { return daemon.address().toStdString(); }

    test::DaemonProcess daemon;
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    std::unique_ptr<control::Controller> controller;
};

}  // namespace

TEST(RunsPageLive, FollowsARealSmokeRunThroughARealDaemon) {
    const QString smoke = smokeBinary();
    if (smoke.isEmpty()) {
        GTEST_SKIP() << "runplane-smoke was not built (LibTorch unavailable)";
    }
    LiveNode node(QStringLiteral("gui-live-node"));
    ASSERT_EQ(node.start(), "");
    const QString& history = node.history;
    control::Controller& controller = *node.controller;

    control::SubmitSpec spec;
    spec.address = node.address();
    spec.name = "smoke (gui live test)";
    spec.run.runId = RunId{"gui-live-smoke"};
    spec.run.recipeYaml = readRecipe("smoke-local.yaml");
    spec.run.argv = shortSmokeArgv(smoke, 8, 16);
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
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-live.png"))));
    // The log tail comes from the daemon over gRPC.
    for (int i = 0; i < view->tabs()->count(); ++i) {
        if (view->tabs()->tabText(i) == QStringLiteral("Log")) {
            view->tabs()->setCurrentIndex(i);
        }
    }
    ASSERT_TRUE(waitUntil([&] { return view->logText().contains(QStringLiteral("eval")); }, 30000))
        << view->logText().left(500).toStdString();
    view->setLogFilter(QStringLiteral("eval"));
    for (const QString& line : view->logText().split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        EXPECT_TRUE(line.contains(QStringLiteral("eval"), Qt::CaseInsensitive))
            << line.toStdString();
    }
    controller.stopAll();
}

// The Compare page on two REAL finished runs of the workload (LoRA rank 8 vs 4, the demo's pair of
// recipes, each the learning configuration cut to 30 rollouts) that went through a real daemon into
// a real history: both eval curves are drawn, the recipe diff shows the LoRA fields, and the page
// is saved as screenshot compare-real.png.
TEST(ComparePageLive, OverlaysTwoRealSmokeRunsAndDiffsTheirRecipes) {
    const QString smoke = smokeBinary();
    if (smoke.isEmpty()) {
        GTEST_SKIP() << "runplane-smoke was not built (LibTorch unavailable)";
    }
    LiveNode node(QStringLiteral("gui-compare-node"));
    ASSERT_EQ(node.start(), "");
    const QString& history = node.history;
    control::Controller& controller = *node.controller;

    const struct {
        const char* id;
        const char* name;
        const char* recipe;
        int rank;
        double alpha;
    } runs[] = {{"cmp-r8", "smoke LoRA r8", "smoke-local.yaml", 8, 16},
                {"cmp-r4", "smoke LoRA r4", "smoke-local-r4.yaml", 4, 8}};
    for (const auto& r : runs) {
        control::SubmitSpec spec;
        spec.address = node.address();
        spec.name = r.name;
        spec.run.runId = RunId{r.id};
        spec.run.recipeYaml = readRecipe(r.recipe);
        spec.run.argv = learningSmokeArgv(smoke, r.rank, r.alpha);
        auto submitted = controller.submitRun(spec);
        ASSERT_TRUE(submitted) << submitted.error();
    }

    ComparePage page(history);
    page.resize(1700, 1000);
    page.show();
    // Both runs end (the daemon's run-state events reach the history) and their evals are in.
    ASSERT_TRUE(waitUntil(
        [&] {
            page.refreshRuns();
            test::pump(300);
            int finished = 0;
            for (int i = 0; i < page.runsModel()->rowCount(); ++i) {
                finished += page.runsModel()->index(i, 1).data().toString().contains(
                                QStringLiteral("finished"))
                                ? 1
                                : 0;
            }
            return finished == 2;
        },
        240000))
        << "the two smoke runs did not both finish";
    controller.stopAll();  // everything is ingested once the runs ended; stop streaming

    ASSERT_TRUE(page.selectRuns({QStringLiteral("cmp-r8"), QStringLiteral("cmp-r4")}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > 0; }, 20000));
    EXPECT_TRUE(page.data().metricNames.contains(QStringLiteral("eval/arith")))
        << page.data().metricNames.join(QLatin1Char(',')).toStdString();
    page.setMetric(QStringLiteral("eval/arith"));
    page.setSmoothing(0.5);
    page.plot()->flush();
    EXPECT_EQ(page.plot()->seriesCount(), 4) << "raw points + EMA line for each run";
    ASSERT_EQ(page.data().runs.size(), 2u);
    for (const CompareRun& run : page.data().runs) {
        std::size_t points = 0;
        for (const PointSeries& m : run.metrics) {
            points += m.name == QStringLiteral("eval/arith") ? m.t.size() : 0;
        }
        EXPECT_EQ(points, 4u) << run.run.id.toStdString() << ": eval before RL and every 10";
    }
    const QStringList diff = page.compareModel()->diffFields();
    EXPECT_TRUE(diff.contains(QStringLiteral("lora.rank"))) << diff.join(',').toStdString();
    EXPECT_TRUE(diff.contains(QStringLiteral("lora.alpha"))) << diff.join(',').toStdString();
    EXPECT_FALSE(diff.contains(QStringLiteral("batch.global_batch_size")))
        << "only differing fields are listed";
    test::pump(300);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare-real.png"))));
}
