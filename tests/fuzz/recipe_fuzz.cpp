// Recipe YAML -> parse -> validate -> plan (and the JSON the CLI prints), against the shipped
// model catalog. A recipe that parses must also survive writeRecipe and parse again.
#include "backend/plan/planner.h"
#include "backend/plan/recipe_limits.h"
#include "tests/fuzz/fuzz_catalog.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > kMaxRecipeBytes) {
        return -1;  // readRecipeText refuses larger files before parsing
    }
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ParseOutcome outcome = parseRecipeDetailed(text, "fuzz.yaml");
    if (!outcome.recipe) {
        for (const auto& d : outcome.diagnostics) {
            (void)d.format("fuzz.yaml");
        }
        (void)parseErrorsToJson(outcome.diagnostics, "fuzz.yaml");
        return 0;
    }
    const Recipe& recipe = *outcome.recipe;
    (void)findingsToJson(validate(recipe, runplane::fuzz::catalog()), "fuzz.yaml");
    (void)planToJson(planRecipe(recipe, runplane::fuzz::catalog()), "fuzz.yaml");
    const std::string written = writeRecipe(recipe);
    (void)parseRecipeDetailed(written, "fuzz-written.yaml");
    return 0;
}
