// The bash launch-script importer (read, never run) on fuzzer text, then the recipe it made
// through validate. The script lives in a folder that does not exist, so `source` reads nothing.
// The reader runs with a 4 MiB expansion budget instead of the product's 32 MiB: inputs grow into
// doubling and $(seq) scripts that spend the whole budget (0.1-1 s each under ASan); with 4 MiB
// they reach the same "exceed the reader's budget" finding after an eighth of the work. 4 MiB
// stays above the 1 MiB value limit (kMaxValueBytes) and the 600 KB of a $(seq 1 99999), so the
// limits checked before the budget remain reachable (docs/fuzzing.md).
#include "backend/launch/launch.h"
#include "backend/plan/planner.h"
#include "tests/fuzz/fuzz_catalog.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    launch::ImportOptions options;
    options.catalog = &runplane::fuzz::catalog();
    options.expansionBudget = std::uint64_t{4} << 20;
    auto imported = launch::importScriptText(text, "/nonexistent-runplane-fuzz/run.sh", options);
    if (!imported.ok()) {
        return 0;
    }
    (void)validate(imported->recipe, runplane::fuzz::catalog());
    (void)writeRecipe(imported->recipe);
    return 0;
}
