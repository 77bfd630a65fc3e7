// docs/launch-scripts.md stays in step with the mapping table in code (issue 4): every flag the
// rule table knows, every miles launcher option and every recipe field is documented.

#include <gtest/gtest.h>

#include <algorithm>

#include "backend/launch/flag_rules.h"
#include "backend/plan/recipe_fields.h"
#include "backend/plan/recipe_paths.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

TEST(LaunchDocs, EveryFlagOptionAndFieldIsDocumented) {
    const std::string doc = test::readFile(test::sourceDir() + "/docs/launch-scripts.md");
    ASSERT_FALSE(doc.empty());
    for (const auto& rule : detail::flagRules()) {
        EXPECT_NE(doc.find(std::string("`") + rule.flag), std::string::npos) << rule.flag;
        EXPECT_NE(doc.find("`" + rule.field.str()), std::string::npos) << rule.field.str();
    }
    for (const auto& opt : detail::scriptOptions()) {
        EXPECT_NE(doc.find(opt.option), std::string::npos) << opt.option;
    }
    for (const auto& slot : detail::fieldSlots()) {
        EXPECT_NE(doc.find(slot.path.view()), std::string::npos) << slot.path.str();
    }
}

// Issue 22: a scalar slot copies through the recipe field table; a path the table lacks would
// throw on the first copy.
TEST(LaunchDocs, EverySlotCopies) {
    for (const auto& slot : detail::fieldSlots()) {
        Recipe to;
        EXPECT_NO_THROW(slot.copy(Recipe{}, to)) << slot.path.str();
    }
}

// Every flag row names a field of the recipe field table, or one of the structured parts the
// table leaves to code of its own.
TEST(LaunchDocs, EveryRuleFieldIsATableField) {
    for (const auto& rule : detail::flagRules()) {
        const std::string field = rule.field.str();
        const bool structured = field == "model" || field.rfind("model.", 0) == 0 ||
                                field == "weight_update" || field == "eval.datasets" ||
                                field == "extra_args" || field == "environment.env" ||
                                field.rfind("environment.env.", 0) == 0;
        EXPECT_TRUE(structured || findRecipeField(field) != nullptr)
            << rule.flag << " -> " << rule.field.str();
    }
}

TEST(LaunchDocs, EveryRuleFieldIsACopyableSlot) {
    for (const auto& rule : detail::flagRules()) {
        bool found = false;
        const std::string field = rule.field.str();
        for (const auto& slot : detail::fieldSlots()) {
            const std::string path = slot.path.str();  // a slot may carry a whole section ("model")
            found = found || path == field || field.rfind(path + ".", 0) == 0;
        }
        EXPECT_TRUE(found) << rule.flag << " -> " << rule.field.str();
    }
}

// Every flag row and meta-block slot names a field of the recipe field table or one of the parts
// (recipe_paths.h; FlagRule::field and FieldSlot::path are FieldPath, so a literal cannot stand
// in), and a scalar slot copies through that field's row.
TEST(LaunchFields, EveryFlagRowAndSlotNamesAFieldOfTheTableOrAPart) {
    auto isPart = [](FieldPath path) {
        return std::find(parts::kAll.begin(), parts::kAll.end(), path) != parts::kAll.end();
    };
    for (const auto& rule : detail::flagRules()) {
        EXPECT_TRUE(findRecipeField(rule.field.view()) != nullptr || isPart(rule.field))
            << rule.flag << " -> " << rule.field.view();
    }
    for (const auto& slot : detail::fieldSlots()) {
        EXPECT_TRUE(findRecipeField(slot.path.view()) != nullptr || isPart(slot.path))
            << slot.path.view();
    }
}

}  // namespace
}  // namespace runplane::plan::launch
