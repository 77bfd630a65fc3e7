#pragma once
// Internal: what an export consists of before it is rendered as text: argument groups in command
// order, the environment, the Ray layout and the runplane-meta block. Tests use expectedArgv() to
// check that running the rendered script hands the framework exactly these flags.

#include <string>
#include <string_view>
#include <vector>

#include "backend/launch/flag_rules.h"
#include "backend/launch/launch.h"

namespace runplane::plan::launch::detail {

/// One line of a bash array: a flag and its values (unquoted), plus an optional trailing
/// annotation comment (runplane:source=...).
struct ArgLine {
    std::vector<std::string> words;
    std::string annotation;
};

struct ArgGroup {
    std::string name;  // bash array name; MODEL_ARGS comes from the sourced model file
    std::vector<ArgLine> lines;
    /// Miles TRAIN_ARGS: each line is ONE array element holding shell text (the launcher's
    /// --extra-args string is read by a shell again), joined with "${NAME[*]}".
    bool shellTextElements = false;
};

/// One `export NAME=...` line.
struct EnvLine {
    std::string name;
    std::string valueText;  // shell text after '=' (already quoted)
    bool derived = false;   // written from another recipe field (import skips it)
    bool pinned = false;    // a fixed value (literal) rather than a ${NAME:-...} parameter
    std::string literal;    // the value when pinned
};

struct LaunchPlan {
    Flavour flavour = Flavour::Slime;
    bool milesScript = false;  // python scripts/run_*.py launcher
    bool multiNode = false;
    std::string python;            // "python3" (train.py) or "python" (miles launcher)
    std::string program;           // "train.py" or the miles launcher path
    std::string subcommand;        // the launcher's, after its path ("train": run_inkling.py)
    std::string modelFile;         // stem of models/<stem>.sh; "" in miles-script mode and for FSDP
    std::vector<ArgGroup> groups;  // command order; MODEL_ARGS is an empty placeholder
    std::vector<EnvLine> env;
    std::vector<std::pair<std::string, std::string>> runtimeEnv;  // key -> JSON-ready shell text
    int nodes = 1;
    int gpusPerNode = 8;
    std::string workdir;
    std::string metaBlock;                  // "# runplane-..." comment lines, newline-terminated
    std::vector<std::string> preLaunch;     // launcher.pre_launch, verbatim
    std::vector<std::string> rayStartArgs;  // launcher.ray_start_args
    bool rayStop = false;                   // launcher.ray_stop
    std::vector<std::string> rayStopArgs;
    std::vector<std::string> raySubmitArgs;  // launcher.ray_submit_args
    std::vector<LaunchNote> notes;

    /// The argv the program receives (after the program path), given MODEL_ARGS' contents.
    std::vector<std::string> expectedArgv(const std::vector<std::string>& modelArgs) const;
};

LaunchPlan buildPlan(const Recipe& recipe, Flavour flavour, const ExportOptions& options);

/// Marks of the runplane comment channel (docs/launch-scripts.md, "Round trip").
inline constexpr const char* kMetaPrefix = "runplane-meta: ";
inline constexpr const char* kFlavourPrefix = "runplane-flavour: ";
inline constexpr const char* kSourceMark = "runplane:source=";
inline constexpr const char* kDerivedMark = "runplane:derived";

// ---- shared by export_plan.cpp and export_inkling.cpp ----

/// An export note about a recipe field (no file / line).
LaunchNote recipeNote(NoteLevel level, std::string field, std::string message);
/// The flag's words as the export writes them (an alias spelling the recipe recorded).
ArgLine lineOf(const Recipe& r, const FlagValues& fv);
/// The recipe's extra_args: launcher options / train.py flags into `extras`; with a miles
/// launcher (`trainArgs`) an entry whose flag is --extra-args goes into its --extra-args.
void addExtras(const Recipe& r, unsigned bits, LaunchPlan& plan, ArgGroup& extras,
               ArgGroup* trainArgs);
/// The rule an option of the recipe's miles launcher stands for, or nullptr (export_inkling.cpp:
/// run_inkling.py's options are its own, the other launchers' those of scriptOptions()).
const FlagRule* launcherOptionRule(const Recipe& r, std::string_view option);
/// The groups of a `python scripts/run_inkling.py train ...` export (export_inkling.cpp).
void buildInklingGroups(const Recipe& r, unsigned bits, LaunchPlan& plan);

/// The model file stem the exporter sources for a recipe (variant -> megatron_model_type).
std::string modelFileStem(const Recipe& recipe, const ModelCatalog* catalog);

}  // namespace runplane::plan::launch::detail
