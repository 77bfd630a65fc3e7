// issue 49: run lineage through the real runplanectl and a real daemon. Runs submitted with
// `--resumes` / `--forks`, or whose argv loads a checkpoint from a known run's `--save` folder,
// record their parent (and the step) in a real history file; `runs`, `runs show` and `runs parent`
// read and change it (docs/history.md "Run lineage").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

// A run that saves/loads checkpoints as slime/miles launches name them (sh ignores the flags).
CtlResult submit(const std::string& address, const std::string& history, const std::string& id,
                 std::vector<std::string> flags, const std::vector<std::string>& ckptArgs,
                 const std::string& cwd) {
    std::vector<std::string> args = {"submit",   address, "--history", history,
                                     "--run-id", id,      "--name",    id};
    args.insert(args.end(), flags.begin(), flags.end());
    for (const char* a : {"--", "/bin/sh", "-c", "sleep 0.1", "train"}) {
        args.emplace_back(a);
    }
    args.insert(args.end(), ckptArgs.begin(), ckptArgs.end());
    return runCtl(args, cwd);
}

TEST(RunLineage, LaunchRecordsTheParentAndRunsShowsIt) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-l");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string h = dir.file("history.sqlite");
    const std::string cwd = dir.path().string();
    const std::string ckptA = dir.file("ckpt/a");
    std::filesystem::create_directories(ckptA);
    { std::ofstream(ckptA + "/latest_checkpointed_iteration.txt") << "200\n"; }

    // The first run saves into ckpt/a; nothing to detect.
    auto base = submit(address, h, "base", {}, {"--save", ckptA}, cwd);
    ASSERT_EQ(base.exitCode, 0) << base.err;
    EXPECT_EQ(base.err.find("recorded:"), std::string::npos) << base.err;
    // Loads ckpt/a and saves there too: a resume of base at the tracker file's step.
    auto resumed =
        submit(address, h, "resumed", {}, {"--load", ckptA + "/", "--save=" + ckptA}, cwd);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("recorded: run resumed is a resume of base@200 (from the checkpoint "
                               "its argv loads)"),
              std::string::npos)
        << resumed.err;
    // Loads iter_0000100 of ckpt/a and saves elsewhere: a fork of the run that saved into ckpt/a
    // last (resumed), at 100.
    auto forked = submit(address, h, "forked", {},
                         {"--load", ckptA + "/iter_0000100", "--save", dir.file("ckpt/b")}, cwd);
    ASSERT_EQ(forked.exitCode, 0) << forked.err;
    EXPECT_NE(forked.err.find("is a fork of resumed@100"), std::string::npos) << forked.err;
    // Named on the command line.
    auto named = submit(address, h, "named", {"--forks", "base@50"}, {}, cwd);
    ASSERT_EQ(named.exitCode, 0) << named.err;
    EXPECT_NE(named.err.find("recorded: run named is a fork of base@50"), std::string::npos)
        << named.err;
    // An unknown parent is refused before anything starts.
    auto unknown = submit(address, h, "orphan", {"--resumes", "nope@3"}, {}, cwd);
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("parent run 'nope' is not in the history"), std::string::npos)
        << unknown.err;
    auto badStep = submit(address, h, "orphan", {"--forks", "base@x"}, {}, cwd);
    EXPECT_EQ(badStep.exitCode, 2);
    EXPECT_NE(badStep.err.find("--forks 'base@x': expected RUN@STEP"), std::string::npos)
        << badStep.err;

    auto runs = runCtl({"runs", "--history", h, "--json"}, cwd);
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    std::map<std::string, nlohmann::json> byId;
    for (const auto& r : nlohmann::json::parse(runs.out)) {
        byId[r["id"]] = r;
    }
    ASSERT_EQ(byId.size(), 4u) << runs.out;  // "orphan" never started
    EXPECT_TRUE(byId["base"]["lineage"].is_null());
    EXPECT_EQ(byId["resumed"]["lineage"],
              (nlohmann::json{
                  {"parent", "base"}, {"kind", "resume"}, {"step", 200}, {"source", "argv"}}));
    EXPECT_EQ(byId["forked"]["lineage"],
              (nlohmann::json{
                  {"parent", "resumed"}, {"kind", "fork"}, {"step", 100}, {"source", "argv"}}));
    EXPECT_EQ(
        byId["named"]["lineage"],
        (nlohmann::json{{"parent", "base"}, {"kind", "fork"}, {"step", 50}, {"source", "flag"}}));
    auto table = runCtl({"runs", "--history", h, "-o", "wide"}, cwd);
    EXPECT_NE(table.out.find("LINEAGE"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("resume of base@200"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("fork of resumed@100"), std::string::npos) << table.out;

    // runs show: parent, ancestors, children.
    auto show = runCtl({"runs", "show", "forked", "--history", h, "--json"}, cwd);
    ASSERT_EQ(show.exitCode, 0) << show.err;
    const auto s = nlohmann::json::parse(show.out);
    EXPECT_EQ(s["parent"]["parent"], "resumed");
    ASSERT_EQ(s["ancestors"].size(), 1u);
    EXPECT_EQ(s["ancestors"][0]["parent"], "base");
    EXPECT_EQ(s["ancestors"][0]["step"], 200);
    auto showBase = runCtl({"runs", "show", "base", "--history", h}, cwd);
    ASSERT_EQ(showBase.exitCode, 0) << showBase.err;
    EXPECT_NE(showBase.out.find("child     named (fork@50)"), std::string::npos) << showBase.out;
    EXPECT_NE(showBase.out.find("child     resumed (resume@200)"), std::string::npos)
        << showBase.out;
    EXPECT_NE(showBase.out.find("parent    -"), std::string::npos) << showBase.out;
    auto showNone = runCtl({"runs", "show", "nope", "--history", h}, cwd);
    EXPECT_EQ(showNone.exitCode, 2);
    EXPECT_NE(showNone.err.find("no run 'nope' in " + h), std::string::npos) << showNone.err;

    // The user changes it: a cycle is refused, a new parent replaces the old, --clear removes it.
    auto cycle = runCtl({"runs", "parent", "base", "forked", "--history", h}, cwd);
    EXPECT_EQ(cycle.exitCode, 2);
    EXPECT_NE(cycle.err.find("run 'base' is an ancestor of 'forked'"), std::string::npos)
        << cycle.err;
    auto change = runCtl({"runs", "parent", "named", "resumed@150", "--fork", "--history", h}, cwd);
    ASSERT_EQ(change.exitCode, 0) << change.err;
    EXPECT_NE(change.out.find("named: fork of resumed@150"), std::string::npos) << change.out;
    auto after = runCtl({"runs", "show", "named", "--history", h, "--json"}, cwd);
    const auto a = nlohmann::json::parse(after.out);
    EXPECT_EQ(a["parent"]["parent"], "resumed");
    EXPECT_EQ(a["parent"]["step"], 150);
    EXPECT_EQ(a["parent"]["source"], "user");
    auto clear = runCtl({"runs", "parent", "named", "--clear", "--history", h}, cwd);
    ASSERT_EQ(clear.exitCode, 0) << clear.err;
    auto cleared = runCtl({"runs", "show", "named", "--history", h, "--json"}, cwd);
    EXPECT_TRUE(nlohmann::json::parse(cleared.out)["parent"].is_null()) << cleared.out;
    daemon.stop();
}

}  // namespace
}  // namespace runplane::testing
