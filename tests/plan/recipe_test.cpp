// Recipe YAML: parsing with line:column marks, unknown keys with suggestions, type errors,
// defaults, and the parse(write(r)) == r round trip on every shipped recipe. (issue 3)

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/plan/recipe.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

const char* const kMinimal = test::kMinimalRecipe;

std::vector<std::string> shippedRecipeFiles() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test::recipesDir())) {
        const auto& p = entry.path();
        if (entry.is_regular_file() && p.extension() == ".yaml" &&
            p.parent_path().filename() != "models") {
            files.push_back(p.string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

TEST(RecipeParse, MinimalRecipeGetsDocumentedDefaults) {
    auto r = parseRecipe(kMinimal, "min.yaml");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->framework, Framework::Slime);
    EXPECT_EQ(r->model.name, "qwen3-4B");
    EXPECT_EQ(r->batch.rolloutBatchSize, 32);
    EXPECT_EQ(r->batch.nSamplesPerPrompt, 1);
    EXPECT_EQ(r->trainer.tp, 1);
    EXPECT_FALSE(r->trainer.etp.has_value());
    EXPECT_EQ(effectiveEtp(*r), 1);
    EXPECT_EQ(r->hardware.gpusPerNode, 8);
    EXPECT_EQ(r->placement, Placement::Disaggregated);
    EXPECT_EQ(r->memory.backupMode, BackupMode::ZeroCopy);
    EXPECT_DOUBLE_EQ(r->cluster.rayObjectStoreFraction, 0.3);
    EXPECT_EQ(effectiveEngine(*r), RolloutEngine::Sglang);
    EXPECT_EQ(effectiveLauncher(*r), LauncherKind::SlimeBash);
}

TEST(RecipeParse, FullRecipeFieldsAndLocations) {
    Recipe r = test::loadShipped("qwen3.8-2.4T-A95B-full.yaml");
    EXPECT_EQ(r.framework, Framework::Miles);
    EXPECT_EQ(r.model.variant, "full");
    EXPECT_EQ(r.cluster.nodes, 16);
    EXPECT_EQ(r.hardware.gpusPerNode, 4);
    EXPECT_DOUBLE_EQ(r.hardware.hostRamGb, 956);
    EXPECT_EQ(r.trainer.pp, 4);
    EXPECT_EQ(r.trainer.ep, 16);
    EXPECT_EQ(r.trainer.etp, 1);
    EXPECT_EQ(r.rollout.gpusPerEngine, 16);
    EXPECT_EQ(r.rollout.weightDtype, WeightDtype::Nvfp4);
    EXPECT_EQ(r.lora.rank, 32);
    EXPECT_DOUBLE_EQ(r.lora.alpha, 64);
    EXPECT_EQ(r.lora.targetModules,
              (std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj"}));
    EXPECT_EQ(r.memory.colocateMemoryPeakDevice, PeakDevice::Gpu);
    EXPECT_EQ(r.environment.ncclVersion, "2.30.7");
    EXPECT_EQ(r.hardware.gpu, "GB300");  // the launcher's --hardware (no longer in extra_args)
    EXPECT_DOUBLE_EQ(r.rollout.memFraction, 0.7);  // what scripts/run_qwen3_8.py passes
    ASSERT_EQ(r.extraArgs.size(), 3u);
    EXPECT_EQ(r.extraArgs[1].flag, "--rollout-max-concurrency");
    EXPECT_EQ(r.extraArgs[1].values, std::vector<std::string>{"8"});
    const SourceLoc ep = r.sources.find("trainer.ep");
    EXPECT_GT(ep.line, 20);
    EXPECT_EQ(ep.column, 3);
    // Unwritten fields fall back to their section.
    EXPECT_EQ(r.sources.find("trainer.sequence_parallel").line, r.sources.find("trainer").line);
}

TEST(RecipeParse, UnknownKeyIsAnErrorWithSuggestionAndPosition) {
    const std::string text = std::string(kMinimal) + "trainer:\n  tp: 2\n  tpp: 4\n";
    ParseOutcome out = parseRecipeDetailed(text, "x.yaml");
    ASSERT_FALSE(out.recipe.has_value());
    ASSERT_EQ(out.diagnostics.size(), 1u);
    EXPECT_EQ(out.diagnostics[0].path, "trainer.tpp");
    EXPECT_EQ(out.diagnostics[0].loc.line, 8);
    EXPECT_EQ(out.diagnostics[0].loc.column, 3);
    EXPECT_EQ(out.diagnostics[0].format("x.yaml"),
              "x.yaml:8:3: error: unknown key 'trainer.tpp'; did you mean 'tp'?");
}

TEST(RecipeParse, UnknownTopLevelKeyAndSectionSuggestions) {
    const std::string text = std::string(kMinimal) + "rolout:\n  gpus_per_engine: 2\n";
    auto r = parseRecipe(text, "y.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "y.yaml:6:1: error: unknown key 'rolout'; did you mean 'rollout'?");
    const std::string text2 = std::string(kMinimal) + "batch2: 1\n";
    auto r2 = parseRecipe(text2, "y.yaml");
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.error().find("did you mean 'batch'?"), std::string::npos) << r2.error();
    const std::string text3 = std::string(kMinimal) + "zzzzzzzz: 1\n";
    auto r3 = parseRecipe(text3, "y.yaml");
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.error(), "y.yaml:6:1: error: unknown key 'zzzzzzzz'");
}

TEST(RecipeParse, WrongTypesNameTheFieldAndValue) {
    const std::string text =
        std::string(kMinimal) + "trainer:\n  tp: four\n  sequence_parallel: maybe\n";
    ParseOutcome out = parseRecipeDetailed(text, "t.yaml");
    ASSERT_EQ(out.diagnostics.size(), 2u);
    EXPECT_EQ(out.diagnostics[0].format("t.yaml"),
              "t.yaml:7:7: error: 'trainer.tp' must be an integer in 1..512, got 'four'");
    EXPECT_EQ(out.diagnostics[1].format("t.yaml"),
              "t.yaml:8:22: error: 'trainer.sequence_parallel' must be true or false, got "
              "'maybe'");
}

TEST(RecipeParse, UnknownEnumValueListsChoices) {
    const std::string text =
        "schema_version: 1\nframework: mils\nmodel: qwen3-4B\n"
        "batch: {rollout_batch_size: 4}\n";
    auto r = parseRecipe(text, "e.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(),
              "e.yaml:2:12: error: unknown value 'mils' for 'framework' (expected one of: miles, "
              "slime, vime); did you mean 'miles'?");
}

TEST(RecipeParse, SchemaVersionRequiredAndChecked) {
    auto missing = parseRecipe("model: qwen3-4B\nbatch: {rollout_batch_size: 4}\n", "v.yaml");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("'schema_version' is required"), std::string::npos);
    auto future = parseRecipe(
        "schema_version: 2\nmodel: qwen3-4B\nbatch: {rollout_batch_size: 4}\n", "v.yaml");
    ASSERT_FALSE(future.ok());
    EXPECT_EQ(future.error(),
              "v.yaml:1:1: error: unsupported schema_version 2 (this build reads "
              "schema_version: 1)");
}

TEST(RecipeParse, RequiredFieldsAndDuplicates) {
    auto noBatch = parseRecipe("schema_version: 1\nmodel: qwen3-4B\n", "r.yaml");
    ASSERT_FALSE(noBatch.ok());
    EXPECT_NE(noBatch.error().find("'batch.rollout_batch_size' is required"), std::string::npos);
    auto dup = parseRecipe(std::string(kMinimal) + "trainer:\n  tp: 2\n  tp: 4\n", "d.yaml");
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(dup.error(), "d.yaml:8:3: error: duplicate key 'tp' (first given at line 7)");
}

TEST(RecipeParse, SyntaxErrorCarriesPosition) {
    auto r = parseRecipe("schema_version: 1\ntrainer: [1, 2\n", "s.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().rfind("s.yaml:", 0), 0u) << r.error();
    EXPECT_NE(r.error().find("YAML syntax error"), std::string::npos);
}

TEST(RecipeParse, NonMappingSectionIsReported) {
    auto r = parseRecipe(std::string(kMinimal) + "trainer: 4\n", "n.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "n.yaml:6:10: error: 'trainer' must be a mapping of keys to values");
}

TEST(RecipeParse, ExtraArgsKeepTheirSource) {
    const std::string text = std::string(kMinimal) +
                             "extra_args:\n"
                             "  - --lr 1e-5\n"
                             "  - {flag: --vllm-eplb-config, values: ['{\"num_redundant_experts\": "
                             "16}'], source: 'run.sh:42'}\n";
    auto r = parseRecipe(text, "a.yaml");
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r->extraArgs.size(), 2u);
    EXPECT_EQ(r->extraArgs[0].flag, "--lr");
    EXPECT_EQ(r->extraArgs[0].values, std::vector<std::string>{"1e-5"});
    EXPECT_EQ(r->extraArgs[1].values[0], "{\"num_redundant_experts\": 16}");
    EXPECT_EQ(r->extraArgs[1].source, "run.sh:42");
    EXPECT_EQ(r->sources.find("extra_args[1]").line, 8);
    auto again = parseRecipe(writeRecipe(*r), "again.yaml");
    ASSERT_TRUE(again.ok()) << again.error() << "\n" << writeRecipe(*r);
    EXPECT_EQ(*again, *r);
    auto bad = parseRecipe(std::string(kMinimal) + "extra_args: [lr]\n", "b.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("must start with a flag"), std::string::npos);
}

TEST(RecipeRoundTrip, EveryShippedRecipe) {
    const auto files = shippedRecipeFiles();
    ASSERT_GE(files.size(), 10u);
    for (const auto& file : files) {
        SCOPED_TRACE(file);
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok()) << r.error();
        const std::string text = writeRecipe(*r);
        auto again = parseRecipe(text, "written.yaml");
        ASSERT_TRUE(again.ok()) << again.error() << "\n" << text;
        EXPECT_EQ(*again, *r) << text;
        EXPECT_EQ(writeRecipe(*again), text);
    }
}

TEST(RecipeRoundTrip, EveryFieldAwayFromItsDefault) {
    const Recipe r = test::everyFieldRecipe();
    const std::string text = writeRecipe(r);
    auto again = parseRecipe(text, "all.yaml");
    ASSERT_TRUE(again.ok()) << again.error() << "\n" << text;
    EXPECT_EQ(*again, r) << text;
}

}  // namespace
}  // namespace runplane::plan
