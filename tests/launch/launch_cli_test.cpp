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
    EXPECT_NE(run.output.find("run-unsupported.sh:15: warning: not understood: command "
                              "substitution"),
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

}  // namespace
}  // namespace runplane::plan::launch
