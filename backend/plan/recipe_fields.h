#pragma once
// The recipe schema, written once (issue #22): one entry per scalar field of a Recipe (and per
// plain list of scalars such as lora.target_modules), in the order the YAML writes them. The
// parser and the writer loop over this table; the Design form builds its editors from it; the
// launch flag table names its fields through it. Only the structured parts (the model reference
// and its inline shape, environment.env, eval.datasets, analysis.metric_kinds, extra_args,
// schema_version) have code of their own. docs/recipe.md describes the table. Immutable after
// its first use; thread-safe.

#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "backend/plan/recipe.h"
#include "backend/plan/recipe_limits.h"
#include "backend/plan/recipe_paths.h"

namespace runplane::plan {

enum class FieldKind { Bool, Int, Double, String, Enum, IntList, StringList };

/// One field's value without its C++ type: std::monostate = an optional field left unset; an enum
/// is its YAML name ("sglang").
using FieldValue = std::variant<std::monostate, bool, int, double, std::string, std::vector<int>,
                                std::vector<std::string>>;

struct RecipeField {
    std::string_view path;     // "rollout.eplb.enabled", as findings and SourceMap name it
    std::string_view section;  // "rollout.eplb"; "" = the top level
    const char* key;           // "enabled": the YAML key inside section
    FieldKind kind;
    /// Unset means "derived from other fields" (e.g. trainer.etp = TP): written only when set.
    bool optional = false;
    /// Read and written by code of its own (model.name and model.variant: the "model: NAME"
    /// shorthand and the inline shape); the form and the flag table still use the entry.
    bool bespokeYaml = false;
    /// Written even at its default (framework, so that every written recipe names it).
    bool alwaysWritten = false;
    std::vector<std::string_view> choices;  // Enum: the YAML names, in the enum's order
    /// The allowed range and its reason (recipe_limits.cpp); for a list of numbers the bound of
    /// each item ("rollout.cuda_graph_sizes[]"). nullptr for bool, string and enum fields.
    const FieldBound* bound = nullptr;
    const char* label = "";    // the Design form's label, e.g. "Memory fraction"
    const char* tooltip = "";  // one line more (the flag it becomes, a caveat), may be ""
    int decimals = 0;          // Double: digits the form's spin box shows
    /// What unset means for an optional field ("default (= TP)"); "" = "default".
    const char* unsetText = "";
    FieldValue (*get)(const Recipe&) = nullptr;
    /// Sets the field; a value of the wrong alternative (or an unknown enum name) is ignored,
    /// std::monostate unsets an optional field.
    void (*set)(Recipe&, const FieldValue&) = nullptr;
    /// Why the field does not apply to this recipe (the form disables its editor with this as
    /// the reason), or nullptr when it does. nullptr function = always applies.
    const char* (*disabledWhy)(const Recipe&) = nullptr;

    /// The value a default-constructed Recipe has (std::monostate for optional fields).
    FieldValue defaultValue() const;
    bool isNumeric() const {
        return kind == FieldKind::Int || kind == FieldKind::Double || kind == FieldKind::IntList;
    }
    /// Copies this field from one recipe to another.
    void copy(const Recipe& from, Recipe& to) const { set(to, get(from)); }
};

/// Every field, in YAML order (sections contiguous; a nested section such as rollout.eplb sits
/// where the writer puts it).
std::span<const RecipeField> recipeFields();
/// The field of a path ("rollout.mem_fraction"), or nullptr.
const RecipeField* findRecipeField(std::string_view path);
/// As findRecipeField for a path the code itself names: a path that is not in the table is a
/// programming error (std::logic_error), found by the first test that touches it.
const RecipeField& recipeField(std::string_view path);
/// The row of a fields:: constant (recipe_paths.h); every one has its row (RecipePaths tests).
inline const RecipeField& recipeField(FieldPath path) {
    return recipeField(path.view());
}
/// The value as YAML would write it ("0.8", "true", "sglang", "[1, 2]"); "" for unset.
std::string fieldValueText(const FieldValue& value);

}  // namespace runplane::plan
