// issue 6: runplane-smoke flags, the batch identity, and errors that name the flag.
#include <gtest/gtest.h>

#include "compute/smoke/smoke_config.h"

using runplane::smoke::BackupMode;
using runplane::smoke::DeviceKind;
using runplane::smoke::parseSmokeArgs;

TEST(SmokeConfig, DefaultsSatisfyBatchIdentity) {
    auto c = parseSmokeArgs({});
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->layers, 4);
    EXPECT_EQ(c->rolloutBatchSize * c->nSamplesPerPrompt,
              c->globalBatchSize * c->numStepsPerRollout());
    // The documented default run (docs/smoke-workload.md): 64 x 8 = 512 = 128 x 4.
    EXPECT_EQ(c->rolloutBatchSize, 64);
    EXPECT_EQ(c->nSamplesPerPrompt, 8);
    EXPECT_EQ(c->globalBatchSize, 128);
    EXPECT_EQ(c->numStepsPerRollout(), 4);
    EXPECT_DOUBLE_EQ(c->temperature, 0.3);
    EXPECT_EQ(c->backupMode, BackupMode::kZeroCopy);
    EXPECT_EQ(c->device, DeviceKind::kCpu);
    EXPECT_TRUE(c->loraBaseCpuBackup);
}

TEST(SmokeConfig, ParsesEveryDocumentedFlag) {
    auto c = parseSmokeArgs({"--layers",
                             "2",
                             "--rollout-batch-size",
                             "8",
                             "--n-samples-per-prompt",
                             "4",
                             "--global-batch-size=16",
                             "--lora-rank",
                             "4",
                             "--lora-alpha",
                             "8.5",
                             "--backup-mode",
                             "clone",
                             "--backup-scale-mb",
                             "0",
                             "--rl-steps",
                             "3",
                             "--eval-interval",
                             "2",
                             "--sft-steps",
                             "10",
                             "--seed",
                             "42",
                             "--device",
                             "cpu",
                             "--threads",
                             "2",
                             "--metrics-jsonl",
                             "/tmp/x.jsonl",
                             "--no-lora-base-cpu-backup"});
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->layers, 2);
    EXPECT_EQ(c->rolloutBatchSize, 8);
    EXPECT_EQ(c->nSamplesPerPrompt, 4);
    EXPECT_EQ(c->globalBatchSize, 16);
    EXPECT_EQ(c->numStepsPerRollout(), 2);
    EXPECT_EQ(c->loraRank, 4);
    EXPECT_DOUBLE_EQ(c->loraAlpha, 8.5);
    EXPECT_EQ(c->backupMode, BackupMode::kClone);
    EXPECT_EQ(c->backupScaleMb, 0);
    EXPECT_EQ(c->rlSteps, 3);
    EXPECT_EQ(c->evalInterval, 2);
    EXPECT_EQ(c->sftSteps, 10);
    EXPECT_EQ(c->seed, 42U);
    EXPECT_EQ(c->threads, 2);
    EXPECT_EQ(c->metricsJsonl, "/tmp/x.jsonl");
    EXPECT_FALSE(c->loraBaseCpuBackup);
}

TEST(SmokeConfig, RejectsBatchIdentityViolationNamingTheFlag) {
    auto c = parseSmokeArgs({"--rollout-batch-size", "32", "--n-samples-per-prompt", "8",
                             "--global-batch-size", "100"});
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("--global-batch-size 100"), std::string::npos) << c.error();
    EXPECT_NE(c.error().find("256"), std::string::npos) << c.error();
    // More samples per step than a rollout produces is a violation too.
    auto big = parseSmokeArgs(
        {"--rollout-batch-size", "4", "--n-samples-per-prompt", "2", "--global-batch-size", "16"});
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().find("--global-batch-size 16"), std::string::npos);
}

TEST(SmokeConfig, BadValuesNameFlagAndValue) {
    struct Case {
        std::vector<std::string> args;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {{"--layers", "four"}, "--layers four: expected an integer"},
        {{"--layers", "0"}, "--layers 0: must be in [1, 64]"},
        {{"--backup-mode", "copy"}, "--backup-mode copy: expected zero_copy or clone"},
        {{"--device", "tpu"}, "--device tpu: expected cpu or cuda"},
        {{"--lora-alpha", "nan"}, "--lora-alpha nan: expected a number"},
        {{"--seed", "-1"}, "--seed -1: expected a non-negative integer"},
        {{"--threads"}, "--threads needs a value"},
        {{"--bogus", "1"}, "unknown flag --bogus"},
        {{"stray"}, "unexpected argument 'stray'"},
        {{"--lora-base-cpu-backup=yes"}, "--lora-base-cpu-backup takes no value"},
        {{"--lora-rank", "128", "--d-model", "64"}, "--lora-rank 128: must not exceed --d-model"},
    };
    for (const Case& k : cases) {
        auto c = parseSmokeArgs(k.args);
        ASSERT_FALSE(c.ok()) << k.expect;
        EXPECT_NE(c.error().find(k.expect), std::string::npos)
            << "got: " << c.error() << "\nwanted: " << k.expect;
    }
}

TEST(SmokeConfig, HelpSkipsValidationAndListsFlags) {
    auto c = parseSmokeArgs({"--global-batch-size", "7", "--help"});
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->helpRequested);
    const std::string usage = runplane::smoke::smokeUsage();
    for (const char* flag :
         {"--layers", "--rollout-batch-size", "--n-samples-per-prompt", "--global-batch-size",
          "--lora-rank", "--lora-alpha", "--backup-mode", "--backup-scale-mb", "--rl-steps",
          "--eval-interval", "--sft-steps", "--seed", "--device", "--threads", "--metrics-jsonl",
          "--lora-base-cpu-backup"}) {
        EXPECT_NE(usage.find(flag), std::string::npos) << flag;
    }
}
