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
    {"model.unknown", S::Error, "model.name", "the model resolves from the catalog (or an inline shape), with a known variant", "recipes/models"},
    {"recipe.limits", S::Error, "recipe", "every numeric field is within its documented bound and the cluster has at most 65536 GPUs (checked again for recipes built in code, before any table is sized)", "docs/recipe.md (Limits)"},
    {"model.shape", S::Error, "model.shape", "the shape is consistent: layers, hidden, heads, groups divide heads, top-k <= experts, hybrid head counts", "Megatron transformer_config.py"},
    {"cluster.size", S::Error, "cluster.nodes", "at least one node; GPUs per node >= 0", "-"},
    {"cluster.trainer-placement", S::Error, "trainer.nodes", "the trainer fits the cluster: trainer nodes <= nodes, trainer GPUs per node <= GPUs per node", "slime placement_group.py"},
    {"cluster.gpu-budget", S::Error, "rollout.num_gpus", "GPUs needed (colocate: max(actor, rollout); disaggregated: actor + rollout; --debug-train-only: actor) <= cluster GPUs; miles forces rollout = actor under colocate", "frameworks.md §8.14; slime placement_group.py; miles arguments.py"},
    {"cluster.num-gpus-per-node", S::Info, "hardware.gpus_per_node", "fewer than 8 GPUs per node: the launch must pass --num-gpus-per-node", "frameworks.md §1.1, §8.14"},
    {"cluster.cpu-only", S::Error, "hardware.gpus_per_node", "a node without GPUs only runs a local command launcher (the smoke workload)", "-"},
    {"cluster.master-addr", S::Error, "cluster.master_addr", "multi-node runs never use a loopback MASTER_ADDR", "domain.md seed 002"},
    {"cluster.shared-paths", S::Warning, "checkpoints", "multi-node runs read model and checkpoints from a path every node reaches (not relative, /tmp or /dev/shm)", "domain.md seed 002"},
    // trainer
    {"trainer.positive", S::Error, "trainer", "TP, PP, CP, EP, ETP are >= 1", "Megatron arguments.py"},
    {"trainer.dense-grid", S::Error, "trainer.tp", "world % (TP x PP x CP) == 0; DP = quotient", "Megatron arguments.py, parallel_state.py; frameworks.md §8.1"},
    {"trainer.expert-grid", S::Error, "trainer.ep", "world % (ETP x EP x PP) == 0 (ETP defaults to TP)", "Megatron parallel_state.py; slime#1818; frameworks.md §8.2"},
    {"trainer.ep-needs-experts", S::Error, "trainer.ep", "EP > 1 needs an MoE model", "Megatron arguments.py"},
    {"trainer.experts-ep", S::Error, "trainer.ep", "num_experts % EP == 0", "Megatron arguments.py; frameworks.md §8.3"},
    {"trainer.heads-tp", S::Error, "trainer.tp", "num_attention_heads % TP == 0", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.groups-tp", S::Error, "trainer.tp", "num_query_groups % TP == 0 (TP % groups == 0 is accepted by new Megatron only: info)", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.linear-heads", S::Error, "trainer.tp", "GDN/KDA key and value heads divisible by TP x CP, value heads by key heads", "Megatron transformer_config.py; frameworks.md §8.4"},
    {"trainer.sequence-parallel", S::Warning, "trainer.sequence_parallel", "TP > 1 runs with --sequence-parallel (mandatory in practice with EP); TP 1 disables it", "Megatron model_parallel_config.py; miles training-backend.md; frameworks.md §8.5"},
    {"trainer.layers-pp", S::Error, "trainer.pp", "layers % PP == 0, or with uneven first/last stages the rest divides the middle stages, every stage > 0 layers", "Megatron arguments.py; frameworks.md §8.6"},
    {"trainer.uneven-pp-needs-pp", S::Error, "trainer.decoder_last_pipeline_num_layers", "first/last pipeline stage sizes need PP > 1", "slime megatron_utils/arguments.py"},
    {"trainer.vpp", S::Error, "trainer.num_layers_per_virtual_stage", "VPP needs PP > 1 and layers per stage divisible by layers per virtual stage", "Megatron arguments.py"},
    {"trainer.fsdp", S::Error, "trainer.backend", "the FSDP backend (slime, miles; not vime) has no TP/PP/CP/EP", "slime arguments.py --train-backend, fsdp_utils/; miles arguments.py, fsdp_utils/lora_utils.py"},
    // batch
    {"batch.positive", S::Error, "batch.rollout_batch_size", "rollout batch, samples per prompt and micro batch are >= 1", "slime arguments.py"},
    {"batch.identity", S::Error, "batch.global_batch_size", "rollout_batch_size x n_samples_per_prompt == global_batch_size x num_steps_per_rollout; one of them given", "slime/miles arguments.py; domain.md seed 002; frameworks.md §8.7"},
    {"batch.micro-batch", S::Error, "batch.global_batch_size", "global_batch_size % (micro_batch_size x DP) == 0 and global_batch_size >= DP", "Megatron num_microbatches_calculator.py; dp_schedule.py; frameworks.md §8.8"},
    {"batch.static-schedule", S::Error, "batch.micro_batch_size", "static batching with VPP: global_batch_size % (DP x micro_batch x PP) == 0", "slime dp_schedule.py; frameworks.md §8.9"},
    {"batch.dynamic-needs-max-tokens", S::Error, "batch.max_tokens_per_gpu", "--use-dynamic-batch-size needs --max-tokens-per-gpu", "slime arguments.py; frameworks.md §8.10"},
    {"batch.max-tokens-budget", S::Warning, "batch.max_tokens_per_gpu", "max_tokens_per_gpu >= rollout_max_response_len / CP (the recommended start)", "slime qa.md; frameworks.md §8.10"},
    {"batch.over-sampling", S::Error, "batch.over_sampling_batch_size", "over_sampling_batch_size >= rollout_batch_size", "slime/miles arguments.py; miles PR #853; frameworks.md §8.11"},
    {"batch.group-size-one", S::Info, "batch.n_samples_per_prompt", "n_samples_per_prompt == 1 disables GRPO std normalization", "slime arguments.py; frameworks.md §8.11"},
    {"batch.num-rollout", S::Error, "batch.num_rollout", "one of num_rollout / num_epoch is given", "slime arguments.py; frameworks.md §8.12"},
    {"eval.needs-data", S::Error, "eval.interval", "eval.interval needs eval datasets (eval.datasets, --eval-prompt-data or --eval-config)", "slime arguments.py; frameworks.md §8.12"},
    {"checkpoints.save-needs-path", S::Error, "checkpoints.save_interval", "save_interval needs checkpoints.save", "slime arguments.py; frameworks.md §8.12"},
    {"rollout.temperature", S::Error, "rollout.temperature", "rollout temperature > 0 (0 = greedy is rejected)", "slime arguments.py"},
    {"rollout.prompt-len", S::Error, "rollout.max_prompt_len", "max_prompt_len <= max_context_len - 1", "slime arguments.py"},
    // rollout
    {"rollout.engine-framework", S::Error, "rollout.engine", "vime runs vLLM engines; slime and miles run SGLang", "vime README.md; frameworks.md §1.6"},
    {"rollout.engine-divisible", S::Error, "rollout.gpus_per_engine", "rollout GPUs % GPUs per engine == 0", "slime ray/rollout.py; frameworks.md §8.15"},
    {"rollout.engines-count", S::Error, "rollout.engines", "rollout.engines equals rollout GPUs / GPUs per engine", "-"},
    {"rollout.pp-divides", S::Error, "rollout.pp_size", "GPUs per engine % engine PP == 0", "slime sglang_utils/arguments.py; frameworks.md §8.15"},
    {"rollout.dp-attention", S::Error, "rollout.dp_attention", "SGLang dp_size > 1 needs --sglang-enable-dp-attention", "slime/miles sglang_utils/arguments.py; frameworks.md §8.15"},
    {"rollout.dp-divides", S::Error, "rollout.dp_size", "engine DP (x PP for vLLM) divides GPUs per engine", "frameworks.md §8.15; vime arguments.py"},
    {"rollout.ep-divides", S::Error, "rollout.ep_size", "SGLang EP divides GPUs per engine", "frameworks.md §8.15"},
    {"rollout.engine-ep-experts", S::Error, "rollout.eplb.redundant_experts", "engine EP > 1: (num_experts + redundant experts) % engine EP == 0, else EPLB redundancy", "slime docs qwen3-30B-A3B.md; domain.md seed 002 (EPLB); frameworks.md §8.3"},
    {"rollout.eplb", S::Warning, "rollout.eplb.enabled", "EPLB only with engine EP > 1 on an MoE model; vLLM redundant experts need eplb.enabled", "vime README.md; domain.md seed 002"},
    {"rollout.mem-fraction", S::Error, "rollout.mem_fraction", "0 < mem_fraction <= 1; colocated engines stay <= 0.8", "slime quick_start.md; miles training-backend.md; frameworks.md §8.16"},
    {"placement.colocate-offload", S::Warning, "memory.offload_train", "colocated runs offload both sides (turning offload off keeps both on the GPU)", "slime arguments.py; frameworks.md §8.16"},
    {"placement.offload-disk", S::Error, "memory.offload_train_target", "offload to disk needs miles, the Megatron backend and offload_train", "miles arguments.py"},
    // algorithm, optimizer, LoRA
    {"algorithm.kl-needs-ref", S::Error, "checkpoints.ref_load", "use_kl_loss or kl_coef != 0 needs checkpoints.ref_load", "slime arguments.py; frameworks.md §8.13"},
    {"algorithm.kl-both", S::Error, "algorithm.kl_coef", "not both kl_coef and kl_loss_coef non-zero", "slime arguments.py; frameworks.md §8.13"},
    {"algorithm.kl-reference-copy", S::Warning, "algorithm.use_kl_loss", "use_kl_loss loads a full reference copy even with coefficient 0", "miles argument-groups.md, qwen3-8.md; domain.md seed 000"},
    {"optimizer.cpu-offload-precision", S::Error, "optimizer.precision_aware", "--optimizer-cpu-offload needs --use-precision-aware-optimizer", "Megatron arguments.py; frameworks.md §8.17"},
    {"optimizer.cpu-offload-overlap", S::Warning, "optimizer.overlap_cpu_optimizer_d2h_h2d", "--optimizer-cpu-offload runs with --overlap-cpu-optimizer-d2h-h2d", "slime run-qwen3-30B-A3B.sh; frameworks.md §8.17"},
    {"optimizer.cpu-adam-multinode", S::Info, "optimizer.cpu_offload", "multi-node runs drop CPU Adam when the distributed optimizer state fits on the GPU", "domain.md seed 002; slime qwen3-30B-A3B.md"},
    {"lora.framework", S::Error, "lora.rank", "LoRA is a slime / miles feature (vime has none)", "miles arguments.py; slime run-qwen3-30B-A3B-lora.sh, fsdp_utils/lora_utils.py"},
    {"lora.target-modules", S::Error, "lora.target_modules", "lora.rank > 0 needs target modules", "miles arguments.py; frameworks.md §8.20"},
    {"lora.unknown-module", S::Warning, "lora.target_modules", "target modules are q_proj/k_proj/v_proj/o_proj/gate_proj/up_proj/down_proj or all-linear", "miles lora.md"},
    {"lora.backend", S::Error, "trainer.backend", "LoRA needs the Megatron or (slime, miles) FSDP backend", "miles arguments.py, fsdp_utils/lora_utils.py; slime fsdp_utils/lora_utils.py"},
    {"lora.tp-bound", S::Error, "trainer.tp", "native LoRA: TP <= num_query_groups", "miles qwen3-8.md; domain.md seed 000"},
    {"lora.moe-sglang-backend", S::Warning, "rollout.lora_backend", "MoE LoRA needs --sglang-lora-backend triton", "miles lora.md; frameworks.md §8.20"},
    {"lora.disaggregated-pp", S::Error, "trainer.pp", "LoRA with disaggregated NCCL weight sync needs PP 1", "miles arguments.py; frameworks.md §8.20"},
    {"lora.base-cpu-backup", S::Warning, "lora.base_cpu_backup", "--lora-base-cpu-backup only matters for colocated LoRA runs", "miles arguments.py"},
    {"launcher.command-argv", S::Error, "launcher.argv", "launcher kind command has an argv", "-"},
    {"launcher.argv-consistency", S::Error, "launcher.argv", "a command launcher's batch / LoRA / step flags agree with the recipe's fields", "-"},
    {"launcher.kind-framework", S::Warning, "launcher.kind", "miles_script launches miles only; slime_bash (a bash ray job submit of train.py) launches any framework", "frameworks.md §0"},
    // checkpoints, environment, memory
    {"checkpoints.converted-ep", S::Error, "checkpoints.converted_ep", "the checkpoint's EP equals the training EP where the framework needs it (vime); elsewhere torch_dist reshards", "domain.md seed 002; miles qwen3-8.md"},
    {"nccl.version-format", S::Error, "environment.nccl_version", "nccl_version reads as MAJOR.MINOR.PATCH", "-"},
    {"nccl.cross-node-engine", S::Error, "environment.nccl_version", "engines spanning nodes with CUDA graphs need NCCL >= 2.30.7 (2.28.x deadlocks)", "miles qwen3-8.md; domain.md seed 000"},
    {"nccl.multinode-colocate", S::Warning, "environment.nccl_version", "multi-node colocate with NCCL < 2.28 failed with 'Bad address' after the first pause/resume", "radixark/miles#806"},
    {"memory.host-over-ram", S::Error, "hardware.host_ram_gb", "every node's host peak fits its RAM (a warning on hardware.assumed)", "docs/memory-model.md"},
    {"memory.host-over-alarm", S::Warning, "hardware.host_ram_gb", "every node's host peak stays under the alarm line (analysis.memory_alarm_gb, else 750 of 956 GB of RAM)", "domain.md seed 000"},
    {"memory.one-host-backup", S::Warning, "memory.colocate_memory_peak_device", "exactly one side holds a host backup: with both a trainer backup and an engine mirror, the peak device must be gpu", "domain.md seed 000; miles PR #2488"},
    {"memory.clone-backup", S::Warning, "memory.backup_mode", "colocated weight sync reads backups zero-copy (clone retains ~75 GB/rank of malloc arena)", "domain.md seed 000"},
    {"memory.page-cache", S::Warning, "memory.drop_checkpoint_page_cache_after_load", "a large checkpoint read leaves page cache unless dropped after load", "domain.md seed 000"},
    {"memory.gpu-over-capacity", S::Error, "hardware.gpu_memory_gb", "every GPU's phase peak fits its HBM (a warning on hardware.assumed)", "docs/memory-model.md"},
    {"memory.gpu-headroom", S::Warning, "hardware.gpu_memory_gb", "every GPU keeps 5 % of its HBM free at its phase peak", "docs/memory-model.md"},
    {"memory.engine-weights-fit", S::Error, "rollout.mem_fraction", "engine weights per GPU (at rollout.weight_dtype) fit in mem_fraction x HBM, leaving a KV cache (a warning on hardware.assumed)", "SGLang mem_fraction_static; miles qwen3-8.md"},
    // framework argument checks: slime arguments.py = THUDM/slime@002fa9d6 slime/utils/arguments.py
    // (slime_validate_args); inventory with every check in docs/rules.md
    {"opd.needs-type", S::Error, "algorithm.opd_type", "--use-opd needs --opd-type (sglang or megatron)", "slime arguments.py:1915 (slime_validate_args)"},
    {"opd.megatron-teacher", S::Error, "checkpoints.opd_teacher_load", "--opd-type megatron needs --opd-teacher-load (the teacher checkpoint)", "slime arguments.py:1919"},
    {"opd.sglang-no-teacher", S::Error, "checkpoints.opd_teacher_load", "--opd-type sglang forbids --opd-teacher-load (the teacher is an external server)", "slime arguments.py:1935"},
    {"opd.teacher-without-opd", S::Error, "checkpoints.opd_teacher_load", "--opd-teacher-load without --use-opd", "slime arguments.py:1942"},
    {"algorithm.reinforce-normalize", S::Error, "algorithm.normalize_advantages", "reinforce_plus_plus(_baseline) needs --normalize-advantages", "slime arguments.py:2027"},
    {"algorithm.rollout-logprobs-tis", S::Error, "algorithm.use_rollout_logprobs", "not both --use-rollout-logprobs and --use-tis", "slime arguments.py:2032"},
    {"algorithm.mismatch-metrics-tis", S::Info, "extra_args", "--get-mismatch-metrics without --custom-tis-function-path measures with vanilla TIS", "slime arguments.py:2036 (a warning)"},
    {"algorithm.cispo-eps-clip", S::Warning, "algorithm.eps_clip", "CISPO with eps_clip < 1 keeps the lower clip bound active", "slime arguments.py:2058 (a warning)"},
    {"algorithm.score-centering", S::Error, "extra_args", "--use-score-centering needs the Megatron backend, the policy loss, a REINFORCE objective, untruncated stochastic sampling and the sampler's own log-probs", "slime score_centering.py (validate_score_centering_args)"},
    {"algorithm.ppo-miles", S::Error, "trainer.backend", "miles PPO (shared actor/critic) needs the Megatron backend and kl_coef == 0", "miles arguments.py (miles_validate_args)"},
    {"batch.balance-by-flops", S::Error, "extra_args", "--balance-by-flops needs --use-dynamic-batch-size", "slime arguments.py:2052"},
    {"trainer.mtp-needs-layers", S::Error, "extra_args", "--enable-mtp-training needs --mtp-num-layers (or a model with MTP layers)", "slime arguments.py:2182"},
    {"trainer.param-name-lists", S::Error, "extra_args", "only one of --only-train-params-name-list / --freeze-params-name-list", "slime arguments.py:2213"},
    {"trainer.routing-replay-prefetch", S::Error, "extra_args", "--routing-replay-prefetch-microbatches >= 0 with rollout routing replay", "slime arguments.py:2186"},
    {"debug.save-paths", S::Error, "extra_args", "--save-debug-train-data differs from --save-debug-rollout-data", "slime arguments.py:2073"},
    {"debug.recovery-rollout-path", S::Error, "extra_args", "trainer fault tolerance needs a --save-debug-rollout-data path containing {rollout_id}", "slime arguments.py:2269 (with training_recovery.py's training_recovery_enabled)"},
    {"debug.rollout-xor-train", S::Error, "extra_args", "not both --debug-rollout-only and --debug-train-only (or --load-debug-rollout-data)", "slime arguments.py:2112"},
    {"rollout.positive-knobs", S::Error, "extra_args", "--rollout-cleanup-timeout, --rollout-queue-lease-seconds, --rollout-queue-segment-mib, --rollout-io-concurrency > 0", "slime arguments.py:1892, 2008"},
    {"rollout.straw-transport", S::Error, "extra_args", "QueueDataSource and --rollout-queue-online-gc need --rollout-data-transport straw; straw has no --buffer-filter-path", "slime arguments.py:1996, 1998, 2014"},
    {"launcher.entry-point", S::Error, "launcher.entry_point", "entry_point is train.py or train_async.py (a path to a program of the script's own: a warning)", "slime/miles train.py, train_async.py"},
    {"placement.async-colocate", S::Error, "placement", "train_async.py cannot colocate", "slime/miles train_async.py:9"},
    {"placement.fully-async-colocate", S::Error, "extra_args", "miles --fully-async --colocate needs the Megatron backend", "miles arguments.py (_resolve_rollout_functions)"},
    {"checkpoints.save-trigger-needs-save", S::Error, "extra_args", "miles: --save-trigger-sentinel and --custom-megatron-post-save-hook-path need --save", "miles arguments.py (miles_validate_args)"},
    {"eval.fleet-divisible", S::Error, "extra_args", "miles: --eval-num-gpus divisible by --eval-num-gpus-per-engine", "miles arguments.py (miles_validate_args)"},
    {"eval.sglang-needs-fleet", S::Error, "extra_args", "miles: --eval-sglang-* flags need --eval-num-gpus > 0", "miles arguments.py (miles_validate_args)"},
    {"trainer.indep-dp", S::Error, "extra_args", "miles: --indep-dp needs the Megatron backend and dynamic batching, not --use-dynamic-global-batch-size", "miles arguments.py (miles_validate_args)"},
    {"rollout.session-server-partial", S::Error, "extra_args", "miles: not both --use-session-server and --partial-rollout", "miles arguments.py (miles_validate_args)"},
    {"opd.log-prob-top-k", S::Error, "extra_args", "miles: --opd-log-prob-top-k >= 0; k > 0 needs --opd-type sglang and, with a student-side --opd-top-k-strategy, MILES_USE_LEGACY_ROLLOUT_V1=1", "miles arguments.py (miles_validate_args)"},
    {"opd.teacher-urls", S::Error, "extra_args", "miles: --opd-teacher-urls needs --use-opd and --opd-type sglang", "miles arguments.py (miles_validate_args)"},
    {"rollout.prefill-logprobs", S::Error, "extra_args", "miles: --recompute-logprobs-via-prefill needs --true-on-policy-mode", "miles arguments.py (miles_validate_args)"},
    {"rollout.session-server", S::Error, "extra_args", "miles: --use-session-server is bare, v1 or v2; v2 without --group-rm / --recompute-logprobs-via-prefill; a non-default --tito-model needs the session server and no --chat-template-path", "miles arguments.py (miles_validate_args)"},
    {"batch.dynamic-global-batch", S::Error, "extra_args", "miles: --use-dynamic-global-batch-size needs --use-dynamic-batch-size (unless multi-LoRA)", "miles arguments.py (miles_validate_args)"},
    {"rollout.async-max-concurrent", S::Error, "extra_args", "miles: --async-max-concurrent-samples >= n_samples_per_prompt", "miles arguments.py (miles_validate_args)"},
    {"trainer.bshd", S::Error, "extra_args", "miles: --qkv-format bshd needs the Megatron backend and static batching", "miles arguments.py (miles_validate_args)"},
    {"trainer.indexer-replay-cp", S::Error, "extra_args", "miles: --use-rollout-indexer-replay needs CP 1", "miles arguments.py (miles_validate_args)"},
    {"optimizer.stream-to-disk", S::Error, "extra_args", "miles: --stream-optimizer-state-to-disk needs offload target disk (when offloading), no --indep-dp, the distributed Adam (or dist_muon), no LoRA, no CPU Adam, no precision-aware optimizer", "miles arguments.py (miles_validate_args)"},
    {"lora.shared-outer-agree", S::Error, "extra_args", "miles: --sglang-experts-shared-outer-loras needs --experts-shared-outer-loras", "miles arguments.py (miles_validate_args)"},
    {"trainer.skip-actor-forward", S::Error, "extra_args", "miles: --skip-actor-forward-only needs Megatron, the policy loss, one optimizer step per rollout, and none of the ~20 settings that make the trainer's log-probs differ from the rollout's (KL, OPD, dropout, jitter, true-on-policy, hooks, ...)", "miles arguments.py (validate_skip_actor_forward_only)"},
    {"lora.multi-lora", S::Error, "extra_args", "miles: --multi-lora-n-adapters > 0 needs LoRA rank and targets, Megatron, Adam, disaggregated GPUs, no offload_train, no --indep-dp, one SGLang tokenizer worker, no per-token loss", "miles multi_lora.py (validate_multi_lora_args)"},
    {"placement.flush-cache-interval", S::Error, "extra_args", "--flush-cache-interval != 1 needs disaggregated GPUs, no rollout offload, no release-train, no debug mode", "slime arguments.py:2250, 2255"},
    {"placement.transfer-mode", S::Error, "extra_args", "miles --update-weight-transfer-mode p2p / disk-delta: no colocate, no PD (--prefill-num-servers), no LoRA", "miles arguments.py (miles_validate_args); frameworks.md §8.16"},
    {"weight-update.disk-dir", S::Error, "weight_update.disk_dir", "disk weight transport (slime), miles disk-delta transfer, need --update-weight-disk-dir", "slime arguments.py:2217; miles arguments.py (miles_validate_args)"},
    {"weight-update.delta-transport", S::Error, "weight_update.transport", "delta weight updates need disk transport", "slime arguments.py:2232"},
    {"weight-update.delta-colocate", S::Error, "weight_update.mode", "delta weight updates cannot colocate", "slime arguments.py:2237"},
    {"weight-update.delta-local-dir", S::Error, "weight_update.local_checkpoint_dir", "delta weight updates (slime delta mode, miles disk-delta) need --update-weight-local-checkpoint-dir", "slime arguments.py:2243; miles arguments.py (miles_validate_args)"},
    {"weight-update.delta-hf-checkpoint", S::Error, "checkpoints.hf_checkpoint", "miles disk-delta transfer needs --hf-checkpoint (a local directory)", "miles arguments.py (miles_validate_args)"},
    {"weight-update.release-train-critic", S::Error, "weight_update.release_train", "--release-train has no critic (PPO) support", "slime arguments.py:2223"},
    {"weight-update.release-train-save", S::Error, "weight_update.release_train", "--release-train needs --save", "slime arguments.py:2225"},
    {"weight-update.release-train-save-interval", S::Info, "weight_update.release_train", "--release-train without save_interval saves every rollout", "slime arguments.py:2227"},
    {"weight-update.release-train-transport", S::Error, "weight_update.release_train", "--release-train needs mode full and disk transport", "slime arguments.py:2229"},
    {"weight-update.release-train-backend", S::Error, "weight_update.release_train", "--release-train needs the Megatron backend and no --keep-old-actor", "frameworks.md §2.1 (20)"},
    {"weight-update.release-train-offload", S::Info, "memory.offload_train", "colocated --release-train ignores offload_train and forces offload_rollout", "slime arguments.py:2121, 2124"},
    // checkpoint config.json cross-check (checkHfConfig, run by runplanectl validate and dispatch preflight)
    {"model.hf-config", S::Error, "checkpoints.hf_checkpoint", "the model shape equals the checkpoint's config.json (layers, hidden, FFN, heads, KV heads, MLA ranks, experts, top-k, vocab, tied embeddings)", "slime/miles arguments.py (_hf_validate_args); frameworks.md §2.1"},
    {"model.hf-config-unreadable", S::Info, "checkpoints.hf_checkpoint", "a checkpoint directory that exists has a readable config.json (<= 1 MiB, JSON object)", "-"},
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

void RuleContext::emit(const char* id, const char* field, std::string message,
                       std::string fixHint) const {
    const RuleInfo* rule = findRule(id);
    emit(id, rule != nullptr ? rule->severity : Severity::Error, field, std::move(message),
         std::move(fixHint));
}

void RuleContext::emit(const char* id, Severity severity, const char* field, std::string message,
                       std::string fixHint) const {
    findings.push_back(Finding{severity, id, field, std::move(message), std::move(fixHint),
                               recipe.sources.find(field)});
}

void RuleContext::emitAt(const char* id, Severity severity, const char* field, const char* locField,
                         std::string message, std::string fixHint) const {
    SourceLoc loc = recipe.sources.find(field);
    if (!loc.known()) {
        loc = recipe.sources.find(locField);
    }
    findings.push_back(Finding{severity, id, field, std::move(message), std::move(fixHint), loc});
}

void RuleContext::emitField(const char* id, const std::string& field, std::string message,
                            std::string fixHint) const {
    const RuleInfo* rule = findRule(id);
    findings.push_back(Finding{rule != nullptr ? rule->severity : Severity::Error, id, field,
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
    plan.layout = computeLayout(recipe);
    // Nothing below is sized from a field outside its bound (a recipe built in code skips the
    // parser's checks); such a recipe gets its limit findings and an empty plan.
    plan.findings = limitFindings(recipe, nullptr);
    if (!plan.findings.empty()) {
        return plan;
    }
    // From here on the recipe is within its bounds: each step gets the layout and the parameter
    // counts computed once (detail/plan_steps.h) instead of recomputing and rechecking them.
    plan.topology = detail::planTopologyWithin(plan.layout);
    Result<ModelShape> shape = resolveModel(recipe, catalog);
    if (!shape.ok()) {
        // The base model was found (inline or in the catalog): then its variant is what failed.
        const bool baseKnown =
            recipe.model.shape.has_value() || catalog.find(recipe.model.name) != nullptr;
        const char* field =
            !recipe.model.variant.empty() && baseKnown ? "model.variant" : "model.name";
        plan.findings.push_back(Finding{Severity::Error, "model.unknown", field, shape.error(),
                                        "pick a model from recipes/models or give model.shape",
                                        recipe.sources.find(field)});
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
