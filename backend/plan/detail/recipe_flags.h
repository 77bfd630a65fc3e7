#pragma once
// Internal: a framework flag's presence and value, read from the recipe's extra_args (the flags
// the schema does not model, as the importer keeps them). Rules that mirror a framework check
// ask the typed field first and fall back to these, so an imported script is checked the same
// as a hand-written recipe (docs/rules.md, "Flags outside the schema").

#include <optional>
#include <string>
#include <string_view>

#include "backend/plan/recipe.h"

namespace runplane::plan::detail {

class RecipeFlags {
  public:
    explicit RecipeFlags(const Recipe& recipe) : m_recipe(recipe) {}

    /// The last extra_args item spelling `flag` ("--x", "--x=v", or argparse's "--no-x" for a
    /// boolean), its index in *index; nullptr when absent.
    const ExtraArg* find(std::string_view flag, std::size_t* index = nullptr) const;
    bool has(std::string_view flag) const { return find(flag) != nullptr; }
    /// store_true / BooleanOptionalAction: "--x" or "--x true" -> true, "--no-x" or "--x false"
    /// -> false, absent -> nullopt.
    std::optional<bool> boolean(std::string_view flag) const;
    /// True only when the flag is given and not negated.
    bool on(std::string_view flag) const { return boolean(flag).value_or(false); }
    /// The flag's first value ("--x v" or "--x=v"); nullopt when absent or given without one.
    std::optional<std::string> value(std::string_view flag) const;
    /// value() read as a number; nullopt when absent or not a number.
    std::optional<double> number(std::string_view flag) const;
    /// The flag's values (nargs="*" lists); empty when absent.
    std::vector<std::string> values(std::string_view flag) const;
    /// True when the flag's value is `${NAME}` and NAME is assigned by one of
    /// launcher.pre_launch's steps (`ROLLOUT_BATCH_SIZE=$((8 * NUM_GPUS))`): a value computed on
    /// the node when the job starts, which no rule can know beforehand (issue 45).
    bool runTime(std::string_view flag) const;
    /// "extra_args[i]" for the flag's item, else "".
    std::string field(std::string_view flag) const;

  private:
    const Recipe& m_recipe;
};

}  // namespace runplane::plan::detail
