#include "tests/plan/test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace runplane::plan::test {

std::string sourceDir() {
    if (const char* dir = std::getenv("RUNPLANE_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    return RUNPLANE_TEST_SOURCE_DIR;
}

std::string recipesDir() {
    return sourceDir() + "/recipes";
}

const ModelCatalog& catalog() {
    static const ModelCatalog instance = [] {
        auto loaded = ModelCatalog::loadDirectory(recipesDir() + "/models");
        if (!loaded.ok()) {
            std::fprintf(stderr, "cannot load the model catalog: %s\n", loaded.error().c_str());
            std::abort();
        }
        return std::move(loaded).value();
    }();
    return instance;
}

Recipe loadShipped(const std::string& relative) {
    auto recipe = loadRecipe(recipesDir() + "/" + relative);
    if (!recipe.ok()) {
        ADD_FAILURE() << recipe.error();
        return Recipe{};
    }
    return std::move(recipe).value();
}

Recipe everyFieldRecipe() {
    Recipe r;
    r.name = "all";
    r.description = "yes: a tricky: string # with marks";
    r.framework = Framework::Vime;
    r.frameworkAssumed = true;
    r.model.shape = ModelShape{};
    r.model.shape->name = "inline";
    r.model.shape->numLayers = 8;
    r.model.shape->linear.kind = LinearAttentionKind::Gdn;
    r.model.shape->linear.extraFullAttentionLayers = {8};
    r.model.shape->variants.push_back(ModelVariant{"small", 2, 0, "t", "_s", "d"});
    r.model.variant = "small";
    r.hardware = Hardware{"B200", 180.5, 4, 1500, CpuArch::Aarch64, false, true};
    r.cluster = Cluster{3, "10.0.0.1", 0.25, 150};
    r.placement = Placement::Colocate;
    r.trainer = Trainer{TrainBackend::Fsdp, 2, 4, 2, 2, 2, 4, 1, true, 3, 5, 2, true};
    r.rollout.engine = RolloutEngine::Vllm;
    r.rollout.numGpus = 8;
    r.rollout.gpusPerEngine = 4;
    r.rollout.engines = 2;
    r.rollout.ppSize = 2;
    r.rollout.dpSize = 2;
    r.rollout.epSize = 4;
    r.rollout.dpAttention = true;
    r.rollout.expertParallel = true;
    r.rollout.eplb = Eplb{true, 16};
    r.rollout.memFraction = 0.7;
    r.rollout.cudaGraph = false;
    r.rollout.cudaGraphSizes = {1, 2, 4};
    r.rollout.cudaGraphMaxBs = 256;
    r.rollout.weightDtype = WeightDtype::Fp8;
    r.rollout.quantScope = QuantScope::Experts;
    r.rollout.maxResponseLen = 8192;
    r.rollout.maxContextLen = 16384;
    r.rollout.maxPromptLen = 1024;
    r.rollout.temperature = 0.9;
    r.rollout.moeBackend = "triton";
    r.rollout.loraBackend = "triton";
    r.batch = Batch{8, 4, 32, 1, 2, true, 9216, 16, 100, 2};
    r.algorithm = Algorithm{AdvantageEstimator::Gspo,
                            true,
                            0.01,
                            "low_var_kl",
                            0.001,
                            0.3,
                            0.28,
                            0.01,
                            true,
                            1e-5,
                            true,
                            true,
                            true,
                            OpdType::Megatron};
    r.optimizer = Optimizer{"muon", false, true, true, true, 0.8};
    r.lora = Lora{16, 32, 0.05, {"all-linear"}, true};
    r.memory = MemoryFlags{false,
                           true,
                           OffloadTarget::Disk,
                           true,
                           PeakDevice::Gpu,
                           BackupMode::Clone,
                           true,
                           true,
                           1.0,
                           2.5,
                           0.9,
                           0.2};
    r.environment = Environment{"2.30.7", "/x/libnccl.so.2", {{"A", "1"}, {"B", "true"}}};
    r.checkpoints =
        Checkpoints{"/m", "/hf", "/ref", "/load", "/save", 10, 8, true, true, "/teacher"};
    r.eval = Eval{5, {{"aime", "/d/aime.jsonl"}, {"gsm8k", "/d/g.jsonl"}}, 16, 16384, true};
    r.launcher = Launcher{LauncherKind::Command,
                          "run.sh",
                          "train_async.py",
                          {"runplane-smoke", "--layers", "2"},
                          "/w",
                          {"python3 -m server --port 1 &\n", "until curl -s x; do sleep 1; done\n"},
                          {"--dashboard-host=0.0.0.0"},
                          true,
                          {"--force"},
                          {"--no-wait", "--submission-id", "job-1"},
                          {"--sglang-expert-parallel-size"},
                          {"--lr", "--optimizer"}};
    r.weightUpdate = WeightUpdate{WeightUpdateMode::Delta, WeightTransport::Disk, "/shared/wu",
                                  "/nvme/ckpt", true};
    r.analysis.primaryMetric = "eval/gsm8k";
    r.analysis.metricKinds = {
        metrics::KindOverride{"eval/arith/time", metrics::Kind::Time, {}},
        metrics::KindOverride{"custom/*", metrics::Kind::Score, metrics::Direction::Lower}};
    r.analysis.memoryAlarmGb = 20.5;
    r.extraArgs = {ExtraArg{"--x", {"1", "two words"}, ""}, ExtraArg{"--y", {}, "s.sh:3"}};
    return r;
}

}  // namespace runplane::plan::test
