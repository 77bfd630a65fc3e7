// issue 43: the Cluster page draws each role's plan for the phase in progress beside what the role
// holds. A REAL runplaned on loopback runs a run that `runplanectl submit --recipe` planned (the
// small colocated recipe of tests/support/small_plan.h: node 0's planned bytes per role and phase
// travel with StartRun); the run says "[runplane-phase] train" and starts a process titled as
// slime's train actor holding 64 MiB more than the trainer's plan for train. The host bar's
// trainer segment then carries exactly the planner's trainer bytes for train, its marker sits
// inside the segment, and the part beyond it is outlined as over the plan (the hover and the
// bar's note say by how much); the page cache carries its own plan. The values are read from
// the widget's bars, not from pixels.
#include <gtest/gtest.h>

#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "backend/plan/catalog.h"
#include "backend/plan/planner.h"
#include "backend/plan/recipe.h"
#include "backend/plan/role_budget.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/cluster_roles_panel.h"
#include "gui/widgets/role_split_bars.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"
#include "tests/support/small_plan.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

int segmentIndex(const SplitBar& bar, const QString& label) {
    for (std::size_t i = 0; i < bar.segments.size(); ++i) {
        if (bar.segments[i].label == label) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::string describe(const RoleSplitBars& bars) {
    std::string out;
    for (int i = 0; i < bars.barCount(); ++i) {
        for (const SplitSegment& s : bars.bar(i).segments) {
            out += s.label.toStdString() + "=" + std::to_string(s.value) + "/" +
                   std::to_string(s.planned) + " ";
        }
    }
    return out;
}

/// The planner's bytes for `role` on node 0 in `phase`, for the recipe text.
double plannedBytes(const std::string& recipeText, const std::string& recipesDir,
                    const std::string& role, plan::Phase phase) {
    auto recipe = plan::parseRecipe(recipeText, "recipe");
    auto catalog = plan::ModelCatalog::loadDirectory(recipesDir + "/models");
    if (!recipe || !catalog) {
        return std::nan("");
    }
    const auto p = plan::planRecipe(*recipe, *catalog);
    if (p.memory.nodes.empty()) {
        return std::nan("");
    }
    for (const auto& line : plan::planBesideMeasured(p.memory.nodes[0], phase, {})) {
        if (line.role == role) {
            return line.plannedBytes;
        }
    }
    return std::nan("");
}

}  // namespace

TEST(ClusterPlannedRoles, RealRunsPlanIsDrawnBesideEachRoleAndTheOverPlanPartIsMarked) {
    const QString bin = test::envPath("RUNPLANE_BINARY_DIR");
    const QString src = test::envPath("RUNPLANE_SOURCE_DIR");
    ASSERT_FALSE(bin.isEmpty());
    ASSERT_FALSE(src.isEmpty());
    const std::string recipes = src.toStdString() + "/recipes";
    const std::string recipeText = runplane::testing::smallColocatedRecipe("cluster-plan");
    const double trainerPlan = plannedBytes(recipeText, recipes, "trainer", plan::Phase::Train);
    const double cachePlan = plannedBytes(recipeText, recipes, "page_cache", plan::Phase::Train);
    ASSERT_FALSE(std::isnan(trainerPlan));
    ASSERT_GT(trainerPlan, 0) << "a plan of zero proves nothing";
    ASSERT_FALSE(std::isnan(cachePlan));

    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string recipe = d + "/cluster-plan.yaml";
    std::ofstream(recipe) << recipeText;
    test::DaemonProcess daemon(QStringLiteral("gui-plan-node"), 4);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();

    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 900);
    page.show();
    ASSERT_TRUE(page.addAddress(daemon.address()));

    // The run: train phase, then a train actor holding its plan + 64 MiB for 60 s.
    const auto holdMib = static_cast<long long>(std::ceil(trainerPlan / (1 << 20))) + 64;
    const std::string hold = d + "/hold.py";
    std::ofstream(hold) << "import sys, time\n"
                           "b = bytearray(b'\\x01') * (int(sys.argv[1]) << 20)\n"
                           "time.sleep(60)\n";
    const std::string script =
        "echo '[runplane-phase] train'; exec -a "
        "'ray::MegatronTrainRayActor.train' " +
        runplane::testing::realPython() + " " + hold + " " + std::to_string(holdMib);
    QProcess submit;
    submit.start(
        bin + QStringLiteral("/backend/cli/runplanectl"),
        {QStringLiteral("submit"), daemon.address(), QStringLiteral("--history"),
         dir.filePath(QStringLiteral("ctl.sqlite")), QStringLiteral("--run-id"),
         QStringLiteral("cluster-plan"), QStringLiteral("--recipe"), QString::fromStdString(recipe),
         QStringLiteral("--recipes"), QString::fromStdString(recipes), QStringLiteral("--"),
         QStringLiteral("/bin/bash"), QStringLiteral("-c"), QString::fromStdString(script)});
    ASSERT_TRUE(submit.waitForFinished(60000));
    ASSERT_EQ(submit.exitCode(), 0) << submit.readAllStandardError().toStdString();

    RoleSplitBars* hosts = page.rolesPanel()->hostBars();
    const QString trainer = QStringLiteral("trainer");
    ASSERT_TRUE(waitUntil(
        [&] {
            if (hosts->barCount() != 1) {
                return false;
            }
            const int k = segmentIndex(hosts->bar(0), trainer);
            // Over its plan once the actor holds all it was told to (RSS grows as it writes).
            const SplitSegment* t =
                k >= 0 ? &hosts->bar(0).segments[static_cast<std::size_t>(k)] : nullptr;
            return t != nullptr && t->overPlan() && t->value >= static_cast<double>(holdMib << 20);
        },
        40000))
        << "bars " << hosts->barCount() << ": " << hosts->placeholder().toStdString() << " "
        << describe(*hosts);

    const SplitBar& host = hosts->bar(0);
    const int k = segmentIndex(host, trainer);
    const SplitSegment& seg = host.segments[static_cast<std::size_t>(k)];
    // Exactly the planner's trainer bytes for train on node 0, beside the measured RSS.
    EXPECT_DOUBLE_EQ(seg.planned, trainerPlan);
    EXPECT_GE(seg.value, static_cast<double>(holdMib << 20));
    // The page cache carries its own plan (the checkpoint page cache) in the same phase.
    const int c = segmentIndex(host, QStringLiteral("page cache"));
    ASSERT_GE(c, 0);
    EXPECT_DOUBLE_EQ(host.segments[static_cast<std::size_t>(c)].planned, cachePlan);
    // A role no run plans (other) has no marker.
    const int o = segmentIndex(host, QStringLiteral("other"));
    ASSERT_GE(o, 0);
    EXPECT_TRUE(std::isnan(host.segments[static_cast<std::size_t>(o)].planned));
    EXPECT_EQ(hosts->plannedMarkerX(0, o), -1);

    // Drawn: the marker inside the trainer's segment, the part beyond it outlined as over.
    hosts->repaint();
    const QRect r = hosts->segmentRect(0, k);
    ASSERT_FALSE(r.isEmpty());
    const int x = hosts->plannedMarkerX(0, k);
    EXPECT_GE(x, r.left());
    EXPECT_LE(x, r.right());
    // The marker splits the segment as planned splits the measured bytes (±2 px of rounding).
    EXPECT_NEAR(x - r.left(), r.width() * seg.planned / seg.value, 2.0);
    const QRect over = hosts->overPlanRect(0, k);
    EXPECT_EQ(over.left(), x);
    EXPECT_EQ(over.right(), r.right());
    const QString hover = hosts->hoverTextAt(r.center());
    EXPECT_TRUE(hover.contains(QStringLiteral("trainer"))) << hover.toStdString();
    EXPECT_TRUE(hover.contains(QStringLiteral(", plan "))) << hover.toStdString();
    EXPECT_TRUE(hover.contains(QStringLiteral(" over"))) << hover.toStdString();
    EXPECT_TRUE(host.note.contains(QStringLiteral("GB over plan"))) << host.note.toStdString();

    test::pump(300);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("cluster-roles-plan.png"))));
}
