// Issues 42 and 43, the Runs page's per-process views, on REAL runs:
// - a real runplaned on loopback supervises a bash run that starts two processes titled as
//   slime's train actor (`ray::MegatronTrainRayActor.train`) and SGLang's scheduler
//   (`sglang::scheduler_TP0`) holding known written memory, prints phase markers under torchrun's
//   `[rankN]: ` prefix (rank 3 never leaves rollout) and two real pasted failures (the CUDA OOM of
//   THUDM/slime#1951 and the NCCL error of Arthur151/ROMP#80, from tests/agent/fixtures/logs),
//   then exits 1; a real controller ingests it into a real SQLite history, and the Runs page
//   reads that history: memory by role stacked with process counts and stable colours, the
//   failures as red markers and as the run list's cause, a lane per rank with rank 3 stuck;
// - a synthetic history written through the history's ingest API (the GUI tests' fixture way)
//   with role series shaped by a real recipe's plan: the budget lines are the plan's bytes per
//   role and phase, and the stacked layers are drawn in their colours (pixels).
// Saves role-memory.png, phase-lanes.png and runs-cause.png.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QImage>
#include <QProcess>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "backend/control/controller.h"
#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/recipe.h"
#include "backend/plan/role_budget.h"
#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/models/role_memory.h"
#include "gui/models/run_derivations.h"
#include "gui/models/run_models.h"
#include "gui/pages/run_role_tabs.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/role_plots.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

/// The interpreter itself, not a pyenv shim (which would exec it again and lose the title).
QString realPython() {
    QProcess p;
    p.start(QStringLiteral("python3"),
            {QStringLiteral("-c"), QStringLiteral("import sys; print(sys.executable)")});
    p.waitForFinished(10000);
    const QString out = QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed();
    return out.isEmpty() ? QStringLiteral("python3") : out;
}

QString fixture(const char* name) {
    return test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/tests/agent/fixtures/logs/") +
           QLatin1String(name);
}

/// The run: titled memory holders, per-rank phase markers, two real failure pastes, exit 1.
std::string runScript(const QString& python) {
    const QString hold =
        QStringLiteral("import time; b = bytearray(b'\\x01') * (%1 << 20); time.sleep(30)");
    QString s;
    s += QStringLiteral("(exec -a 'ray::MegatronTrainRayActor.train' %1 -c \"%2\") &\n")
             .arg(python, hold.arg(160));
    s += QStringLiteral("(exec -a 'sglang::scheduler_TP0' %1 -c \"%2\") &\n")
             .arg(python, hold.arg(96));
    s += QStringLiteral(
        "sleep 3\n"
        "for r in 0 1 2 3; do echo \"[rank$r]: [runplane-phase] rollout\"; done\n"
        "sleep 2\n"
        "for r in 0 1 2; do echo \"[rank$r]: [runplane-phase] train\"; done\n"
        "sleep 2\n"
        "for r in 0 1 2; do echo \"[rank$r]: [runplane-phase] weight_sync\"; done\n"
        "sleep 1\n");
    // Real pastes, their source comment line left out.
    s += QStringLiteral("grep -v '^#' '%1'\n").arg(fixture("cuda_oom_slime_1951.log"));
    s += QStringLiteral("sleep 1\ngrep -v '^#' '%1' >&2\n").arg(fixture("nccl_error2_romp_80.log"));
    // SIGTERM, not SIGKILL: bash reports a job it saw killed by SIGKILL as "line N: PID Killed …",
    // which the daemon reads as the shell's report of a host OOM kill (docs/daemon.md).
    s += QStringLiteral("sleep 4\nkill $(jobs -p)\nwait\nexit 1\n");
    return s.toStdString();
}

const RoleLayer* layerOf(const NodeRoleStack& s, const char* key) {
    for (const RoleLayer& l : s.layers) {
        if (l.key == QLatin1String(key)) {
            return &l;
        }
    }
    return nullptr;
}

double maxOf(const std::vector<double>& v) {
    double m = 0;
    for (double x : v) {
        m = std::isnan(x) ? m : std::max(m, x);
    }
    return m;
}

void showTab(RunView* view, const QString& name) {
    for (int i = 0; i < view->tabs()->count(); ++i) {
        if (view->tabs()->tabText(i) == name) {
            view->tabs()->setCurrentIndex(i);
        }
    }
}

}  // namespace

TEST(RoleViewsLive, RolesFailuresAndRankLanesOfARealRunThroughARealDaemon) {
    test::DaemonProcess daemon(QStringLiteral("roles-node"), 5);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    control::ControllerOptions options;
    options.historyPath = history.toStdString();
    options.sampleHz = 5;
    control::Controller controller(options);
    ASSERT_TRUE(controller.addNode(daemon.address().toStdString()));

    control::SubmitSpec spec;
    spec.address = daemon.address().toStdString();
    spec.name = "roles (gui test)";
    spec.run.runId = RunId{"gui-roles"};
    spec.run.argv = {"/bin/bash", "-c", runScript(realPython())};
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
    ASSERT_TRUE(page.selectRun(QStringLiteral("gui-roles")));
    RunView* view = page.runView();
    // The run ends (exit 1) and its last events and samples are in.
    auto done = [&] {
        auto s = view->snapshot();
        const auto& runs = page.runsModel()->runs();
        const bool failed = runs.size() == 1 && runs[0].state == telemetry::RunState::Failed;
        return failed && s && s->roles && s->roles->failures.size() >= 2 &&
               s->roles->lanes.size() >= 4 && !s->roles->nodes.empty();
    };
    ASSERT_TRUE(waitUntil(
        [&] {
            page.refreshRuns();
            test::pump(200);
            return done();
        },
        90000))
        << "the run did not end with its failures, lanes and role samples: " << [&] {
               auto s = view->snapshot();
               std::ostringstream o;
               if (s) {
                   o << "state " << stateName(s->run.state).toStdString() << " events "
                     << s->events.size() << " phases " << s->phases.size();
                   for (const EventRow& e : s->events) {
                       o << " [" << e.kind.toStdString() << "]";
                   }
                   if (s->roles) {
                       o << " failures " << s->roles->failures.size() << " lanes "
                         << s->roles->lanes.size() << " nodes " << s->roles->nodes.size();
                   }
               }
               return o.str();
           }();
    auto snap = view->snapshot();
    const RunRoleData& roles = *snap->roles;

    // 1. Memory by role: the titled processes are the trainer and the rollout engine, each one
    //    process holding at least what it wrote.
    ASSERT_EQ(roles.nodes.size(), 1U);
    const NodeRoleStack& stack = roles.nodes.front();
    EXPECT_EQ(stack.nodeId, QStringLiteral("roles-node"));
    const RoleLayer* trainer = layerOf(stack, "trainer");
    const RoleLayer* rollout = layerOf(stack, "rollout");
    const RoleLayer* other = layerOf(stack, "other");
    ASSERT_NE(trainer, nullptr);
    ASSERT_NE(rollout, nullptr);
    ASSERT_NE(other, nullptr);
    EXPECT_GE(maxOf(trainer->bytes), 160.0 * (1 << 20));
    EXPECT_GE(maxOf(rollout->bytes), 96.0 * (1 << 20));
    // (At least: the node is shared, and every process on it has a role.)
    EXPECT_GE(maxOf(trainer->processes), 1.0);
    EXPECT_GE(maxOf(rollout->processes), 1.0);
    EXPECT_NE(layerOf(stack, "page_cache"), nullptr);
    // Stable colours: the table's, whatever else is shown.
    EXPECT_EQ(trainer->color, QColor(0x00, 0x72, 0xB2));
    EXPECT_EQ(rollout->color, QColor(0xE6, 0x9F, 0x00));
    EXPECT_EQ(roleColor(QStringLiteral("trainer")), trainer->color);
    EXPECT_EQ(roleColor(QStringLiteral("reward")), roleColor(QStringLiteral("reward")));
    EXPECT_NE(roleColor(QStringLiteral("reward")), other->color);
    // The stacked plot draws every layer; its tooltip names the role, bytes and process count.
    showTab(view, QStringLiteral("Memory by role"));
    StackedAreaPlot* rolePlot = view->roleTabs()->roleMemoryPlot();
    rolePlot->flush();
    test::pump(100);
    EXPECT_EQ(rolePlot->layerCount(), static_cast<int>(stack.layers.size()));
    EXPECT_EQ(rolePlot->markerCount(), static_cast<int>(roles.failures.size()));
    std::size_t peak = 0;
    for (std::size_t i = 0; i < stack.t.size(); ++i) {
        if (trainer->bytes[i] > trainer->bytes[peak]) {
            peak = i;
        }
    }
    const std::size_t trainerIndex = static_cast<std::size_t>(trainer - stack.layers.data());
    const double below = trainerIndex == 0 ? 0 : stack.top(trainerIndex - 1, peak);
    const double mid = below + 0.5 * trainer->bytes[peak];
    const QString tip = stack.hoverText(stack.t[peak], mid, snap->phases);
    EXPECT_TRUE(tip.contains(QStringLiteral("trainer: "))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral(" process"))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral(" MB")) || tip.contains(QStringLiteral(" GB")))
        << tip.toStdString();
    // Hover through the widget at a pixel in the middle of the thickest layer there names it.
    std::size_t thick = 0;
    for (std::size_t k = 0; k < stack.layers.size(); ++k) {
        if (stack.layers[k].bytes[peak] > stack.layers[thick].bytes[peak]) {
            thick = k;
        }
    }
    const double thickMid = stack.top(thick, peak) - 0.5 * stack.layers[thick].bytes[peak];
    const QString widgetTip =
        rolePlot->hoverTextAt(rolePlot->pixelOf(stack.t[peak], thickMid / 1e9));
    EXPECT_TRUE(widgetTip.startsWith(QStringLiteral("roles-node · ") + stack.layers[thick].label))
        << widgetTip.toStdString();

    // 2. Failures: both real pastes are alert-level markers with their one-line summary; the host
    //    memory plot marks them too, and the run list names the cause (the OOM, the stronger).
    ASSERT_EQ(roles.failures.size(), 2U);
    EXPECT_EQ(roles.failures[0].kind, QStringLiteral("cuda_oom"));
    EXPECT_TRUE(roles.failures[0].message.contains(QStringLiteral("58.15")))
        << roles.failures[0].message.toStdString();
    EXPECT_EQ(roles.failures[1].kind, QStringLiteral("nccl_error"));
    const auto markers = failureEventMarkers(roles.failures);
    ASSERT_EQ(markers.size(), 2U);
    EXPECT_EQ(markers[0].color, QColor(0xC6, 0x28, 0x28));
    view->hostMemoryPlot()->flush();
    EXPECT_GE(view->hostMemoryPlot()->eventCount(), 2);
    ASSERT_TRUE(waitUntil(
        [&] {
            page.refreshRuns();
            test::pump(100);
            const int row = page.runsModel()->indexOf(QStringLiteral("gui-roles"));
            return row >= 0 && !page.runsModel()
                                    ->index(row, RunListModel::CauseColumn)
                                    .data()
                                    .toString()
                                    .isEmpty();
        },
        20000));
    const int row = page.runsModel()->indexOf(QStringLiteral("gui-roles"));
    const QString cause = page.runsModel()->index(row, RunListModel::CauseColumn).data().toString();
    EXPECT_TRUE(cause.contains(QStringLiteral("58.15"))) << cause.toStdString();
    EXPECT_EQ(page.runsModel()->runs()[static_cast<std::size_t>(row)].causeKind,
              QStringLiteral("cuda_oom"));
    EXPECT_EQ(page.runsModel()->headerData(RunListModel::CauseColumn, Qt::Horizontal).toString(),
              QStringLiteral("Cause"));
    EXPECT_FALSE(page.table()->isColumnHidden(RunListModel::CauseColumn));

    // 3. Phase lanes: one per rank; rank 3 stayed in rollout while the others moved on.
    ASSERT_EQ(roles.lanes.size(), 4U);
    for (int r = 0; r < 4; ++r) {
        const PhaseLane& lane = roles.lanes[static_cast<std::size_t>(r)];
        EXPECT_EQ(lane.rank, QString::number(r));
        EXPECT_EQ(lane.label, QStringLiteral("roles-node rank %1").arg(r));
        EXPECT_EQ(lane.stuck, r == 3) << lane.label.toStdString();
    }
    ASSERT_EQ(roles.lanes[0].spans.size(), 3U);
    EXPECT_EQ(roles.lanes[0].spans[0].phase, QStringLiteral("rollout"));
    EXPECT_EQ(roles.lanes[0].spans[2].phase, QStringLiteral("weight_sync"));
    ASSERT_EQ(roles.lanes[3].spans.size(), 1U);
    EXPECT_TRUE(roles.lanes[3].note.startsWith(QStringLiteral("stuck in rollout")))
        << roles.lanes[3].note.toStdString();
    showTab(view, QStringLiteral("Phase lanes"));
    PhaseLanesPlot* lanes = view->roleTabs()->phaseLanesPlot();
    lanes->flush();
    test::pump(100);
    EXPECT_EQ(lanes->laneCount(), 4);
    EXPECT_EQ(lanes->markerCount(), 2);
    const LaneSpan& stuck = roles.lanes[3].spans[0];
    const double late = stuck.t1 - 0.5;
    EXPECT_TRUE(lanes->hoverText(late, 3).startsWith(QStringLiteral("roles-node rank 3: rollout")))
        << lanes->hoverText(late, 3).toStdString();
    EXPECT_TRUE(lanes->hoverTextAt(lanes->pixelOf(late, 3)).contains(QStringLiteral("rank 3")));
    // Rank 0 was in weight_sync then, drawn in weight_sync's colour; rank 3's bar in rollout's.
    const QImage image = lanes->grab().toImage();
    const QColor r0 = image.pixelColor(lanes->pixelOf(late, 0) + QPoint(0, 20));
    const QColor r3 = image.pixelColor(lanes->pixelOf(late, 3) + QPoint(0, 20));
    EXPECT_GT(r3.blue(), r3.red()) << r3.name().toStdString();   // light blue (rollout)
    EXPECT_GT(r0.red(), r0.green()) << r0.name().toStdString();  // light purple (weight_sync)
    EXPECT_TRUE(lanes->savePng(test::screenshotPath(QStringLiteral("phase-lanes.png")), 1200, 420));
    // The run list with its cause (the empty eval column hidden, as a user would, for room).
    page.table()->setColumnHidden(RunListModel::EvalColumn, true);
    test::pump(100);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-cause.png"))));
    controller.stopAll();
}

// Budget lines from a real recipe's plan beside role series written through the history's ingest
// API, over the synthetic run's phases; the layers' pixels are their roles' colours.
TEST(RoleViews, BudgetLinesAreThePlanPerRoleAndPhase) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    const std::string recipe = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_FALSE(recipe.empty());
    const plan::ModelCatalog* catalog = defaultModelCatalog();
    ASSERT_NE(catalog, nullptr);
    auto parsed = plan::parseRecipe(recipe, "recipe");
    ASSERT_TRUE(parsed);
    auto shape = plan::resolveModel(*parsed, *catalog);
    ASSERT_TRUE(shape);
    const plan::MemoryPlan memory = plan::planMemory(*parsed, *shape);
    ASSERT_GE(memory.nodes.size(), 1U);
    auto planned = [&](plan::Phase p, const char* role) {
        for (const plan::RoleLine& l :
             plan::planBesideMeasured(memory.nodes[0], p, plan::RoleMeasured{})) {
            if (l.role == role) {
                return l.plannedBytes;
            }
        }
        return 0.0;
    };
    test::SyntheticRunSpec spec;
    spec.runId = "run-roles";
    spec.recipeYaml = recipe;
    spec.seconds = 900;
    spec.nodes = {"node-a"};
    spec.gpusPerNode = 1;
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h);
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
        // The run's phases as the GUI reads them; per second, each role holds its plan in the
        // phase then, except the rollout engines, which keep 40 GB more than planned in train.
        db::EventFilter ef;
        ef.runId = RunId{spec.runId};
        auto events = (*h)->listEvents(ef);
        ASSERT_TRUE(events);
        const auto phases = phasesFromEvents(*events, 1e12);
        auto cursor = (*h)->ingestCursor(NodeId{"node-a"});
        ASSERT_TRUE(cursor);
        std::uint64_t seq = *cursor + 1;
        db::IngestBatch batch;
        batch.nodeId = NodeId{"node-a"};
        auto sample = [&](std::int64_t t, const std::string& name, double v) {
            batch.samples.push_back(
                db::IngestSample{seq++, t, RunId{}, name, "bytes", v, v, v, -1});
        };
        for (int s = 0; s < spec.seconds; s += 5) {
            const std::int64_t t = spec.startNs + static_cast<std::int64_t>(s) * 1000000000LL;
            plan::Phase phase = plan::Phase::Load;
            const QString name = phaseAt(phases, nsToSeconds(t));
            for (plan::Phase p : plan::kPhases) {
                if (name == QLatin1String(plan::toString(p))) {
                    phase = p;
                }
            }
            sample(t, "role.trainer.rss_bytes", planned(phase, "trainer"));
            sample(t, "role.trainer.processes", 8);
            sample(t, "role.rollout.rss_bytes",
                   planned(phase, "rollout") + (phase == plan::Phase::Train ? 40e9 : 0));
            sample(t, "role.rollout.processes", 17);
            sample(t, "role.ray.object_store_bytes", planned(phase, "ray"));
            sample(t, "role.ray.rss_bytes", 6e9);
            sample(t, "role.ray.processes", 24);
            sample(t, "role.other.rss_bytes", 3e9);
            sample(t, "role.other.processes", 310);
        }
        batch.throughSeq = seq - 1;
        ASSERT_TRUE((*h)->ingest(batch));
    }
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h);
    auto snap = loadRunSnapshot(**h, QString::fromStdString(spec.runId), 0, 0, 1000, catalog);
    ASSERT_TRUE(snap) << snap.error();
    ASSERT_TRUE(snap->roles);
    ASSERT_EQ(snap->roles->nodes.size(), 1U);
    const NodeRoleStack& stack = snap->roles->nodes[0];
    const RoleLayer* trainer = layerOf(stack, "trainer");
    const RoleLayer* rollout = layerOf(stack, "rollout");
    ASSERT_NE(trainer, nullptr);
    ASSERT_NE(rollout, nullptr);
    ASSERT_EQ(stack.layers[0].key, QStringLiteral("trainer"));  // the table's order
    ASSERT_EQ(stack.layers[1].key, QStringLiteral("rollout"));
    int trainPoints = 0;
    for (std::size_t i = 0; i < stack.t.size(); ++i) {
        const QString phase = phaseAt(snap->phases, stack.t[i]);
        plan::Phase p = plan::Phase::Load;
        bool known = false;
        for (plan::Phase q : plan::kPhases) {
            if (phase == QLatin1String(plan::toString(q))) {
                p = q;
                known = true;
            }
        }
        if (!known) {
            continue;
        }
        EXPECT_DOUBLE_EQ(trainer->budget[i], planned(p, "trainer")) << i;
        EXPECT_DOUBLE_EQ(rollout->budget[i], planned(p, "rollout")) << i;
        // Budget line of rollout = trainer's plan + rollout's plan (stacked as the layers).
        EXPECT_DOUBLE_EQ(stack.budgetTop(1, i), planned(p, "trainer") + planned(p, "rollout"));
        if (p == plan::Phase::Train) {
            ++trainPoints;
            // The engines' 40 GB over their plan: the layer's top is 40 GB above its line.
            EXPECT_NEAR(stack.top(1, i) - stack.budgetTop(1, i), 40e9, 1e6);
            const QString tip = stack.hoverText(
                stack.t[i], planned(p, "trainer") + 0.5 * rollout->bytes[i], snap->phases);
            EXPECT_TRUE(tip.contains(QStringLiteral("rollout engines: ")) &&
                        tip.contains(QStringLiteral("17 processes")) &&
                        tip.contains(QStringLiteral("in train")))
                << tip.toStdString();
        }
    }
    EXPECT_GT(trainPoints, 5);

    // Drawn: the layers in their colours, the budget lines of the planned roles.
    auto shared = std::make_shared<const RunSnapshot>(std::move(*snap));
    RunView view;
    view.resize(1500, 900);
    view.show();
    view.setSnapshot(shared);
    showTab(&view, QStringLiteral("Memory by role"));
    StackedAreaPlot* plot = view.roleTabs()->roleMemoryPlot();
    plot->flush();
    test::pump(100);
    EXPECT_EQ(plot->layerCount(), static_cast<int>(stack.layers.size()));
    EXPECT_GE(plot->budgetLineCount(), 3);  // trainer, rollout, object store (+ page cache)
    std::size_t at = stack.t.size() / 2;
    const QImage image = plot->grab().toImage();
    const QColor inTrainer =
        image.pixelColor(plot->pixelOf(stack.t[at], 0.5 * stack.top(0, at) / 1e9));
    const QColor inRollout = image.pixelColor(
        plot->pixelOf(stack.t[at], 0.5 * (stack.top(0, at) + stack.top(1, at)) / 1e9));
    EXPECT_GT(inTrainer.blue(), inTrainer.red() + 60) << inTrainer.name().toStdString();
    EXPECT_GT(inRollout.red(), inRollout.blue() + 60) << inRollout.name().toStdString();
    EXPECT_TRUE(plot->savePng(test::screenshotPath(QStringLiteral("role-memory.png")), 1200, 520));
}
