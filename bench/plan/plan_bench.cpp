// Planner benchmarks (issue 3). Run:
//   build/bench/plan/plan_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// BM_ValidateAndPlan_* is what the GUI does on every keystroke (no parsing: validate + layout +
// memory plan + topology); BM_ParseValidateAndPlan_* adds the YAML parse and is the reference
// the ratio in docs/performance.md is taken against.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/plan/planner.h"

namespace {

using namespace runplane::plan;

std::string sourceDir() {
    const char* dir = std::getenv("RUNPLANE_SOURCE_DIR");
    return dir != nullptr && *dir != '\0' ? dir : RUNPLANE_BENCH_SOURCE_DIR;
}

const ModelCatalog& catalog() {
    static const ModelCatalog instance = [] {
        auto loaded = ModelCatalog::loadDirectory(sourceDir() + "/recipes/models");
        if (!loaded.ok()) {
            std::fprintf(stderr, "%s\n", loaded.error().c_str());
            std::abort();
        }
        return std::move(loaded).value();
    }();
    return instance;
}

std::string readText(const std::string& relative) {
    std::ifstream in(sourceDir() + "/recipes/" + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

Recipe recipeOf(const std::string& relative) {
    auto r = parseRecipe(readText(relative), relative);
    if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.error().c_str());
        std::abort();
    }
    return std::move(r).value();
}

const char* kFull = "qwen3.8-2.4T-A95B-full.yaml";
const char* kDeepSeek = "known-good/slime-deepseek-r1.yaml";

void BM_ValidateAndPlan_Full(benchmark::State& state) {
    const Recipe recipe = recipeOf(kFull);
    for (auto _ : state) {
        Plan plan = planRecipe(recipe, catalog());
        benchmark::DoNotOptimize(plan);
    }
}
BENCHMARK(BM_ValidateAndPlan_Full)->Unit(benchmark::kMicrosecond);

void BM_ParseValidateAndPlan_Full(benchmark::State& state) {
    const std::string text = readText(kFull);
    for (auto _ : state) {
        auto recipe = parseRecipe(text, kFull);
        Plan plan = planRecipe(*recipe, catalog());
        benchmark::DoNotOptimize(plan);
    }
}
BENCHMARK(BM_ParseValidateAndPlan_Full)->Unit(benchmark::kMicrosecond);

void BM_MemoryPlanOnly_Full(benchmark::State& state) {
    const Recipe recipe = recipeOf(kFull);
    const ModelShape shape = *resolveModel(recipe, catalog());
    for (auto _ : state) {
        MemoryPlan plan = planMemory(recipe, shape);
        benchmark::DoNotOptimize(plan);
    }
}
BENCHMARK(BM_MemoryPlanOnly_Full)->Unit(benchmark::kMicrosecond);

void BM_ValidateAndPlan_DeepSeek128(benchmark::State& state) {
    const Recipe recipe = recipeOf(kDeepSeek);
    for (auto _ : state) {
        Plan plan = planRecipe(recipe, catalog());
        benchmark::DoNotOptimize(plan);
    }
}
BENCHMARK(BM_ValidateAndPlan_DeepSeek128)->Unit(benchmark::kMicrosecond);

void BM_WriteRecipe_Full(benchmark::State& state) {
    const Recipe recipe = recipeOf(kFull);
    for (auto _ : state) {
        std::string text = writeRecipe(recipe);
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_WriteRecipe_Full)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
