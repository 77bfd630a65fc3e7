// The checks of slime's / miles' argument validation (issue 16): every framework-argument rule
// fires on a recipe made to break it, and stays quiet on a near miss one setting away; the
// flags are read from typed fields and from extra_args alike; the checkpoint config.json
// cross-check reports each differing quantity with both values and never throws.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/plan/hf_config.h"
#include "backend/plan/planner.h"
#include "backend/plan/rules.h"
#include "tests/plan/rule_cases.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

const char* kOpd = "known-good/slime-qwen3-8B-opd.yaml";     // slime, disaggregated, OPD sglang
const char* kB30 = "known-good/slime-qwen3-30B-A3B.yaml";    // slime, colocate
const char* kMiles = "known-good/miles-qwen3-30B-A3B.yaml";  // miles, colocate
const char* k4B = "known-good/slime-qwen3-4B.yaml";          // slime, colocate, no OPD

using Mutation = std::function<void(Recipe&)>;

struct FrameworkCase {
    const char* rule;
    const char* base;
    Mutation trigger;   // breaks the rule
    Mutation nearMiss;  // one setting away from trigger: must not fire the rule
    Severity expected;
};

void arg(Recipe& r, const std::string& text) {
    ExtraArg a;
    std::istringstream words(text);
    words >> a.flag;
    for (std::string w; words >> w;) {
        a.values.push_back(w);
    }
    r.extraArgs.push_back(std::move(a));
}

void diskSync(Recipe& r) {
    r.weightUpdate.transport = WeightTransport::Disk;
    r.weightUpdate.diskDir = "/shared/weights";
}

void releaseTrain(Recipe& r) {
    diskSync(r);
    r.weightUpdate.releaseTrain = true;
    r.checkpoints.save = "/shared/save";
}

/// miles: a dedicated eval fleet that snapshot eval accepts (disaggregated, every 10 rollouts,
/// reusing the --save-hf checkpoints saved every 5).
void snapshotEvalReady(Recipe& r) {
    r.placement = Placement::Disaggregated;
    r.eval.interval = 10;
    r.checkpoints.saveInterval = 5;
    arg(r, "--save-hf /shared/hf");
    arg(r, "--eval-num-gpus 8");
}

/// miles: the slime OPD recipe run by miles (the miles-only OPD checks need a miles recipe).
void milesOpd(Recipe& r) {
    r.framework = Framework::Miles;
}

/// Everything --stream-optimizer-state-to-disk asks for, with the trainer offloaded to disk.
void streamReady(Recipe& r) {
    arg(r, "--stream-optimizer-state-to-disk");
    r.memory.offloadTrainTarget = OffloadTarget::Disk;
    r.optimizer.cpuOffload = false;
    r.optimizer.overlapCpuOptimizerD2hH2d = false;
    r.optimizer.precisionAware = false;
}

/// A multi-LoRA run that satisfies miles' validate_multi_lora_args, but for its placement.
void multiLoraReady(Recipe& r) {
    r.lora.rank = 16;
    r.lora.targetModules = {"q_proj", "v_proj"};
    r.memory.offloadTrain = false;
    arg(r, "--multi-lora-n-adapters 4");
}

void dropOpdType(Recipe& r) {
    r.algorithm.opdType.reset();
    std::erase_if(r.extraArgs, [](const ExtraArg& a) { return a.flag == "--opd-type"; });
}

std::vector<FrameworkCase> cases() {
    using S = Severity;
    return {
        {"opd.needs-type", kOpd, dropOpdType,
         [](Recipe& r) {
             dropOpdType(r);
             r.algorithm.opdType = OpdType::Sglang;
         },
         S::Error},
        {"opd.megatron-teacher", kOpd, [](Recipe& r) { r.algorithm.opdType = OpdType::Megatron; },
         [](Recipe& r) {
             r.algorithm.opdType = OpdType::Megatron;
             r.checkpoints.opdTeacherLoad = "/ckpt/qwen3-32B_torch_dist";
         },
         S::Error},
        {"opd.megatron-teacher", kOpd, [](Recipe& r) { r.algorithm.opdType = OpdType::Megatron; },
         [](Recipe& r) {
             r.algorithm.opdType = OpdType::Megatron;
             arg(r, "--opd-teacher-loads /ckpt/teacher-a_torch_dist");  // slime's plural flag
         },
         S::Error},
        {"opd.needs-type", kOpd,
         [](Recipe& r) {
             dropOpdType(r);
             arg(r, "--opd-type selff");
         },
         [](Recipe& r) {
             dropOpdType(r);
             arg(r, "--opd-type self");  // OPSD in slime's examples
         },
         S::Error},
        {"opd.sglang-no-teacher", kOpd, [](Recipe& r) { r.checkpoints.opdTeacherLoad = "/t"; },
         [](Recipe& r) {
             r.checkpoints.opdTeacherLoad = "/t";
             r.algorithm.opdType = OpdType::Megatron;
         },
         S::Error},
        {"opd.teacher-without-opd", k4B, [](Recipe& r) { arg(r, "--opd-teacher-load /t"); },
         [](Recipe& r) {
             arg(r, "--opd-teacher-load /t");
             arg(r, "--use-opd");
             arg(r, "--opd-type megatron");
         },
         S::Error},
        {"algorithm.reinforce-normalize", kOpd,
         [](Recipe& r) { r.algorithm.advantageEstimator = AdvantageEstimator::ReinforcePlusPlus; },
         [](Recipe& r) {
             r.algorithm.advantageEstimator = AdvantageEstimator::ReinforcePlusPlus;
             arg(r, "--normalize-advantages");
         },
         S::Error},
        {"algorithm.rollout-logprobs-tis", kOpd,
         [](Recipe& r) {
             r.algorithm.useTis = true;
             arg(r, "--use-rollout-logprobs");
         },
         [](Recipe& r) {
             r.algorithm.useTis = true;
             arg(r, "--use-rollout-logprobs");
             arg(r, "--pg-loss-type reinforce");  // slime exempts the REINFORCE loss
         },
         S::Error},
        {"algorithm.mismatch-metrics-tis", kOpd,
         [](Recipe& r) { arg(r, "--get-mismatch-metrics"); },
         [](Recipe& r) {
             arg(r, "--get-mismatch-metrics");
             arg(r, "--custom-tis-function-path my.tis");
         },
         S::Info},
        {"algorithm.cispo-eps-clip", kOpd,
         [](Recipe& r) { r.algorithm.advantageEstimator = AdvantageEstimator::Cispo; },
         [](Recipe& r) {
             r.algorithm.advantageEstimator = AdvantageEstimator::Cispo;
             r.algorithm.epsClip = 1.0;
         },
         S::Warning},
        {"debug.recovery-rollout-path", kB30,
         [](Recipe& r) { arg(r, "--save-debug-rollout-data /data/debug/rollout.pt"); },
         [](Recipe& r) {
             arg(r, "--save-debug-rollout-data /data/debug/rollout.pt");
             arg(r, "--debug-rollout-only");  // no trainer: recovery is off
         },
         S::Error},
        {"debug.recovery-rollout-path", kB30,
         [](Recipe& r) { arg(r, "--save-debug-rollout-data /data/debug/rollout.pt"); },
         [](Recipe& r) { arg(r, "--save-debug-rollout-data /data/debug/rollout_{rollout_id}.pt"); },
         S::Error},
        {"debug.recovery-rollout-path", kB30,
         [](Recipe& r) { arg(r, "--save-debug-rollout-data /data/debug/rollout.pt"); },
         [](Recipe& r) {
             arg(r, "--save-debug-rollout-data /data/debug/rollout.pt");
             r.framework = Framework::Miles;  // miles has no trainer-recovery path check
         },
         S::Error},
        // slime's validate_score_centering_args: one case per kind of check.
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.trainer.backend = TrainBackend::Fsdp;
         },
         [](Recipe& r) { r.trainer.backend = TrainBackend::Fsdp; }, S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             arg(r, "--rollout-top-p 0.9");
         },
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             arg(r, "--rollout-top-p 1.0");
         },
         S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.advantageEstimator = AdvantageEstimator::Gspo;
         },
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.advantageEstimator = AdvantageEstimator::ReinforcePlusPlus;
             r.algorithm.normalizeAdvantages = true;
         },
         S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.useTis = true;
             arg(r, "--custom-tis-function-path my_pkg.my_tis");
         },
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.useTis = true;
             arg(r,
                 "--custom-tis-function-path slime.backends.megatron_utils.loss.icepop_function");
         },
         S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.useTis = true;
             arg(r, "--tis-clip-low 3");
         },
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.algorithm.useTis = true;
             arg(r, "--tis-clip-low 2");
         },
         S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             arg(r, "--use-unbiased-kl");
         },
         [](Recipe& r) { arg(r, "--use-unbiased-kl"); }, S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             arg(r, "--score-centering-top-k 0");
         },
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             arg(r, "--score-centering-top-k 1");
         },
         S::Error},
        {"algorithm.score-centering", kB30,
         [](Recipe& r) {
             arg(r, "--use-score-centering");
             r.rollout.temperature = 0.0;
         },
         [](Recipe& r) { r.rollout.temperature = 0.0; }, S::Error},
        {"algorithm.ppo-miles", kMiles,
         [](Recipe& r) {
             r.algorithm.advantageEstimator = AdvantageEstimator::Ppo;
             r.algorithm.klCoef = 0.01;
         },
         [](Recipe& r) { r.algorithm.advantageEstimator = AdvantageEstimator::Ppo; }, S::Error},
        {"batch.balance-by-flops", kOpd,
         [](Recipe& r) {
             r.batch.dynamicBatchSize = false;
             arg(r, "--balance-by-flops");
         },
         [](Recipe& r) { arg(r, "--balance-by-flops"); }, S::Error},
        {"trainer.mtp-needs-layers", kOpd, [](Recipe& r) { arg(r, "--enable-mtp-training"); },
         [](Recipe& r) {
             arg(r, "--enable-mtp-training");
             arg(r, "--mtp-num-layers 1");
         },
         S::Error},
        {"trainer.param-name-lists", kOpd,
         [](Recipe& r) {
             arg(r, "--only-train-params-name-list experts");
             arg(r, "--freeze-params-name-list embedding output_layer");
         },
         [](Recipe& r) { arg(r, "--freeze-params-name-list embedding output_layer"); }, S::Error},
        {"trainer.routing-replay-prefetch", kOpd,
         [](Recipe& r) {
             arg(r, "--use-rollout-routing-replay");
             arg(r, "--routing-replay-prefetch-microbatches -1");
         },
         [](Recipe& r) {
             arg(r, "--use-rollout-routing-replay");
             arg(r, "--routing-replay-prefetch-microbatches 2");
         },
         S::Error},
        {"debug.save-paths", kOpd,
         [](Recipe& r) {
             arg(r, "--save-debug-train-data /d/{rollout_id}.pt");
             arg(r, "--save-debug-rollout-data /d/{rollout_id}.pt");
         },
         [](Recipe& r) {
             arg(r, "--save-debug-train-data /d/train_{rollout_id}.pt");
             arg(r, "--save-debug-rollout-data /d/{rollout_id}.pt");
         },
         S::Error},
        {"debug.rollout-xor-train", kOpd,
         [](Recipe& r) {
             arg(r, "--debug-rollout-only");
             arg(r, "--load-debug-rollout-data /d/{rollout_id}.pt");
         },
         [](Recipe& r) { arg(r, "--debug-rollout-only"); }, S::Error},
        {"rollout.positive-knobs", kOpd, [](Recipe& r) { arg(r, "--rollout-cleanup-timeout 0"); },
         [](Recipe& r) { arg(r, "--rollout-cleanup-timeout 30"); }, S::Error},
        {"rollout.straw-transport", kOpd, [](Recipe& r) { arg(r, "--rollout-queue-online-gc"); },
         [](Recipe& r) {
             arg(r, "--rollout-queue-online-gc");
             arg(r, "--rollout-data-transport straw");
         },
         S::Error},
        {"launcher.entry-point", kOpd, [](Recipe& r) { r.launcher.entryPoint = "train_sync.py"; },
         [](Recipe& r) { r.launcher.entryPoint = "train_async.py"; }, S::Error},
        {"placement.async-colocate", kB30,
         [](Recipe& r) { r.launcher.entryPoint = "train_async.py"; },
         [](Recipe& r) {
             r.launcher.entryPoint = "train_async.py";
             r.placement = Placement::Disaggregated;
         },
         S::Error},
        {"checkpoints.save-trigger-needs-save", kMiles,
         [](Recipe& r) { arg(r, "--save-trigger-sentinel /shared/save-now"); },
         [](Recipe& r) {
             arg(r, "--save-trigger-sentinel /shared/save-now");
             r.checkpoints.save = "/shared/save";
         },
         S::Error},
        {"eval.fleet-divisible", kMiles,
         [](Recipe& r) {
             arg(r, "--eval-num-gpus 6");
             arg(r, "--eval-num-gpus-per-engine 4");
         },
         [](Recipe& r) {
             arg(r, "--eval-num-gpus 8");
             arg(r, "--eval-num-gpus-per-engine 4");
         },
         S::Error},
        {"eval.sglang-needs-fleet", kMiles,
         [](Recipe& r) { arg(r, "--eval-sglang-mem-fraction-static 0.5"); },
         [](Recipe& r) {
             arg(r, "--eval-sglang-mem-fraction-static 0.5");
             arg(r, "--eval-num-gpus 8");
         },
         S::Error},
        {"trainer.indep-dp", kMiles,
         [](Recipe& r) {
             arg(r, "--indep-dp");
             r.batch.dynamicBatchSize = false;
         },
         [](Recipe& r) { arg(r, "--indep-dp"); }, S::Error},
        {"rollout.session-server-partial", kMiles,
         [](Recipe& r) {
             arg(r, "--use-session-server");
             arg(r, "--partial-rollout");
         },
         [](Recipe& r) { arg(r, "--use-session-server"); }, S::Error},
        {"opd.log-prob-top-k", kOpd,
         [](Recipe& r) {
             milesOpd(r);
             arg(r, "--opd-log-prob-top-k 8");  // miles' default strategy only-student
         },
         [](Recipe& r) {
             milesOpd(r);
             arg(r, "--opd-log-prob-top-k 8");
             arg(r, "--opd-top-k-strategy only-teacher");
         },
         S::Error},
        {"opd.teacher-urls", kOpd,
         [](Recipe& r) {
             milesOpd(r);
             r.algorithm.opdType = OpdType::Megatron;
             r.checkpoints.opdTeacherLoad = "/shared/teacher_torch_dist";
             arg(r, "--opd-teacher-urls http://teacher:30000");
         },
         [](Recipe& r) {
             milesOpd(r);
             arg(r, "--opd-teacher-urls http://teacher:30000");
         },
         S::Error},
        {"rollout.prefill-logprobs", kMiles,
         [](Recipe& r) { arg(r, "--recompute-logprobs-via-prefill"); },
         [](Recipe& r) {
             arg(r, "--recompute-logprobs-via-prefill");
             arg(r, "--true-on-policy-mode");
         },
         S::Error},
        {"rollout.session-server", kMiles, [](Recipe& r) { arg(r, "--tito-model qwen3"); },
         [](Recipe& r) {
             arg(r, "--tito-model qwen3");
             arg(r, "--use-session-server");
         },
         S::Error},
        {"batch.dynamic-global-batch", kMiles,
         [](Recipe& r) {
             arg(r, "--use-dynamic-global-batch-size");
             r.batch.dynamicBatchSize = false;
         },
         [](Recipe& r) { arg(r, "--use-dynamic-global-batch-size"); }, S::Error},
        {"rollout.async-max-concurrent", kMiles,
         [](Recipe& r) {
             arg(r,
                 "--async-max-concurrent-samples " + std::to_string(r.batch.nSamplesPerPrompt - 1));
         },
         [](Recipe& r) {
             arg(r, "--async-max-concurrent-samples " + std::to_string(r.batch.nSamplesPerPrompt));
         },
         S::Error},
        {"trainer.bshd", kMiles, [](Recipe& r) { arg(r, "--qkv-format bshd"); },
         [](Recipe& r) {
             arg(r, "--qkv-format bshd");
             r.batch.dynamicBatchSize = false;
         },
         S::Error},
        {"trainer.indexer-replay-cp", kMiles,
         [](Recipe& r) {
             arg(r, "--use-rollout-indexer-replay");
             r.trainer.cp = 2;
         },
         [](Recipe& r) { arg(r, "--use-rollout-indexer-replay"); }, S::Error},
        {"optimizer.stream-to-disk", kMiles,
         [](Recipe& r) {
             streamReady(r);
             r.memory.offloadTrainTarget = OffloadTarget::Cpu;
         },
         streamReady, S::Error},
        {"lora.shared-outer-agree", kMiles,
         [](Recipe& r) {
             r.lora.rank = 16;
             r.lora.targetModules = {"q_proj"};
             arg(r, "--sglang-experts-shared-outer-loras");
         },
         [](Recipe& r) {
             r.lora.rank = 16;
             r.lora.targetModules = {"q_proj"};
             arg(r, "--sglang-experts-shared-outer-loras");
             arg(r, "--experts-shared-outer-loras");
         },
         S::Error},
        {"lora.multi-lora", kMiles, multiLoraReady,
         [](Recipe& r) {
             multiLoraReady(r);
             r.placement = Placement::Disaggregated;
         },
         S::Error},
        {"trainer.skip-actor-forward", kMiles,
         [](Recipe& r) { arg(r, "--skip-actor-forward-only"); },  // Megatron's dropout 0.1
         [](Recipe& r) {
             arg(r, "--skip-actor-forward-only");
             arg(r, "--hidden-dropout 0.0");
             arg(r, "--attention-dropout 0.0");
         },
         S::Error},
        {"memory.offload-disk-chunk", kMiles,
         [](Recipe& r) {
             r.memory.offloadTrainTarget = OffloadTarget::Disk;
             arg(r, "--offload-train-disk-chunk-mb 0");
         },
         [](Recipe& r) {
             r.memory.offloadTrainTarget = OffloadTarget::Disk;
             arg(r, "--offload-train-disk-chunk-mb 64");
         },
         S::Error},
        {"rollout.ft-eval-fleet", kMiles,
         [](Recipe& r) {
             arg(r, "--use-fault-tolerance");
             arg(r, "--eval-num-gpus 8");
         },
         [](Recipe& r) {
             arg(r, "--use-fault-tolerance");
             arg(r, "--ft-components train");
             arg(r, "--eval-num-gpus 8");
         },
         S::Error},
        {"trainer.rematerialize-param", kMiles,
         [](Recipe& r) {
             arg(r, "--rematerialize-param-from-master-weight");
             arg(r, "--overlap-param-gather");
         },
         [](Recipe& r) { arg(r, "--rematerialize-param-from-master-weight"); }, S::Error},
        {"rollout.external-engines", kMiles,
         [](Recipe& r) {
             arg(r, "--rollout-external-engine-addrs 10.0.0.1:30000");
             arg(r, "--prefill-num-servers 1");
         },
         [](Recipe& r) { arg(r, "--rollout-external-engine-addrs 10.0.0.1:30000"); }, S::Error},
        {"eval.snapshot", kMiles,
         [](Recipe& r) {
             snapshotEvalReady(r);
             r.checkpoints.saveInterval = 3;  // 10 is no multiple of 3
         },
         snapshotEvalReady, S::Error},
        {"placement.fully-async-colocate", kMiles,
         [](Recipe& r) {
             arg(r, "--fully-async");
             r.trainer.backend = TrainBackend::Fsdp;
         },
         [](Recipe& r) { arg(r, "--fully-async"); }, S::Error},
        {"placement.flush-cache-interval", kOpd,
         [](Recipe& r) {
             arg(r, "--flush-cache-interval 4");
             r.memory.offloadRollout = true;
         },
         [](Recipe& r) { arg(r, "--flush-cache-interval 4"); }, S::Error},
        {"placement.transfer-mode", kMiles,
         [](Recipe& r) { arg(r, "--update-weight-transfer-mode p2p"); },
         [](Recipe& r) { arg(r, "--update-weight-transfer-mode broadcast"); }, S::Error},
        {"weight-update.delta-hf-checkpoint", kMiles,
         [](Recipe& r) {
             arg(r, "--update-weight-transfer-mode disk-delta");
             diskSync(r);
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
             r.checkpoints.hfCheckpoint.clear();
         },
         [](Recipe& r) {
             arg(r, "--update-weight-transfer-mode disk-delta");
             diskSync(r);
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
             r.checkpoints.hfCheckpoint = "/models/Qwen3-30B-A3B";
         },
         S::Error},
        {"weight-update.disk-dir", kOpd,
         [](Recipe& r) { r.weightUpdate.transport = WeightTransport::Disk; }, diskSync, S::Error},
        {"weight-update.delta-transport", kOpd,
         [](Recipe& r) {
             r.weightUpdate.mode = WeightUpdateMode::Delta;
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
         },
         [](Recipe& r) {
             diskSync(r);
             r.weightUpdate.mode = WeightUpdateMode::Delta;
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
         },
         S::Error},
        {"weight-update.delta-colocate", kB30,
         [](Recipe& r) {
             diskSync(r);
             r.weightUpdate.mode = WeightUpdateMode::Delta;
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
         },
         diskSync, S::Error},
        // issue 45: vime's own check (vime_validate_args raises NotImplementedError on delta)
        {"weight-update.vime-delta", kOpd,
         [](Recipe& r) {
             r.framework = Framework::Vime;
             r.rollout.engine = RolloutEngine::Vllm;
             diskSync(r);
             r.weightUpdate.mode = WeightUpdateMode::Delta;
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
         },
         [](Recipe& r) {
             r.framework = Framework::Vime;
             r.rollout.engine = RolloutEngine::Vllm;
             diskSync(r);
         },
         S::Error},
        {"weight-update.delta-local-dir", kOpd,
         [](Recipe& r) {
             diskSync(r);
             r.weightUpdate.mode = WeightUpdateMode::Delta;
         },
         [](Recipe& r) {
             diskSync(r);
             r.weightUpdate.mode = WeightUpdateMode::Delta;
             r.weightUpdate.localCheckpointDir = "/nvme/ckpt";
         },
         S::Error},
        {"weight-update.release-train-critic", kOpd,
         [](Recipe& r) {
             releaseTrain(r);
             r.algorithm.advantageEstimator = AdvantageEstimator::Ppo;
         },
         releaseTrain, S::Error},
        {"weight-update.release-train-save", kOpd,
         [](Recipe& r) {
             releaseTrain(r);
             r.checkpoints.save.clear();
         },
         releaseTrain, S::Error},
        {"weight-update.release-train-save-interval", kOpd, releaseTrain,
         [](Recipe& r) {
             releaseTrain(r);
             r.checkpoints.saveInterval = 5;
         },
         S::Info},
        {"weight-update.release-train-transport", kOpd,
         [](Recipe& r) {
             releaseTrain(r);
             r.weightUpdate.transport = WeightTransport::Nccl;
         },
         releaseTrain, S::Error},
        {"weight-update.release-train-backend", kOpd,
         [](Recipe& r) {
             releaseTrain(r);
             arg(r, "--keep-old-actor");
         },
         releaseTrain, S::Error},
        {"weight-update.release-train-offload", kB30,
         [](Recipe& r) {
             releaseTrain(r);
             r.memory.offloadTrain = true;
         },
         [](Recipe& r) {
             releaseTrain(r);
             r.memory.offloadTrain.reset();
         },
         S::Info},
    };
}

const Finding* findRule(const std::vector<Finding>& findings, const std::string& id) {
    for (const auto& f : findings) {
        if (f.ruleId == id) {
            return &f;
        }
    }
    return nullptr;
}

std::vector<Finding> findingsOf(const Recipe& r) {
    return validate(r, test::catalog());
}

TEST(FrameworkRules, EachFiresOnItsCaseAndNotOnTheNearMiss) {
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.rule);
        ASSERT_NE(plan::findRule(c.rule), nullptr) << "case for a rule not in the table";
        const Recipe base = test::loadShipped(c.base);
        EXPECT_EQ(findRule(findingsOf(base), c.rule), nullptr) << "fires on " << c.base;
        Recipe broken = base;
        c.trigger(broken);
        const auto findings = findingsOf(broken);
        const Finding* f = findRule(findings, c.rule);
        ASSERT_NE(f, nullptr) << "did not fire";
        EXPECT_EQ(f->severity, c.expected) << f->message;
        EXPECT_FALSE(f->message.empty());
        EXPECT_FALSE(f->fixHint.empty());
        EXPECT_FALSE(f->fieldPath.empty());
        Recipe near = base;
        c.nearMiss(near);
        const Finding* miss = findRule(findingsOf(near), c.rule);
        EXPECT_EQ(miss, nullptr) << "fires on the near miss: " << (miss ? miss->message : "");
    }
}

TEST(FrameworkRules, ScoreCenteringKeepsSlimesWordingAndPointsAtTheFlag) {
    Recipe r = test::loadShipped(kB30);
    arg(r, "--use-score-centering");
    arg(r, "--loss-type sft_loss");
    arg(r, "--rollout-logprob-server-url http://127.0.0.1:30010");
    arg(r,
        "--custom-generate-function-path "
        "slime.rollout.sglang_streaming_rollout.generate_streaming");
    std::vector<std::string> messages;
    for (const Finding& f : findingsOf(r)) {
        if (f.ruleId == "algorithm.score-centering") {
            messages.push_back(f.message);
            EXPECT_EQ(f.fieldPath.rfind("extra_args[", 0), 0u) << f.fieldPath;
        }
    }
    ASSERT_EQ(messages.size(), 3u);
    auto has = [&](const std::string& text) {
        return std::any_of(messages.begin(), messages.end(),
                           [&](const std::string& m) { return m.find(text) != std::string::npos; });
    };
    EXPECT_TRUE(has("--use-score-centering requires --loss-type policy_loss (got sft_loss)"));
    EXPECT_TRUE(
        has("Score centering requires original sampler probabilities, not a rollout "
            "logprob server's recomputation."));
    EXPECT_TRUE(has("Score centering does not support streaming rollout."));
}

// Found by fuzz_import (docs/fuzzing.md, sixth round): `--lora-rank 5.5e104` was cast to int
// (undefined behaviour; INT_MIN on x86-64, so "must be set"). A rank given as a flag counts from 1
// on, however large; below 1 it is not set.
TEST(FrameworkRules, AHugeLoraRankFlagIsSetNotCast) {
    const auto multiLoraMessage = [](const std::string& rank) {
        Recipe r = test::loadShipped(kMiles);
        multiLoraReady(r);
        r.lora.rank = 0;
        arg(r, "--lora-rank " + rank);
        const auto findings = findingsOf(r);
        const Finding* f = findRule(findings, "lora.multi-lora");
        return f ? f->message : std::string("<none>");
    };
    for (const char* huge : {"5.5e104", "1e300", "4294967296", "16"}) {
        EXPECT_EQ(multiLoraMessage(huge).find("--lora-rank must be set"), std::string::npos)
            << huge;
    }
    for (const char* unset : {"0", "0.5", "-3", "-1e300"}) {
        EXPECT_EQ(multiLoraMessage(unset),
                  "--lora-rank must be set when --multi-lora-n-adapters > 0")
            << unset;
    }
}

TEST(FrameworkRules, MilesOnlyChecksKeepMilesWordingAndStayQuietForSlime) {
    const auto messageOf = [](const Recipe& r, const char* rule) {
        const auto findings = findingsOf(r);
        const Finding* f = findRule(findings, rule);
        return f ? f->message : std::string("<none>");
    };
    Recipe r = test::loadShipped(kOpd);
    milesOpd(r);
    arg(r, "--opd-log-prob-top-k -1");
    EXPECT_EQ(messageOf(r, "opd.log-prob-top-k"),
              "--opd-log-prob-top-k must be non-negative (it is -1).");
    r.extraArgs.back().values = {"4"};
    r.algorithm.opdType = OpdType::Megatron;
    r.checkpoints.opdTeacherLoad = "/shared/teacher";
    EXPECT_EQ(messageOf(r, "opd.log-prob-top-k"),
              "--opd-log-prob-top-k is currently supported only with --opd-type=sglang (it is "
              "megatron).");
    r.algorithm.opdType = OpdType::Sglang;
    r.checkpoints.opdTeacherLoad.clear();
    EXPECT_NE(messageOf(r, "opd.log-prob-top-k").find("set MILES_USE_LEGACY_ROLLOUT_V1=1"),
              std::string::npos);
    r.environment.env.emplace_back("MILES_USE_LEGACY_ROLLOUT_V1", "1");
    EXPECT_EQ(messageOf(r, "opd.log-prob-top-k"), "<none>");

    Recipe urls = test::loadShipped(kOpd);
    milesOpd(urls);
    urls.algorithm.useOpd = false;
    urls.extraArgs.erase(std::remove_if(urls.extraArgs.begin(), urls.extraArgs.end(),
                                        [](const ExtraArg& a) {
                                            return a.flag == "--use-opd" || a.flag == "--opd-type";
                                        }),
                         urls.extraArgs.end());
    arg(urls, "--opd-teacher-urls http://teacher:30000");
    EXPECT_EQ(messageOf(urls, "opd.teacher-urls"),
              "--opd-teacher-urls is set but --use-opd is not enabled. Please add --use-opd flag.");

    Recipe session = test::loadShipped(kMiles);
    arg(session, "--use-session-server v3");
    EXPECT_EQ(messageOf(session, "rollout.session-server"),
              "--use-session-server='v3' is not a known session server version; pass it bare (or "
              "'v1') for the append-only linear server, or 'v2' for tree serving.");
    session.extraArgs.back().values = {"v2"};
    arg(session, "--group-rm");
    EXPECT_EQ(messageOf(session, "rollout.session-server"),
              "--use-session-server v2 does not support --group-rm; v2 returns list[Sample]");
    session.extraArgs.pop_back();
    arg(session, "--tito-model qwen3");
    arg(session, "--chat-template-path /shared/t.jinja");
    EXPECT_EQ(messageOf(session, "rollout.session-server"),
              "--chat-template-path cannot override the template registered for "
              "--tito-model=qwen3; use --tito-model=default for a custom template");

    Recipe stream = test::loadShipped(kMiles);
    arg(stream, "--stream-optimizer-state-to-disk");
    stream.memory.offloadTrainTarget = OffloadTarget::Disk;  // CPU Adam is still on
    EXPECT_EQ(messageOf(stream, "optimizer.stream-to-disk"),
              "--stream-optimizer-state-to-disk excludes --optimizer-cpu-offload");

    Recipe multi = test::loadShipped(kMiles);
    multiLoraReady(multi);
    multi.placement = Placement::Disaggregated;
    arg(multi, "--sglang-tokenizer-worker-num 2");
    EXPECT_NE(messageOf(multi, "lora.multi-lora")
                  .find("Multi-LoRA requires --sglang-tokenizer-worker-num 1"),
              std::string::npos);

    Recipe noAdvantages = test::loadShipped(kMiles);
    arg(noAdvantages, "--skip-actor-forward-only");
    arg(noAdvantages, "--disable-compute-advantages-and-returns");
    EXPECT_EQ(messageOf(noAdvantages, "trainer.skip-actor-forward"),
              "--skip-actor-forward-only requires actor advantage computation");

    Recipe skip = test::loadShipped(kMiles);
    arg(skip, "--skip-actor-forward-only");
    EXPECT_EQ(messageOf(skip, "trainer.skip-actor-forward"),
              "--skip-actor-forward-only is incompatible with: --hidden-dropout, "
              "--attention-dropout");
    arg(skip, "--hidden-dropout 0");
    arg(skip, "--attention-dropout 0");
    skip.batch.globalBatchSize = 128;
    skip.batch.numStepsPerRollout.reset();
    EXPECT_EQ(messageOf(skip, "trainer.skip-actor-forward"),
              "--skip-actor-forward-only requires exactly one optimizer step for " +
                  std::to_string(skip.batch.rolloutBatchSize * skip.batch.nSamplesPerPrompt) +
                  " rollout samples; got --global-batch-size 128");

    Recipe chunk = test::loadShipped(kMiles);
    chunk.memory.offloadTrainTarget = OffloadTarget::Disk;
    arg(chunk, "--offload-train-disk-chunk-mb -1");
    EXPECT_EQ(messageOf(chunk, "memory.offload-disk-chunk"),
              "--offload-train-disk-chunk-mb must be positive (it is -1)");
    chunk.memory.offloadTrainTarget = OffloadTarget::Cpu;  // the check sits in the disk block
    EXPECT_EQ(messageOf(chunk, "memory.offload-disk-chunk"), "<none>");

    Recipe ft = test::loadShipped(kMiles);
    arg(ft, "--eval-num-gpus 8");
    arg(ft, "--ft-components rollout train");
    EXPECT_EQ(messageOf(ft, "rollout.ft-eval-fleet"), "<none>");  // ignored without the switch
    arg(ft, "--use-fault-tolerance");
    EXPECT_EQ(messageOf(ft, "rollout.ft-eval-fleet"),
              "rollout fault tolerance does not support a dedicated eval fleet (--eval-num-gpus > "
              "0): the eval fleet pins engine addresses once at startup, so a healed eval cell "
              "would make every later eval skip silently");

    Recipe remat = test::loadShipped(kMiles);
    arg(remat, "--rematerialize-param-from-master-weight");
    remat.optimizer.cpuOffload = false;  // precision-aware Adam on GPU
    EXPECT_EQ(messageOf(remat, "trainer.rematerialize-param"),
              "--use-precision-aware-optimizer on GPU keeps the master weights inside TE "
              "FusedAdam, stored as int16 remainders of the params. There is nothing standalone "
              "to rebuild from. Add --optimizer-cpu-offload, which holds standalone masters "
              "instead.");
    remat.placement = Placement::Disaggregated;  // an earlier assert fails first
    EXPECT_EQ(messageOf(remat, "trainer.rematerialize-param"),
              "--rematerialize-param-from-master-weight requires --colocate and --offload-train "
              "(miles asserts args.colocate and args.offload_train)");
    arg(remat, "--use-fault-tolerance");
    arg(remat, "--ft-components rollout train");  // 'train' turns on --indep-dp
    EXPECT_NE(messageOf(remat, "trainer.rematerialize-param")
                  .find("drops the backup inside update_weights, which RayTrainGroup runs on the "
                        "first alive cell only."),
              std::string::npos);
    arg(remat, "--debug-train-only");  // miles switches the option off instead
    EXPECT_EQ(messageOf(remat, "trainer.rematerialize-param"), "<none>");

    Recipe external = test::loadShipped(kMiles);
    arg(external, "--rollout-external-router-pd");
    EXPECT_EQ(messageOf(external, "rollout.external-engines"),
              "--rollout-external-router-pd only applies to external rollout engines; internally "
              "launched engines infer PD from the sglang config.");
    arg(external, "--custom-inference-engine-provider-path my.provider");  // counts as external
    EXPECT_EQ(messageOf(external, "rollout.external-engines"), "<none>");
    arg(external, "--eval-num-gpus 8");
    EXPECT_EQ(messageOf(external, "rollout.external-engines"),
              "eval_num_gpus cannot be set with external rollout engines.");
    Recipe pd = test::loadShipped(kMiles);
    arg(pd, "--sglang-config /shared/sglang.yaml");
    arg(pd, "--prefill-num-servers 2");
    EXPECT_EQ(messageOf(pd, "rollout.external-engines"),
              "sglang_config and prefill_num_servers are mutually exclusive. Use server_groups in "
              "the YAML config instead.");

    Recipe snapshot = test::loadShipped(kMiles);
    arg(snapshot, "--eval-num-gpus 8");
    EXPECT_EQ(messageOf(snapshot, "eval.snapshot"), "Snapshot eval requires --eval-interval.");
    snapshot.eval.interval = 10;
    EXPECT_EQ(messageOf(snapshot, "eval.snapshot"),
              "Snapshot eval requires a snapshot source: set --eval-hf-dir (staging exports) or "
              "--save-hf (reuse periodic HF checkpoints).");
    arg(snapshot, "--save-hf /shared/hf");
    EXPECT_EQ(messageOf(snapshot, "eval.snapshot"),
              "Snapshot eval is not supported with --colocate.");
    snapshot.placement = Placement::Disaggregated;
    EXPECT_EQ(messageOf(snapshot, "eval.snapshot"),
              "Reusing --save-hf checkpoints for eval requires eval_interval to be a multiple of "
              "save_interval (got eval_interval=10, save_interval=None). Set --eval-hf-dir for "
              "independent snapshots.");
    arg(snapshot, "--eval-hf-dir /shared/eval-hf");  // independent snapshots: no interval match
    EXPECT_EQ(messageOf(snapshot, "eval.snapshot"), "<none>");

    // Framework-gated: slime has none of these checks.
    for (const auto& c : cases()) {
        const std::string id = c.rule;
        if (id != "opd.log-prob-top-k" && id != "opd.teacher-urls" &&
            id != "rollout.prefill-logprobs" && id != "rollout.session-server" &&
            id != "batch.dynamic-global-batch" && id != "rollout.async-max-concurrent" &&
            id != "trainer.bshd" && id != "trainer.indexer-replay-cp" &&
            id != "optimizer.stream-to-disk" && id != "lora.shared-outer-agree" &&
            id != "lora.multi-lora" && id != "trainer.skip-actor-forward" &&
            id != "memory.offload-disk-chunk" && id != "rollout.ft-eval-fleet" &&
            id != "trainer.rematerialize-param" && id != "rollout.external-engines" &&
            id != "eval.snapshot") {
            continue;
        }
        SCOPED_TRACE(id);
        Recipe slime = test::loadShipped(c.base);
        c.trigger(slime);
        slime.framework = Framework::Slime;
        EXPECT_EQ(findRule(findingsOf(slime), c.rule), nullptr);
    }
}

TEST(FrameworkRules, FlagsFromExtraArgsCountAsTheTypedFields) {
    // An imported script: the weight-update flags are extra_args, and the finding points at the
    // flag's item (its line in the recipe file).
    Recipe r = test::loadShipped(kB30);
    arg(r, "--update-weight-mode delta");
    arg(r, "--update-weight-transport=disk");
    arg(r, "--update-weight-disk-dir /shared/w");
    const auto findings = findingsOf(r);
    const Finding* colocate = findRule(findings, "weight-update.delta-colocate");
    ASSERT_NE(colocate, nullptr);
    EXPECT_NE(colocate->message.find("is not supported with --colocate"), std::string::npos);
    const Finding* local = findRule(findings, "weight-update.delta-local-dir");
    ASSERT_NE(local, nullptr);
    EXPECT_EQ(local->fieldPath, "weight_update.local_checkpoint_dir");
    EXPECT_EQ(findRule(findings, "weight-update.delta-transport"), nullptr);  // =disk counted
    EXPECT_EQ(findRule(findings, "weight-update.disk-dir"), nullptr);

    Recipe opd = test::loadShipped(kOpd);  // --use-opd --opd-type sglang as extra_args
    arg(opd, "--opd-teacher-load /ckpt/teacher");
    const auto of = findingsOf(opd);
    const Finding* f = findRule(of, "opd.sglang-no-teacher");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fieldPath, "extra_args[" + std::to_string(opd.extraArgs.size() - 1) + "]");
    EXPECT_EQ(
        f->message,
        "--opd-teacher-load should not be set when --opd-type=sglang (it is /ckpt/teacher). "
        "In sglang mode, teacher log-probs are obtained from external server during rollout.");
}

TEST(FrameworkRules, MilesDiskDeltaTransferKeepsMilesWording) {
    Recipe r = test::loadShipped(kMiles);
    r.placement = Placement::Disaggregated;
    r.rollout.numGpus = 4;
    r.checkpoints.hfCheckpoint.clear();
    arg(r, "--update-weight-transfer-mode disk-delta");
    const auto findings = findingsOf(r);
    const Finding* dir = findRule(findings, "weight-update.disk-dir");
    ASSERT_NE(dir, nullptr);
    EXPECT_EQ(dir->message,
              "--update-weight-transfer-mode=disk-delta requires --update-weight-disk-dir to point "
              "at a filesystem shared between the trainer and the rollout engines.");
    const Finding* local = findRule(findings, "weight-update.delta-local-dir");
    ASSERT_NE(local, nullptr);
    EXPECT_NE(local->message.find("(a rollout-host-local directory, e.g. NVMe)"),
              std::string::npos);
    EXPECT_NE(findRule(findings, "weight-update.delta-hf-checkpoint"), nullptr);
    EXPECT_EQ(findRule(findings, "placement.transfer-mode"), nullptr);  // disaggregated, no LoRA
    // The same flag under slime is not a slime flag: nothing fires.
    Recipe slime = test::loadShipped(kOpd);
    arg(slime, "--update-weight-transfer-mode disk-delta");
    EXPECT_EQ(findRule(findingsOf(slime), "weight-update.disk-dir"), nullptr);
}

TEST(FrameworkRules, ExtraArgsFindingsCarryTheFlagsLine) {
    auto parsed = parseRecipe(
        "schema_version: 1\nframework: slime\nmodel: qwen3-8B\nbatch:\n  rollout_batch_size: 8\n"
        "  global_batch_size: 8\n  num_rollout: 10\nextra_args:\n  - --lr 1e-6\n"
        "  - --use-opd\n",
        "opd.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    const auto findings = findingsOf(*parsed);
    const Finding* f = findRule(findings, "opd.needs-type");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->fieldPath, "algorithm.opd_type");  // the typed field, never written
    EXPECT_EQ(f->message,
              "--opd-type must be specified when --use-opd is enabled. Choose 'sglang' or "
              "'megatron'.");
    // --no-use-opd turns it off again (argparse BooleanOptionalAction spelling).
    Recipe off = *parsed;
    arg(off, "--no-use-opd");
    EXPECT_EQ(findRule(findingsOf(off), "opd.needs-type"), nullptr);
    // An invalid choice names the value, at the line of the flag.
    auto bad = parseRecipe(
        "schema_version: 1\nframework: slime\nmodel: qwen3-8B\nbatch:\n  rollout_batch_size: 8\n"
        "  global_batch_size: 8\n  num_rollout: 10\nextra_args:\n  - --lr 1e-6\n"
        "  - --use-opd\n  - --opd-type teacher\n",
        "opd.yaml");
    ASSERT_TRUE(bad.ok()) << bad.error();
    const Finding* choice = findRule(findingsOf(*bad), "opd.needs-type");
    ASSERT_NE(choice, nullptr);
    EXPECT_EQ(choice->fieldPath, "extra_args[2]");
    EXPECT_NE(choice->message.find("invalid choice: 'teacher'"), std::string::npos);
    EXPECT_EQ(choice->loc.line, 11);
}

TEST(FrameworkRules, TypedOpdAndWeightUpdateFieldsRoundTrip) {
    Recipe r = test::loadShipped(kOpd);
    r.algorithm.useOpd = true;
    r.algorithm.opdType = OpdType::Megatron;
    r.checkpoints.opdTeacherLoad = "/ckpt/teacher";
    r.algorithm.normalizeAdvantages = true;
    diskSync(r);
    r.weightUpdate.mode = WeightUpdateMode::Delta;
    r.weightUpdate.localCheckpointDir = "/nvme/x";
    const std::string text = writeRecipe(r);
    EXPECT_NE(text.find("opd_type: megatron"), std::string::npos) << text;
    EXPECT_NE(text.find("weight_update:"), std::string::npos) << text;
    auto back = parseRecipe(text, "x.yaml");
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(*back, r);
    auto bad = parseRecipe(
        "schema_version: 1\nmodel: qwen3-8B\nbatch:\n  rollout_batch_size: 8\n"
        "weight_update:\n  transport: rdma\n",
        "bad.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("bad.yaml:6:"), std::string::npos) << bad.error();
}

// ---- the checkpoint config.json cross-check ----------------------------------------------

class HfConfig : public ::testing::Test {
  protected:
    void SetUp() override {
        dir = std::filesystem::temp_directory_path() /
              ("runplane-hfconfig-" +
               std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        recipe = test::loadShipped(kB30);
        recipe.checkpoints.hfCheckpoint = dir.string();
        auto s = resolveModel(recipe, test::catalog());
        ASSERT_TRUE(s.ok());
        shape = *s;
    }
    void TearDown() override { std::filesystem::remove_all(dir); }

    /// The config.json HF writes for this shape (Qwen3-MoE spelling).
    nlohmann::json matching() const {
        return {{"architectures", {"Qwen3MoeForCausalLM"}},
                {"num_hidden_layers", shape.numLayers},
                {"hidden_size", shape.hidden},
                {"num_attention_heads", shape.numAttentionHeads},
                {"num_key_value_heads", shape.queryGroups()},
                {"num_experts", shape.numExperts},
                {"num_experts_per_tok", shape.topK},
                {"moe_intermediate_size", shape.expertFfn()},
                {"intermediate_size", 6144},  // pure MoE: not compared (slime skips it too)
                {"vocab_size", shape.vocabSize},
                {"rope_theta", 1000000.0}};
    }
    void write(const std::string& text) const {
        std::ofstream(dir / "config.json", std::ios::binary) << text;
    }
    std::vector<Finding> check() const { return checkHfConfig(recipe, shape); }

    std::filesystem::path dir;
    Recipe recipe;
    ModelShape shape;
};

TEST_F(HfConfig, MatchingConfigIsClean) {
    write(matching().dump());
    EXPECT_TRUE(check().empty());
    EXPECT_TRUE(checkHfConfig(recipe, test::catalog()).empty());
}

TEST_F(HfConfig, EachMismatchNamesBothValues) {
    auto c = matching();
    c["num_hidden_layers"] = shape.numLayers + 4;
    c["num_key_value_heads"] = 8;
    c["vocab_size"] = 152064;
    write(c.dump());
    const auto findings = check();
    ASSERT_EQ(findings.size(), 3u);
    for (const auto& f : findings) {
        EXPECT_EQ(f.ruleId, "model.hf-config");
        EXPECT_EQ(f.severity, Severity::Error);
        EXPECT_EQ(f.fieldPath, "checkpoints.hf_checkpoint");
        EXPECT_NE(f.message.find((dir / "config.json").string()), std::string::npos);
    }
    EXPECT_EQ(findings[0].message.substr(0, findings[0].message.find(" (")),
              "the checkpoint's config.json says num_hidden_layers " +
                  std::to_string(shape.numLayers + 4) + " but the recipe's model has num_layers " +
                  std::to_string(shape.numLayers));
    EXPECT_NE(findings[1].message.find("num_key_value_heads 8 but the recipe's model has "
                                       "num_query_groups " +
                                       std::to_string(shape.queryGroups())),
              std::string::npos);
    EXPECT_NE(findings[2].message.find("vocab_size 152064"), std::string::npos);
}

TEST_F(HfConfig, TiedEmbeddingsAreCompared) {
    auto c = matching();
    c["tie_word_embeddings"] = !shape.tiedEmbeddings;
    write(c.dump());
    const auto findings = check();
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_NE(findings[0].message.find(std::string("tie_word_embeddings ") +
                                       (shape.tiedEmbeddings ? "false" : "true") +
                                       " but the recipe's model has tied_embeddings"),
              std::string::npos)
        << findings[0].message;
    c["tie_word_embeddings"] = shape.tiedEmbeddings;
    write(c.dump());
    EXPECT_TRUE(check().empty());
}

TEST_F(HfConfig, ExpertCountAndTextConfigNesting) {
    nlohmann::json outer{{"architectures", {"SomeVLForConditionalGeneration"}},
                         {"text_config", matching()}};
    outer["text_config"]["num_experts"] = 64;
    write(outer.dump());
    const auto findings = check();
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_NE(findings[0].message.find("num_experts 64 but the recipe's model has num_experts " +
                                       std::to_string(shape.numExperts)),
              std::string::npos);
}

TEST_F(HfConfig, UnreadableConfigIsAnInfoNeverAThrow) {
    // No config.json in an existing directory.
    auto f = check();
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].ruleId, "model.hf-config-unreadable");
    EXPECT_EQ(f[0].severity, Severity::Info);
    // Not JSON, truncated JSON, a JSON array, an over-sized file.
    for (const std::string& text :
         {std::string("not json"), std::string("{\"hidden_size\": 20"), std::string("[1, 2]"),
          std::string(kMaxHfConfigBytes + 1, ' ')}) {
        write(text);
        f = check();
        ASSERT_EQ(f.size(), 1u) << text.substr(0, 20);
        EXPECT_EQ(f[0].ruleId, "model.hf-config-unreadable");
    }
    // Wrong types are skipped, not thrown on.
    auto c = matching();
    c["hidden_size"] = "2048";
    c["num_attention_heads"] = nullptr;
    write(c.dump());
    EXPECT_TRUE(check().empty());
}

TEST_F(HfConfig, NothingToReadIsSilent) {
    recipe.checkpoints.hfCheckpoint = (dir / "missing").string();
    EXPECT_TRUE(check().empty());  // a path on the cluster's nodes, not here
    recipe.checkpoints.hfCheckpoint.clear();
    recipe.checkpoints.modelDir.clear();
    EXPECT_TRUE(check().empty());
    // An --hf-checkpoint in extra_args (an imported script) is read too, and reported there.
    auto c = matching();
    c["hidden_size"] = shape.hidden * 2;
    write(c.dump());
    arg(recipe, "--hf-checkpoint " + dir.string());
    const auto f = check();
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].fieldPath, "extra_args[" + std::to_string(recipe.extraArgs.size() - 1) + "]");
}

}  // namespace

std::vector<std::string> test::frameworkRuleIds() {
    std::vector<std::string> ids;
    for (const auto& c : cases()) {
        ids.emplace_back(c.rule);
    }
    ids.emplace_back("model.hf-config");             // HfConfig.EachMismatchNamesBothValues
    ids.emplace_back("model.hf-config-unreadable");  // HfConfig.UnreadableConfigIsAnInfoNeverAThrow
    return ids;
}

}  // namespace runplane::plan
