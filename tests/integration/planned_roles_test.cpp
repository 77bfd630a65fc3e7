// issue 43: the run's plan by role travels with StartRun. `runplanectl submit --recipe` plans the
// recipe and sends node 0's planned bytes per (role, phase) and the run's own role rows
// (`--role-rows`); a real runplaned sends them back beside what it measures: run-level
// role.<role>.planned_<phase>_bytes every report, role.<role>.planned_bytes for the phase in
// progress (the run says "[runplane-phase] train"), and a process of the run's own role (a row
// only this run gave) measured node-level. A bad row is refused at submit, naming its line.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/plan/catalog.h"
#include "backend/plan/planner.h"
#include "backend/plan/recipe.h"
#include "backend/plan/role_budget.h"
#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

// One GPU, trainer and engine colocated, a small inline model shape (its plan in tens of MB).
const char* kRecipe = R"(schema_version: 1
name: planned-roles
description: one GPU, trainer and one engine colocated, a small model, 30 MB per process
framework: miles
model:
  shape:
    num_layers: 2
    hidden_size: 1024
    ffn_hidden_size: 2048
    gated_mlp: false
    num_attention_heads: 8
    vocab_size: 4096
hardware:
  gpu: H100
  gpu_memory_gb: 80
  gpus_per_node: 1
  host_ram_gb: 24
cluster:
  nodes: 1
  master_addr: 127.0.0.1
placement: colocate
rollout:
  gpus_per_engine: 1
  engines: 1
batch:
  rollout_batch_size: 8
  n_samples_per_prompt: 1
  global_batch_size: 8
  num_rollout: 1
lora:
  rank: 8
  alpha: 16
  target_modules: [q_proj, k_proj, v_proj, o_proj]
  base_cpu_backup: true
memory:
  process_host_gb: 0.03
launcher:
  kind: command
  argv: [/bin/true]
)";

/// The last value of a series of (node, run) in the history; nullopt when it has none.
std::optional<double> lastValue(db::History& h, const std::string& node, const std::string& run,
                                const std::string& name) {
    auto id = h.findSeries(NodeId{node}, RunId{run}, name);
    if (!id.ok() || !*id) {
        return std::nullopt;
    }
    db::SeriesQuery q;
    q.seriesId = **id;
    auto points = h.querySeries(q);
    if (!points.ok() || points->points.empty()) {
        return std::nullopt;
    }
    return points->points.back().value;
}

TEST(PlannedRoles, SubmitSendsThePlanByRoleAndTheDaemonReportsItBesideTheMeasured) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    std::filesystem::create_directories(state);
    Daemon daemon(state, "node-plan", 4);
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string cwd = dir.path().string();
    const std::string history = dir.file("history.sqlite");
    const std::string recipe = dir.file("planned-roles.yaml");
    std::ofstream(recipe) << kRecipe;
    const std::string recipes = sourceDir() + "/recipes";
    // A role no built-in row knows, given by this run only.
    const std::string rows = dir.file("rows.txt");
    std::ofstream(rows) << "# the run's reward server\nreward_srv title planned-roles-reward*\n";

    // A bad row is refused at StartRun, naming the field and the line; nothing is started.
    const std::string bad = dir.file("bad-rows.txt");
    std::ofstream(bad) << "reward_srv title x*\nReward argv y\n";
    auto refused = runCtl({"submit", address, "--history", history, "--run-id", "bad-rows",
                           "--role-rows", bad, "--", "/bin/true"},
                          cwd);
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE(refused.err.find("role_rows:2:"), std::string::npos) << refused.err;

    const std::string script =
        "(exec -a planned-roles-reward sleep 20) & sleep 1; echo '[runplane-phase] train'; "
        "sleep 5; kill %1; wait";
    auto submit =
        runCtl({"submit", address, "--history", history, "--run-id", "planned", "--recipe", recipe,
                "--recipes", recipes, "--role-rows", rows, "--", "/bin/bash", "-c", script},
               cwd);
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    EXPECT_EQ(submit.err.find("no plan by role"), std::string::npos) << submit.err;
    auto watch = runCtl({"watch", address, "--history", history, "--seconds", "9"}, cwd,
                        std::chrono::seconds(60));
    ASSERT_EQ(watch.exitCode, 0) << watch.err;

    // What the planner puts into each role on node 0 (the same recipe, the same catalog).
    auto parsed = plan::parseRecipe(kRecipe, "planned-roles.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    auto catalog = plan::ModelCatalog::loadDirectory(recipes + "/models");
    ASSERT_TRUE(catalog.ok()) << catalog.error();
    const auto p = plan::planRecipe(*parsed, *catalog);
    ASSERT_FALSE(p.memory.nodes.empty());
    const plan::NodeMemory& node0 = p.memory.nodes[0];

    db::OpenOptions open;
    open.readOnly = true;
    auto h = db::History::open(history, open);
    ASSERT_TRUE(h.ok()) << h.error();
    int nonzero = 0;
    for (plan::Phase phase : plan::kPhases) {
        for (const auto& line : plan::planBesideMeasured(node0, phase, {})) {
            if (line.role == "unexplained") {
                continue;
            }
            const std::string name =
                "role." + line.role + ".planned_" + std::string(plan::toString(phase)) + "_bytes";
            const auto got = lastValue(**h, "node-plan", "planned", name);
            ASSERT_TRUE(got.has_value()) << name;
            EXPECT_DOUBLE_EQ(*got, line.plannedBytes) << name;
            nonzero += line.plannedBytes > 0 ? 1 : 0;
            if (phase == plan::Phase::Train) {
                // The phase in progress: the run said "[runplane-phase] train".
                const auto now =
                    lastValue(**h, "node-plan", "planned", "role." + line.role + ".planned_bytes");
                ASSERT_TRUE(now.has_value()) << line.role;
                EXPECT_DOUBLE_EQ(*now, line.plannedBytes) << line.role;
            }
        }
    }
    EXPECT_GT(nonzero, 2) << "a plan of zeros proves nothing";
    // The run's own row: its process is measured in the run's role, node-level.
    const auto reward = lastValue(**h, "node-plan", "", "role.reward_srv.processes");
    ASSERT_TRUE(reward.has_value());
    EXPECT_GE(*reward, 1);
    const auto rewardRss = lastValue(**h, "node-plan", "", "role.reward_srv.rss_bytes");
    ASSERT_TRUE(rewardRss.has_value());
    EXPECT_GT(*rewardRss, 0);
    // And not the measured ones' node-level series: the plan is the run's.
    EXPECT_FALSE(lastValue(**h, "node-plan", "", "role.trainer.planned_train_bytes").has_value());
}

}  // namespace
}  // namespace runplane::testing
