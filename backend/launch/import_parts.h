#pragma once
// Internal to the importer (import_recipe.cpp): the launch command read as flags
// (import_command.cpp) and the model / bring-up parts of a script (import_model.cpp).

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/launch/bash_eval.h"
#include "backend/launch/launch.h"

namespace runplane::plan::launch::detail {

struct Interpreted {
    std::string program;
    bool milesScript = false;
    std::vector<ScriptFlag> flags;
    std::optional<Field> runtimeEnvJson;
    /// `ray job submit` words besides --address and --runtime-env-json (launcher.ray_submit_args).
    std::vector<Field> submitArgs;
};

/// The framework an imported script runs (import_framework.cpp).
struct FrameworkReading {
    Flavour flavour = Flavour::Slime;
    bool assumed = false;  // nothing decided: read as slime, framework_assumed
    std::string why;       // an info note's text; "" when nothing needs saying
};
/// What the script's text says (miles' entry point / model-args idiom / paths / miles-only flags,
/// a slime path or slime-only flag, vLLM flags), else where it lives; else slime, assumed.
FrameworkReading readFramework(const Interpreted& in, const ScriptReading& reading,
                               const std::string& path);
/// The framework of the nearest checkout above `path`: a folder holding the miles/, slime/ or
/// vime/ package, or one whose name has the word miles, slime or vime (`miles`,
/// `radixark__miles`, `slime-main`); nullopt when none or both. The second: why, in words.
std::optional<std::pair<Flavour, std::string>> frameworkFromLocation(const std::string& path);

/// The file name of a path.
std::string baseName(const std::string& path);
/// NAME of a splice word ("${NAME[@]}", $NAME, ...); "" for anything else.
std::string spliceName(const std::string& word);
/// The launch command's program and flags (ray job submit unwrapped, --extra-args split).
Result<Interpreted> interpret(const LaunchRead& launch, const ScriptReading& reading,
                              std::vector<LaunchNote>& notes);
/// The flag and its values as shell words.
std::string flagText(const ScriptFlag& f);

/// A models/<stem>.sh as a catalog (name, variant); warns when the catalog has neither.
std::pair<std::string, std::string> resolveStem(const std::string& stem,
                                                const ModelCatalog* catalog,
                                                std::vector<LaunchNote>& notes,
                                                const std::string& file);
/// A script that names no model file (an FSDP script building the model from --hf-checkpoint, a
/// miles launcher given --model-name): the catalog model a checkpoint directory or model name
/// names (case-insensitive, without suffixes such as -Instruct, -Thinking, -BF16, -FP8, -it);
/// "" when the catalog has none.
std::string catalogModelNamed(std::string name, const ModelCatalog* catalog);
/// model.name of a script without models/<name>.sh or model_args_utils.py: the catalog model
/// catalogModelNamed() finds (a warning), else the directory's own name (a warning: validate
/// cannot size it), else an error asking for --model.
void modelWithoutModelFile(const Interpreted& in, const ModelCatalog* catalog,
                           const std::string& path, Recipe& r, std::vector<LaunchNote>& notes);
/// Warns where MODEL_ARGS disagree with the catalog's shape of the recipe's model.
/// The constructs that define the spliced arrays (a `for` loop building one, ...), kept
/// verbatim in launcher.pre_launch in script order, so that the export's splice has its words.
void carrySpliceDefinitions(const ScriptReading& reading, const std::set<std::string>& spliced,
                            Recipe& r, std::vector<LaunchNote>& notes);
void crossCheckModel(const Recipe& r, const std::vector<ScriptFlag>& modelFlags,
                     const ModelCatalog& catalog, std::vector<LaunchNote>& notes);
/// A model the catalog lacks: the shape its MODEL_ARGS give; nullopt without layers, hidden size
/// and heads.
std::optional<ModelShape> shapeFromModelArgs(const std::string& name,
                                             const std::vector<ScriptFlag>& flags);
/// The GPUs the head's `ray start --head --num-gpus N` offers.
std::optional<int> rayHeadGpus(const ScriptReading& reading);
/// rollout.weight_dtype from what the script says of the engines' checkpoint: a quantization
/// word in the --hf-checkpoint directory name (INT4, W4A16, FP8, NVFP4, MXFP4) or slime's INT4
/// QAT switch OPEN_TRAINING_INT4_FAKE_QAT_FLAG=1 in the job's environment. Leaves bf16 otherwise.
void readCheckpointDtype(Recipe& r, std::vector<LaunchNote>& notes, const std::string& file);
/// The script's own Ray words and pre-launch steps (launcher.ray_*, launcher.pre_launch).
void readBringUp(const ScriptReading& reading, Recipe& r, std::vector<LaunchNote>& notes);

}  // namespace runplane::plan::launch::detail
