// issue 43: the run's plan by role travels with StartRun. `runplanectl submit --recipe` plans the
// recipe and sends node 0's planned bytes per (role, phase) and the run's own role rows
// (`--role-rows`); a real runplaned sends them back beside what it measures: run-level
// role.<role>.planned_<phase>_bytes every report, role.<role>.planned_bytes for the phase in
// progress (the run says "[runplane-phase] train"), and a process of the run's own role (a row
// only this run gave) measured node-level. A bad row is refused at submit, naming its line.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "backend/plan/catalog.h"
#include "backend/plan/planner.h"
#include "backend/plan/recipe.h"
#include "backend/plan/role_budget.h"
#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/integration/daemon_fixture.h"
#include "tests/support/process.h"
#include "tests/support/small_plan.h"
#include "tests/support/wait.h"

namespace runplane::testing {
namespace {

class PlannedRoles : public DaemonFixture {};

// One GPU, trainer and engine colocated, a small inline model shape (its plan in tens of MB).
const std::string kRecipe = smallColocatedRecipe("planned-roles");

/// Node 0 of what the planner makes of kRecipe with the model catalog under `recipes` (the
/// recipe and catalog the run was submitted with). Use as
/// ASSERT_NO_FATAL_FAILURE(planNode0(recipes, &node0)).
void planNode0(const std::string& recipes, plan::NodeMemory* node0) {
    auto parsed = plan::parseRecipe(kRecipe, "planned-roles.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    auto catalog = plan::ModelCatalog::loadDirectory(recipes + "/models");
    ASSERT_TRUE(catalog.ok()) << catalog.error();
    const auto p = plan::planRecipe(*parsed, *catalog);
    ASSERT_FALSE(p.memory.nodes.empty());
    *node0 = p.memory.nodes[0];
}

/// Every value of a series of (node, run) in the history, oldest first; empty when it has none.
std::vector<double> seriesValues(db::History& h, const std::string& node, const std::string& run,
                                 const std::string& name) {
    auto id = h.findSeries(NodeId{node}, RunId{run}, name);
    if (!id.ok() || !*id) {
        return {};
    }
    db::SeriesQuery q;
    q.seriesId = **id;
    auto points = h.querySeries(q);
    std::vector<double> out;
    for (const auto& p : points.ok() ? points->points : decltype(points->points){}) {
        out.push_back(p.value);
    }
    return out;
}

/// The last value of a series of (node, run); nullopt when it has none.
std::optional<double> lastValue(db::History& h, const std::string& node, const std::string& run,
                                const std::string& name) {
    const auto values = seriesValues(h, node, run, name);
    return values.empty() ? std::nullopt : std::optional<double>(values.back());
}

/// The highest value a series of (node, run) reached; nullopt when it has none. A role's process
/// count is read so: the report after the run killed its processes says 0.
std::optional<double> peakValue(db::History& h, const std::string& node, const std::string& run,
                                const std::string& name) {
    const auto values = seriesValues(h, node, run, name);
    return values.empty() ? std::nullopt
                          : std::optional<double>(*std::max_element(values.begin(), values.end()));
}

TEST_F(PlannedRoles, SubmitSendsThePlanByRoleAndTheDaemonReportsItBesideTheMeasured) {
    ASSERT_TRUE(startDaemon("node-plan"));
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
    plan::NodeMemory node0;
    ASSERT_NO_FATAL_FAILURE(planNode0(recipes, &node0));

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
    const auto reward = peakValue(**h, "node-plan", "", "role.reward_srv.processes");
    ASSERT_TRUE(reward.has_value());
    EXPECT_GE(*reward, 1);
    const auto rewardRss = peakValue(**h, "node-plan", "", "role.reward_srv.rss_bytes");
    ASSERT_TRUE(rewardRss.has_value());
    EXPECT_GT(*rewardRss, 0);
    // And not the measured ones' node-level series: the plan is the run's.
    EXPECT_FALSE(lastValue(**h, "node-plan", "", "role.trainer.planned_train_bytes").has_value());
}

// The recipe's own process roles (analysis.role_rows) go with the run: a process only that row
// names is measured in its role, beside a --role-rows file's row; a bad recipe row is refused at
// StartRun naming its line in the text the daemon got (the file's rows, then the recipe's).
TEST_F(PlannedRoles, TheRecipesRoleRowsGoWithTheRun) {
    ASSERT_TRUE(startDaemon("node-recipe-rows"));
    const std::string cwd = dir.path().string();
    const std::string history = dir.file("history.sqlite");
    const std::string recipes = sourceDir() + "/recipes";
    const std::string rows = dir.file("rows.txt");
    std::ofstream(rows) << "judge_srv title recipe-rows-judge*\n";
    const std::string recipe = dir.file("recipe-rows.yaml");
    std::ofstream(recipe)
        << smallColocatedRecipe("recipe-rows")
        << "analysis:\n  role_rows:\n    - reward_srv title recipe-rows-reward*\n";
    auto parsed = plan::parseRecipe(
        smallColocatedRecipe("recipe-rows") + "analysis:\n  role_rows: [reward_srv title x*]\n",
        "inline.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    ASSERT_EQ(parsed->analysis.roleRows, std::vector<std::string>{"reward_srv title x*"});

    // A bad row of the recipe: line 1 is the file's row, 2 the comment naming the recipe's part.
    const std::string bad = dir.file("bad-recipe-rows.yaml");
    std::ofstream(bad) << smallColocatedRecipe("bad-recipe-rows")
                       << "analysis:\n  role_rows:\n    - Reward argv y\n";
    auto refused =
        runCtl({"submit", address, "--history", history, "--run-id", "bad-recipe-rows", "--recipe",
                bad, "--recipes", recipes, "--role-rows", rows, "--", "/bin/true"},
               cwd);
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE(refused.err.find("role_rows:3:"), std::string::npos) << refused.err;

    const std::string script =
        "(exec -a recipe-rows-reward sleep 20) & (exec -a recipe-rows-judge sleep 20) & sleep 6; "
        "kill %1 %2; wait";
    auto submit =
        runCtl({"submit", address, "--history", history, "--run-id", "recipe-rows", "--recipe",
                recipe, "--recipes", recipes, "--role-rows", rows, "--", "/bin/bash", "-c", script},
               cwd);
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    auto watch = runCtl({"watch", address, "--history", history, "--seconds", "8"}, cwd,
                        std::chrono::seconds(60));
    ASSERT_EQ(watch.exitCode, 0) << watch.err;

    db::OpenOptions open;
    open.readOnly = true;
    auto h = db::History::open(history, open);
    ASSERT_TRUE(h.ok()) << h.error();
    for (const std::string role : {"reward_srv", "judge_srv"}) {
        const auto processes =
            peakValue(**h, "node-recipe-rows", "", "role." + role + ".processes");
        ASSERT_TRUE(processes.has_value()) << role;
        EXPECT_GE(*processes, 1) << role;
    }
}

/// GET /metrics of 127.0.0.1:port; "" when nothing answered.
std::string scrape(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string body;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
        if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
            char buf[4096];
            ssize_t k = 0;
            while ((k = ::read(fd, buf, sizeof(buf))) > 0) {
                body.append(buf, static_cast<std::size_t>(k));
            }
        }
    }
    ::close(fd);
    return body;
}

/// The value of the exposition's line `name{labels}`, if present.
std::optional<double> sample(const std::string& body, const std::string& nameAndLabels) {
    const auto at = body.find("\n" + nameAndLabels + " ");
    if (at == std::string::npos) {
        return std::nullopt;
    }
    return std::strtod(body.c_str() + at + 1 + nameAndLabels.size() + 1, nullptr);
}

// The plan by role in the Prometheus exposition, beside the measured role bytes: every (role,
// phase) row of a live run as runplane_role_planned_bytes, the phase in progress's rows as
// runplane_role_planned_now_bytes; both leave with the run.
TEST_F(PlannedRoles, PrometheusScrapeShowsThePlanBesideTheMeasuredRoleBytes) {
    ASSERT_TRUE(startDaemon("node-prom", {"--metrics-listen", "127.0.0.1:0"}));
    std::string out;
    ASSERT_TRUE(waitUntil(
        [&] {
            out = daemon->child().stdoutText();
            return out.find("http://127.0.0.1:") != std::string::npos;
        },
        std::chrono::seconds(10)))
        << out;
    const int port = std::atoi(out.c_str() + out.find("http://127.0.0.1:") + 17);
    const std::string cwd = dir.path().string();
    const std::string recipe = dir.file("planned-roles.yaml");
    std::ofstream(recipe) << kRecipe;
    const std::string recipes = sourceDir() + "/recipes";
    auto submit = runCtl({"submit", address, "--history", dir.file("history.sqlite"), "--run-id",
                          "prom", "--recipe", recipe, "--recipes", recipes, "--", "/bin/bash", "-c",
                          "echo '[runplane-phase] train'; sleep 6"},
                         cwd);
    ASSERT_EQ(submit.exitCode, 0) << submit.err;

    plan::NodeMemory node0;
    ASSERT_NO_FATAL_FAILURE(planNode0(recipes, &node0));
    std::string body;
    ASSERT_TRUE(waitUntil(
        [&] {
            body = scrape(port);
            return body.find("runplane_role_planned_now_bytes{") != std::string::npos;
        },
        std::chrono::seconds(15)))
        << body;
    EXPECT_NE(body.find("# TYPE runplane_role_planned_bytes gauge"), std::string::npos);
    EXPECT_TRUE(sample(body, "runplane_role_rss_bytes{role=\"trainer\"}").has_value()) << body;
    int rows = 0;
    for (plan::Phase phase : plan::kPhases) {
        const std::string ph = plan::toString(phase);
        for (const auto& line : plan::planBesideMeasured(node0, phase, {})) {
            if (line.role == "unexplained") {
                continue;
            }
            const std::string labels =
                "{run_id=\"prom\",role=\"" + line.role + "\",phase=\"" + ph + "\"}";
            const auto got = sample(body, "runplane_role_planned_bytes" + labels);
            ASSERT_TRUE(got.has_value()) << labels << "\n" << body;
            EXPECT_DOUBLE_EQ(*got, line.plannedBytes) << labels;
            ++rows;
            // Only the phase in progress (the run said train) is "now".
            EXPECT_EQ(sample(body, "runplane_role_planned_now_bytes" + labels).has_value(),
                      phase == plan::Phase::Train)
                << labels;
        }
    }
    EXPECT_EQ(rows, 16);
    // The run ends: its plan leaves the exposition; the measured role bytes stay.
    ASSERT_TRUE(waitUntil(
        [&] {
            body = scrape(port);
            return !body.empty() && body.find("runplane_role_planned_bytes{") == std::string::npos;
        },
        std::chrono::seconds(20)))
        << body;
    EXPECT_TRUE(sample(body, "runplane_role_rss_bytes{role=\"trainer\"}").has_value());
}

}  // namespace
}  // namespace runplane::testing
