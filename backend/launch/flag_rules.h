#pragma once
// Internal: the one table that maps recipe fields to framework flags, used by the exporter (emit)
// and the importer (apply), and the list of recipe fields (slots) the runplane-meta block carries
// when no flag does. docs/launch-scripts.md renders the same table. Immutable; thread-safe.
// Each row names its field by its recipe_paths.h constant; a Value or Switch row reads and writes
// the field through the recipe field table (recipe_fields.h), so its kind, default and choices
// come from there. The rows live by theme in flag_rows_*.cpp (flag_rows.h); flag_rules.cpp holds
// the machinery, flag_slots.cpp the meta-block slots.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/launch/launch.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_paths.h"

namespace runplane::plan::launch::detail {

// Which launchers know a spelling. kScript = an option of the miles Python launcher itself.
inline constexpr unsigned kSlimeBit = 1;
inline constexpr unsigned kVimeBit = 2;
inline constexpr unsigned kMilesBit = 4;
inline constexpr unsigned kScriptBit = 8;
inline constexpr unsigned kTrainBits = kSlimeBit | kVimeBit | kMilesBit;
inline constexpr unsigned kSglangBits = kSlimeBit | kMilesBit;

unsigned flavourBit(Flavour flavour);

struct FlagValues {
    std::string flag;
    std::vector<std::string> values;
};

struct FlagRule;

/// Appends the flag(s) for the rule's field; `always` = write it even at the recipe default
/// (bash exports spell out the key settings the way the frameworks' scripts do).
using EmitFn = void (*)(const FlagRule& rule, const Recipe& r, bool always,
                        std::vector<FlagValues>& out);
/// Sets the field from the flag's values; false (with why) when the values do not fit.
using ApplyFn = bool (*)(const FlagRule& rule, Recipe& r, const std::vector<std::string>& values,
                         std::string& why);

/// How a row maps its field: through the field's row of the recipe field table
/// (recipe_fields.h: its kind, accessor and default), or with code of its own.
enum class FlagForm {
    Value,   // --flag VALUE (a list: --flag V1 V2 ...), written when set and not at the default
    Switch,  // a store_true flag, written when the field holds `on`; reading it sets `on`
    Custom,  // emit / apply of the row's own (a derived value, a unit, JSON, several flags)
};

struct FlagRule {
    const char* flag;
    FieldPath field;    // the recipe field (recipe_paths.h: fields::kRolloutMemFraction)
    const char* group;  // bash array; "ENGINE_ARGS" = SGLANG_ARGS / VLLM_ARGS by engine
    unsigned flavours;
    bool alwaysInBash;  // written even at the default in bash exports
    EmitFn emit;        // nullptr: read on import, never written (e.g. --offload)
    ApplyFn apply;      // nullptr: only read as part of a multi-flag form (recompute)
    const char* note;   // short remark for the docs table
    FlagForm form = FlagForm::Custom;
    /// Switch: the field's value the flag stands for, as the recipe's YAML writes it ("true",
    /// "false", "colocate").
    const char* on = nullptr;
};

std::span<const FlagRule> flagRules();
/// The rule's spelling of an engine flag alias ("--sglang-ep" -> "--sglang-ep-size"); any other
/// flag unchanged.
std::string_view canonicalFlag(std::string_view flag);
/// True when `flag` is another spelling of a rule's flag ("--sglang-expert-parallel-size").
bool isFlagAlias(std::string_view flag);
/// Applies the rule to the values of a flag read as `spelling` (the rule's flag, one of its
/// aliases or a miles launcher option) and records an alias spelling in launcher.flag_spellings
/// (reading the rule's own spelling forgets an alias recorded before), so that an export writes
/// the flag the way the script did. False (with why) as the rule's apply.
bool applyFlag(const FlagRule& rule, std::string_view spelling, Recipe& r,
               const std::vector<std::string>& values, std::string& why);
/// The spelling an export writes for a rule's flag: the alias launcher.flag_spellings records
/// for it, else the flag itself.
std::string spelledFlag(const Recipe& r, std::string_view flag);
/// True when the recipe asks for the rule's flag to be written even at its default
/// (launcher.explicit_flags holds the rule's flag: an imported script spelled it out).
bool writtenExplicitly(const Recipe& r, const FlagRule& rule);
/// The rule for a train.py flag (not a miles launcher option), or nullptr. Aliases count.
const FlagRule* findRule(std::string_view flag);
/// The rule for a miles launcher option ("--tp"), or nullptr.
const FlagRule* findScriptOption(std::string_view option);
/// The rule spelled exactly `flag` (no alias, any flavour); nullptr if none.
const FlagRule* ruleNamed(std::string_view flag);

/// The rule's flags as an export writes them. In the miles launcher's --extra-args only explicit
/// trainer node / GPU counts are written: the launcher derives them from its own options.
void emitFor(const FlagRule& rule, const Recipe& r, bool milesScript, bool always,
             std::vector<FlagValues>& out);

/// Options of the miles Python launcher, in the order the launcher's docs write them; each
/// stands for a rule (`rule`), spelled `option` on the launcher's command line.
struct ScriptOption {
    const char* option;
    const char* rule;
    bool always;
};
std::span<const ScriptOption> scriptOptions();

/// A recipe field the meta block can carry: copies it from one recipe to another.
struct FieldSlot {
    FieldPath path;  // recipe_paths.h: a fields:: constant, or a parts:: one for a whole part
    void (*copy)(const Recipe& from, Recipe& to);
};
std::span<const FieldSlot> fieldSlots();

/// Fields whose effective value the flags carry but not whether it was written explicitly (or
/// that no flag carries in any flavour); always in the meta block and reconciled on import.
bool isReconciledField(std::string_view path);
/// True when some rule writes `path` in this mode (bits = flavour bit, plus kScriptBit for the
/// miles Python launcher).
bool fieldHasFlag(std::string_view path, unsigned bits);

}  // namespace runplane::plan::launch::detail
