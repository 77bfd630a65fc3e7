#pragma once
// The shipped model catalog for the recipe and import targets, loaded once per process. The
// recipes folder is $RUNPLANE_FUZZ_RECIPES_DIR when set (a fuzzer copied away from its source
// tree, e.g. to a bigger machine), else the tree the target was built from.
#include <cstdlib>
#include <string>

#include "backend/plan/planner.h"

namespace runplane::fuzz {

inline const plan::ModelCatalog& catalog() {
    static const plan::ModelCatalog instance = [] {
        const char* env = std::getenv("RUNPLANE_FUZZ_RECIPES_DIR");
        const std::string dir = env != nullptr && *env != '\0' ? env : RUNPLANE_FUZZ_RECIPES_DIR;
        auto loaded = plan::ModelCatalog::loadDirectory(dir + "/models");
        if (!loaded.ok()) {
            std::abort();  // the shipped catalog must load
        }
        return std::move(loaded).value();
    }();
    return instance;
}

}  // namespace runplane::fuzz
