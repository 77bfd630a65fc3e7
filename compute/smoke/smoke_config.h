#pragma once
// Configuration of runplane-smoke (the embedded LibTorch RL workload) and its command-line
// parser. Torch-free so that the parser and the batch identity are unit-testable cheaply.

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace runplane::smoke {

/// How weight sync reads the rollout engine's host mirror of its base weights
/// (miles' get_cpu_backup(zero_copy=...)).
enum class BackupMode { kZeroCopy, kClone };

enum class DeviceKind { kCpu, kCuda };

/// Every knob of one smoke run. Plain value type; defaults are the documented default run.
struct SmokeConfig {
    // Model.
    int layers = 4;
    int dModel = 64;
    int heads = 4;
    // Task.
    int digits = 2;
    int evalSize = 500;
    // Supervised warm start (deliberately short: the base policy must stay mediocre).
    int sftSteps = 600;              ///< upper bound on warm-start steps
    double sftTargetAccuracy = 0.3;  ///< stop once greedy accuracy on training prompts reaches it
    int sftBatchSize = 64;
    double sftLr = 3e-3;
    // GRPO. 64 prompts x 8 samples = 512 = 128 x 4 optimizer steps per rollout. A rollout of 64
    // prompts is worth its cost: it halves the gradient noise that made the eval curve of a
    // 32-prompt rollout wander, while the colocated backup cycle per rollout stays the same.
    int rolloutBatchSize = 64;
    int nSamplesPerPrompt = 8;
    int globalBatchSize = 128;
    int rlSteps = 40;  ///< number of rollouts (slime's --num-rollout)
    int evalInterval = 5;
    double rlLr = 2e-3;
    /// Rollout sampling temperature. Below 1 the samples stay near the greedy answer the eval
    /// scores, so a group's reward variance comes from the digits the greedy policy is unsure of.
    double temperature = 0.3;
    double epsClip = 0.2;
    // LoRA on attention q, k, v, o only.
    int loraRank = 8;
    double loraAlpha = 16.0;
    // Colocated memory pattern.
    BackupMode backupMode = BackupMode::kZeroCopy;
    int backupScaleMb = 128;
    bool loraBaseCpuBackup = true;
    // Execution.
    std::uint64_t seed = 1;
    DeviceKind device = DeviceKind::kCpu;
    int threads = 1;  ///< intra-op threads; 1 is fastest for these small matrices
    std::string metricsJsonl;
    bool helpRequested = false;

    /// rollout_batch_size × n_samples_per_prompt / global_batch_size (valid configs only).
    int numStepsPerRollout() const {
        return rolloutBatchSize * nSamplesPerPrompt / globalBatchSize;
    }
};

/// Parses `--flag value` / `--flag=value` arguments (argv without the program name). Errors name
/// the flag and the offending value. Also validates the result (validateSmokeConfig).
Result<SmokeConfig> parseSmokeArgs(const std::vector<std::string>& args);

/// Cross-field checks, notably the batch identity the planner enforces:
/// rollout_batch_size × n_samples_per_prompt == global_batch_size × num_steps_per_rollout.
Status validateSmokeConfig(const SmokeConfig& config);

/// The --help text.
std::string smokeUsage();

const char* backupModeName(BackupMode mode);
const char* deviceName(DeviceKind device);

}  // namespace runplane::smoke
