#pragma once
// Internal to the flag table (flag_rules.h): the row builders and value helpers the row files
// (flag_rows_train.cpp, flag_rows_engine.cpp, flag_rows_misc.cpp) share, and each file's rows.
// flagRules() is their concatenation in this order, which is the order an export writes flags in
// (the bash arrays, and the miles launcher's --extra-args string as one list).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/launch/flag_rules.h"

namespace runplane::plan::launch::detail {

using Out = std::vector<FlagValues>;
using Values = std::vector<std::string>;

// ---- the generic forms: the field through its row of the recipe field table ----

/// Value: writes the field's value (an int, a number, a string, an enum's name, a list of ints)
/// when it is set and `always` or not the field's default.
void emitValue(const FlagRule& rule, const Recipe& r, bool always, Out& out);
/// Value: reads one value of the field's kind (a list: one or more ints); an enum's value must be
/// one of the field's choices. Also the reader of custom rows that only write in a way of their
/// own (--actor-num-nodes writes the effective count, reads the field).
bool applyValue(const FlagRule& rule, Recipe& r, const Values& v, std::string& why);
/// Switch: writes the flag alone when the field holds rule.on.
void emitSwitch(const FlagRule& rule, const Recipe& r, bool always, Out& out);
/// Switch: takes no value; sets the field to rule.on.
bool applySwitch(const FlagRule& rule, Recipe& r, const Values& v, std::string& why);

/// --flag VALUE; written when the field is set and not at its default.
constexpr FlagRule valueFlag(const char* flag, FieldPath field, const char* group, unsigned bits,
                             const char* note = "") {
    return {flag,        field, group,           bits,   false, &emitValue,
            &applyValue, note,  FlagForm::Value, nullptr};
}
/// As valueFlag, and written even at the default in bash exports.
constexpr FlagRule alwaysFlag(const char* flag, FieldPath field, const char* group, unsigned bits,
                              const char* note = "") {
    return {flag,        field, group,           bits,   true, &emitValue,
            &applyValue, note,  FlagForm::Value, nullptr};
}
/// A store_true flag standing for the field's value `on` (YAML spelling: "true", "colocate").
constexpr FlagRule switchFlag(const char* flag, FieldPath field, const char* group, unsigned bits,
                              const char* on, const char* note = "") {
    return {flag, field, group, bits, false, &emitSwitch, &applySwitch, note, FlagForm::Switch, on};
}

// ---- helpers of the custom rows ----

bool one(const Values& v, std::string& why);
bool setInt(const Values& v, int& out, std::string& why);
bool setInt(const Values& v, std::optional<int>& out, std::string& why);
bool setDouble(const Values& v, double& out, std::string& why);
bool setString(const Values& v, std::string& out, std::string& why);
bool checkSwitch(const Values& v, std::string& why);
void push(Out& out, const char* flag, Values values = {});

// ---- the rows, by theme ----

/// Cluster and placement, trainer parallelism, rollout and batch, eval, checkpoints, algorithm,
/// weight update, optimizer.
std::span<const FlagRule> trainFlagRows();
/// The rollout engines' flags: SGLang (slime, miles), vLLM (vime).
std::span<const FlagRule> engineFlagRows();
/// LoRA, memory and offload, and the options of the miles Python launcher.
std::span<const FlagRule> miscFlagRows();
/// The miles launcher's options, each standing for a rule (flag_rows_misc.cpp).
std::span<const ScriptOption> launcherOptions();
/// Other spellings of engine flags: (alias, the rule's flag) (flag_rows_engine.cpp).
std::span<const std::pair<std::string_view, std::string_view>> engineFlagAliases();

}  // namespace runplane::plan::launch::detail
