#include "backend/plan/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "backend/plan/detail/model_shape_yaml.h"
#include "backend/plan/detail/text_checks.h"
#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan {

Result<ModelShape> ModelCatalog::parseModel(std::string_view text, std::string_view fileName) {
    std::vector<ParseDiagnostic> diagnostics;
    SourceMap sources;
    ModelShape shape;
    try {
        const std::optional<YAML::Node> document = detail::loadSingleDocument(text, diagnostics);
        if (document.has_value()) {
            const YAML::Node& root = *document;
            detail::ParseContext ctx{&diagnostics, &sources};
            detail::MapReader r(ctx, root, "");
            int version = 0;
            r.get("schema_version", version);
            if (version != kRecipeSchemaVersion) {
                ctx.error("schema_version", sources.find("schema_version"),
                          "catalog files need 'schema_version: 1'");
            }
            detail::readModelShape(r, shape);
            r.finish();
            if (shape.name.empty()) {
                ctx.error("name", SourceLoc{1, 1}, "'name' is required");
            }
            if (shape.numLayers <= 0 || shape.hidden <= 0 || shape.numAttentionHeads <= 0 ||
                shape.vocabSize <= 0) {
                ctx.error(
                    "", SourceLoc{1, 1},
                    "num_layers, hidden_size, num_attention_heads and vocab_size are required");
            }
            for (auto& v : checkShapeLimits(shape, "")) {
                ctx.error(v.path, sources.find(v.path), std::move(v.message));
            }
            if (!shape.defaultVariant.empty() &&
                shape.findVariant(shape.defaultVariant) == nullptr) {
                ctx.error("default_variant", sources.find("default_variant"),
                          "default_variant '" + shape.defaultVariant + "' is not in variants");
            }
        }
    } catch (const YAML::Exception& e) {
        diagnostics.push_back({"", detail::locOf(e.mark), "YAML syntax error: " + e.msg});
    }
    if (!diagnostics.empty()) {
        return Error{formatDiagnostics(diagnostics, fileName)};
    }
    return shape;
}

Result<UnsizedModel> ModelCatalog::parseUnsizedModel(std::string_view text,
                                                     std::string_view fileName) {
    std::vector<ParseDiagnostic> diagnostics;
    SourceMap sources;
    UnsizedModel model;
    try {
        const std::optional<YAML::Node> document = detail::loadSingleDocument(text, diagnostics);
        if (document.has_value()) {
            detail::ParseContext ctx{&diagnostics, &sources};
            detail::MapReader r(ctx, *document, "");
            int version = 0;
            r.get("schema_version", version);
            if (version != kRecipeSchemaVersion) {
                ctx.error("schema_version", sources.find("schema_version"),
                          "catalog files need 'schema_version: 1'");
            }
            r.get("name", model.name);
            r.get("display_name", model.displayName);
            r.get("source", model.source);
            r.get("unsized", model.why);
            r.finish();
            if (model.name.empty() || model.source.empty() || model.why.empty()) {
                ctx.error("", SourceLoc{1, 1},
                          "a model the catalog cannot size needs name, source and unsized (why)");
            }
        }
    } catch (const YAML::Exception& e) {
        diagnostics.push_back({"", detail::locOf(e.mark), "YAML syntax error: " + e.msg});
    }
    if (!diagnostics.empty()) {
        return Error{formatDiagnostics(diagnostics, fileName)};
    }
    return model;
}

namespace {

// A top-level `unsized:` key (a line starting with it): the file is an UnsizedModel.
bool declaresUnsized(const std::string& text) {
    return text.rfind("unsized:", 0) == 0 || text.find("\nunsized:") != std::string::npos;
}

}  // namespace

Result<ModelCatalog> ModelCatalog::loadDirectory(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        return Error{dir + ": model catalog directory not found"};
    }
    std::vector<fs::path> files;
    // error_code overloads throughout: no filesystem_error may leave the library.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code fileEc;
        if (it->is_regular_file(fileEc) && it->path().extension() == ".yaml") {
            files.push_back(it->path());
        }
    }
    if (ec) {
        return Error{dir + ": cannot list the model catalog: " + ec.message()};
    }
    std::sort(files.begin(), files.end());
    ModelCatalog catalog;
    std::string errors;
    for (const auto& file : files) {
        Result<std::string> text = readRecipeText(file.string());  // bounded like a recipe
        if (text.ok() && declaresUnsized(*text)) {
            Result<UnsizedModel> unsized = parseUnsizedModel(*text, file.string());
            if (!unsized.ok()) {
                errors += errors.empty() ? "" : "\n";
                errors += unsized.error();
            } else if (catalog.find(unsized->name) != nullptr ||
                       catalog.findUnsized(unsized->name) != nullptr) {
                errors += errors.empty() ? "" : "\n";
                errors += file.string() + ": duplicate model name '" + unsized->name + "'";
            } else {
                catalog.addUnsized(std::move(unsized).value());
            }
            continue;
        }
        Result<ModelShape> shape =
            text.ok() ? parseModel(*text, file.string()) : Result<ModelShape>(Error{text.error()});
        if (!shape.ok()) {
            errors += errors.empty() ? "" : "\n";
            errors += shape.error();
            continue;
        }
        if (catalog.find(shape->name) != nullptr || catalog.findUnsized(shape->name) != nullptr) {
            errors += errors.empty() ? "" : "\n";
            errors += file.string() + ": duplicate model name '" + shape->name + "'";
            continue;
        }
        catalog.add(std::move(shape).value());
    }
    if (!errors.empty()) {
        return Error{errors};
    }
    return catalog;
}

void ModelCatalog::add(ModelShape shape) {
    for (auto& existing : m_models) {
        if (existing.name == shape.name) {
            existing = std::move(shape);
            return;
        }
    }
    m_models.push_back(std::move(shape));
}

void ModelCatalog::addUnsized(UnsizedModel model) {
    for (auto& existing : m_unsized) {
        if (existing.name == model.name) {
            existing = std::move(model);
            return;
        }
    }
    m_unsized.push_back(std::move(model));
}

const UnsizedModel* ModelCatalog::findUnsized(std::string_view name) const {
    for (const auto& model : m_unsized) {
        if (model.name == name) {
            return &model;
        }
    }
    return nullptr;
}

const ModelShape* ModelCatalog::find(std::string_view name) const {
    for (const auto& model : m_models) {
        if (model.name == name) {
            return &model;
        }
    }
    return nullptr;
}

Result<ModelShape> resolveModel(const Recipe& recipe, const ModelCatalog& catalog) {
    const ModelShape* base = nullptr;
    if (recipe.model.shape.has_value()) {
        base = &*recipe.model.shape;
    } else {
        base = catalog.find(recipe.model.name);
        if (base == nullptr) {
            std::vector<std::string_view> names;
            for (const auto& m : catalog.models()) {
                names.emplace_back(m.name);
            }
            std::string message = "unknown model '" + recipe.model.name + "'";
            const std::string hint = detail::closestMatch(recipe.model.name, names);
            if (!hint.empty()) {
                message += "; did you mean '" + hint + "'?";
            } else {
                message += " (not in the model catalog)";
            }
            return Error{message};
        }
    }
    if (!recipe.model.variant.empty() && base->findVariant(recipe.model.variant) == nullptr) {
        std::string list;
        for (const auto& v : base->variants) {
            list += list.empty() ? "" : ", ";
            list += v.name;
        }
        return Error{"model '" + base->name + "' has no variant '" + recipe.model.variant + "'" +
                     (list.empty() ? std::string(" (it has none)") : " (has: " + list + ")")};
    }
    return base->withVariant(recipe.model.variant);
}

std::vector<std::string> recipesDirCandidates(const std::string& executableDir) {
    std::vector<std::string> out;
    if (const char* env = std::getenv("RUNPLANE_RECIPES"); env != nullptr && *env != '\0') {
        out.emplace_back(env);
    }
    if (!executableDir.empty()) {
        out.push_back(executableDir + "/../../recipes");
        out.push_back(executableDir + "/../recipes");
        out.push_back(executableDir + "/../share/runplane/recipes");
    }
#ifdef RUNPLANE_SOURCE_RECIPES_DIR
    out.emplace_back(RUNPLANE_SOURCE_RECIPES_DIR);
#endif
    return out;
}

Result<std::string> locateRecipesDir(const std::string& executableDir) {
    std::string tried;
    for (const auto& candidate : recipesDirCandidates(executableDir)) {
        std::error_code ec;
        if (std::filesystem::is_directory(candidate + "/models", ec)) {
            return std::filesystem::weakly_canonical(candidate, ec).string();
        }
        tried += tried.empty() ? "" : ", ";
        tried += candidate;
    }
    return Error{"cannot find the recipes directory (with models/); tried: " + tried +
                 ". Set RUNPLANE_RECIPES."};
}

}  // namespace runplane::plan
