#pragma once
// Launch scripts, both ways. exportLaunch() turns a recipe into the launch material a framework
// runs (slime / vime bash arrays, or the miles Python launcher), with the Ray bring-up per node;
// importScript() reads an existing bash launch script WITHOUT executing it (a documented bash
// subset, docs/launch-scripts.md) into a recipe plus notes on everything it did not understand.
// All functions are pure apart from the file reads/writes they name; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"
#include "common/result.h"

namespace runplane::plan::launch {

/// The script style to write: slime bash arrays, vime bash arrays with `--vllm-*` engine flags,
/// or miles (its Python launcher `python scripts/run_*.py` when the recipe's launcher is the miles
/// script, else slime-style bash arrays with miles flags).
enum class Flavour { Slime, Vime, Miles };

const char* toString(Flavour flavour);
std::optional<Flavour> flavourFromName(std::string_view name);
/// The flavour that writes a recipe of this framework.
Flavour flavourOf(Framework framework);

enum class NoteLevel { Error, Warning, Info };
const char* toString(NoteLevel level);

/// One remark of an export or import: a construct not understood, a flag kept verbatim, a value
/// that could not be carried. file/line name the script place when there is one.
struct LaunchNote {
    NoteLevel level = NoteLevel::Warning;
    std::string file;   // script (or sourced file) the note is about; "" = the recipe
    int line = 0;       // 1-based; 0 = no line
    std::string field;  // recipe field path when the note concerns one
    std::string message;
    int column = 0;  // 1-based; 0 = no column
    /// "file:line[:column]: warning: message" (parts that are unknown are left out); control
    /// characters in the file name and message are escaped.
    std::string format() const;
};

bool hasErrors(const std::vector<LaunchNote>& notes);

/// One generated file. name is relative to the output folder.
struct LaunchFile {
    std::string name;
    std::string content;
    bool executable = true;
};

/// Everything exportLaunch() produces. files[0] is the job script run on the head node.
struct LaunchBundle {
    std::vector<LaunchFile> files;
    std::string jobScript;           // name of the job script (= files[0].name)
    std::vector<std::string> steps;  // what to run where, in order (also in launch-steps.txt)
    std::vector<LaunchNote> notes;
};

struct ExportOptions {
    /// Used to name the sourced model file of a model variant (its megatron_model_type); without
    /// it a variant's file is `<model>_<variant>.sh`.
    const ModelCatalog* catalog = nullptr;
};

/// Writes the launch material of recipe for flavour. Fails only when the recipe cannot be
/// written at all (e.g. no model); everything else becomes a note.
Result<LaunchBundle> exportLaunch(const Recipe& recipe, Flavour flavour,
                                  const ExportOptions& options = {});
/// Writes the bundle's files into dir (created if missing); scripts get mode 0755.
Status writeBundle(const LaunchBundle& bundle, const std::string& dir);

struct ImportOptions {
    /// --env K=V: the environment the script is read under (decides `if` blocks and defaults).
    std::vector<std::pair<std::string, std::string>> env;
    std::optional<Framework> framework;  // overrides detection
    std::string modelName;               // overrides the model found in the script
    /// Resolves model files to catalog names (incl. variants) and cross-checks MODEL_ARGS.
    const ModelCatalog* catalog = nullptr;
    /// Folders besides the script's own folder tree that `source` may read from (the recipes'
    /// models/ folder, --source-root). A file outside all of them is refused and never opened.
    std::vector<std::string> sourceRoots;
    /// The reader's expansion-work budget in bytes; 0 (every caller but the fuzz target) means
    /// the documented 32 MiB (docs/launch-scripts.md, "Limits"). fuzz_import lowers it so that
    /// inputs that grow into doubling or $(seq) scripts reach the budget's finding sooner.
    std::uint64_t expansionBudget = 0;
};

/// One flag of the launch command as read: values expanded, with where it was written.
struct ScriptFlag {
    std::string flag;  // "--lr"; "" for a positional word
    std::vector<std::string> values;
    std::string file;
    int line = 0;
    bool fromModelFile = false;  // came from a sourced models/<name>.sh
    bool known = true;           // false when a value depends on something not understood
    /// Inside the miles launcher's --extra-args string (flags for train.py).
    bool inExtraArgs = false;
    /// An expansion the reader could not resolve (e.g. ${MODEL_ARGS[@]} of an array it does not
    /// know): a word of its own, kept as written in values[0], never a value of a neighbour.
    bool splice = false;
};

/// A variable the script reads but neither sets nor gets with --env: a symbolic parameter of the
/// recipe, kept as ${NAME} in the values that use it.
struct ScriptParameter {
    std::string name;
    std::vector<std::string> usedAt;  // "file:line", in order
    bool required = false;            // ${NAME:?...} or a guard clause asks for it
};

struct ImportResult {
    Recipe recipe;
    std::vector<LaunchNote> notes;
    std::vector<ScriptFlag> flags;  // the launch command's flags, in order
    std::string program;            // "train.py", "scripts/run_qwen3_8.py", ...
    bool hadMeta = false;           // the script carried a runplane-meta block (our own export)
    std::vector<ScriptParameter> parameters;  // variables left symbolic (fill with --env K=V)
};

/// Reads a launch script from disk (sourced files are read relative to it). Hard errors only
/// when the file cannot be read or holds no launch command.
Result<ImportResult> importScript(const std::string& path, const ImportOptions& options = {});
/// As importScript, for text already in memory; path names it and anchors relative `source`s.
Result<ImportResult> importScriptText(std::string_view text, const std::string& path,
                                      const ImportOptions& options = {});

}  // namespace runplane::plan::launch
