// runplanectl export / import as a user runs them (integration; issue 4).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

std::string ctl() {
    const char* bin = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(bin != nullptr ? bin : ".") + "/backend/cli/runplanectl";
}

TEST(LaunchCli, ExportWritesTheScriptsAndTheSteps) {
    test::TempDir dir;
    auto run =
        test::runProcess({ctl(), "export", test::recipesDir() + "/qwen3.8-2.4T-A95B-full.yaml",
                          "--flavour", "miles", "--out", dir.file("out")},
                         {}, dir.path());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    for (const char* f : {"run-qwen3.8-2.4T-A95B-full.sh", "ray-head.sh", "ray-worker.sh",
                          "ray-wait.sh", "launch-steps.txt"}) {
        EXPECT_TRUE(std::filesystem::exists(dir.file("out/") + f)) << f;
    }
    EXPECT_NE(run.output.find("1. head node"), std::string::npos) << run.output;
    auto bad =
        test::runProcess({ctl(), "export", test::recipesDir() + "/qwen3.8-2.4T-A95B-full.yaml",
                          "--flavour", "torch"},
                         {}, dir.path());
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.output.find("--flavour 'torch'"), std::string::npos);
}

TEST(LaunchCli, ImportPrintsWhatItDidNotUnderstandAndWritesTheRecipe) {
    test::TempDir dir;
    auto run = test::runProcess(
        {ctl(), "import", test::dataDir() + "/run-unsupported.sh", "-o", dir.file("r.yaml")}, {},
        dir.path());
    EXPECT_EQ(run.exitCode, 0) << run.output;
    EXPECT_NE(run.output.find("run-unsupported.sh:5: warning: not understood: for loop"),
              std::string::npos)
        << run.output;
    // $(nvidia-smi ...) on line 15 is a run-time probe kept as a pre-launch step, not a warning
    EXPECT_EQ(run.output.find("run-unsupported.sh:15: warning"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("run-unsupported.sh:25: warning: --lr expects one value"),
              std::string::npos)
        << run.output;
    const std::string yaml = test::readFile(dir.file("r.yaml"));
    EXPECT_NE(yaml.find("rollout_batch_size: 32"), std::string::npos) << yaml;
    // an existing file is not replaced without --force
    auto again = test::runProcess(
        {ctl(), "import", test::dataDir() + "/run-unsupported.sh", "-o", dir.file("r.yaml")}, {},
        dir.path());
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_EQ(test::readFile(dir.file("r.yaml")), yaml);
    // --env decides the if blocks
    auto multi = test::runProcess({ctl(), "import", test::dataDir() + "/run-qwen3-30B-A3B-vime.sh",
                                   "--env", "ACTOR_NUM_NODES=2", "--env", "MASTER_ADDR=10.0.0.1"},
                                  {}, dir.path());
    EXPECT_EQ(multi.exitCode, 0) << multi.output;
    EXPECT_NE(multi.output.find("gpus_per_engine: 16"), std::string::npos) << multi.output;
    auto missing = test::runProcess({ctl(), "import", dir.file("nope.sh")}, {}, dir.path());
    EXPECT_NE(missing.exitCode, 0);
}

TEST(LaunchCli, ImportedGlmScriptFailsValidation) {
    test::TempDir dir;
    auto run = test::runProcess(
        {ctl(), "import", test::dataDir() + "/run-glm4.7-30B-A3B.sh", "-o", dir.file("glm.yaml")},
        {}, dir.path());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    auto validate = test::runProcess({ctl(), "validate", dir.file("glm.yaml")}, {}, dir.path());
    EXPECT_EQ(validate.exitCode, 1) << validate.output;
    EXPECT_NE(validate.output.find("trainer.expert-grid"), std::string::npos) << validate.output;
}

// Every import: an "error:" line and exit status 1 go together (issue #15); no crash.
void expectErrorStatusAgrees(const test::RunResult& run, const std::string& what) {
    EXPECT_TRUE(run.exitCode == 0 || run.exitCode == 1) << what << "\n" << run.output;
    const bool printedError = run.output.find("error:") != std::string::npos;
    if (printedError) {
        EXPECT_EQ(run.exitCode, 1) << what << "\n" << run.output;
    }
}

TEST(LaunchCli, ImportExitsOneWhenItPrintsAnError) {
    test::TempDir dir;
    // a launch command without --rollout-batch-size: the recipe misses a required field
    test::writeFile(dir.file("run.sh"), "python3 train.py --lr 1e-6\n");
    auto printed = test::runProcess({ctl(), "import", dir.file("run.sh"), "--model", "qwen3-4B"},
                                    {}, dir.path());
    EXPECT_NE(printed.output.find("error: no --rollout-batch-size"), std::string::npos)
        << printed.output;
    EXPECT_EQ(printed.exitCode, 1) << printed.output;
    // also when the recipe is written to a file
    auto written = test::runProcess(
        {ctl(), "import", dir.file("run.sh"), "--model", "qwen3-4B", "-o", dir.file("r.yaml")}, {},
        dir.path());
    EXPECT_EQ(written.exitCode, 1) << written.output;
    EXPECT_TRUE(std::filesystem::exists(dir.file("r.yaml")));
    // no model named anywhere
    test::writeFile(dir.file("nomodel.sh"), "python3 train.py --rollout-batch-size 8\n");
    auto noModel = test::runProcess({ctl(), "import", dir.file("nomodel.sh")}, {}, dir.path());
    EXPECT_NE(noModel.output.find("error:"), std::string::npos) << noModel.output;
    EXPECT_EQ(noModel.exitCode, 1) << noModel.output;
    // a reader limit
    std::string doubling = "A=x\n";
    for (int i = 0; i < 40; ++i) {
        doubling += "A=\"$A$A\"\n";
    }
    test::writeFile(dir.file("doubling.sh"),
                    doubling + "python3 train.py --rollout-batch-size 8 --x \"$A\"\n");
    auto limit = test::runProcess({ctl(), "import", dir.file("doubling.sh"), "--model", "qwen3-4B"},
                                  {}, dir.path());
    EXPECT_NE(limit.output.find("doubling.sh:22:3: error: limit: "), std::string::npos)
        << limit.output;
    EXPECT_EQ(limit.exitCode, 1) << limit.output;
    // a clean import still exits 0
    auto clean =
        test::runProcess({ctl(), "import", test::dataDir() + "/run-qwen3-4B.sh"}, {}, dir.path());
    EXPECT_EQ(clean.output.find("error:"), std::string::npos) << clean.output;
    EXPECT_EQ(clean.exitCode, 0) << clean.output;
}

TEST(LaunchCli, ImportOfTheFuzzCorpusNeverCrashesAndItsStatusMatchesItsErrors) {
    const std::string corpus = test::sourceDir() + "/tests/fuzz/corpus/import";
    test::TempDir dir;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        auto run =
            test::runProcess({ctl(), "import", entry.path().string(), "--verbose"}, {}, dir.path());
        expectErrorStatusAgrees(run, entry.path().string());
    }
}

TEST(LaunchCli, ImportSourceStaysInsideTheAllowedFolders) {
    test::TempDir dir;
    const std::string secret = "hunter2-cli-secret";
    test::writeFile(dir.file("outside.sh"), "LR=" + secret + "\n" + secret + " --as-a-command\n");
    test::writeFile(dir.file("scripts/run.sh"),
                    "source ../outside.sh\npython3 train.py --rollout-batch-size 8 --x \"$LR\"\n");
    auto refused = test::runProcess(
        {ctl(), "import", dir.file("scripts/run.sh"), "--model", "qwen3-4B", "--verbose"}, {},
        dir.path());
    EXPECT_EQ(refused.output.find(secret), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("run.sh:1: warning: source ../outside.sh: refused: "),
              std::string::npos)
        << refused.output;
    expectErrorStatusAgrees(refused, "refused");
    auto allowed = test::runProcess({ctl(), "import", dir.file("scripts/run.sh"), "--model",
                                     "qwen3-4B", "--source-root", dir.path()},
                                    {}, dir.path());
    EXPECT_EQ(allowed.output.find("refused"), std::string::npos) << allowed.output;
    EXPECT_NE(allowed.output.find(secret), std::string::npos) << allowed.output;  // the recipe
    expectErrorStatusAgrees(allowed, "allowed");
    auto badRoot = test::runProcess(
        {ctl(), "import", dir.file("scripts/run.sh"), "--source-root", dir.file("nope")}, {},
        dir.path());
    EXPECT_EQ(badRoot.exitCode, 2) << badRoot.output;
}

// Issue 45: a miles Python launcher (scripts/run_*.py) is read by running it with its command step
// replaced (docs/launch-scripts.md, "miles' Python launchers"): our own launcher in miles' style
// (data/py_launcher), run by the system python3. Without --run-launcher the import refuses and
// says why; with it, the recipe holds what the launcher decides and the export hands train.py the
// flags the recorded commands hand it.
std::map<std::string, std::vector<std::string>> trainFlags(const std::vector<test::Call>& calls) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& c : calls) {
        if (c.tool != "python3" && c.tool != "python") {
            continue;
        }
        std::size_t i = 0;
        while (i < c.argv.size() && !c.argv[i].ends_with("train.py")) {
            ++i;
        }
        std::string flag;
        for (++i; i < c.argv.size(); ++i) {
            if (c.argv[i].rfind("--", 0) == 0) {
                flag = c.argv[i];
                out[flag].clear();
            } else if (!flag.empty()) {
                out[flag].push_back(c.argv[i]);
            }
        }
    }
    return out;
}

TEST(LaunchCli, PythonLauncherImportsByRecordingTheCommandsItWouldRun) {
    test::TempDir dir;
    const std::string launcher = test::dataDir() + "/py_launcher/scripts/run_toy_qwen3_4b.py";
    auto refused = test::runProcess({ctl(), "import", launcher}, {}, dir.path());
    EXPECT_EQ(refused.exitCode, 2) << refused.output;
    EXPECT_NE(refused.output.find("--run-launcher"), std::string::npos) << refused.output;
    auto run = test::runProcess(
        {ctl(), "import", launcher, "--run-launcher", "--launcher-arg", "--num-rollout",
         "--launcher-arg", "50", "--recorded", dir.file("recorded.sh"), "-o", dir.file("r.yaml")},
        {}, dir.path());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    const std::string recorded = test::readFile(dir.file("recorded.sh"));
    // the downloads and the cleanup are comments: nothing the launcher builds ran
    EXPECT_NE(recorded.find("# prepare: hf download Qwen/Qwen3-4B"), std::string::npos) << recorded;
    EXPECT_NE(recorded.find("ray job submit"), std::string::npos) << recorded;
    const std::string yaml = test::readFile(dir.file("r.yaml"));
    EXPECT_NE(yaml.find("framework: miles"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("num_rollout: 50"), std::string::npos) << yaml;  // --num-rollout 50
    EXPECT_NE(yaml.find("tp: 2"), std::string::npos) << yaml;            // __post_init__
    // round trip: the export hands train.py what the recorded commands hand it
    auto exported = test::runProcess(
        {ctl(), "export", dir.file("r.yaml"), "--flavour", "miles", "--out", dir.file("out")}, {},
        dir.path());
    ASSERT_EQ(exported.exitCode, 0) << exported.output;
    std::string job;
    for (const auto& e : std::filesystem::directory_iterator(dir.file("out"))) {
        if (e.path().filename().string().rfind("run-", 0) == 0) {
            job = e.path().string();
        }
    }
    ASSERT_FALSE(job.empty());
    test::FakeTools original(dir.file("fake-a"));
    auto env = original.env();
    env.push_back({"RUNPLANE_RAY_WAIT_TIMEOUT_S", "0"});
    auto a = test::runProcess({"bash", dir.file("recorded.sh")}, env, dir.path());
    ASSERT_EQ(a.exitCode, 0) << a.output;
    test::FakeTools back(dir.file("fake-b"));
    auto envB = back.env();
    envB.push_back({"RUNPLANE_RAY_WAIT_TIMEOUT_S", "0"});
    auto b = test::runProcess({"bash", job}, envB, dir.file("out"));
    ASSERT_EQ(b.exitCode, 0) << b.output;
    const auto before = trainFlags(original.calls());
    const auto after = trainFlags(back.calls());
    ASSERT_GT(before.size(), 40u);
    for (const auto& [flag, values] : before) {
        const auto it = after.find(flag);
        ASSERT_NE(it, after.end()) << flag << " missing from the export";
        // numbers compare as the framework's parser reads them (0.00 = 0)
        bool same = it->second.size() == values.size();
        for (std::size_t i = 0; same && i < values.size(); ++i) {
            char* endA = nullptr;
            char* endB = nullptr;
            const double x = std::strtod(values[i].c_str(), &endA);
            const double y = std::strtod(it->second[i].c_str(), &endB);
            same = values[i] == it->second[i] ||
                   (!values[i].empty() && *endA == '\0' && *endB == '\0' && x == y);
        }
        EXPECT_TRUE(same) << flag;
    }
    // a launcher that fails says so, with its output
    test::writeFile(dir.file("bad/scripts/run_bad.py"), "raise SystemExit('no such model')\n");
    auto bad = test::runProcess(
        {ctl(), "import", dir.file("bad/scripts/run_bad.py"), "--run-launcher"}, {}, dir.path());
    EXPECT_EQ(bad.exitCode, 1) << bad.output;
    EXPECT_NE(bad.output.find("no such model"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace runplane::plan::launch
