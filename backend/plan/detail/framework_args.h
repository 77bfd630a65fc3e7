#pragma once
// Internal: effective values of framework settings that live either in a typed recipe field or,
// for imported scripts, in extra_args — each with the field path a finding should point at.

#include <string>

#include "backend/plan/detail/recipe_flags.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_paths.h"

namespace runplane::plan::detail {

/// A setting's effective value and where it was given: the typed field's path when the typed
/// field carries it (or nothing carries it), else "extra_args[i]".
struct BoolSetting {
    bool on = false;
    std::string field;
};
struct TextSetting {
    std::string value;  // "" = not given
    std::string field;
    bool given() const { return !value.empty(); }
};

inline BoolSetting boolSetting(const RecipeFlags& flags, bool typed, FieldPath path,
                               const char* flag) {
    if (typed) {
        return {true, path.str()};
    }
    if (flags.on(flag)) {
        return {true, flags.field(flag)};
    }
    return {false, path.str()};
}

/// typed: the typed field's text ("" = unset). A flag given without a value counts as given
/// ("<no value>") so that presence checks still see it.
inline TextSetting textSetting(const RecipeFlags& flags, const std::string& typed, FieldPath path,
                               const char* flag) {
    if (!typed.empty()) {
        return {typed, path.str()};
    }
    if (flags.has(flag)) {
        return {flags.value(flag).value_or("<no value>"), flags.field(flag)};
    }
    return {"", path.str()};
}

inline bool colocated(const Recipe& r, const RecipeFlags& flags) {
    return r.placement == Placement::Colocate || flags.on("--colocate");
}

}  // namespace runplane::plan::detail
