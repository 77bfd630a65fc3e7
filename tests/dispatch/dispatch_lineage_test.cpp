// issue 49: `runplanectl dispatch launch` records lineage like `submit` (docs/history.md "Run
// lineage"): `--resumes RUN[@STEP]` / `--forks RUN[@STEP]`, else the checkpoint the launch's argv
// loads, stored in the run_lineage table of the history the launch records into. Real daemons
// on loopback addresses, the suite's fake `ray` (tests/dispatch/fakebin), the real runplanectl.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "db/history/history.h"
#include "tests/dispatch/dispatch_test_support.h"
#include "tests/support/process.h"

using namespace runplane::dispatch_testing;

namespace {

struct Launcher {
    Cluster& cluster;
    std::string recipe;
    std::string history;

    /// `runplanectl dispatch launch` with `extra` flags and the command after `--`.
    int launch(const std::string& runId, const std::vector<std::string>& extra,
               const std::vector<std::string>& command, std::string* out) const {
        std::vector<std::string> argv{
            runplane::testing::builtBinary("backend/cli/runplanectl"), "dispatch", "launch",
            "--recipe", recipe, "--head", cluster.nodes[0]->address(), "--workers",
            cluster.nodes[1]->address(), "--history", history, "--run-id", runId, "--timeout", "20",
            // MASTER_ADDR is a loopback address here: a real FAIL.
            "--override-preflight"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.emplace_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return runplane::testing::runCommand(argv, out);
    }
    int stop(const std::string& runId) const {
        std::string out;
        return runplane::testing::runCommand(
            {runplane::testing::builtBinary("backend/cli/runplanectl"), "dispatch", "stop",
             "--head", cluster.nodes[0]->address(), "--workers", cluster.nodes[1]->address(),
             "--run-id", runId, "--grace", "1", "--force", "--history", history},
            &out);
    }
};

std::optional<runplane::db::History::RunParent> parentOf(const std::string& history,
                                                         const std::string& run) {
    runplane::db::OpenOptions ro;
    ro.readOnly = true;
    auto h = runplane::db::History::open(history, ro);
    EXPECT_TRUE(h.ok()) << h.error();
    if (!h.ok()) {
        return std::nullopt;
    }
    auto p = (*h)->runParent(runplane::RunId{run});
    EXPECT_TRUE(p.ok()) << p.error();
    return p.ok() ? *p : std::nullopt;
}

}  // namespace

TEST(DispatchLineage, LaunchRecordsTheNamedParentOrTheCheckpointItsArgvLoads) {
    Cluster c;
    c.start({"2.40.0", "2.40.0"});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    // The CPU smoke recipe on two nodes, `ray` from the fake.
    std::string recipe = readFile(runplane::testing::sourceDir() + "/recipes/smoke-local.yaml");
    ASSERT_NE(recipe.find("nodes: 1"), std::string::npos);
    recipe.replace(recipe.find("nodes: 1"), 8, "nodes: 2");
    recipe += "environment:\n  env:\n    PATH: " + fakeRayDir() + ":/usr/bin:/bin\n";
    const std::string recipeFile = c.dir.path() + "/recipe.yaml";
    std::ofstream(recipeFile) << recipe;
    const Launcher l{c, recipeFile, c.dir.path() + "/history.sqlite"};
    const std::string ckpt = c.dir.path() + "/ckpt/parent";
    const std::string sleeper = "exec sleep 60";

    // The parent saves into ckpt; nothing loaded, so no lineage.
    std::string out;
    ASSERT_EQ(
        l.launch("mn-parent", {}, {"/bin/sh", "-c", sleeper, "launcher", "--save", ckpt}, &out), 0)
        << out;
    EXPECT_EQ(out.find("recorded: run"), std::string::npos) << out;
    EXPECT_FALSE(parentOf(l.history, "mn-parent").has_value());
    ASSERT_EQ(l.stop("mn-parent"), 0);

    // --resumes names the parent and its step.
    out.clear();
    ASSERT_EQ(l.launch("mn-resume", {"--resumes", "mn-parent@5"}, {"/bin/sh", "-c", sleeper}, &out),
              0)
        << out;
    EXPECT_NE(out.find("dispatch launch: recorded: run mn-resume is a resume of mn-parent@5"),
              std::string::npos)
        << out;
    auto p = parentOf(l.history, "mn-resume");
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->parentId, "mn-parent");
    EXPECT_EQ(p->kind, "resume");
    EXPECT_EQ(p->step, 5);
    EXPECT_EQ(p->source, "flag");
    ASSERT_EQ(l.stop("mn-resume"), 0);

    // No flag: the argv loads iter_0000007 of the parent's --save folder and saves elsewhere: a
    // fork of mn-parent at step 7, detected from the argv.
    out.clear();
    ASSERT_EQ(l.launch("mn-fork", {},
                       {"/bin/sh", "-c", sleeper, "launcher", "--load", ckpt + "/iter_0000007",
                        "--save", c.dir.path() + "/ckpt/fork"},
                       &out),
              0)
        << out;
    EXPECT_NE(out.find("recorded: run mn-fork is a fork of mn-parent@7 (from the checkpoint its "
                       "argv loads)"),
              std::string::npos)
        << out;
    p = parentOf(l.history, "mn-fork");
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->parentId, "mn-parent");
    EXPECT_EQ(p->kind, "fork");
    EXPECT_EQ(p->step, 7);
    EXPECT_EQ(p->source, "argv");
    ASSERT_EQ(l.stop("mn-fork"), 0);

    // An unknown parent, or both flags, is refused before any node is touched.
    const std::string callsBefore = c.calls();
    out.clear();
    EXPECT_EQ(l.launch("mn-bad", {"--forks", "nope@3"}, {"/bin/sh", "-c", sleeper}, &out), 2)
        << out;
    EXPECT_NE(out.find("dispatch launch: parent run 'nope' is not in the history"),
              std::string::npos)
        << out;
    out.clear();
    EXPECT_EQ(l.launch("mn-bad", {"--forks", "mn-parent", "--resumes", "mn-parent"},
                       {"/bin/sh", "-c", sleeper}, &out),
              2)
        << out;
    EXPECT_NE(out.find("--resumes and --forks: give one parent"), std::string::npos) << out;
    EXPECT_EQ(c.calls(), callsBefore) << "no ray command ran for a refused launch";
    runplane::db::OpenOptions ro;
    ro.readOnly = true;
    auto h = runplane::db::History::open(l.history, ro);
    ASSERT_TRUE(h.ok()) << h.error();
    auto bad = (*h)->run(runplane::RunId{"mn-bad"});
    ASSERT_TRUE(bad.ok()) << bad.error();
    EXPECT_FALSE(bad->has_value()) << "a refused launch is not recorded";
}
