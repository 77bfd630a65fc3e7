#include "tests/plan/test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace runplane::plan::test {

std::string sourceDir() {
    if (const char* dir = std::getenv("RUNPLANE_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    return RUNPLANE_TEST_SOURCE_DIR;
}

std::string recipesDir() {
    return sourceDir() + "/recipes";
}

const ModelCatalog& catalog() {
    static const ModelCatalog instance = [] {
        auto loaded = ModelCatalog::loadDirectory(recipesDir() + "/models");
        if (!loaded.ok()) {
            std::fprintf(stderr, "cannot load the model catalog: %s\n", loaded.error().c_str());
            std::abort();
        }
        return std::move(loaded).value();
    }();
    return instance;
}

Recipe loadShipped(const std::string& relative) {
    auto recipe = loadRecipe(recipesDir() + "/" + relative);
    if (!recipe.ok()) {
        ADD_FAILURE() << recipe.error();
        return Recipe{};
    }
    return std::move(recipe).value();
}

}  // namespace runplane::plan::test
