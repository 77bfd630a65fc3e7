// The runplane-meta block's slots of the flag table (flag_rules.h): the recipe fields an export
// carries in the meta block when no flag of the flavour does, each copied through its row of the
// recipe field table (FIELD) or, for a structured part, as a whole (SLOT); and the fields that
// are always in the block and reconciled on import.

#include "backend/launch/flag_rules.h"
#include "backend/plan/recipe_fields.h"

namespace runplane::plan::launch::detail {
namespace {

#define SLOT(PATH, MEMBER)                                            \
    FieldSlot {                                                       \
        PATH, [](const Recipe& f, Recipe& t) { t.MEMBER = f.MEMBER; } \
    }
// A scalar field: copied through its row of the recipe field table (recipe_fields.h).
#define FIELD(PATH)                                                                  \
    FieldSlot {                                                                      \
        PATH, [](const Recipe& f, Recipe& t) { plan::recipeField(PATH).copy(f, t); } \
    }

const FieldSlot kSlots[] = {
    FIELD(fields::kName),
    FIELD(fields::kDescription),
    FIELD(fields::kFramework),
    FIELD(fields::kFrameworkAssumed),
    SLOT(parts::kModel, model),
    FIELD(fields::kHardwareGpu),
    FIELD(fields::kHardwareGpuMemoryGb),
    FIELD(fields::kHardwareGpusPerNode),
    FIELD(fields::kHardwareHostRamGb),
    FIELD(fields::kHardwareCpuArch),
    FIELD(fields::kHardwareNvlink),
    FIELD(fields::kHardwareAssumed),
    FIELD(fields::kClusterNodes),
    FIELD(fields::kClusterMasterAddr),
    FIELD(fields::kClusterRayObjectStoreFraction),
    FIELD(fields::kPlacement),
    FIELD(fields::kTrainerBackend),
    FIELD(fields::kTrainerNodes),
    FIELD(fields::kTrainerGpusPerNode),
    FIELD(fields::kTrainerTp),
    FIELD(fields::kTrainerPp),
    FIELD(fields::kTrainerCp),
    FIELD(fields::kTrainerEp),
    FIELD(fields::kTrainerEtp),
    FIELD(fields::kTrainerSequenceParallel),
    FIELD(fields::kTrainerDecoderFirstPipelineNumLayers),
    FIELD(fields::kTrainerDecoderLastPipelineNumLayers),
    FIELD(fields::kTrainerNumLayersPerVirtualStage),
    FIELD(fields::kTrainerRecompute),
    FIELD(fields::kRolloutEngine),
    FIELD(fields::kRolloutNumGpus),
    FIELD(fields::kRolloutGpusPerEngine),
    FIELD(fields::kRolloutEngines),
    FIELD(fields::kRolloutPpSize),
    FIELD(fields::kRolloutDpSize),
    FIELD(fields::kRolloutEpSize),
    FIELD(fields::kRolloutDpAttention),
    FIELD(fields::kRolloutExpertParallel),
    FIELD(fields::kRolloutEplbEnabled),
    FIELD(fields::kRolloutEplbRedundantExperts),
    FIELD(fields::kRolloutMemFraction),
    FIELD(fields::kRolloutCudaGraph),
    FIELD(fields::kRolloutCudaGraphSizes),
    FIELD(fields::kRolloutCudaGraphMaxBs),
    FIELD(fields::kRolloutWeightDtype),
    FIELD(fields::kRolloutQuantScope),
    FIELD(fields::kRolloutMaxResponseLen),
    FIELD(fields::kRolloutMaxContextLen),
    FIELD(fields::kRolloutMaxPromptLen),
    FIELD(fields::kRolloutTemperature),
    FIELD(fields::kRolloutMoeBackend),
    FIELD(fields::kRolloutLoraBackend),
    FIELD(fields::kBatchRolloutBatchSize),
    FIELD(fields::kBatchNSamplesPerPrompt),
    FIELD(fields::kBatchGlobalBatchSize),
    FIELD(fields::kBatchNumStepsPerRollout),
    FIELD(fields::kBatchMicroBatchSize),
    FIELD(fields::kBatchDynamicBatchSize),
    FIELD(fields::kBatchMaxTokensPerGpu),
    FIELD(fields::kBatchOverSamplingBatchSize),
    FIELD(fields::kBatchNumRollout),
    FIELD(fields::kBatchNumEpoch),
    FIELD(fields::kAlgorithmAdvantageEstimator),
    FIELD(fields::kAlgorithmUseKlLoss),
    FIELD(fields::kAlgorithmKlLossCoef),
    FIELD(fields::kAlgorithmKlLossType),
    FIELD(fields::kAlgorithmKlCoef),
    FIELD(fields::kAlgorithmEpsClip),
    FIELD(fields::kAlgorithmEpsClipHigh),
    FIELD(fields::kAlgorithmEntropyCoef),
    FIELD(fields::kAlgorithmUseTis),
    FIELD(fields::kAlgorithmNormalizeAdvantages),
    FIELD(fields::kAlgorithmUseRolloutLogprobs),
    FIELD(fields::kAlgorithmUseOpd),
    FIELD(fields::kAlgorithmOpdType),
    SLOT(parts::kWeightUpdate, weightUpdate),
    FIELD(fields::kAlgorithmLr),
    FIELD(fields::kOptimizerKind),
    FIELD(fields::kOptimizerDistributed),
    FIELD(fields::kOptimizerCpuOffload),
    SLOT(fields::kOptimizerOverlapCpuOptimizerD2hH2d, optimizer.overlapCpuOptimizerD2hH2d),
    FIELD(fields::kOptimizerPrecisionAware),
    FIELD(fields::kOptimizerOffloadFraction),
    FIELD(fields::kLoraRank),
    FIELD(fields::kLoraAlpha),
    FIELD(fields::kLoraDropout),
    FIELD(fields::kLoraTargetModules),
    FIELD(fields::kLoraBaseCpuBackup),
    FIELD(fields::kMemoryOffloadTrain),
    FIELD(fields::kMemoryOffloadRollout),
    FIELD(fields::kMemoryOffloadTrainTarget),
    FIELD(fields::kMemoryDropCheckpointPageCacheAfterLoad),
    FIELD(fields::kMemoryColocateMemoryPeakDevice),
    FIELD(fields::kMemoryBackupMode),
    FIELD(fields::kMemoryReloadRolloutWeightsFromDisk),
    FIELD(fields::kMemoryDisableWeightsBackuper),
    FIELD(fields::kMemoryUpdateWeightBufferGb),
    FIELD(fields::kEnvironmentNcclVersion),
    FIELD(fields::kEnvironmentNcclSoPath),
    FIELD(fields::kCheckpointsModelDir),
    FIELD(fields::kCheckpointsHfCheckpoint),
    FIELD(fields::kCheckpointsRefLoad),
    FIELD(fields::kCheckpointsLoad),
    FIELD(fields::kCheckpointsSave),
    FIELD(fields::kCheckpointsSaveInterval),
    FIELD(fields::kCheckpointsConvertedEp),
    FIELD(fields::kCheckpointsNoSaveOptim),
    FIELD(fields::kCheckpointsNoLoadOptim),
    FIELD(fields::kCheckpointsOpdTeacherLoad),
    FIELD(fields::kEvalInterval),
    SLOT(parts::kEvalDatasets, eval.datasets),
    FIELD(fields::kEvalNSamplesPerEvalPrompt),
    FIELD(fields::kEvalMaxResponseLen),
    FIELD(fields::kEvalSkipEvalBeforeTrain),
    SLOT(parts::kLauncher, launcher),
};

#undef FIELD
#undef SLOT

const FieldPath kReconciled[] = {
    fields::kFramework,
    parts::kModel,
    parts::kLauncher,
    fields::kHardwareGpusPerNode,
    fields::kHardwareGpu,
    fields::kClusterNodes,
    fields::kClusterMasterAddr,
    fields::kTrainerNodes,
    fields::kTrainerGpusPerNode,
    fields::kRolloutEngine,
    fields::kEnvironmentNcclSoPath,
};

}  // namespace

std::span<const FieldSlot> fieldSlots() {
    return kSlots;
}

bool isReconciledField(std::string_view path) {
    for (const FieldPath p : kReconciled) {
        if (path == p.view()) {
            return true;
        }
    }
    return false;
}

}  // namespace runplane::plan::launch::detail
