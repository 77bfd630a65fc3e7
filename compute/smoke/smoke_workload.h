#pragma once
// runplane-smoke's public entry point, torch-free: run the whole workload (warm start, GRPO with
// LoRA, evals, colocated memory pattern) and print framework-shaped log lines to `out`.

#include <cstdio>
#include <vector>

#include "common/result.h"
#include "compute/smoke/smoke_config.h"

namespace runplane::smoke {

/// One `eval N:` line: N is the rollout id (0 before RL, as in slime).
struct EvalPoint {
    int rolloutId = 0;
    bool beforeRl = false;
    double accuracy = 0;
};

struct SmokeSummary {
    double sftLoss = 0;  ///< last warm-start loss
    std::vector<EvalPoint> evalCurve;
    double wallSeconds = 0;
    double peakRssMb = 0;
    int optimizerSteps = 0;
};

/// Checks that the device named by --device exists in this LibTorch build (error names the flag).
Status checkDevice(const SmokeConfig& config);

/// Runs the workload; never throws (LibTorch errors become an Error naming the phase).
Result<SmokeSummary> runSmoke(const SmokeConfig& config, std::FILE* out);

}  // namespace runplane::smoke
