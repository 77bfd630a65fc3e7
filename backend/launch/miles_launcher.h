#pragma once
// Internal: what a miles Python launcher (scripts/run_*.py) decides by itself, read from its
// source, so that export passes what the plan assumed and import reads back what runs.
// docs/launch-scripts.md ("What the miles launcher decides") lists the same facts.

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/launch/launch.h"
#include "backend/plan/recipe.h"

namespace runplane::plan::launch::detail {

struct MilesLauncherFacts {
    std::string_view script;                     // basename, "run_qwen3_8.py"
    std::span<const std::string_view> hardware;  // values its --hardware accepts; empty: none
    std::string_view hardwareDefault;            // what runs without --hardware
    double memFraction;                          // --sglang-mem-fraction-static it passes
    std::string_view source;                     // where the facts were read
};

/// The facts of the launcher `script` (any path; matched by basename), or nullptr when unknown.
const MilesLauncherFacts* milesLauncherFacts(std::string_view script);

/// True for the train.py flags a miles-launcher export always writes in --extra-args, even at the
/// recipe default: the engine memory fraction, which the launchers otherwise fix themselves.
bool alwaysInExtraArgs(std::string_view field);

/// Import of a launcher command without a runplane-meta block: what the launcher does by itself
/// where the command says nothing (`touched` = fields the command set) becomes the recipe's
/// value, with an info note at `file:line`: the --hardware default and the memory fraction.
void readLauncherDefaults(const MilesLauncherFacts& facts, const std::set<std::string>& touched,
                          const std::string& file, int line, Recipe& r,
                          std::vector<LaunchNote>& notes);

/// True for miles' Inkling launcher (scripts/run_inkling.py, any path).
bool isInklingLauncher(std::string_view script);

/// Import of a `python scripts/run_inkling.py train ...` command without a runplane-meta block:
/// what its `train` decides by itself (radixark/miles@067dc320 scripts/run_inkling.py, ScriptArgs
/// and _train) from its own options (`flags`: the command's, not its --extra-args), where the
/// command's --extra-args (appended last, so they win) did not set the field (`touched`):
/// placement (colocate, or disaggregated with --fully-async), 8 samples per prompt, --num-rollout
/// (100), the batch sizes (32 / 64), the response length (4096), the trainer's parallel layout
/// from its table of verified profiles, recompute, the engines (16 GPUs each) and their memory
/// fraction, the full mode's disk offload, the LoRA mode's rank / alpha / all-linear modules and
/// dynamic batch. One info note lists them; a warning where its table has no layout (the
/// launcher raises NotImplementedError there).
void readInklingLauncher(const std::vector<ScriptFlag>& flags, const std::set<std::string>& touched,
                         const std::string& file, int line, Recipe& r,
                         std::vector<LaunchNote>& notes);

}  // namespace runplane::plan::launch::detail
