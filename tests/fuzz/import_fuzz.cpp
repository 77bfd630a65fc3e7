// The bash launch-script importer (read, never run) on fuzzer text, then the recipe it made
// through validate. The script lives in a folder that does not exist, so `source` reads nothing.
#include "backend/launch/launch.h"
#include "backend/plan/planner.h"
#include "tests/fuzz/fuzz_catalog.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    launch::ImportOptions options;
    options.catalog = &runplane::fuzz::catalog();
    auto imported = launch::importScriptText(text, "/nonexistent-runplane-fuzz/run.sh", options);
    if (!imported.ok()) {
        return 0;
    }
    (void)validate(imported->recipe, runplane::fuzz::catalog());
    (void)writeRecipe(imported->recipe);
    return 0;
}
