// docs/launch-scripts.md stays in step with the mapping table in code (issue 4): every flag the
// rule table knows, every miles launcher option and every recipe field is documented.

#include <gtest/gtest.h>

#include "backend/launch/flag_rules.h"
#include "backend/plan/recipe_fields.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

TEST(LaunchDocs, EveryFlagOptionAndFieldIsDocumented) {
    const std::string doc = test::readFile(test::sourceDir() + "/docs/launch-scripts.md");
    ASSERT_FALSE(doc.empty());
    for (const auto& rule : detail::flagRules()) {
        EXPECT_NE(doc.find(std::string("`") + rule.flag), std::string::npos) << rule.flag;
        EXPECT_NE(doc.find(std::string("`") + rule.field), std::string::npos) << rule.field;
    }
    for (const auto& opt : detail::scriptOptions()) {
        EXPECT_NE(doc.find(opt.option), std::string::npos) << opt.option;
    }
    for (const auto& slot : detail::fieldSlots()) {
        EXPECT_NE(doc.find(slot.path), std::string::npos) << slot.path;
    }
}

// Issue 22: a scalar slot copies through the recipe field table; a path the table lacks would
// throw on the first copy.
TEST(LaunchDocs, EverySlotCopies) {
    for (const auto& slot : detail::fieldSlots()) {
        Recipe to;
        EXPECT_NO_THROW(slot.copy(Recipe{}, to)) << slot.path;
    }
}

// Every flag row names a field of the recipe field table, or one of the structured parts the
// table leaves to code of its own.
TEST(LaunchDocs, EveryRuleFieldIsATableField) {
    for (const auto& rule : detail::flagRules()) {
        const std::string field = rule.field;
        const bool structured = field == "model" || field.rfind("model.", 0) == 0 ||
                                field == "weight_update" || field == "eval.datasets" ||
                                field == "extra_args" || field == "environment.env" ||
                                field.rfind("environment.env.", 0) == 0;
        EXPECT_TRUE(structured || findRecipeField(field) != nullptr)
            << rule.flag << " -> " << rule.field;
    }
}

TEST(LaunchDocs, EveryRuleFieldIsACopyableSlot) {
    for (const auto& rule : detail::flagRules()) {
        bool found = false;
        const std::string field = rule.field;
        for (const auto& slot : detail::fieldSlots()) {
            const std::string path = slot.path;  // a slot may carry a whole section ("model")
            found = found || path == field || field.rfind(path + ".", 0) == 0;
        }
        EXPECT_TRUE(found) << rule.flag << " -> " << rule.field;
    }
}

}  // namespace
}  // namespace runplane::plan::launch
