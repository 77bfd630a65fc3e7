// The rule table and the validate() driver. The checks themselves live in rules_*.cpp, grouped by
// the part of the recipe they read; docs/rules.md lists the same table with its sources.

#include "backend/plan/rules.h"

#include <charconv>
#include <cstring>

#include "backend/plan/detail/plan_steps.h"
#include "backend/plan/detail/rule_context.h"
#include "backend/plan/planner.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan {
namespace {

using S = Severity;

// clang-format off
constexpr RuleInfo kRules[] = {
    // model and cluster
    {"model.unknown", S::Error, fields::kModelName, "the model resolves from the catalog (or an inline shape), with a known variant", "recipes/models"},
    {"model.unsized", S::Warning, fields::kModelName, "a catalog model that cannot be sized (unsized: why) is named: memory and shape rules are not checked", "recipes/models"},
    {"recipe.limits", S::Error, parts::kRecipe, "every numeric field is within its documented bound and the cluster has at most 65536 GPUs (checked again for recipes built in code, before any table is sized)", "docs/recipe.md (Limits)"},
    {"model.shape", S::Error, parts::kModelShape, "the shape is consistent: layers, hidden, heads, groups divide heads, top-k <= experts, hybrid head counts", "Megatron transformer_config.py"},
    {"cluster.size", S::Error, fields::kClusterNodes, "at least one node; GPUs per node >= 0", "-"},
    {"cluster.trainer-placement", S::Error, fields::kTrainerNodes, "the trainer fits the cluster: trainer nodes <= nodes, trainer GPUs per node <= GPUs per node", "slime placement_group.py"},
    {"cluster.gpu-budget", S::Error, fields::kRolloutNumGpus, "GPUs needed (colocate: max(actor, rollout); disaggregated: actor + rollout; --debug-train-only: actor) <= cluster GPUs; miles forces rollout = actor under colocate", "frameworks.md §8.14; slime placement_group.py; miles arguments.py"},
    {"cluster.num-gpus-per-node", S::Info, fields::kHardwareGpusPerNode, "fewer than 8 GPUs per node: the launch must pass --num-gpus-per-node", "frameworks.md §1.1, §8.14"},
    {"cluster.cpu-only", S::Error, fields::kHardwareGpusPerNode, "a node without GPUs only runs a local command launcher (the smoke workload)", "-"},
    {"cluster.master-addr", S::Error, fields::kClusterMasterAddr, "multi-node runs never use a loopback MASTER_ADDR", "domain.md seed 002"},
    {"cluster.shared-paths", S::Warning, parts::kCheckpoints, "multi-node runs read model and checkpoints from a path every node reaches (not relative, /tmp or /dev/shm)", "domain.md seed 002"},
    // trainer
    {"trainer.positive", S::Error, parts::kTrainer, "TP, PP, CP, EP, ETP are >= 1", "Megatron arguments.py"},
    {"trainer.dense-grid", S::Error, fields::kTrainerTp, "world % (TP x PP x CP) == 0; DP = quotient", "Megatron arguments.py, parallel_state.py; frameworks.md §8.1"},
    {"trainer.expert-grid", S::Error, fields::kTrainerEp, "world % (ETP x EP x PP) == 0 (ETP defaults to TP)", "Megatron parallel_state.py; slime#1818; frameworks.md §8.2"},
    {"trainer.ep-needs-experts", S::Error, fields::kTrainerEp, "EP > 1 needs an MoE model", "Megatron arguments.py"},
    {"trainer.experts-ep", S::Error, fields::kTrainerEp, "num_experts % EP == 0", "Megatron arguments.py; frameworks.md §8.3"},
    {"trainer.heads-tp", S::Error, fields::kTrainerTp, "num_attention_heads % TP == 0", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.groups-tp", S::Error, fields::kTrainerTp, "num_query_groups % TP == 0 (TP % groups == 0 is accepted by new Megatron only: info)", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.linear-heads", S::Error, fields::kTrainerTp, "GDN/KDA key and value heads divisible by TP x CP, value heads by key heads", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.sequence-parallel", S::Warning, fields::kTrainerSequenceParallel, "TP > 1 runs with --sequence-parallel (mandatory in practice with EP); TP 1 disables it", "Megatron model_parallel_config.py; miles training-backend.md; frameworks.md §8.5"},
    {"trainer.layers-pp", S::Error, fields::kTrainerPp, "layers % PP == 0, or with uneven first/last stages the rest divides the middle stages, every stage > 0 layers", "Megatron arguments.py; frameworks.md §8.6"},
    {"trainer.uneven-pp-needs-pp", S::Error, fields::kTrainerDecoderLastPipelineNumLayers, "first/last pipeline stage sizes need PP > 1", "slime megatron_utils/arguments.py"},
    {"trainer.vpp", S::Error, fields::kTrainerNumLayersPerVirtualStage, "VPP needs PP > 1 and layers per stage divisible by layers per virtual stage", "Megatron arguments.py"},
    {"trainer.fsdp", S::Error, fields::kTrainerBackend, "the FSDP backend (slime, miles; not vime) has no TP/PP/CP/EP", "slime arguments.py --train-backend, fsdp_utils/; miles arguments.py, fsdp_utils/lora_utils.py"},
    // batch
    {"batch.positive", S::Error, fields::kBatchRolloutBatchSize, "rollout batch, samples per prompt and micro batch are >= 1", "slime arguments.py"},
    {"batch.identity", S::Error, fields::kBatchGlobalBatchSize, "rollout_batch_size x n_samples_per_prompt == global_batch_size x num_steps_per_rollout; one of them given", "slime/miles arguments.py; domain.md seed 002; frameworks.md §8.7"},
    {"batch.micro-batch", S::Error, fields::kBatchGlobalBatchSize, "global_batch_size % (micro_batch_size x DP) == 0 and global_batch_size >= DP", "Megatron num_microbatches_calculator.py; dp_schedule.py; frameworks.md §8.8"},
    {"batch.static-schedule", S::Error, fields::kBatchMicroBatchSize, "static batching with VPP: global_batch_size % (DP x micro_batch x PP) == 0", "slime dp_schedule.py; frameworks.md §8.9"},
    {"batch.dynamic-needs-max-tokens", S::Error, fields::kBatchMaxTokensPerGpu, "--use-dynamic-batch-size needs --max-tokens-per-gpu", "slime arguments.py; frameworks.md §8.10"},
    {"batch.max-tokens-budget", S::Warning, fields::kBatchMaxTokensPerGpu, "max_tokens_per_gpu >= rollout_max_response_len / CP (the recommended start)", "slime qa.md; frameworks.md §8.10"},
    {"batch.over-sampling", S::Error, fields::kBatchOverSamplingBatchSize, "over_sampling_batch_size >= rollout_batch_size", "slime/miles arguments.py; miles PR #853; frameworks.md §8.11"},
    {"batch.group-size-one", S::Info, fields::kBatchNSamplesPerPrompt, "n_samples_per_prompt == 1 disables GRPO std normalization", "slime arguments.py; frameworks.md §8.11"},
    {"batch.num-rollout", S::Error, fields::kBatchNumRollout, "one of num_rollout / num_epoch is given", "slime arguments.py; frameworks.md §8.12"},
    {"eval.needs-data", S::Error, fields::kEvalInterval, "eval.interval needs eval datasets (eval.datasets, --eval-prompt-data or --eval-config)", "slime arguments.py; frameworks.md §8.12"},
    {"checkpoints.save-needs-path", S::Error, fields::kCheckpointsSaveInterval, "save_interval needs checkpoints.save", "slime arguments.py; frameworks.md §8.12"},
    {"rollout.temperature", S::Error, fields::kRolloutTemperature, "rollout temperature > 0 (0 = greedy is rejected)", "slime arguments.py"},
    {"rollout.prompt-len", S::Error, fields::kRolloutMaxPromptLen, "max_prompt_len <= max_context_len - 1", "slime arguments.py"},
    // rollout
    {"rollout.engine-framework", S::Error, fields::kRolloutEngine, "vime runs vLLM engines; slime and miles run SGLang", "vime README.md; frameworks.md §1.6"},
    {"rollout.engine-divisible", S::Error, fields::kRolloutGpusPerEngine, "rollout GPUs % GPUs per engine == 0", "slime ray/rollout.py; frameworks.md §8.15"},
    {"rollout.engines-count", S::Error, fields::kRolloutEngines, "rollout.engines equals rollout GPUs / GPUs per engine", "-"},
    {"rollout.pp-divides", S::Error, fields::kRolloutPpSize, "GPUs per engine % engine PP == 0", "slime sglang_utils/arguments.py; frameworks.md §8.15"},
    {"rollout.dp-attention", S::Error, fields::kRolloutDpAttention, "SGLang dp_size > 1 needs --sglang-enable-dp-attention", "slime/miles sglang_utils/arguments.py; frameworks.md §8.15"},
    {"rollout.dp-divides", S::Error, fields::kRolloutDpSize, "engine DP (x PP for vLLM) divides GPUs per engine", "frameworks.md §8.15; vime arguments.py"},
    {"rollout.ep-divides", S::Error, fields::kRolloutEpSize, "SGLang EP divides GPUs per engine", "frameworks.md §8.15"},
    {"rollout.engine-ep-experts", S::Error, fields::kRolloutEplbRedundantExperts, "engine EP > 1: (num_experts + redundant experts) % engine EP == 0, else EPLB redundancy", "slime docs qwen3-30B-A3B.md; domain.md seed 002 (EPLB); frameworks.md §8.3"},
    {"rollout.eplb", S::Warning, fields::kRolloutEplbEnabled, "EPLB only with engine EP > 1 on an MoE model; vLLM redundant experts need eplb.enabled", "vime README.md; domain.md seed 002"},
    {"rollout.mem-fraction", S::Error, fields::kRolloutMemFraction, "0 < mem_fraction <= 1; colocated engines stay <= 0.8", "slime quick_start.md; miles training-backend.md; frameworks.md §8.16"},
    {"placement.colocate-offload", S::Warning, fields::kMemoryOffloadTrain, "colocated runs offload both sides (turning offload off keeps both on the GPU)", "slime arguments.py; frameworks.md §8.16"},
    {"placement.offload-disk", S::Error, fields::kMemoryOffloadTrainTarget, "offload to disk needs miles, the Megatron backend and offload_train", "miles arguments.py"},
    // algorithm, optimizer, LoRA
    {"algorithm.kl-needs-ref", S::Error, fields::kCheckpointsRefLoad, "use_kl_loss or kl_coef != 0 needs checkpoints.ref_load", "slime arguments.py; frameworks.md §8.13"},
    {"algorithm.kl-both", S::Error, fields::kAlgorithmKlCoef, "not both kl_coef and kl_loss_coef non-zero", "slime arguments.py; frameworks.md §8.13"},
    {"algorithm.kl-reference-copy", S::Warning, fields::kAlgorithmUseKlLoss, "use_kl_loss loads a full reference copy even with coefficient 0", "miles argument-groups.md, qwen3-8.md; domain.md seed 000"},
    {"optimizer.cpu-offload-precision", S::Error, fields::kOptimizerPrecisionAware, "--optimizer-cpu-offload needs --use-precision-aware-optimizer", "Megatron arguments.py; frameworks.md §8.17"},
    {"optimizer.cpu-offload-overlap", S::Warning, fields::kOptimizerOverlapCpuOptimizerD2hH2d, "--optimizer-cpu-offload runs with --overlap-cpu-optimizer-d2h-h2d", "slime run-qwen3-30B-A3B.sh; frameworks.md §8.17"},
    {"optimizer.cpu-adam-multinode", S::Info, fields::kOptimizerCpuOffload, "multi-node runs drop CPU Adam when the distributed optimizer state fits on the GPU", "domain.md seed 002; slime qwen3-30B-A3B.md"},
    {"lora.framework", S::Error, fields::kLoraRank, "LoRA is a slime / miles feature (vime has none)", "miles arguments.py; slime run-qwen3-30B-A3B-lora.sh, fsdp_utils/lora_utils.py"},
    {"lora.target-modules", S::Error, fields::kLoraTargetModules, "lora.rank > 0 needs target modules (or a --lora-target-preset; miles' diffusion trainer picks its pipeline's own)", "miles arguments.py; frameworks.md §8.20; miles fsdp_utils apply_lora"},
    {"lora.unknown-module", S::Warning, fields::kLoraTargetModules, "target modules are q_proj/k_proj/v_proj/o_proj/gate_proj/up_proj/down_proj or all-linear", "miles lora.md"},
    {"lora.backend", S::Error, fields::kTrainerBackend, "LoRA needs the Megatron or (slime, miles) FSDP backend", "miles arguments.py, fsdp_utils/lora_utils.py; slime fsdp_utils/lora_utils.py"},
    {"lora.tp-bound", S::Error, fields::kTrainerTp, "native LoRA: TP <= num_query_groups", "miles qwen3-8.md; domain.md seed 000"},
    {"lora.moe-sglang-backend", S::Warning, fields::kRolloutLoraBackend, "MoE LoRA needs --sglang-lora-backend triton", "miles lora.md; frameworks.md §8.20"},
    {"lora.disaggregated-pp", S::Error, fields::kTrainerPp, "LoRA with disaggregated NCCL weight sync needs PP 1", "miles arguments.py; frameworks.md §8.20"},
    {"lora.base-cpu-backup", S::Warning, fields::kLoraBaseCpuBackup, "--lora-base-cpu-backup only matters for colocated LoRA runs", "miles arguments.py"},
    {"launcher.command-argv", S::Error, fields::kLauncherArgv, "launcher kind command has an argv", "-"},
    {"launcher.argv-consistency", S::Error, fields::kLauncherArgv, "a command launcher's batch / LoRA / step flags agree with the recipe's fields", "-"},
    {"launcher.kind-framework", S::Warning, fields::kLauncherKind, "miles_script launches miles only; slime_bash (a bash ray job submit of train.py) launches any framework", "frameworks.md §0"},
    // checkpoints, environment, memory
    {"checkpoints.converted-ep", S::Error, fields::kCheckpointsConvertedEp, "the checkpoint's EP equals the training EP where the framework needs it (vime); elsewhere torch_dist reshards", "domain.md seed 002; miles qwen3-8.md"},
    {"nccl.version-format", S::Error, fields::kEnvironmentNcclVersion, "nccl_version reads as MAJOR.MINOR.PATCH", "-"},
    {"nccl.cross-node-engine", S::Error, fields::kEnvironmentNcclVersion, "engines spanning nodes with CUDA graphs need NCCL >= 2.30.7 (2.28.x deadlocks)", "miles qwen3-8.md; domain.md seed 000"},
    {"nccl.multinode-colocate", S::Warning, fields::kEnvironmentNcclVersion, "multi-node colocate with NCCL < 2.28 failed with 'Bad address' after the first pause/resume", "radixark/miles#806"},
    {"memory.host-over-ram", S::Error, fields::kHardwareHostRamGb, "every node's host peak fits its RAM (a warning on hardware.assumed)", "docs/memory-model.md"},
    {"memory.host-over-alarm", S::Warning, fields::kHardwareHostRamGb, "every node's host peak stays under the alarm line (analysis.memory_alarm_gb, else 750 of 956 GB of RAM)", "domain.md seed 000"},
    {"memory.one-host-backup", S::Warning, fields::kMemoryColocateMemoryPeakDevice, "exactly one side holds a host backup: with both a trainer backup and an engine mirror, the peak device must be gpu", "domain.md seed 000; miles PR #2488"},
    {"memory.clone-backup", S::Warning, fields::kMemoryBackupMode, "colocated weight sync reads backups zero-copy (clone retains ~75 GB/rank of malloc arena)", "domain.md seed 000"},
    {"memory.page-cache", S::Warning, fields::kMemoryDropCheckpointPageCacheAfterLoad, "a large checkpoint read leaves page cache unless dropped after load", "domain.md seed 000"},
    {"memory.gpu-over-capacity", S::Error, fields::kHardwareGpuMemoryGb, "every GPU's phase peak fits its HBM (a warning on hardware.assumed)", "docs/memory-model.md"},
    {"memory.gpu-headroom", S::Warning, fields::kHardwareGpuMemoryGb, "every GPU keeps 5 % of its HBM free at its phase peak", "docs/memory-model.md"},
    {"memory.engine-weights-fit", S::Error, fields::kRolloutMemFraction, "engine weights per GPU (at rollout.weight_dtype) fit in mem_fraction x HBM, leaving a KV cache (a warning on hardware.assumed)", "SGLang mem_fraction_static; miles qwen3-8.md"},
    // framework argument checks: slime arguments.py = THUDM/slime@002fa9d6 slime/utils/arguments.py
    // (slime_validate_args); inventory with every check in docs/rules.md
    {"opd.needs-type", S::Error, fields::kAlgorithmOpdType, "--use-opd needs --opd-type (sglang or megatron)", "slime arguments.py:1915 (slime_validate_args)"},
    {"opd.megatron-teacher", S::Error, fields::kCheckpointsOpdTeacherLoad, "--opd-type megatron needs --opd-teacher-load (the teacher checkpoint)", "slime arguments.py:1919"},
    {"opd.sglang-no-teacher", S::Error, fields::kCheckpointsOpdTeacherLoad, "--opd-type sglang forbids --opd-teacher-load (the teacher is an external server)", "slime arguments.py:1935"},
    {"weight-update.vime-delta", S::Error, fields::kWeightUpdateMode, "vime: --update-weight-mode delta is disabled (NotImplementedError)", "vime arguments.py (_validate_update_weight_args), vllm-project/vime@035f9834"},
    {"opd.teacher-without-opd", S::Error, fields::kCheckpointsOpdTeacherLoad, "--opd-teacher-load without --use-opd", "slime arguments.py:1942"},
    {"algorithm.reinforce-normalize", S::Error, fields::kAlgorithmNormalizeAdvantages, "reinforce_plus_plus(_baseline) needs --normalize-advantages", "slime arguments.py:2027"},
    {"algorithm.rollout-logprobs-tis", S::Error, fields::kAlgorithmUseRolloutLogprobs, "not both --use-rollout-logprobs and --use-tis", "slime arguments.py:2032"},
    {"algorithm.mismatch-metrics-tis", S::Info, parts::kExtraArgs, "--get-mismatch-metrics without --custom-tis-function-path measures with vanilla TIS", "slime arguments.py:2036 (a warning)"},
    {"algorithm.cispo-eps-clip", S::Warning, fields::kAlgorithmEpsClip, "CISPO with eps_clip < 1 keeps the lower clip bound active", "slime arguments.py:2058 (a warning)"},
    {"algorithm.score-centering", S::Error, parts::kExtraArgs, "--use-score-centering needs the Megatron backend, the policy loss, a REINFORCE objective, untruncated stochastic sampling and the sampler's own log-probs", "slime score_centering.py (validate_score_centering_args)"},
    {"algorithm.ppo-miles", S::Error, fields::kTrainerBackend, "miles PPO (shared actor/critic) needs the Megatron backend and kl_coef == 0", "miles arguments.py (miles_validate_args)"},
    {"batch.balance-by-flops", S::Error, parts::kExtraArgs, "--balance-by-flops needs --use-dynamic-batch-size", "slime arguments.py:2052"},
    {"trainer.mtp-needs-layers", S::Error, parts::kExtraArgs, "--enable-mtp-training needs --mtp-num-layers (or a model with MTP layers)", "slime arguments.py:2182"},
    {"trainer.param-name-lists", S::Error, parts::kExtraArgs, "only one of --only-train-params-name-list / --freeze-params-name-list", "slime arguments.py:2213"},
    {"trainer.routing-replay-prefetch", S::Error, parts::kExtraArgs, "--routing-replay-prefetch-microbatches >= 0 with rollout routing replay", "slime arguments.py:2186"},
    {"debug.save-paths", S::Error, parts::kExtraArgs, "--save-debug-train-data differs from --save-debug-rollout-data", "slime arguments.py:2073"},
    {"debug.recovery-rollout-path", S::Error, parts::kExtraArgs, "trainer fault tolerance needs a --save-debug-rollout-data path containing {rollout_id}", "slime arguments.py:2269 (with training_recovery.py's training_recovery_enabled)"},
    {"debug.rollout-xor-train", S::Error, parts::kExtraArgs, "not both --debug-rollout-only and --debug-train-only (or --load-debug-rollout-data)", "slime arguments.py:2112"},
    {"rollout.positive-knobs", S::Error, parts::kExtraArgs, "--rollout-cleanup-timeout, --rollout-queue-lease-seconds, --rollout-queue-segment-mib, --rollout-io-concurrency > 0", "slime arguments.py:1892, 2008"},
    {"rollout.straw-transport", S::Error, parts::kExtraArgs, "QueueDataSource and --rollout-queue-online-gc need --rollout-data-transport straw; straw has no --buffer-filter-path", "slime arguments.py:1996, 1998, 2014"},
    {"launcher.entry-point", S::Error, fields::kLauncherEntryPoint, "entry_point is train.py or train_async.py (a path to a program of the script's own: a warning)", "slime/miles train.py, train_async.py"},
    {"placement.async-colocate", S::Error, fields::kPlacement, "train_async.py cannot colocate", "slime/miles train_async.py:9"},
    {"placement.fully-async-colocate", S::Error, parts::kExtraArgs, "miles --fully-async --colocate needs the Megatron backend", "miles arguments.py (_resolve_rollout_functions)"},
    {"checkpoints.save-trigger-needs-save", S::Error, parts::kExtraArgs, "miles: --save-trigger-sentinel and --custom-megatron-post-save-hook-path need --save", "miles arguments.py (miles_validate_args)"},
    {"eval.fleet-divisible", S::Error, parts::kExtraArgs, "miles: --eval-num-gpus divisible by --eval-num-gpus-per-engine", "miles arguments.py (miles_validate_args)"},
    {"eval.sglang-needs-fleet", S::Error, parts::kExtraArgs, "miles: --eval-sglang-* flags need --eval-num-gpus > 0", "miles arguments.py (miles_validate_args)"},
    {"trainer.indep-dp", S::Error, parts::kExtraArgs, "miles: --indep-dp needs the Megatron backend and dynamic batching, not --use-dynamic-global-batch-size", "miles arguments.py (miles_validate_args)"},
    {"rollout.session-server-partial", S::Error, parts::kExtraArgs, "miles: not both --use-session-server and --partial-rollout", "miles arguments.py (miles_validate_args)"},
    {"placement.flush-cache-interval", S::Error, parts::kExtraArgs, "--flush-cache-interval != 1 needs disaggregated GPUs, no rollout offload, no release-train, no debug mode", "slime arguments.py:2250, 2255"},
    {"placement.transfer-mode", S::Error, parts::kExtraArgs, "miles --update-weight-transfer-mode p2p / disk-delta: no colocate, no PD (--prefill-num-servers), no LoRA", "miles arguments.py (miles_validate_args); frameworks.md §8.16"},
    {"weight-update.disk-dir", S::Error, fields::kWeightUpdateDiskDir, "disk weight transport (slime), miles disk-delta transfer, need --update-weight-disk-dir", "slime arguments.py:2217; miles arguments.py (miles_validate_args)"},
    {"weight-update.delta-transport", S::Error, fields::kWeightUpdateTransport, "delta weight updates need disk transport", "slime arguments.py:2232"},
    {"weight-update.delta-colocate", S::Error, fields::kWeightUpdateMode, "delta weight updates cannot colocate", "slime arguments.py:2237"},
    {"weight-update.delta-local-dir", S::Error, fields::kWeightUpdateLocalCheckpointDir, "delta weight updates (slime delta mode, miles disk-delta) need --update-weight-local-checkpoint-dir", "slime arguments.py:2243; miles arguments.py (miles_validate_args)"},
    {"weight-update.delta-hf-checkpoint", S::Error, fields::kCheckpointsHfCheckpoint, "miles disk-delta transfer needs --hf-checkpoint (a local directory)", "miles arguments.py (miles_validate_args)"},
    {"weight-update.release-train-critic", S::Error, fields::kWeightUpdateReleaseTrain, "--release-train has no critic (PPO) support", "slime arguments.py:2223"},
    {"weight-update.release-train-save", S::Error, fields::kWeightUpdateReleaseTrain, "--release-train needs --save", "slime arguments.py:2225"},
    {"weight-update.release-train-save-interval", S::Info, fields::kWeightUpdateReleaseTrain, "--release-train without save_interval saves every rollout", "slime arguments.py:2227"},
    {"weight-update.release-train-transport", S::Error, fields::kWeightUpdateReleaseTrain, "--release-train needs mode full and disk transport", "slime arguments.py:2229"},
    {"weight-update.release-train-backend", S::Error, fields::kWeightUpdateReleaseTrain, "--release-train needs the Megatron backend and no --keep-old-actor", "frameworks.md §2.1 (20)"},
    {"weight-update.release-train-offload", S::Info, fields::kMemoryOffloadTrain, "colocated --release-train ignores offload_train and forces offload_rollout", "slime arguments.py:2121, 2124"},
    {"opd.log-prob-top-k", S::Error, parts::kExtraArgs, "miles: --opd-log-prob-top-k >= 0; k > 0 needs --opd-type sglang and, with a student-side --opd-top-k-strategy, MILES_USE_LEGACY_ROLLOUT_V1=1", "miles arguments.py (miles_validate_args)"},
    {"opd.teacher-urls", S::Error, parts::kExtraArgs, "miles: --opd-teacher-urls needs --use-opd and --opd-type sglang", "miles arguments.py (miles_validate_args)"},
    {"rollout.prefill-logprobs", S::Error, parts::kExtraArgs, "miles: --recompute-logprobs-via-prefill needs --true-on-policy-mode", "miles arguments.py (miles_validate_args)"},
    {"rollout.session-server", S::Error, parts::kExtraArgs, "miles: --use-session-server is bare, v1 or v2; v2 without --group-rm / --recompute-logprobs-via-prefill; a non-default --tito-model needs the session server and no --chat-template-path", "miles arguments.py (miles_validate_args)"},
    {"batch.dynamic-global-batch", S::Error, parts::kExtraArgs, "miles: --use-dynamic-global-batch-size needs --use-dynamic-batch-size (unless multi-LoRA)", "miles arguments.py (miles_validate_args)"},
    {"rollout.async-max-concurrent", S::Error, parts::kExtraArgs, "miles: --async-max-concurrent-samples >= n_samples_per_prompt", "miles arguments.py (miles_validate_args)"},
    {"trainer.bshd", S::Error, parts::kExtraArgs, "miles: --qkv-format bshd needs the Megatron backend and static batching", "miles arguments.py (miles_validate_args)"},
    {"trainer.indexer-replay-cp", S::Error, parts::kExtraArgs, "miles: --use-rollout-indexer-replay needs CP 1", "miles arguments.py (miles_validate_args)"},
    {"optimizer.stream-to-disk", S::Error, parts::kExtraArgs, "miles: --stream-optimizer-state-to-disk needs offload target disk (when offloading), no --indep-dp, the distributed Adam (or dist_muon), no LoRA, no CPU Adam, no precision-aware optimizer", "miles arguments.py (miles_validate_args)"},
    {"lora.shared-outer-agree", S::Error, parts::kExtraArgs, "miles: --sglang-experts-shared-outer-loras needs --experts-shared-outer-loras", "miles arguments.py (miles_validate_args)"},
    {"trainer.skip-actor-forward", S::Error, parts::kExtraArgs, "miles: --skip-actor-forward-only needs Megatron, the policy loss, one optimizer step per rollout, and none of the ~20 settings that make the trainer's log-probs differ from the rollout's (KL, OPD, dropout, jitter, true-on-policy, hooks, ...)", "miles arguments.py (validate_skip_actor_forward_only)"},
    {"lora.multi-lora", S::Error, parts::kExtraArgs, "miles: --multi-lora-n-adapters > 0 needs LoRA rank and targets, Megatron, Adam, disaggregated GPUs, no offload_train, no --indep-dp, one SGLang tokenizer worker, no per-token loss", "miles multi_lora.py (validate_multi_lora_args)"},
    {"memory.offload-disk-chunk", S::Error, parts::kExtraArgs, "miles: --offload-train-target disk needs --offload-train-disk-chunk-mb > 0", "miles arguments.py (miles_validate_args)"},
    {"rollout.ft-eval-fleet", S::Error, parts::kExtraArgs, "miles: rollout fault tolerance (--use-fault-tolerance, 'rollout' in --ft-components, its default) excludes --eval-num-gpus > 0", "miles arguments.py (miles_validate_args, _resolve_ft_components)"},
    {"trainer.rematerialize-param", S::Error, parts::kExtraArgs, "miles: --rematerialize-param-from-master-weight (ignored with --debug-train-only) needs Megatron, colocate with offload_train to CPU, the distributed optimizer, CPU Adam when precision-aware; no LoRA, --debug-disable-optimizer, --indep-dp, --keep-old-actor, --overlap-param-gather, --disable-compute-advantages-and-returns, critic-only steps", "miles arguments.py (_validate_rematerialize_param_from_master_weight)"},
    {"rollout.external-engines", S::Error, parts::kExtraArgs, "miles: external rollout engines (--rollout-external-engine-addrs or --custom-inference-engine-provider-path) exclude --eval-num-gpus > 0, --prefill-num-servers and --sglang-config; --rollout-external-router-pd needs them; not both --sglang-config and --prefill-num-servers", "miles arguments.py (miles_validate_args, _resolve_rollout_functions, _compute_rollout_external)"},
    {"eval.snapshot", S::Error, parts::kExtraArgs, "miles snapshot eval (--eval-num-gpus > 0): not the legacy v1 rollout, an eval interval, --eval-hf-dir or --save-hf, no colocate, no --debug-rollout-only / --load-debug-rollout-data; reusing --save-hf needs eval_interval a multiple of save_interval", "miles arguments.py (miles_validate_args, _resolve_rollout_functions)"},
    // checkpoint config.json cross-check (checkHfConfig, run by runplanectl validate and dispatch preflight)
    {"model.hf-config", S::Error, fields::kCheckpointsHfCheckpoint, "the model shape equals the checkpoint's config.json (layers, hidden, FFN, heads, KV heads, MLA ranks, experts, top-k, vocab, tied embeddings)", "slime/miles arguments.py (_hf_validate_args); frameworks.md §2.1"},
    {"model.hf-config-unreadable", S::Info, fields::kCheckpointsHfCheckpoint, "a checkpoint directory that exists has a readable config.json (<= 1 MiB, JSON object)", "-"},
};
// clang-format on

}  // namespace

std::span<const RuleInfo> ruleTable() {
    return kRules;
}

const RuleInfo* findRule(std::string_view id) {
    for (const auto& rule : kRules) {
        if (id == rule.id) {
            return &rule;
        }
    }
    return nullptr;
}

namespace detail {

void RuleContext::emit(const char* id, FieldPath field, std::string message,
                       std::string fixHint) const {
    const RuleInfo* rule = findRule(id);
    emit(id, rule != nullptr ? rule->severity : Severity::Error, field, std::move(message),
         std::move(fixHint));
}

void RuleContext::emit(const char* id, Severity severity, FieldPath field, std::string message,
                       std::string fixHint) const {
    findings.push_back(Finding{severity, id, field.str(), std::move(message), std::move(fixHint),
                               recipe.sources.find(field.view())});
}

void RuleContext::emitAt(const char* id, Severity severity, FieldPath field, FieldPath locField,
                         std::string message, std::string fixHint) const {
    SourceLoc loc = recipe.sources.find(field.view());
    if (!loc.known()) {
        loc = recipe.sources.find(locField.view());
    }
    findings.push_back(
        Finding{severity, id, field.str(), std::move(message), std::move(fixHint), loc});
}

void RuleContext::emitField(const char* id, const std::string& field, std::string message,
                            std::string fixHint) const {
    const RuleInfo* rule = findRule(id);
    findings.push_back(Finding{rule != nullptr ? rule->severity : Severity::Error, id, field,
                               std::move(message), std::move(fixHint), recipe.sources.find(field)});
}

void RuleContext::emitOneFramework(const char* id, const std::string& field, std::string message,
                                   std::string fixHint) const {
    if (!recipe.frameworkAssumed) {
        emitField(id, field, std::move(message), std::move(fixHint));
        return;
    }
    const RuleInfo* rule = findRule(id);
    const Severity table = rule != nullptr ? rule->severity : Severity::Error;
    const std::string here = toString(recipe.framework);
    const std::string other = recipe.framework == Framework::Miles ? "slime" : "miles";
    message += " (a " + here + " rule, and the framework is assumed: the script says neither " +
               "slime nor miles; read as " + here + " this is an error, read as " + other +
               " the rule does not apply)";
    fixHint = "set framework to the one the script runs and drop framework_assumed; as " + here +
              ": " + fixHint;
    findings.push_back(Finding{table == Severity::Error ? Severity::Warning : table, id, field,
                               std::move(message), std::move(fixHint), recipe.sources.find(field)});
}

std::string num(double value) {
    char buffer[32];
    auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    (void)ec;
    return std::string(buffer, ptr);
}

std::string gb(double bytes) {
    return formatGb(bytes);
}

}  // namespace detail

namespace {

/// The recipe's (and the resolved shape's) cost bounds as findings; empty when the planner may
/// size its tables from the recipe.
std::vector<Finding> limitFindings(const Recipe& recipe, const ModelShape* shape) {
    std::vector<LimitViolation> violations = checkRecipeLimits(recipe, true);
    if (shape != nullptr) {
        for (auto& v : checkShapeLimits(*shape, "model.", true)) {
            violations.push_back(std::move(v));
        }
    }
    std::vector<Finding> findings;
    for (auto& v : violations) {
        const SourceLoc loc = recipe.sources.find(v.path);
        findings.push_back(
            Finding{Severity::Error, "recipe.limits", std::move(v.path), std::move(v.message),
                    "bring the value into the documented range (docs/recipe.md)", loc});
    }
    return findings;
}

}  // namespace

std::vector<Finding> validateResolved(const Recipe& recipe, const ModelShape& shape,
                                      const MemoryPlan& memory) {
    std::vector<Finding> findings = limitFindings(recipe, &shape);
    if (!findings.empty()) {
        return findings;
    }
    return detail::validateWithin(recipe, shape, memory, computeLayout(recipe),
                                  computeParams(shape));
}

std::vector<Finding> detail::validateWithin(const Recipe& recipe, const ModelShape& shape,
                                            const MemoryPlan& memory, const Layout& layout,
                                            const ModelParams& params) {
    std::vector<Finding> findings;
    const detail::RuleContext ctx{recipe, shape, params, layout, memory, findings};
    detail::checkModelAndCluster(ctx);
    detail::checkTrainer(ctx);
    detail::checkBatch(ctx);
    detail::checkRollout(ctx);
    detail::checkAlgorithmAndLora(ctx);
    detail::checkEnvironmentAndMemory(ctx);
    detail::checkLauncher(ctx);
    detail::checkFrameworkArgs(ctx);
    detail::checkPlacementAndWeightUpdate(ctx);
    return findings;
}

std::vector<Finding> validate(const Recipe& recipe, const ModelCatalog& catalog) {
    return planRecipe(recipe, catalog).findings;
}

Plan planRecipe(const Recipe& recipe, const ModelCatalog& catalog) {
    Plan plan;
    // Nothing below is sized from a field outside its bound (a recipe built in code, such as the
    // importer's, skips the parser's checks); such a recipe gets its limit findings and an empty
    // plan. The layout too: its products of counts overflow int beyond the bounds (found by
    // fuzz_import: 2 x 1,650,356,894 GPUs per node).
    plan.findings = limitFindings(recipe, nullptr);
    if (!plan.findings.empty()) {
        return plan;
    }
    plan.layout = computeLayout(recipe);
    // From here on the recipe is within its bounds: each step gets the layout and the parameter
    // counts computed once (detail/plan_steps.h) instead of recomputing and rechecking them.
    plan.topology = detail::planTopologyWithin(plan.layout);
    Result<ModelShape> shape = resolveModel(recipe, catalog);
    const UnsizedModel* unsized =
        recipe.model.shape.has_value() ? nullptr : catalog.findUnsized(recipe.model.name);
    if (!shape.ok() && unsized != nullptr) {
        plan.findings.push_back(Finding{
            Severity::Warning, "model.unsized", fields::kModelName.str(),
            "model '" + unsized->name + "' is in the catalog but cannot be sized: " + unsized->why +
                "; memory and the model's shape rules are not checked",
            "give model.shape to check them with an approximation, or name a sized model",
            recipe.sources.find(fields::kModelName.view())});
        return plan;
    }
    if (!shape.ok()) {
        // The base model was found (inline or in the catalog): then its variant is what failed.
        const bool baseKnown =
            recipe.model.shape.has_value() || catalog.find(recipe.model.name) != nullptr;
        const FieldPath field =
            !recipe.model.variant.empty() && baseKnown ? fields::kModelVariant : fields::kModelName;
        plan.findings.push_back(Finding{Severity::Error, "model.unknown", field.str(),
                                        shape.error(),
                                        "pick a model from recipes/models or give model.shape",
                                        recipe.sources.find(field.view())});
        return plan;
    }
    plan.findings = limitFindings(recipe, &*shape);
    if (!plan.findings.empty()) {
        return plan;
    }
    plan.model = std::move(shape).value();
    plan.params = computeParams(*plan.model);
    plan.memory = detail::planMemoryWithin(recipe, *plan.model, plan.topology, plan.params);
    plan.findings =
        detail::validateWithin(recipe, *plan.model, plan.memory, plan.layout, plan.params);
    return plan;
}

const char* toString(Severity severity) {
    switch (severity) {
        case Severity::Error:
            return "error";
        case Severity::Warning:
            return "warning";
        case Severity::Info:
            return "info";
    }
    return "?";
}

std::string formatFinding(const Finding& f, std::string_view file) {
    std::string out(file);
    if (f.loc.known()) {
        out += ':' + std::to_string(f.loc.line) + ':' + std::to_string(f.loc.column);
    }
    out += ": ";
    out += toString(f.severity);
    out += ": ";
    out += f.message;
    out += " [" + f.ruleId + "]";
    return out;
}

bool hasErrors(const std::vector<Finding>& findings) {
    for (const auto& f : findings) {
        if (f.severity == Severity::Error) {
            return true;
        }
    }
    return false;
}

}  // namespace runplane::plan
