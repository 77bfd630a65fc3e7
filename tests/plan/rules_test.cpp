// Every rule of the table fails on a recipe made to break it and stays quiet on the shipped recipe
// it was derived from; every shipped recipe validates without errors or warnings; the known-
// invalid GLM-4.7 shape is caught with Megatron's numbers. (issue 3)

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "backend/plan/planner.h"
#include "backend/plan/rules.h"
#include "tests/plan/rule_cases.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

const char* kB30 = "known-good/slime-qwen3-30B-A3B.yaml";
const char* kFull = "qwen3.8-2.4T-A95B-full.yaml";
const char* kVime = "vime-qwen3-30B-A3B-1x8.yaml";
const char* kVime24 = "vime-qwen3-30B-A3B-24gpu-eplb.yaml";
const char* kNext = "known-good/slime-qwen3-next-80B-A3B.yaml";
const char* k235 = "known-good/slime-qwen3-235B-A22B.yaml";
const char* kSmoke = "smoke-local.yaml";
const char* k4B = "known-good/slime-qwen3-4B.yaml";

std::vector<Finding> findingsOf(const Recipe& r) {
    return validate(r, test::catalog());
}

const Finding* findRuleIn(const std::vector<Finding>& findings, const std::string& id) {
    for (const auto& f : findings) {
        if (f.ruleId == id) {
            return &f;
        }
    }
    return nullptr;
}

ModelShape inlineShapeOf(const Recipe& r) {
    auto shape = resolveModel(r, test::catalog());
    EXPECT_TRUE(shape.ok());
    return shape.ok() ? *shape : ModelShape{};
}

struct RuleCase {
    const char* rule;
    const char* base;
    std::function<void(Recipe&)> mutate;
    Severity expected;
};

std::vector<RuleCase> ruleCases() {
    using S = Severity;
    return {
        {"model.unknown", kB30, [](Recipe& r) { r.model.name = "qwen3-30B-A3"; }, S::Error},
        {"model.unsized", kB30, [](Recipe& r) { r.model.name = "nemotron-3-nano-4b"; }, S::Warning},
        {"model.shape", kB30,
         [](Recipe& r) {
             ModelShape s = inlineShapeOf(r);
             s.numQueryGroups = 5;  // 32 heads % 5 groups
             r.model.shape = s;
         },
         S::Error},
        {"recipe.limits", kB30, [](Recipe& r) { r.cluster.nodes = 1000000; }, S::Error},
        {"cluster.size", kB30, [](Recipe& r) { r.cluster.nodes = 0; }, S::Error},
        {"cluster.trainer-placement", kB30, [](Recipe& r) { r.trainer.nodes = 2; }, S::Error},
        {"cluster.gpu-budget", kFull, [](Recipe& r) { r.rollout.numGpus = 32; }, S::Error},
        {"cluster.num-gpus-per-node", kB30,
         [](Recipe& r) {
             r.hardware.gpusPerNode = 4;
             r.cluster.nodes = 2;
         },
         S::Info},
        {"cluster.cpu-only", kB30, [](Recipe& r) { r.hardware.gpusPerNode = 0; }, S::Error},
        {"cluster.master-addr", kFull, [](Recipe& r) { r.cluster.masterAddr = "127.0.0.1"; },
         S::Error},
        {"cluster.shared-paths", "vime-qwen3-30B-A3B-2x8.yaml",
         [](Recipe& r) { r.checkpoints.refLoad = "/tmp/ref"; }, S::Warning},
        {"trainer.positive", kB30, [](Recipe& r) { r.trainer.tp = 0; }, S::Error},
        {"trainer.dense-grid", kB30, [](Recipe& r) { r.trainer.tp = 3; }, S::Error},
        {"trainer.expert-grid", kB30, [](Recipe& r) { r.trainer.pp = 2; }, S::Error},
        {"trainer.ep-needs-experts", k4B, [](Recipe& r) { r.trainer.ep = 2; }, S::Error},
        {"trainer.experts-ep", kB30,
         [](Recipe& r) {
             ModelShape s = inlineShapeOf(r);
             s.numExperts = 100;  // 100 % EP 8 != 0
             r.model.shape = s;
         },
         S::Error},
        {"trainer.heads-tp", kB30,
         [](Recipe& r) {
             ModelShape s = inlineShapeOf(r);
             s.numAttentionHeads = 30;
             s.numQueryGroups = 2;
             r.model.shape = s;
         },
         S::Error},
        {"trainer.groups-tp", kB30, [](Recipe& r) { r.trainer.tp = 8; }, S::Info},
        {"trainer.linear-heads", kNext,
         [](Recipe& r) {
             ModelShape s = inlineShapeOf(r);
             s.linear.numKeyHeads = 12;
             s.linear.numValueHeads = 36;
             r.model.shape = s;
         },
         S::Error},
        {"trainer.sequence-parallel", kB30, [](Recipe& r) { r.trainer.sequenceParallel = false; },
         S::Warning},
        {"trainer.layers-pp", k235, [](Recipe& r) { r.trainer.decoderLastPipelineNumLayers = 21; },
         S::Error},
        {"trainer.uneven-pp-needs-pp", kB30,
         [](Recipe& r) { r.trainer.decoderLastPipelineNumLayers = 4; }, S::Error},
        {"trainer.vpp", kB30, [](Recipe& r) { r.trainer.numLayersPerVirtualStage = 2; }, S::Error},
        {"trainer.fsdp", kB30, [](Recipe& r) { r.trainer.backend = TrainBackend::Fsdp; }, S::Error},
        {"batch.positive", kB30, [](Recipe& r) { r.batch.rolloutBatchSize = -1; }, S::Error},
        {"batch.identity", kB30, [](Recipe& r) { r.batch.globalBatchSize = 300; }, S::Error},
        {"batch.micro-batch", kB30, [](Recipe& r) { r.batch.microBatchSize = 3; }, S::Error},
        {"batch.static-schedule", kNext,
         [](Recipe& r) {
             r.batch.dynamicBatchSize = false;
             r.batch.rolloutBatchSize = 1;
             r.batch.nSamplesPerPrompt = 2;
             r.batch.globalBatchSize = 2;
             r.trainer.numLayersPerVirtualStage = 3;
         },
         S::Error},
        {"batch.dynamic-needs-max-tokens", kB30, [](Recipe& r) { r.batch.maxTokensPerGpu.reset(); },
         S::Error},
        {"batch.max-tokens-budget", kB30, [](Recipe& r) { r.rollout.maxResponseLen = 32768; },
         S::Warning},
        {"batch.over-sampling", kB30, [](Recipe& r) { r.batch.overSamplingBatchSize = 16; },
         S::Error},
        {"batch.group-size-one", kB30,
         [](Recipe& r) {
             r.batch.nSamplesPerPrompt = 1;
             r.batch.globalBatchSize = 32;
         },
         S::Info},
        {"batch.num-rollout", kB30, [](Recipe& r) { r.batch.numRollout.reset(); }, S::Error},
        {"eval.needs-data", kB30, [](Recipe& r) { r.eval.interval = 5; }, S::Error},
        {"checkpoints.save-needs-path", kB30, [](Recipe& r) { r.checkpoints.saveInterval = 10; },
         S::Error},
        {"rollout.temperature", kB30, [](Recipe& r) { r.rollout.temperature = 0; }, S::Error},
        {"rollout.prompt-len", kB30,
         [](Recipe& r) {
             r.rollout.maxPromptLen = 4096;
             r.rollout.maxContextLen = 4096;
         },
         S::Error},
        {"rollout.engine-framework", kB30,
         [](Recipe& r) { r.rollout.engine = RolloutEngine::Vllm; }, S::Error},
        {"rollout.engine-divisible", kB30, [](Recipe& r) { r.rollout.gpusPerEngine = 3; },
         S::Error},
        {"rollout.engines-count", kB30, [](Recipe& r) { r.rollout.engines = 2; }, S::Error},
        {"rollout.pp-divides", kB30, [](Recipe& r) { r.rollout.ppSize = 3; }, S::Error},
        {"rollout.dp-attention", kB30, [](Recipe& r) { r.rollout.dpSize = 2; }, S::Error},
        {"rollout.dp-divides", kB30,
         [](Recipe& r) {
             r.rollout.dpSize = 3;
             r.rollout.dpAttention = true;
         },
         S::Error},
        {"rollout.ep-divides", kB30, [](Recipe& r) { r.rollout.epSize = 3; }, S::Error},
        {"rollout.engine-ep-experts", kVime24, [](Recipe& r) { r.rollout.eplb = Eplb{}; },
         S::Error},
        {"rollout.eplb", kB30, [](Recipe& r) { r.rollout.eplb.enabled = true; }, S::Warning},
        {"rollout.mem-fraction", kB30, [](Recipe& r) { r.rollout.memFraction = 1.5; }, S::Error},
        {"placement.colocate-offload", kB30, [](Recipe& r) { r.memory.offloadTrain = false; },
         S::Warning},
        {"placement.offload-disk", kB30,
         [](Recipe& r) { r.memory.offloadTrainTarget = OffloadTarget::Disk; }, S::Error},
        {"algorithm.kl-needs-ref", kB30, [](Recipe& r) { r.algorithm.useKlLoss = true; }, S::Error},
        {"algorithm.kl-both", kB30,
         [](Recipe& r) {
             r.algorithm.klCoef = 0.1;
             r.algorithm.klLossCoef = 0.1;
         },
         S::Error},
        {"algorithm.kl-reference-copy", kFull, [](Recipe& r) { r.algorithm.useKlLoss = true; },
         S::Warning},
        {"optimizer.cpu-offload-precision", kB30,
         [](Recipe& r) { r.optimizer.precisionAware = false; }, S::Error},
        {"optimizer.cpu-offload-overlap", kB30,
         [](Recipe& r) { r.optimizer.overlapCpuOptimizerD2hH2d = false; }, S::Warning},
        {"optimizer.cpu-adam-multinode", kB30,
         [](Recipe& r) {
             r.cluster.nodes = 2;  // 16 GPUs: TP4 EP8 -> DP 4, the state fits on the GPU
             r.batch.globalBatchSize = 256;
         },
         S::Info},
        {"lora.framework", kVime,
         [](Recipe& r) {
             r.lora.rank = 8;
             r.lora.targetModules = {"q_proj"};
         },
         S::Error},
        {"lora.target-modules", kFull, [](Recipe& r) { r.lora.targetModules.clear(); }, S::Error},
        {"lora.unknown-module", kFull, [](Recipe& r) { r.lora.targetModules.push_back("qkv"); },
         S::Warning},
        {"lora.backend", kFull,
         [](Recipe& r) {  // slime's and miles' FSDP have LoRA; vime's (no FSDP at all) not
             r.framework = Framework::Vime;
             r.rollout.engine = RolloutEngine::Vllm;
             r.trainer.backend = TrainBackend::Fsdp;
         },
         S::Error},
        {"lora.tp-bound", kFull, [](Recipe& r) { r.trainer.tp = 8; }, S::Error},
        {"lora.moe-sglang-backend", kFull, [](Recipe& r) { r.rollout.loraBackend.clear(); },
         S::Warning},
        {"lora.disaggregated-pp", kFull, [](Recipe& r) { r.placement = Placement::Disaggregated; },
         S::Error},
        {"lora.base-cpu-backup", kB30, [](Recipe& r) { r.lora.baseCpuBackup = true; }, S::Warning},
        {"launcher.command-argv", kSmoke, [](Recipe& r) { r.launcher.argv.clear(); }, S::Error},
        {"launcher.argv-consistency", kSmoke, [](Recipe& r) { r.batch.rolloutBatchSize = 16; },
         S::Error},
        {"launcher.kind-framework", kB30,
         [](Recipe& r) { r.launcher.kind = LauncherKind::MilesScript; }, S::Warning},
        {"checkpoints.converted-ep", kVime, [](Recipe& r) { r.checkpoints.convertedEp = 4; },
         S::Error},
        {"nccl.version-format", kFull, [](Recipe& r) { r.environment.ncclVersion = "two.30"; },
         S::Error},
        {"nccl.cross-node-engine", kFull, [](Recipe& r) { r.environment.ncclVersion = "2.28.3"; },
         S::Error},
        {"nccl.multinode-colocate", kFull, [](Recipe& r) { r.environment.ncclVersion = "2.27.5"; },
         S::Warning},
        {"memory.host-over-ram", kFull, [](Recipe& r) { r.hardware.hostRamGb = 500; }, S::Error},
        {"memory.host-over-alarm", kFull,
         [](Recipe& r) { r.memory.backupMode = BackupMode::Clone; }, S::Warning},
        {"memory.one-host-backup", kFull,
         [](Recipe& r) { r.memory.colocateMemoryPeakDevice = PeakDevice::Cpu; }, S::Warning},
        {"memory.clone-backup", kFull, [](Recipe& r) { r.memory.backupMode = BackupMode::Clone; },
         S::Warning},
        {"memory.page-cache", kFull,
         [](Recipe& r) { r.memory.dropCheckpointPageCacheAfterLoad = false; }, S::Warning},
        {"memory.gpu-over-capacity", kB30, [](Recipe& r) { r.hardware.gpuMemoryGb = 20; },
         S::Error},
        {"memory.engine-weights-fit", kB30, [](Recipe& r) { r.rollout.memFraction = 0.05; },
         S::Error},
        // 0.94 x 80 GB of engine pool + two processes' 1.3 GB runtime: 77.8 GB, under 5 % free.
        {"memory.gpu-headroom", kB30, [](Recipe& r) { r.rollout.memFraction = 0.94; }, S::Warning},
    };
}

TEST(Rules, TableIsWellFormed) {
    std::set<std::string> ids;
    for (const auto& rule : ruleTable()) {
        EXPECT_TRUE(ids.insert(rule.id).second) << "duplicate rule id " << rule.id;
        EXPECT_NE(std::string(rule.checks), "");
        EXPECT_NE(rule.field.str(), "");
        EXPECT_NE(findRule(rule.id), nullptr);
    }
    EXPECT_GE(ids.size(), 60u);
}

TEST(Rules, EveryRuleHasAFailingAndAPassingCase) {
    std::set<std::string> covered;
    for (const auto& c : ruleCases()) {
        SCOPED_TRACE(c.rule);
        ASSERT_NE(findRule(c.rule), nullptr) << "case for a rule not in the table";
        covered.insert(c.rule);
        Recipe base = test::loadShipped(c.base);
        const auto clean = findingsOf(base);
        EXPECT_EQ(findRuleIn(clean, c.rule), nullptr) << "fires on the unmodified " << c.base;
        Recipe broken = base;
        c.mutate(broken);
        const auto findings = findingsOf(broken);
        const Finding* f = findRuleIn(findings, c.rule);
        ASSERT_NE(f, nullptr) << "did not fire after the mutation";
        EXPECT_EQ(f->severity, c.expected) << f->message;
        EXPECT_FALSE(f->message.empty());
        EXPECT_FALSE(f->fixHint.empty());
        EXPECT_FALSE(f->fieldPath.empty());
    }
    // The framework-argument and config.json rules have their cases (failing and near miss)
    // in framework_rules_test.cpp.
    for (const auto& id : test::frameworkRuleIds()) {
        EXPECT_NE(findRule(id), nullptr) << id;
        covered.insert(id);
    }
    for (const auto& rule : ruleTable()) {
        EXPECT_TRUE(covered.count(rule.id)) << "no test case for rule " << rule.id;
    }
}

TEST(Rules, EveryShippedRecipeValidatesClean) {
    int count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test::recipesDir())) {
        const auto& p = entry.path();
        if (!entry.is_regular_file() || p.extension() != ".yaml" ||
            p.parent_path().filename() == "models" || p.parent_path().filename() == "invalid") {
            continue;
        }
        SCOPED_TRACE(p.string());
        ++count;
        auto r = loadRecipe(p.string());
        ASSERT_TRUE(r.ok()) << r.error();
        for (const auto& f : findingsOf(*r)) {
            // The documented single-node Qwen3-Next run (PP6 on 288 GB GPUs) keeps its Adam state
            // on the GPU: the model leaves it 11.0 GB (3.8 %) free, which the headroom rule says.
            if (f.ruleId == "memory.gpu-headroom" &&
                p.filename() == "miles-qwen3-next-80B-A3B-1node.yaml") {
                continue;
            }
            EXPECT_EQ(f.severity, Severity::Info) << formatFinding(f, p.string());
        }
    }
    EXPECT_GE(count, 20);
}

// issue 3 / slime#1818: the shipped GLM-4.7-30B-A3B script on 8 GPUs.
TEST(Rules, KnownInvalidGlm47IsCaughtWithMegatronsNumbers) {
    Recipe r = test::loadShipped("invalid/glm4.7-30b-a3b-8gpu.yaml");
    const auto findings = findingsOf(r);
    ASSERT_EQ(findings.size(), 1u);
    const Finding& f = findings[0];
    EXPECT_EQ(f.ruleId, "trainer.expert-grid");
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.fieldPath, "trainer.ep");
    EXPECT_NE(f.message.find("world_size (8) is not divisible by "
                             "expert_tensor_model_pipeline_parallel size (16)"),
              std::string::npos)
        << f.message;
    EXPECT_EQ(f.loc.line, r.sources.find("trainer.ep").line);
    EXPECT_GT(f.loc.line, 0);
}

TEST(Rules, MessagesNameTheNumbers) {
    Recipe r = test::loadShipped(kB30);
    r.batch.globalBatchSize = 300;
    const Finding* f = nullptr;
    auto findings = findingsOf(r);
    f = findRuleIn(findings, "batch.identity");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->message,
              "Not enough samples 256 for global_batch_size 300 (rollout_batch_size x "
              "n_samples_per_prompt = 32 x 8 = 256)");
    Recipe e = test::loadShipped(kVime24);
    e.rollout.eplb = Eplb{};
    findings = findingsOf(e);
    f = findRuleIn(findings, "rollout.engine-ep-experts");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->message, "engine EP 24 does not divide num_experts (128)");
    EXPECT_EQ(f->fixHint, "enable EPLB with 16 redundant experts (128 + 16 = 144 = 24 x 6)");
    Recipe lora = test::loadShipped(kFull);
    lora.trainer.tp = 8;
    findings = findingsOf(lora);
    f = findRuleIn(findings, "lora.tp-bound");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->message,
              "num_query_groups (4) bounds the native-LoRA tensor-parallel size, but TP is 8");
}

TEST(Rules, FindingsCarrySourceLocationsAndFormat) {
    Recipe r = test::loadShipped(kB30);
    r.trainer.tp = 3;
    const auto findings = findingsOf(r);
    const Finding* f = findRuleIn(findings, "trainer.dense-grid");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->loc.line, r.sources.find("trainer.tp").line);
    EXPECT_EQ(formatFinding(*f, "x.yaml"),
              "x.yaml:" + std::to_string(f->loc.line) + ":" + std::to_string(f->loc.column) +
                  ": error: world size (8) is not divisible by TP x PP x CP = 3 x 1 x 1 = 3 "
                  "[trainer.dense-grid]");
}

TEST(Rules, ArithmeticOfTheKnownGoodShapes) {
    // frameworks.md §3b: DeepSeek-R1 128 GPUs = 8*4*4 (DP 1), 4*32*1... expert DP 1;
    // Kimi-K2 256 = 8*8*4; Qwen3-235B 64 = 4*4*2*2; Kimi-K2.5 LoRA 128 = 8*2*8, 2*64.
    struct Case {
        const char* file;
        int world, dp, expertDp;
    };
    for (const Case& c : {Case{"known-good/slime-deepseek-r1.yaml", 128, 1, 1},
                          Case{"known-good/slime-kimi-k2.yaml", 256, 1, 1},
                          Case{"known-good/slime-qwen3-235B-A22B.yaml", 64, 2, 1},
                          Case{"known-good/slime-qwen3-next-80B-A3B.yaml", 32, 1, 1},
                          Case{"known-good/miles-kimi-k25-lora.yaml", 128, 1, 1}}) {
        SCOPED_TRACE(c.file);
        const Layout l = computeLayout(test::loadShipped(c.file));
        EXPECT_EQ(l.worldSize, c.world);
        EXPECT_EQ(l.dp, c.dp);
        EXPECT_EQ(l.expertDp, c.expertDp);
    }
}

}  // namespace
}  // namespace runplane::plan

namespace runplane::plan {
namespace {

std::string readDoc(const std::string& name) {
    std::ifstream in(test::sourceDir() + "/docs/" + name);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Issue 15: valid public scripts raise no false error. slime has the FSDP backend and LoRA (also on
// FSDP, fsdp_utils/lora_utils.py); a bash launcher starts miles too; memory over hardware the
// importer assumed is a warning. Each with the near miss that still fires.
TEST(Rules, SlimeFsdpAndLoraAreValidNearMissesStillFire) {
    Recipe fsdp = test::loadShipped(k4B);  // slime, Qwen3-4B
    fsdp.trainer.backend = TrainBackend::Fsdp;
    fsdp.trainer.tp = 1;
    fsdp.trainer.pp = 1;
    fsdp.trainer.cp = 1;
    fsdp.trainer.ep = 1;
    EXPECT_EQ(findRuleIn(findingsOf(fsdp), "trainer.fsdp"), nullptr);
    Recipe lora = fsdp;
    lora.lora.rank = 16;
    lora.lora.targetModules = {"q_proj", "v_proj"};
    const auto loraFindings = findingsOf(lora);
    EXPECT_EQ(findRuleIn(loraFindings, "lora.framework"), nullptr);
    EXPECT_EQ(findRuleIn(loraFindings, "lora.backend"), nullptr);
    EXPECT_EQ(findRuleIn(loraFindings, "trainer.fsdp"), nullptr);

    Recipe tp2 = fsdp;  // FSDP has no tensor parallelism in either framework
    tp2.trainer.tp = 2;
    EXPECT_NE(findRuleIn(findingsOf(tp2), "trainer.fsdp"), nullptr);
    Recipe vime = fsdp;  // vime has no FSDP backend
    vime.framework = Framework::Vime;
    vime.rollout.engine = RolloutEngine::Vllm;
    EXPECT_NE(findRuleIn(findingsOf(vime), "trainer.fsdp"), nullptr);
    // miles' FSDP has LoRA too (miles/backends/fsdp_utils/lora_utils.py; its own
    // scripts/run-diffusion-grpo-ocr-debug.sh: --train-backend fsdp --lora-rank 64)
    Recipe milesLora = lora;
    milesLora.framework = Framework::Miles;
    const auto miles = findingsOf(milesLora);
    EXPECT_EQ(findRuleIn(miles, "trainer.fsdp"), nullptr);
    EXPECT_EQ(findRuleIn(miles, "lora.backend"), nullptr);
    Recipe milesTp = milesLora;  // still no tensor parallelism
    milesTp.trainer.tp = 2;
    EXPECT_NE(findRuleIn(findingsOf(milesTp), "trainer.fsdp"), nullptr);
}

// Issue 15: miles' diffusion trainer (--diffusion-train on FSDP) takes the LoRA target modules of
// its --diffusion-model's train pipeline config when none are given, so `--use-lora --lora-rank 64`
// alone is valid there; the same recipe without --diffusion-train, or on slime, still needs them.
TEST(Rules, MilesDiffusionTrainerPicksItsLoraModules) {
    Recipe r = test::loadShipped(k4B);
    r.framework = Framework::Miles;
    r.trainer.backend = TrainBackend::Fsdp;
    r.trainer.tp = 1;
    r.trainer.pp = 1;
    r.trainer.cp = 1;
    r.trainer.ep = 1;
    r.lora.rank = 64;
    r.lora.targetModules.clear();
    Recipe plain = r;
    EXPECT_NE(findRuleIn(findingsOf(plain), "lora.target-modules"), nullptr);
    r.extraArgs.push_back(ExtraArg{"--diffusion-train", {}, "run.sh:3"});
    EXPECT_EQ(findRuleIn(findingsOf(r), "lora.target-modules"), nullptr);
    Recipe slime = r;  // slime has no diffusion trainer
    slime.framework = Framework::Slime;
    EXPECT_NE(findRuleIn(findingsOf(slime), "lora.target-modules"), nullptr);
    Recipe megatron = r;  // the diffusion trainer is FSDP's
    megatron.trainer.backend = TrainBackend::Megatron;
    EXPECT_NE(findRuleIn(findingsOf(megatron), "lora.target-modules"), nullptr);
}

TEST(Rules, MilesBashLauncherIsValidMilesScriptForSlimeWarns) {
    Recipe r = test::loadShipped(k4B);
    r.framework = Framework::Miles;
    r.launcher.kind = LauncherKind::SlimeBash;  // miles' scripts/run-*.sh
    EXPECT_EQ(findRuleIn(findingsOf(r), "launcher.kind-framework"), nullptr);
    Recipe slime = test::loadShipped(k4B);
    slime.launcher.kind = LauncherKind::MilesScript;
    EXPECT_NE(findRuleIn(findingsOf(slime), "launcher.kind-framework"), nullptr);
}

TEST(Rules, MemoryOverAssumedHardwareIsAWarningNamingIt) {
    Recipe stated = test::loadShipped(kB30);
    stated.hardware.gpuMemoryGb = 8;
    stated.rollout.memFraction = 0.5;
    const auto errors = findingsOf(stated);
    for (const char* id : {"memory.gpu-over-capacity", "memory.engine-weights-fit"}) {
        const Finding* f = findRuleIn(errors, id);
        ASSERT_NE(f, nullptr) << id;
        EXPECT_EQ(f->severity, Severity::Error) << id;
    }
    Recipe assumed = stated;
    assumed.hardware.assumed = true;
    const auto warnings = findingsOf(assumed);
    for (const char* id : {"memory.gpu-over-capacity", "memory.engine-weights-fit"}) {
        const Finding* f = findRuleIn(warnings, id);
        ASSERT_NE(f, nullptr) << id;
        EXPECT_EQ(f->severity, Severity::Warning) << id;
        EXPECT_NE(f->message.find("assumed hardware"), std::string::npos) << f->message;
        EXPECT_NE(f->fixHint.find("hardware.gpu"), std::string::npos) << f->fixHint;
    }
}

TEST(Rules, EveryRuleIsInDocsRulesMd) {
    const std::string doc = readDoc("rules.md");
    ASSERT_FALSE(doc.empty());
    for (const auto& rule : ruleTable()) {
        EXPECT_NE(doc.find("| `" + std::string(rule.id) + "` |"), std::string::npos)
            << rule.id << " is missing from docs/rules.md (regenerate the table)";
    }
}

TEST(Recipe, EveryKeyIsInDocsRecipeMd) {
    // Every key the writer emits for a recipe with every field away from its default appears in
    // docs/recipe.md as `key`.
    const std::string doc = readDoc("recipe.md");
    ASSERT_FALSE(doc.empty());
    const std::string full = writeRecipe(test::everyFieldRecipe());
    std::istringstream lines(full);
    std::string line;
    while (std::getline(lines, line)) {
        const auto start = line.find_first_not_of(" -");
        const auto colon = line.find(':');
        if (start == std::string::npos || colon == std::string::npos || colon <= start ||
            line[start] == '"' || line.find("env:") != std::string::npos) {
            continue;
        }
        const std::string key = line.substr(start, colon - start);
        if (key.find_first_of(" {") != std::string::npos || key == key.substr(0, 0) ||
            (key.size() > 0 && std::isupper(static_cast<unsigned char>(key[0])))) {
            continue;  // environment variable names
        }
        if (key.find_first_of("/*") != std::string::npos) {
            continue;  // series names and prefixes (analysis.metric_kinds), not schema keys
        }
        // As `key`, or a dotted / listed part of one (`eplb.enabled`, `{name, num_layers}`).
        bool found = false;
        const std::string_view boundary = "`. /{,";
        for (auto at = doc.find(key); at != std::string::npos && !found;
             at = doc.find(key, at + 1)) {
            const char before = at > 0 ? doc[at - 1] : ' ';
            const char after = at + key.size() < doc.size() ? doc[at + key.size()] : ' ';
            found = boundary.find(before) != std::string_view::npos &&
                    (boundary.find(after) != std::string_view::npos || after == '}');
        }
        EXPECT_TRUE(found) << key;
    }
}

// An unresolved model points at the field that failed: the variant when the base model is known,
// else the name (decided from the recipe and the catalog, never from the message's words).
TEST(Rules, UnknownModelOrVariantNamesItsField) {
    Recipe r = test::loadShipped(kB30);
    r.model.variant = "no-such-variant";
    const Finding* f = findRuleIn(findingsOf(r), "model.unknown");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fieldPath, "model.variant") << f->message;
    r.model.name = "variant-less-unknown-model";  // the name fails first, even with a variant
    f = findRuleIn(findingsOf(r), "model.unknown");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fieldPath, "model.name") << f->message;
    r.model.variant.clear();
    f = findRuleIn(findingsOf(r), "model.unknown");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fieldPath, "model.name") << f->message;
}

}  // namespace
}  // namespace runplane::plan
