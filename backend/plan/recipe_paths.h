#pragma once
// The recipe's paths, spelled once (issue #22). Rules (backend/plan/rules*.cpp), the launch flag
// table (backend/launch/flag_rows_*.cpp) and the recipe field table itself name a recipe field
// through these constants, never through a string literal: a field renamed or removed here is a
// compile error in every rule and flag row that names it, not a silent mismatch.
//  - fields:: one constant per row of the recipe field table (recipe_fields.h), in its order; the
//             table's rows are built from them, and RecipePaths tests check that every constant
//             has its row;
//  - parts::  the places with code of their own that a finding or a flag row can point at (a
//             section as a whole, the model reference, eval.datasets, extra_args); none is a row.
// Plain C++, no dependencies.

#include <array>
#include <string>
#include <string_view>

namespace runplane::plan {

/// A place in a recipe ("rollout.mem_fraction"), as findings, the SourceMap and the YAML name it.
/// Made only from the constants below (the constructor is explicit and compile-time), so a
/// function that takes a FieldPath cannot be given a misspelled literal.
class FieldPath {
  public:
    explicit consteval FieldPath(const char* path) : m_path(path) {}
    constexpr const char* c_str() const { return m_path; }
    constexpr std::string_view view() const { return m_path; }
    std::string str() const { return m_path; }
    friend constexpr bool operator==(FieldPath a, FieldPath b) { return a.view() == b.view(); }
    friend constexpr bool operator==(FieldPath a, std::string_view b) { return a.view() == b; }

  private:
    const char* m_path;
};

// X(constant, path): every scalar field of the recipe, in the field table's (YAML) order.
// clang-format off
#define RUNPLANE_RECIPE_FIELD_PATHS(X) \
    X(kName, "name") \
    X(kDescription, "description") \
    X(kFramework, "framework") \
    X(kFrameworkAssumed, "framework_assumed") \
    X(kModelName, "model.name") \
    X(kModelVariant, "model.variant") \
    X(kHardwareGpu, "hardware.gpu") \
    X(kHardwareGpuMemoryGb, "hardware.gpu_memory_gb") \
    X(kHardwareGpusPerNode, "hardware.gpus_per_node") \
    X(kHardwareHostRamGb, "hardware.host_ram_gb") \
    X(kHardwareCpuArch, "hardware.cpu_arch") \
    X(kHardwareNvlink, "hardware.nvlink") \
    X(kHardwareAssumed, "hardware.assumed") \
    X(kClusterNodes, "cluster.nodes") \
    X(kClusterMasterAddr, "cluster.master_addr") \
    X(kClusterRayObjectStoreFraction, "cluster.ray_object_store_fraction") \
    X(kClusterRayObjectStoreMaxGb, "cluster.ray_object_store_max_gb") \
    X(kPlacement, "placement") \
    X(kTrainerBackend, "trainer.backend") \
    X(kTrainerNodes, "trainer.nodes") \
    X(kTrainerGpusPerNode, "trainer.gpus_per_node") \
    X(kTrainerTp, "trainer.tp") \
    X(kTrainerPp, "trainer.pp") \
    X(kTrainerCp, "trainer.cp") \
    X(kTrainerEp, "trainer.ep") \
    X(kTrainerEtp, "trainer.etp") \
    X(kTrainerSequenceParallel, "trainer.sequence_parallel") \
    X(kTrainerDecoderFirstPipelineNumLayers, "trainer.decoder_first_pipeline_num_layers") \
    X(kTrainerDecoderLastPipelineNumLayers, "trainer.decoder_last_pipeline_num_layers") \
    X(kTrainerNumLayersPerVirtualStage, "trainer.num_layers_per_virtual_stage") \
    X(kTrainerRecompute, "trainer.recompute") \
    X(kRolloutEngine, "rollout.engine") \
    X(kRolloutNumGpus, "rollout.num_gpus") \
    X(kRolloutGpusPerEngine, "rollout.gpus_per_engine") \
    X(kRolloutEngines, "rollout.engines") \
    X(kRolloutPpSize, "rollout.pp_size") \
    X(kRolloutDpSize, "rollout.dp_size") \
    X(kRolloutEpSize, "rollout.ep_size") \
    X(kRolloutDpAttention, "rollout.dp_attention") \
    X(kRolloutExpertParallel, "rollout.expert_parallel") \
    X(kRolloutEplbEnabled, "rollout.eplb.enabled") \
    X(kRolloutEplbRedundantExperts, "rollout.eplb.redundant_experts") \
    X(kRolloutMemFraction, "rollout.mem_fraction") \
    X(kRolloutCudaGraph, "rollout.cuda_graph") \
    X(kRolloutCudaGraphSizes, "rollout.cuda_graph_sizes") \
    X(kRolloutCudaGraphMaxBs, "rollout.cuda_graph_max_bs") \
    X(kRolloutWeightDtype, "rollout.weight_dtype") \
    X(kRolloutQuantScope, "rollout.quant_scope") \
    X(kRolloutMaxResponseLen, "rollout.max_response_len") \
    X(kRolloutMaxContextLen, "rollout.max_context_len") \
    X(kRolloutMaxPromptLen, "rollout.max_prompt_len") \
    X(kRolloutTemperature, "rollout.temperature") \
    X(kRolloutMoeBackend, "rollout.moe_backend") \
    X(kRolloutLoraBackend, "rollout.lora_backend") \
    X(kBatchRolloutBatchSize, "batch.rollout_batch_size") \
    X(kBatchNSamplesPerPrompt, "batch.n_samples_per_prompt") \
    X(kBatchGlobalBatchSize, "batch.global_batch_size") \
    X(kBatchNumStepsPerRollout, "batch.num_steps_per_rollout") \
    X(kBatchMicroBatchSize, "batch.micro_batch_size") \
    X(kBatchDynamicBatchSize, "batch.dynamic_batch_size") \
    X(kBatchMaxTokensPerGpu, "batch.max_tokens_per_gpu") \
    X(kBatchOverSamplingBatchSize, "batch.over_sampling_batch_size") \
    X(kBatchNumRollout, "batch.num_rollout") \
    X(kBatchNumEpoch, "batch.num_epoch") \
    X(kAlgorithmAdvantageEstimator, "algorithm.advantage_estimator") \
    X(kAlgorithmUseKlLoss, "algorithm.use_kl_loss") \
    X(kAlgorithmKlLossCoef, "algorithm.kl_loss_coef") \
    X(kAlgorithmKlLossType, "algorithm.kl_loss_type") \
    X(kAlgorithmKlCoef, "algorithm.kl_coef") \
    X(kAlgorithmEpsClip, "algorithm.eps_clip") \
    X(kAlgorithmEpsClipHigh, "algorithm.eps_clip_high") \
    X(kAlgorithmEntropyCoef, "algorithm.entropy_coef") \
    X(kAlgorithmUseTis, "algorithm.use_tis") \
    X(kAlgorithmLr, "algorithm.lr") \
    X(kAlgorithmNormalizeAdvantages, "algorithm.normalize_advantages") \
    X(kAlgorithmUseRolloutLogprobs, "algorithm.use_rollout_logprobs") \
    X(kAlgorithmUseOpd, "algorithm.use_opd") \
    X(kAlgorithmOpdType, "algorithm.opd_type") \
    X(kOptimizerKind, "optimizer.kind") \
    X(kOptimizerDistributed, "optimizer.distributed") \
    X(kOptimizerCpuOffload, "optimizer.cpu_offload") \
    X(kOptimizerOverlapCpuOptimizerD2hH2d, "optimizer.overlap_cpu_optimizer_d2h_h2d") \
    X(kOptimizerPrecisionAware, "optimizer.precision_aware") \
    X(kOptimizerOffloadFraction, "optimizer.offload_fraction") \
    X(kLoraRank, "lora.rank") \
    X(kLoraAlpha, "lora.alpha") \
    X(kLoraDropout, "lora.dropout") \
    X(kLoraTargetModules, "lora.target_modules") \
    X(kLoraBaseCpuBackup, "lora.base_cpu_backup") \
    X(kMemoryOffloadTrain, "memory.offload_train") \
    X(kMemoryOffloadRollout, "memory.offload_rollout") \
    X(kMemoryOffloadTrainTarget, "memory.offload_train_target") \
    X(kMemoryDropCheckpointPageCacheAfterLoad, "memory.drop_checkpoint_page_cache_after_load") \
    X(kMemoryColocateMemoryPeakDevice, "memory.colocate_memory_peak_device") \
    X(kMemoryBackupMode, "memory.backup_mode") \
    X(kMemoryReloadRolloutWeightsFromDisk, "memory.reload_rollout_weights_from_disk") \
    X(kMemoryDisableWeightsBackuper, "memory.disable_weights_backuper") \
    X(kMemoryUpdateWeightBufferGb, "memory.update_weight_buffer_gb") \
    X(kMemoryProcessHostGb, "memory.process_host_gb") \
    X(kMemoryProcessGpuGb, "memory.process_gpu_gb") \
    X(kMemoryAllocatorFragmentation, "memory.allocator_fragmentation") \
    X(kWeightUpdateMode, "weight_update.mode") \
    X(kWeightUpdateTransport, "weight_update.transport") \
    X(kWeightUpdateDiskDir, "weight_update.disk_dir") \
    X(kWeightUpdateLocalCheckpointDir, "weight_update.local_checkpoint_dir") \
    X(kWeightUpdateReleaseTrain, "weight_update.release_train") \
    X(kEnvironmentNcclVersion, "environment.nccl_version") \
    X(kEnvironmentNcclSoPath, "environment.nccl_so_path") \
    X(kCheckpointsModelDir, "checkpoints.model_dir") \
    X(kCheckpointsHfCheckpoint, "checkpoints.hf_checkpoint") \
    X(kCheckpointsRefLoad, "checkpoints.ref_load") \
    X(kCheckpointsLoad, "checkpoints.load") \
    X(kCheckpointsSave, "checkpoints.save") \
    X(kCheckpointsSaveInterval, "checkpoints.save_interval") \
    X(kCheckpointsConvertedEp, "checkpoints.converted_ep") \
    X(kCheckpointsNoSaveOptim, "checkpoints.no_save_optim") \
    X(kCheckpointsNoLoadOptim, "checkpoints.no_load_optim") \
    X(kCheckpointsOpdTeacherLoad, "checkpoints.opd_teacher_load") \
    X(kEvalInterval, "eval.interval") \
    X(kEvalNSamplesPerEvalPrompt, "eval.n_samples_per_eval_prompt") \
    X(kEvalMaxResponseLen, "eval.max_response_len") \
    X(kEvalSkipEvalBeforeTrain, "eval.skip_eval_before_train") \
    X(kLauncherKind, "launcher.kind") \
    X(kLauncherScript, "launcher.script") \
    X(kLauncherEntryPoint, "launcher.entry_point") \
    X(kLauncherArgv, "launcher.argv") \
    X(kLauncherWorkdir, "launcher.workdir") \
    X(kLauncherPreLaunch, "launcher.pre_launch") \
    X(kLauncherRayStartArgs, "launcher.ray_start_args") \
    X(kLauncherRayStop, "launcher.ray_stop") \
    X(kLauncherRayStopArgs, "launcher.ray_stop_args") \
    X(kLauncherRaySubmitArgs, "launcher.ray_submit_args") \
    X(kLauncherFlagSpellings, "launcher.flag_spellings") \
    X(kLauncherExplicitFlags, "launcher.explicit_flags") \
    X(kAnalysisPrimaryMetric, "analysis.primary_metric") \
    X(kAnalysisMemoryAlarmGb, "analysis.memory_alarm_gb") \
    X(kAnalysisRoleRows, "analysis.role_rows")

// X(constant, path): the places with code of their own.
#define RUNPLANE_RECIPE_PART_PATHS(X) \
    X(kRecipe, "recipe") \
    X(kModel, "model") \
    X(kModelShape, "model.shape") \
    X(kTrainer, "trainer") \
    X(kCheckpoints, "checkpoints") \
    X(kLauncher, "launcher") \
    X(kWeightUpdate, "weight_update") \
    X(kEvalDatasets, "eval.datasets") \
    X(kExtraArgs, "extra_args")
// clang-format on

#define RUNPLANE_DECLARE_PATH(NAME, PATH) inline constexpr FieldPath NAME{PATH};
#define RUNPLANE_LIST_PATH(NAME, PATH) NAME,

namespace fields {
RUNPLANE_RECIPE_FIELD_PATHS(RUNPLANE_DECLARE_PATH)
/// Every constant above, in order.
inline constexpr std::array kAll{RUNPLANE_RECIPE_FIELD_PATHS(RUNPLANE_LIST_PATH)};
}  // namespace fields

namespace parts {
RUNPLANE_RECIPE_PART_PATHS(RUNPLANE_DECLARE_PATH)
/// Every constant above.
inline constexpr std::array kAll{RUNPLANE_RECIPE_PART_PATHS(RUNPLANE_LIST_PATH)};
}  // namespace parts

#undef RUNPLANE_DECLARE_PATH
#undef RUNPLANE_LIST_PATH
#undef RUNPLANE_RECIPE_FIELD_PATHS
#undef RUNPLANE_RECIPE_PART_PATHS

}  // namespace runplane::plan
