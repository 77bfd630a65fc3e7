// The recipe field table (issue #22): every field parses, writes and round-trips on its own, a
// wrong value is an error at its line:column, every numeric field has a bound that docs/recipe.md
// lists, and the table agrees with the limits table. (The Design form's editor per field is
// checked by tests/gui/design_editors_test.cpp.)

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"
#include "backend/plan/recipe_limits.h"
#include "backend/plan/recipe_paths.h"
#include "backend/plan/rules.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

const char* const kMinimal = test::kMinimalRecipe;

Recipe minimal() {
    auto r = parseRecipe(kMinimal, "minimal.yaml");
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? *r : Recipe{};
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A value of the field other than its value in `base`, inside the field's bound.
FieldValue otherValue(const RecipeField& f, const Recipe& base) {
    const FieldValue now = f.get(base);
    switch (f.kind) {
        case FieldKind::Bool: {
            const bool* b = std::get_if<bool>(&now);
            return b != nullptr ? FieldValue{!*b} : FieldValue{true};
        }
        case FieldKind::Int: {
            int v = static_cast<int>(std::max(f.bound->min, 1.0));
            if (const int* i = std::get_if<int>(&now); i != nullptr && *i == v) {
                ++v;
            }
            return v;
        }
        case FieldKind::Double: {
            double v = f.bound->min + (std::min(f.bound->max, f.bound->min + 1) - f.bound->min) / 4;
            if (const double* d = std::get_if<double>(&now); d != nullptr && *d == v) {
                v = f.bound->min;
            }
            return v;
        }
        case FieldKind::String: {
            const std::string* s = std::get_if<std::string>(&now);
            return std::string(s != nullptr && *s == "value-1" ? "value-2" : "value-1");
        }
        case FieldKind::Enum:
            for (std::string_view c : f.choices) {
                const std::string* s = std::get_if<std::string>(&now);
                if (s == nullptr || *s != c) {
                    return std::string(c);
                }
            }
            return {};
        case FieldKind::IntList:
            return std::vector<int>{2, 4};
        case FieldKind::StringList:
            return std::vector<std::string>{"a", "b c"};
    }
    return {};
}

/// kMinimal with `key: value` written under the field's section (at the end of the file), and
/// *line / *column set to where value starts.
std::string withField(const RecipeField& f, std::string_view key, std::string_view value,
                      int* line = nullptr, int* column = nullptr) {
    std::string text = kMinimal;
    std::string indent;
    if (f.section == "batch") {
        indent = "  ";  // batch is open already (the last section of kMinimal): add to it
        if (key == "rollout_batch_size") {
            text.erase(text.find("  rollout_batch_size: 32\n"));
        }
    } else {
        if (f.path == "framework") {
            text.erase(text.find("framework: slime\n"), 17);  // written once, below
        }
        std::string_view rest = f.section;
        while (!rest.empty()) {
            const auto dot = rest.find('.');
            text += indent + std::string(rest.substr(0, dot)) + ":\n";
            indent += "  ";
            rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
        }
    }
    text += indent + std::string(key) + ": " + std::string(value) + "\n";
    if (line != nullptr) {
        *line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    }
    if (column != nullptr) {
        *column = static_cast<int>(indent.size() + key.size() + 3);
    }
    return text;
}

TEST(RecipeFields, TableIsWellFormed) {
    std::set<std::string_view> paths;
    std::vector<std::string> open;  // the sections the writer's walk is in, outermost first
    std::set<std::string> closed;
    for (const RecipeField& f : recipeFields()) {
        SCOPED_TRACE(std::string(f.path));
        EXPECT_TRUE(paths.insert(f.path).second) << "listed twice";
        EXPECT_EQ(std::string(f.section.empty() ? "" : std::string(f.section) + ".") + f.key,
                  f.path);
        EXPECT_NE(std::string_view(f.label), "");
        ASSERT_NE(f.get, nullptr);
        ASSERT_NE(f.set, nullptr);
        EXPECT_EQ(f.kind == FieldKind::Enum, !f.choices.empty());
        EXPECT_EQ(f.isNumeric(), f.bound != nullptr)
            << "numeric fields, and only they, are bounded";
        EXPECT_EQ(findRecipeField(f.path), &f);
        if (f.optional) {
            EXPECT_TRUE(std::holds_alternative<std::monostate>(f.defaultValue()));
        }
        // A section's fields are one run (a nested section inside it), so the walk opens and
        // finishes each section once.
        if (f.bespokeYaml) {
            continue;
        }
        const std::string target(f.section);
        while (!open.empty() && target != open.back() && !target.starts_with(open.back() + ".")) {
            closed.insert(open.back());
            open.pop_back();
        }
        while ((open.empty() ? std::string() : open.back()) != target) {
            const std::string at = open.empty() ? std::string() : open.back();
            const std::size_t dot = target.find('.', at.empty() ? 0 : at.size() + 1);
            const std::string next = target.substr(0, dot);
            EXPECT_EQ(closed.count(next), 0u) << "section " << next << " reopened";
            open.push_back(next);
        }
    }
    EXPECT_EQ(findRecipeField("rollout.nope"), nullptr);
    EXPECT_THROW(recipeField("rollout.nope"), std::logic_error);
    EXPECT_EQ(recipeField("rollout.mem_fraction").kind, FieldKind::Double);
    EXPECT_EQ(std::get<double>(recipeField("rollout.mem_fraction").defaultValue()), 0.8);
}

TEST(RecipeFields, EveryRecipeBoundBelongsToAField) {
    for (const FieldBound& b : recipeFieldBounds()) {
        std::string path = b.path;
        if (path.ends_with("[]")) {
            path.resize(path.size() - 2);
        }
        const RecipeField* f = findRecipeField(path);
        ASSERT_NE(f, nullptr) << b.path << " bounds no field of the table";
        EXPECT_EQ(f->bound, &b) << b.path;
    }
}

TEST(RecipeFields, EveryNumericFieldHasADocumentedBound) {
    const std::string doc = readFile(test::sourceDir() + "/docs/recipe.md");
    ASSERT_FALSE(doc.empty());
    for (const RecipeField& f : recipeFields()) {
        if (!f.isNumeric()) {
            continue;
        }
        ASSERT_NE(f.bound, nullptr) << f.path;
        EXPECT_NE(std::string_view(f.bound->reason), "") << f.path;
        EXPECT_NE(doc.find("| `" + std::string(f.bound->path) + "` |"), std::string::npos)
            << f.path << ": docs/recipe.md (Limits) does not list its bound";
    }
}

TEST(RecipeFields, EveryFieldWritesParsesAndRoundTrips) {
    const Recipe base = minimal();
    for (const RecipeField& f : recipeFields()) {
        SCOPED_TRACE(std::string(f.path));
        Recipe r = base;
        const FieldValue value = otherValue(f, base);
        f.set(r, value);
        ASSERT_EQ(f.get(r), value) << "set then get";
        ASSERT_NE(f.get(r), f.get(base));
        const std::string text = writeRecipe(r);
        EXPECT_NE(text.find(std::string(f.key) + ":"), std::string::npos) << text;
        auto again = parseRecipe(text, "field.yaml");
        ASSERT_TRUE(again.ok()) << again.error() << "\n" << text;
        EXPECT_EQ(f.get(*again), value) << text;
        EXPECT_EQ(*again, r) << text;
        EXPECT_EQ(writeRecipe(*again), text);
        EXPECT_TRUE(again->sources.contains(f.path)) << "no location recorded\n" << text;
        // Copying through the table moves exactly this field.
        Recipe copy = base;
        f.copy(r, copy);
        EXPECT_EQ(copy, r);
        // Optional fields unset again are not written.
        if (f.optional) {
            f.set(r, FieldValue{});
            EXPECT_EQ(r, base);
        }
    }
}

TEST(RecipeFields, WrongValueIsAnErrorAtItsLineAndColumn) {
    for (const RecipeField& f : recipeFields()) {
        if (f.bespokeYaml || f.kind == FieldKind::String || f.kind == FieldKind::StringList) {
            continue;  // any scalar is a string
        }
        SCOPED_TRACE(std::string(f.path));
        int line = 0;
        int column = 0;
        const std::string text =
            withField(f, f.key, f.kind == FieldKind::Enum ? "nonsense" : "{a: 1}", &line, &column);
        ParseOutcome out = parseRecipeDetailed(text, "wrong.yaml");
        ASSERT_FALSE(out.recipe.has_value()) << text;
        ASSERT_FALSE(out.diagnostics.empty());
        const ParseDiagnostic& d = out.diagnostics.front();
        EXPECT_EQ(d.path, f.path) << d.message;
        EXPECT_EQ(d.loc.line, line) << d.message;
        EXPECT_EQ(d.loc.column, column) << d.message;
        EXPECT_NE(d.message.find(std::string(f.path)), std::string::npos) << d.message;
        if (f.kind == FieldKind::Enum) {
            EXPECT_NE(d.message.find("expected one of: " + std::string(f.choices.front())),
                      std::string::npos)
                << d.message;
        }
    }
}

TEST(RecipeFields, MisspelledKeyOfEverySectionSuggestsTheField) {
    for (const RecipeField& f : recipeFields()) {
        if (f.bespokeYaml || f.section.empty() || std::string_view(f.key).size() < 6) {
            continue;  // short keys have too many neighbours for one suggestion
        }
        SCOPED_TRACE(std::string(f.path));
        std::string typo = f.key;
        typo.pop_back();  // one edit away from this key
        if (findRecipeField(std::string(f.section) + "." + typo) != nullptr) {
            continue;  // a key itself (rollout.engines -> engine)
        }
        const std::string text = withField(f, typo, "1");
        ParseOutcome out = parseRecipeDetailed(text, "typo.yaml");
        ASSERT_FALSE(out.diagnostics.empty()) << text;
        const std::string& m = out.diagnostics.front().message;
        EXPECT_NE(m.find("unknown key"), std::string::npos) << m;
        EXPECT_NE(m.find("did you mean '" + std::string(f.key) + "'"), std::string::npos) << m;
    }
}

TEST(RecipeFields, FieldValueText) {
    EXPECT_EQ(fieldValueText(FieldValue{}), "");
    EXPECT_EQ(fieldValueText(FieldValue{true}), "true");
    EXPECT_EQ(fieldValueText(FieldValue{0.8}), "0.8");
    EXPECT_EQ(fieldValueText(FieldValue{std::vector<int>{1, 2}}), "[1, 2]");
    const Recipe r = minimal();
    EXPECT_EQ(fieldValueText(recipeField("framework").get(r)), "slime");
    EXPECT_EQ(fieldValueText(recipeField("trainer.etp").get(r)), "");  // unset
}

// recipe_paths.h: the constants rules and flag rows name fields by are the table's own paths,
// one per row and in its order (the rows are built from them), and none of the parts is a row.
TEST(RecipePaths, EveryFieldConstantIsATableRowAndNoPartIs) {
    const auto table = recipeFields();
    ASSERT_EQ(table.size(), fields::kAll.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].path, fields::kAll[i].view()) << i;
        EXPECT_EQ(&recipeField(fields::kAll[i]), &table[i]);
    }
    std::set<std::string_view> seen;
    for (const FieldPath part : parts::kAll) {
        EXPECT_EQ(findRecipeField(part.view()), nullptr) << part.view();
        EXPECT_TRUE(seen.insert(part.view()).second) << part.view();
    }
}

// Every place a rule of the table points at is a field of the table or one of the parts (a
// rule's findings name it through the same constants: RuleContext::emit takes a FieldPath).
TEST(RecipePaths, EveryRuleNamesAFieldOfTheTableOrAPart) {
    for (const RuleInfo& rule : ruleTable()) {
        const bool isPart =
            std::find(parts::kAll.begin(), parts::kAll.end(), rule.field) != parts::kAll.end();
        EXPECT_TRUE(findRecipeField(rule.field.view()) != nullptr || isPart)
            << rule.id << " -> " << rule.field.view();
    }
}

}  // namespace
}  // namespace runplane::plan
