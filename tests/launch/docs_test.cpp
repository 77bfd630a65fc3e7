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

// Issue 22: a Value or Switch row maps its field through the recipe field table, so the field's
// kind, default and choices are the table's. Each such field is a row of a kind the form fits; a
// Value row hands a value other than the default over and reads it back unchanged; a Switch
// row's `on` is a value of its field.
TEST(LaunchFields, TableFormRowsRoundTripThroughTheFieldTable) {
    int value = 0;
    int toggles = 0;
    for (const auto& rule : detail::flagRules()) {
        if (rule.form == detail::FlagForm::Custom) {
            continue;
        }
        const RecipeField* field = findRecipeField(rule.field.view());
        ASSERT_NE(field, nullptr) << rule.flag << " -> " << rule.field.view();
        ASSERT_NE(rule.emit, nullptr) << rule.flag;
        ASSERT_NE(rule.apply, nullptr) << rule.flag;
        if (rule.form == detail::FlagForm::Switch) {
            ++toggles;
            ASSERT_NE(rule.on, nullptr) << rule.flag;
            const std::string on = rule.on;
            const bool fits = field->kind == FieldKind::Bool
                                  ? (on == "true" || on == "false")
                                  : field->kind == FieldKind::Enum &&
                                        std::find(field->choices.begin(), field->choices.end(),
                                                  on) != field->choices.end();
            EXPECT_TRUE(fits) << rule.flag << ": '" << on << "' is no value of "
                              << rule.field.view();
            Recipe r;
            std::string why;
            ASSERT_TRUE(rule.apply(rule, r, {}, why)) << rule.flag << ": " << why;
            EXPECT_EQ(fieldValueText(field->get(r)), on) << rule.flag;
            std::vector<detail::FlagValues> out;
            rule.emit(rule, r, false, out);
            ASSERT_EQ(out.size(), 1u) << rule.flag;
            EXPECT_EQ(out[0].flag, rule.flag);
            EXPECT_TRUE(out[0].values.empty()) << rule.flag;
            EXPECT_FALSE(rule.apply(rule, r, {"x"}, why)) << rule.flag;
            continue;
        }
        ++value;
        EXPECT_NE(field->kind, FieldKind::Bool) << rule.flag;
        EXPECT_NE(field->kind, FieldKind::StringList) << rule.flag;
        // a value other than the default, of the field's kind
        FieldValue v;
        switch (field->kind) {
            case FieldKind::Int:
                v = 7;
                break;
            case FieldKind::Double:
                v = 0.375;
                break;
            case FieldKind::String:
                v = std::string("/x y");
                break;
            case FieldKind::Enum:
                v = std::string(field->choices.back());
                break;
            case FieldKind::IntList:
                v = std::vector<int>{1, 2, 8};
                break;
            default:
                continue;
        }
        ASSERT_NE(v, field->defaultValue()) << rule.flag;
        Recipe a;
        field->set(a, v);
        std::vector<detail::FlagValues> out;
        rule.emit(rule, a, false, out);
        ASSERT_EQ(out.size(), 1u) << rule.flag;
        EXPECT_EQ(out[0].flag, rule.flag);
        Recipe b;
        std::string why;
        ASSERT_TRUE(rule.apply(rule, b, out[0].values, why)) << rule.flag << ": " << why;
        EXPECT_EQ(field->get(b), v) << rule.flag;
        // at the default: written only when `always`
        out.clear();
        rule.emit(rule, Recipe{}, false, out);
        EXPECT_TRUE(out.empty()) << rule.flag;
    }
    EXPECT_GE(value, 68);
    EXPECT_GE(toggles, 30);
}

}  // namespace
}  // namespace runplane::plan::launch
