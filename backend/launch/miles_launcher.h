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

}  // namespace runplane::plan::launch::detail
