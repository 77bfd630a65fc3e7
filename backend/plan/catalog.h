#pragma once
// ModelCatalog: the model shapes of recipes/models/*.yaml, looked up by name. Loaded once from an
// explicit directory, then read-only: share one instance across threads freely.

#include <string>
#include <string_view>
#include <vector>

#include "backend/plan/model_shape.h"
#include "backend/plan/recipe.h"
#include "common/result.h"

namespace runplane::plan {

/// A model the catalog knows by name but cannot size: its architecture is outside what a
/// ModelShape expresses (e.g. a hybrid of Mamba-2, attention and MoE layers). A catalog file with
/// an `unsized: WHY` key; validate says so as a warning instead of "unknown model".
struct UnsizedModel {
    std::string name;
    std::string displayName;
    std::string source;
    std::string why;
};

class ModelCatalog {
  public:
    /// Loads every *.yaml in dir (sorted by file name); errors name file:line:col.
    static Result<ModelCatalog> loadDirectory(const std::string& dir);
    /// Parses one catalog file (schema_version 1 + a model shape).
    static Result<ModelShape> parseModel(std::string_view text, std::string_view fileName);
    /// Parses one catalog file of a model it cannot size (schema_version 1, name, display_name,
    /// source, unsized).
    static Result<UnsizedModel> parseUnsizedModel(std::string_view text, std::string_view fileName);

    /// Adds or replaces a shape (by name).
    void add(ModelShape shape);
    const ModelShape* find(std::string_view name) const;
    const std::vector<ModelShape>& models() const { return m_models; }
    /// Adds or replaces a model the catalog cannot size (by name).
    void addUnsized(UnsizedModel model);
    const UnsizedModel* findUnsized(std::string_view name) const;
    const std::vector<UnsizedModel>& unsizedModels() const { return m_unsized; }

  private:
    std::vector<ModelShape> m_models;
    std::vector<UnsizedModel> m_unsized;
};

/// The recipe's model: its inline shape, else the catalog entry, with the variant applied.
/// Errors name the unknown model (with a "did you mean") or variant.
Result<ModelShape> resolveModel(const Recipe& recipe, const ModelCatalog& catalog);

/// Directories to look for recipes in, best first: $RUNPLANE_RECIPES, then relative to the
/// executable's directory (../../recipes, ../recipes, ../share/runplane/recipes), then the
/// source tree this library was built from.
std::vector<std::string> recipesDirCandidates(const std::string& executableDir);
/// The first candidate that holds a models/ folder, or an error listing the places tried.
Result<std::string> locateRecipesDir(const std::string& executableDir);

}  // namespace runplane::plan
