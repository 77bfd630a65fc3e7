// runplanectl export / import as a user runs them (integration; issue 4).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

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

}  // namespace
}  // namespace runplane::plan::launch
