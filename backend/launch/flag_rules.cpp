// The field <-> flag table's machinery (flag_rules.h): the generic Value and Switch forms, which
// read and write a field through its row of the recipe field table (recipe_fields.h), the value
// helpers of the custom rows, the lookups (by flag, by alias, by miles launcher option) and the
// spelling an export writes. The rows themselves are in flag_rows_train.cpp,
// flag_rows_engine.cpp and flag_rows_misc.cpp, in one list (flagRules) whose order is the
// export's order; each row is read by both directions, so what the exporter writes is exactly
// what the importer maps back (docs/launch-scripts.md).

#include "backend/launch/flag_rules.h"

#include <algorithm>
#include <climits>
#include <variant>

#include "backend/launch/flag_rows.h"
#include "backend/launch/shell_text.h"
#include "backend/plan/recipe_fields.h"

namespace runplane::plan::launch::detail {

// ---- helpers of the rows ----

bool one(const Values& v, std::string& why) {
    if (v.size() != 1) {
        why = "expects one value, got " + std::to_string(v.size());
        return false;
    }
    return true;
}

bool setInt(const Values& v, int& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    auto n = parseInt(v[0]);
    if (!n || *n < INT_MIN || *n > INT_MAX) {
        why = "expects an integer, got '" + v[0] + "'";
        return false;
    }
    out = static_cast<int>(*n);
    return true;
}

bool setInt(const Values& v, std::optional<int>& out, std::string& why) {
    int n = 0;
    if (!setInt(v, n, why)) {
        return false;
    }
    out = n;
    return true;
}

bool setDouble(const Values& v, double& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    auto d = parseDouble(v[0]);
    if (!d) {
        why = "expects a number, got '" + v[0] + "'";
        return false;
    }
    out = *d;
    return true;
}

bool setString(const Values& v, std::string& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    out = v[0];
    return true;
}

bool checkSwitch(const Values& v, std::string& why) {
    if (!v.empty()) {
        why = "is a switch and takes no value, got '" + v[0] + "'";
        return false;
    }
    return true;
}

void push(Out& out, const char* flag, Values values) {
    out.push_back({flag, std::move(values)});
}

namespace {

bool setIntList(const Values& v, std::vector<int>& out, std::string& why) {
    if (v.empty()) {
        why = "expects a list of integers";
        return false;
    }
    std::vector<int> list;
    for (const auto& s : v) {
        auto n = parseInt(s);
        if (!n || *n < INT_MIN || *n > INT_MAX) {
            why = "expects integers, got '" + s + "'";
            return false;
        }
        list.push_back(static_cast<int>(*n));
    }
    out = std::move(list);
    return true;
}

bool setChoice(const Values& v, const RecipeField& field, std::string& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    std::string names;
    for (std::string_view choice : field.choices) {
        if (v[0] == choice) {
            out = v[0];
            return true;
        }
        names += names.empty() ? "" : ", ";
        names += choice;
    }
    why = "'" + v[0] + "' is not one of " + names;
    return false;
}

// The words of a field's value on the command line.
Values wordsOf(const FieldValue& value) {
    struct Words {
        Values operator()(std::monostate) const { return {}; }
        Values operator()(bool v) const { return {v ? "true" : "false"}; }
        Values operator()(int v) const { return {formatInt(v)}; }
        Values operator()(double v) const { return {formatDouble(v)}; }
        Values operator()(const std::string& v) const { return {v}; }
        Values operator()(const std::vector<int>& v) const {
            Values out;
            for (int n : v) {
                out.push_back(formatInt(n));
            }
            return out;
        }
        Values operator()(const std::vector<std::string>& v) const { return v; }
    };
    return std::visit(Words{}, value);
}

// A switch row's `on` as the field's value: a bool field's "true" / "false", an enum's name.
FieldValue switchValue(const RecipeField& field, const char* on) {
    if (field.kind == FieldKind::Bool) {
        return std::string_view(on) == "true";
    }
    return std::string(on);
}

}  // namespace

// ---- the generic forms ----

void emitValue(const FlagRule& rule, const Recipe& r, bool always, Out& out) {
    const RecipeField& field = recipeField(rule.field);
    const FieldValue value = field.get(r);
    if (std::holds_alternative<std::monostate>(value) ||
        (!always && value == field.defaultValue())) {
        return;
    }
    out.push_back({rule.flag, wordsOf(value)});
}

bool applyValue(const FlagRule& rule, Recipe& r, const Values& v, std::string& why) {
    const RecipeField& field = recipeField(rule.field);
    FieldValue value;
    switch (field.kind) {
        case FieldKind::Int: {
            int n = 0;
            if (!setInt(v, n, why)) {
                return false;
            }
            value = n;
            break;
        }
        case FieldKind::Double: {
            double d = 0;
            if (!setDouble(v, d, why)) {
                return false;
            }
            value = d;
            break;
        }
        case FieldKind::String: {
            std::string s;
            if (!setString(v, s, why)) {
                return false;
            }
            value = std::move(s);
            break;
        }
        case FieldKind::Enum: {
            std::string name;
            if (!setChoice(v, field, name, why)) {
                return false;
            }
            value = std::move(name);
            break;
        }
        case FieldKind::IntList: {
            std::vector<int> list;
            if (!setIntList(v, list, why)) {
                return false;
            }
            value = std::move(list);
            break;
        }
        case FieldKind::Bool:
        case FieldKind::StringList:
            why = "has no value form for " + rule.field.str();  // a table mistake (LaunchFields)
            return false;
    }
    field.set(r, value);
    return true;
}

void emitSwitch(const FlagRule& rule, const Recipe& r, bool, Out& out) {
    const RecipeField& field = recipeField(rule.field);
    if (field.get(r) == switchValue(field, rule.on)) {
        out.push_back({rule.flag, {}});
    }
}

bool applySwitch(const FlagRule& rule, Recipe& r, const Values& v, std::string& why) {
    if (!checkSwitch(v, why)) {
        return false;
    }
    const RecipeField& field = recipeField(rule.field);
    field.set(r, switchValue(field, rule.on));
    return true;
}

// ---- the table and its lookups ----

unsigned flavourBit(Flavour flavour) {
    switch (flavour) {
        case Flavour::Slime:
            return kSlimeBit;
        case Flavour::Vime:
            return kVimeBit;
        case Flavour::Miles:
            return kMilesBit;
    }
    return 0;
}

void emitFor(const FlagRule& rule, const Recipe& r, bool milesScript, bool always,
             std::vector<FlagValues>& out) {
    if (rule.emit == nullptr) {
        return;
    }
    if (milesScript && ((rule.field == fields::kTrainerNodes && !r.trainer.nodes) ||
                        (rule.field == fields::kTrainerGpusPerNode && !r.trainer.gpusPerNode))) {
        return;
    }
    rule.emit(rule, r, always, out);
}

std::span<const FlagRule> flagRules() {
    static const std::vector<FlagRule> rules = [] {
        std::vector<FlagRule> all;
        for (auto part : {trainFlagRows(), engineFlagRows(), miscFlagRows()}) {
            all.insert(all.end(), part.begin(), part.end());
        }
        return all;
    }();
    return rules;
}

std::string_view canonicalFlag(std::string_view flag) {
    for (const auto& [alias, canonical] : engineFlagAliases()) {
        if (flag == alias) {
            return canonical;
        }
    }
    return flag;
}

bool isFlagAlias(std::string_view flag) {
    return canonicalFlag(flag) != flag;
}

bool applyFlag(const FlagRule& rule, std::string_view spelling, Recipe& r,
               const std::vector<std::string>& values, std::string& why) {
    if (rule.apply == nullptr || !rule.apply(rule, r, values, why)) {
        return false;
    }
    if (canonicalFlag(spelling) != rule.flag) {
        return true;  // a miles launcher option ("--tp"): no alias of the rule's flag
    }
    auto& spellings = r.launcher.flagSpellings;
    std::erase_if(spellings, [&](const std::string& s) {
        return s != spelling && canonicalFlag(s) == rule.flag;
    });
    if (spelling != rule.flag &&
        std::find(spellings.begin(), spellings.end(), spelling) == spellings.end()) {
        spellings.emplace_back(spelling);
    }
    return true;
}

std::string spelledFlag(const Recipe& r, std::string_view flag) {
    for (const auto& s : r.launcher.flagSpellings) {
        if (s != flag && canonicalFlag(s) == flag) {
            return s;
        }
    }
    return std::string(flag);
}

bool writtenExplicitly(const Recipe& r, const FlagRule& rule) {
    const auto& flags = r.launcher.explicitFlags;
    return std::find(flags.begin(), flags.end(), rule.flag) != flags.end();
}

const FlagRule* findRule(std::string_view flag) {
    flag = canonicalFlag(flag);
    for (const auto& rule : flagRules()) {
        if (flag == rule.flag && (rule.flavours & kTrainBits) != 0) {
            return &rule;
        }
    }
    return nullptr;
}

const FlagRule* findScriptOption(std::string_view option) {
    for (const auto& opt : scriptOptions()) {
        if (option == opt.option) {
            return ruleNamed(opt.rule);
        }
    }
    return nullptr;
}

const FlagRule* ruleNamed(std::string_view flag) {
    for (const auto& rule : flagRules()) {
        if (flag == rule.flag) {
            return &rule;
        }
    }
    return nullptr;
}

std::span<const ScriptOption> scriptOptions() {
    return launcherOptions();
}

bool fieldHasFlag(std::string_view path, unsigned bits) {
    for (const auto& rule : flagRules()) {
        if ((rule.flavours & bits) != 0 && rule.emit != nullptr && path == rule.field.view()) {
            return true;
        }
    }
    return false;
}

}  // namespace runplane::plan::launch::detail
