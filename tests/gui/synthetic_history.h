#pragma once
// Writes a synthetic but realistic run into a history file through runplane_db's real API
// (ingest batches with per-node seq, events, nodes, run records): two nodes with host memory at
// 1 Hz cycling through load / rollout / train / weight-sync phases against 956 GB of RAM, one
// node regressing above the 750 GB line with a one-sample spike, GPU memory, process RSS, eval
// curves by step, NCCL warnings and a stall. For layout tests and screenshots; the live tests
// use a real daemon.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace runplane::db {
class History;
}

namespace runplane::gui::test {

/// A run-level series with given values by step, written on the head node (one sample per step,
/// 80 s apart from the end of the load phase, like the eval curves).
struct ExtraSeries {
    std::string name;  // e.g. "eval/gsm8k/response_len/mean"
    std::string unit;
    std::vector<std::pair<std::int64_t, double>> points;  // (step, value)
};

struct SyntheticRunSpec {
    std::string runId = "run-synthetic-1";
    std::string name = "qwen3.8 full LoRA (synthetic)";
    std::string recipeYaml;                              // snapshot stored with the run
    std::int64_t startNs = 1767261600LL * 1000000000LL;  // 2026-01-01 10:00:00 UTC
    int seconds = 3600;                                  // samples at 1 Hz
    std::vector<std::string> nodes = {"node-a", "node-b"};
    int gpusPerNode = 4;
    bool regressNodeB = true;  // node-b sits above the alarm line for a while
    bool plantSpike = true;    // a one-sample 900 GB spike on node-b mid-run
    double evalStart = 0.639;  // eval/gsm8k from ... to ...
    double evalEnd = 0.75;
    int evalSteps = 40;
    bool finished = true;
    std::string ncclVersion = "2.28.9";
    bool standardEvals = true;       // eval/gsm8k, eval/aime, train/loss as above
    std::vector<ExtraSeries> extra;  // more run-level series with exact values
    double ramGB = 956;              // host.mem.total_bytes of every node
    double hostScale = 1;            // host memory used is the 956 GB profile times this
};

/// Appends the run (and its nodes' node-level series) to the history. Returns the time of the
/// planted one-sample spike on node-b (ns).
Result<std::int64_t> writeSyntheticRun(db::History& history, const SyntheticRunSpec& spec);

/// Text of recipes/<file> from the source tree, or "" if absent.
std::string sourceRecipe(const std::string& file);

}  // namespace runplane::gui::test
