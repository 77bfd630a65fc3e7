// Model catalog: every model of frameworks.md §3 present, hybrid layer patterns, and parameter
// counts derived from the shape landing on the published sizes. (issue 3)

#include <gtest/gtest.h>

#include "backend/plan/catalog.h"
#include "backend/plan/model_params.h"
#include "backend/plan/planner.h"
#include "backend/plan/rules.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

ModelShape shapeOf(const std::string& name, const std::string& variant = "") {
    const ModelShape* shape = test::catalog().find(name);
    if (shape == nullptr) {
        ADD_FAILURE() << "missing catalog model " << name;
        return {};
    }
    return shape->withVariant(variant);
}

TEST(Catalog, HasEveryModelOfFrameworksSection3) {
    for (const char* name :
         {"qwen3-4B", "qwen3-8B", "qwen3-30B-A3B", "qwen3-235B-A22B", "qwen3-next-80B-A3B",
          "qwen3.8-27B", "qwen3.8-2.4T-A95B", "glm4.5-355B-A32B", "glm4.5-106B-A12B", "deepseek-v3",
          "kimi-k2", "kimi-k3"}) {
        EXPECT_NE(test::catalog().find(name), nullptr) << name;
    }
}

TEST(Catalog, HybridLayerPatterns) {
    const ModelShape next = shapeOf("qwen3-next-80B-A3B");
    EXPECT_EQ(next.numLinearAttentionLayers(), 36);
    EXPECT_EQ(next.numFullAttentionLayers(), 12);
    EXPECT_TRUE(next.isFullAttentionLayer(4));
    EXPECT_FALSE(next.isFullAttentionLayer(5));
    const ModelShape dense27 = shapeOf("qwen3.8-27B");
    EXPECT_EQ(dense27.numLinearAttentionLayers(), 48);
    EXPECT_EQ(dense27.numFullAttentionLayers(), 16);
    const ModelShape big = shapeOf("qwen3.8-2.4T-A95B", "full");
    EXPECT_EQ(big.numLayers, 92);
    EXPECT_EQ(big.numLinearAttentionLayers(), 69);
    EXPECT_EQ(big.numFullAttentionLayers(), 23);
    EXPECT_EQ(big.mtpNumLayers, 0);
    const ModelShape small = shapeOf("qwen3.8-2.4T-A95B");  // default variant: 4layer
    EXPECT_EQ(small.numLayers, 4);
    EXPECT_EQ(small.numFullAttentionLayers(), 1);
    EXPECT_EQ(small.mtpNumLayers, 1);
    const ModelShape k3 = shapeOf("kimi-k3");
    EXPECT_EQ(k3.numLinearAttentionLayers(), 69);
    EXPECT_EQ(k3.numFullAttentionLayers(), 24);
    EXPECT_TRUE(k3.isFullAttentionLayer(93));
}

struct Expected {
    const char* name;
    const char* variant;
    double totalB;
    double activeB;
};

TEST(Catalog, DerivedParameterCountsMatchPublishedSizes) {
    // Published sizes (model names / model cards). Totals within 5 %: the derivation skips
    // biases of norms and the odd small tensor. Active counts include the embeddings and output
    // layer, which some "A3B"-style names round away (Qwen3-Next: 3.9 B of "A3B"), so they are
    // only held to 30 % here; the 2.4T model's GDN heads are derived from its "A95B" (below).
    const Expected cases[] = {
        {"qwen3-4B", "", 4.02, 4.02},
        {"qwen3-8B", "", 8.19, 8.19},
        {"qwen3-32B", "", 32.8, 32.8},
        {"qwen3-30B-A3B", "", 30.5, 3.3},
        {"qwen3-235B-A22B", "", 235, 22},
        {"qwen3-next-80B-A3B", "", 80, 3.0},
        {"qwen3.8-27B", "", 27, 27},
        {"qwen3.8-2.4T-A95B", "full", 2400, 95},
        {"glm4.5-355B-A32B", "", 355, 32},
        {"glm4.5-106B-A12B", "", 106, 12},
        {"glm4.7-30B-A3B", "", 30, 3.0},
        {"glm5-744B-A40B", "", 744, 40},
        {"deepseek-v3", "", 671, 37},
        {"kimi-k2", "", 1040, 32},
        {"qwen2.5-0.5B", "", 0.494, 0.494},
        // issue 15: models of the public scripts the catalog lacked (sources in each file)
        {"qwen3-14B", "", 14.8, 14.8},
        {"qwen3-vl-8B", "", 8.2, 8.2},  // language model only
        {"gpt2", "", 0.124, 0.124},
        {"inkling-small", "", 276, 12},
        // issue 45: Qwen2.5-3B (miles' search-r1 and LoRA examples): 3.09 B published
        {"qwen2.5-3B", "", 3.09, 3.09},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const ModelParams p = computeParams(shapeOf(c.name, c.variant));
        EXPECT_NEAR(p.total / 1e9, c.totalB, c.totalB * 0.05);
        EXPECT_NEAR(p.active / 1e9, c.activeB, c.activeB * 0.3);
        EXPECT_EQ(p.total, p.totalDense + p.totalExperts);
    }
}

TEST(Catalog, Qwen3_8_2_4T_GdnValueHeadsFollowFromA95B) {
    // The only shape quantity of Qwen3.8-2.4T-A95B the sources leave open is the GDN head count
    // (docs/memory-model.md section 1). With the Qwen3.5 family's 16 key heads of 128, the
    // published active count fixes the value heads: 64 (the family's largest published
    // configuration) gives 81 B, 128 gives 95 B. The catalog's convention (embeddings counted)
    // reproduces the other MoE names to a few percent (Qwen3-30B-A3B 3.35 B, Qwen3-235B-A22B
    // 22.2 B, DeepSeek-V3 37.6 B, Kimi-K2 32.9 B, GLM-5 41.1 B).
    const ModelShape big = shapeOf("qwen3.8-2.4T-A95B", "full");
    EXPECT_EQ(big.linear.numKeyHeads, 16);
    EXPECT_EQ(big.linear.numValueHeads, 128);
    const ModelParams p = computeParams(big);
    EXPECT_NEAR(p.active / 1e9, 95.0, 0.95);   // "A95B" within 1 %
    EXPECT_NEAR(p.total / 1e9, 2400.0, 24.0);  // "2.4T" within 1 %
    ModelShape family = big;
    family.linear.numValueHeads = 64;
    EXPECT_LT(computeParams(family).active / 1e9, 0.9 * 95.0);  // the old assumption: 81 B
    for (const auto& [name, activeB] :
         std::vector<std::pair<const char*, double>>{{"qwen3-30B-A3B", 3.3},
                                                     {"qwen3-235B-A22B", 22},
                                                     {"deepseek-v3", 37},
                                                     {"kimi-k2", 32},
                                                     {"glm5-744B-A40B", 40}}) {
        SCOPED_TRACE(name);
        EXPECT_NEAR(computeParams(shapeOf(name)).active / 1e9, activeB, 0.05 * activeB);
    }
}

TEST(Catalog, Qwen3_30B_A3B_ByHand) {
    // Worked example of docs/memory-model.md: 48 x 128 x 3 x 2048 x 768 routed-expert params.
    const ModelParams p = computeParams(shapeOf("qwen3-30B-A3B"));
    EXPECT_EQ(p.oneExpert, 3LL * 2048 * 768);
    EXPECT_EQ(p.totalExperts, 48LL * 128 * 3 * 2048 * 768);
    EXPECT_EQ(p.embedding, 151936LL * 2048);
    EXPECT_EQ(p.outputLayer, 151936LL * 2048);
    // q 2048x4096, k,v 2048x512 each, o 4096x2048, input norm 2048, q/k norms 2x128.
    EXPECT_EQ(p.attentionFull, 2048LL * 4096 + 2 * 2048LL * 512 + 4096LL * 2048 + 2048 + 256);
}

TEST(Catalog, UnevenPipelineSplitsOfTheKnownGoodShapes) {
    EXPECT_EQ(stageLayerCounts(61, 4, 0, 13), (std::vector<int>{16, 16, 16, 13}));
    EXPECT_EQ(stageLayerCounts(94, 4, 0, 22), (std::vector<int>{24, 24, 24, 22}));
    EXPECT_EQ(stageLayerCounts(61, 8, 0, 5), (std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5}));
    EXPECT_EQ(stageLayerCounts(48, 4, 0, 9), (std::vector<int>{13, 13, 13, 9}));
    EXPECT_EQ(stageLayerCounts(92, 4, 0, 0), (std::vector<int>{23, 23, 23, 23}));
    const ModelShape big = shapeOf("qwen3.8-2.4T-A95B", "full");
    const ModelParams p = computeParams(big);
    const auto stages = splitStages(big, p, 4, 0, 0);
    std::int64_t dense = 0;
    std::int64_t experts = 0;
    for (const auto& s : stages) {
        dense += s.dense;
        experts += s.experts;
    }
    EXPECT_EQ(dense, p.totalDense);
    EXPECT_EQ(experts, p.totalExperts);
    EXPECT_EQ(stages[0].embedding, p.embedding);
    EXPECT_EQ(stages[3].embedding, p.outputLayer);
}

TEST(Catalog, ResolveModelErrors) {
    Recipe r;
    r.model.name = "qwen3-30B-A3";
    auto missing = resolveModel(r, test::catalog());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), "unknown model 'qwen3-30B-A3'; did you mean 'qwen3-30B-A3B'?");
    r.model.name = "qwen3.8-2.4T-A95B";
    r.model.variant = "fulll";
    auto badVariant = resolveModel(r, test::catalog());
    ASSERT_FALSE(badVariant.ok());
    EXPECT_EQ(badVariant.error(),
              "model 'qwen3.8-2.4T-A95B' has no variant 'fulll' (has: 4layer, full)");
    r.model.variant = "full";
    auto ok = resolveModel(r, test::catalog());
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok->numLayers, 92);
}

TEST(Catalog, BadCatalogFileReportsPosition) {
    auto bad = ModelCatalog::parseModel("schema_version: 1\nname: x\nnum_layer: 4\n", "m.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("m.yaml:3:1: error: unknown key 'num_layer'; did you mean "
                               "'num_layers'?"),
              std::string::npos)
        << bad.error();
}

// Issue 15: a model whose architecture a ModelShape cannot express (Nemotron-3, a Mamba-2 /
// attention / MoE hybrid) is in the catalog by name with why; validate warns that it cannot size
// it instead of calling it unknown. A file without its why does not load.
TEST(Catalog, UnsizedModelsAreKnownByNameAndValidateWarns) {
    const UnsizedModel* nano = test::catalog().findUnsized("nemotron-3-nano-4b");
    ASSERT_NE(nano, nullptr);
    EXPECT_EQ(test::catalog().find("nemotron-3-nano-4b"), nullptr);
    EXPECT_NE(nano->why.find("Mamba-2"), std::string::npos);
    EXPECT_NE(test::catalog().findUnsized("nemotron-3-super-120b-a12b"), nullptr);

    auto recipe = parseRecipe(test::kMinimalRecipe, "r.yaml");
    ASSERT_TRUE(recipe.ok()) << recipe.error();
    Recipe r = *recipe;
    r.model.name = "nemotron-3-nano-4b";
    const auto findings = validate(r, test::catalog());
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].ruleId, "model.unsized");
    EXPECT_EQ(findings[0].severity, Severity::Warning);
    EXPECT_NE(findings[0].message.find("cannot be sized"), std::string::npos);
    r.model.name = "nemotron-3-nano-5b";  // a name the catalog lacks is still an error
    const auto unknown = validate(r, test::catalog());
    ASSERT_FALSE(unknown.empty());
    EXPECT_EQ(unknown[0].ruleId, "model.unknown");
    EXPECT_EQ(unknown[0].severity, Severity::Error);

    auto noWhy = ModelCatalog::parseUnsizedModel(
        "schema_version: 1\nname: x\nsource: s\nunsized: \"\"\n", "u.yaml");
    EXPECT_FALSE(noWhy.ok());
    auto typo = ModelCatalog::parseUnsizedModel(
        "schema_version: 1\nname: x\nsource: s\nunsized: w\nnum_layers: 4\n", "u.yaml");
    ASSERT_FALSE(typo.ok());
    EXPECT_NE(typo.error().find("u.yaml:5:1"), std::string::npos) << typo.error();
}

}  // namespace
}  // namespace runplane::plan
