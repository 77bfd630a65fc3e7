// Round trips (issue 4): import(export(r)) == r for every shipped recipe and for a recipe that
// sets every field, in each flavour; export(import(s)) has the flag multiset of s for the test
// scripts; unmapped flags are exported again unchanged.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "backend/launch/export_plan.h"
#include "backend/launch/launch.h"
#include "backend/launch/shell_text.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

namespace fs = std::filesystem;

Recipe kitchenSink(Framework framework, bool milesBash = false) {
    auto r = loadRecipe(test::dataDir() + "/kitchen-sink.yaml");
    EXPECT_TRUE(r.ok()) << r.error();
    Recipe recipe = r.ok() ? *r : Recipe{};
    recipe.framework = framework;
    if (framework == Framework::Miles && !milesBash) {
        recipe.launcher.script = "scripts/run_kitchen.py";
        recipe.extraArgs.push_back({"--extra-args", {"--foo 'a b'"}, "x.sh:3"});
    }
    if (milesBash) {
        recipe.launcher.kind = LauncherKind::SlimeBash;
    }
    return recipe;
}

/// Exports r into dir (with the test model files) and imports the job script again.
ImportResult exportThenImport(const Recipe& r, Flavour flavour, const std::string& dir,
                              std::vector<std::pair<std::string, std::string>> env = {}) {
    ExportOptions eo;
    eo.catalog = &test::catalog();
    auto bundle = exportLaunch(r, flavour, eo);
    EXPECT_TRUE(bundle.ok()) << bundle.error();
    if (!bundle.ok()) {
        return {};
    }
    EXPECT_TRUE(writeBundle(*bundle, dir).ok());
    fs::copy(test::dataDir() + "/models", dir + "/models",
             fs::copy_options::recursive | fs::copy_options::skip_existing);
    ImportOptions io;
    io.catalog = &test::catalog();
    io.env = std::move(env);
    auto back = importScript(dir + "/" + bundle->jobScript, io);
    EXPECT_TRUE(back.ok()) << back.error();
    return back.ok() ? *back : ImportResult{};
}

void expectSameRecipe(const Recipe& want, const ImportResult& got) {
    EXPECT_TRUE(got.hadMeta);
    EXPECT_EQ(writeRecipe(got.recipe), writeRecipe(want));
    EXPECT_TRUE(got.recipe == want);
    for (const auto& n : got.notes) {
        EXPECT_NE(n.level, NoteLevel::Error) << n.format();
    }
}

TEST(RoundTrip, ImportOfExportIsTheShippedRecipe) {
    const auto files = test::shippedRecipeFiles();
    ASSERT_FALSE(files.empty());
    for (const auto& file : files) {
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok()) << r.error();
        SCOPED_TRACE(file);
        test::TempDir dir;
        expectSameRecipe(*r, exportThenImport(*r, flavourOf(r->framework), dir.path()));
        test::TempDir dir2;  // the head address given: the runtime-env JSON is read too
        expectSameRecipe(
            *r, exportThenImport(*r, flavourOf(r->framework), dir2.path(),
                                 {{"MASTER_ADDR", "10.0.0.1"}, {"NCCL_SOCKET_IFNAME", "eth0"}}));
    }
}

TEST(RoundTrip, ImportOfExportKeepsEveryFieldInEachFlavour) {
    const std::vector<std::pair<Recipe, Flavour>> cases = {
        {kitchenSink(Framework::Slime), Flavour::Slime},
        {kitchenSink(Framework::Vime), Flavour::Vime},
        {kitchenSink(Framework::Miles), Flavour::Miles},
        {kitchenSink(Framework::Miles, /*milesBash=*/true), Flavour::Miles},
    };
    for (const auto& [recipe, flavour] : cases) {
        SCOPED_TRACE(std::string(toString(flavour)) + " / launcher " +
                     toString(effectiveLauncher(recipe)));
        test::TempDir dir;
        expectSameRecipe(recipe, exportThenImport(recipe, flavour, dir.path()));
        // and on one node, where the job script starts Ray itself
        Recipe single = recipe;
        single.cluster.nodes = 1;
        single.trainer.nodes = 1;
        single.rollout.numGpus.reset();
        single.placement = Placement::Colocate;
        test::TempDir dir2;
        expectSameRecipe(single, exportThenImport(single, flavour, dir2.path()));
    }
}

TEST(RoundTrip, MinimalRecipeStaysMinimal) {
    auto r = parseRecipe(
        "schema_version: 1\nframework: slime\nmodel: qwen3-4B\nbatch:\n"
        "  rollout_batch_size: 8\n",
        "min.yaml");
    ASSERT_TRUE(r.ok());
    for (Flavour f : {Flavour::Slime, Flavour::Vime, Flavour::Miles}) {
        Recipe recipe = *r;
        recipe.framework = f == Flavour::Slime
                               ? Framework::Slime
                               : (f == Flavour::Vime ? Framework::Vime : Framework::Miles);
        if (f == Flavour::Miles) {
            recipe.launcher.kind = LauncherKind::SlimeBash;
        }
        test::TempDir dir;
        expectSameRecipe(recipe, exportThenImport(recipe, f, dir.path()));
    }
}

// A flag with its values; numbers compare by value (0.00 == 0, 1e-5 == 1e-05).
std::string key(const ScriptFlag& f) {
    std::string k = (f.inExtraArgs ? "extra:" : "") + f.flag;
    for (const auto& v : f.values) {
        auto d = detail::parseDouble(v);
        k += " " + (d ? detail::formatDouble(*d) : v);
    }
    return k;
}

std::map<std::string, int> multiset(const std::vector<ScriptFlag>& flags) {
    std::map<std::string, int> m;
    for (const auto& f : flags) {
        ++m[key(f)];
    }
    return m;
}

struct ScriptCase {
    std::string script;
    std::vector<std::pair<std::string, std::string>> env;
    std::string model;
};

TEST(RoundTrip, ExportOfImportHasTheScriptsFlagMultiset) {
    const std::vector<ScriptCase> cases = {
        {"run-qwen3-4B.sh", {}, ""},
        {"run-glm4.7-30B-A3B.sh", {}, ""},
        {"run-qwen3-30B-A3B-vime.sh", {}, ""},
        {"run-qwen3-30B-A3B-vime.sh", {{"ENABLE_R3", "0"}}, ""},
        {"run-qwen3-30B-A3B-vime.sh",
         {{"ACTOR_NUM_NODES", "2"}, {"MASTER_ADDR", "10.0.0.1"}, {"NCCL_SOCKET_IFNAME", "eth0"}},
         ""},
        {"run-qwen3.8-2.4T-miles.sh",
         {{"MASTER_ADDR", "10.0.0.1"}, {"NCCL_SOCKET_IFNAME", "eth0"}},
         "qwen3.8-2.4T-A95B"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.script);
        ImportOptions io;
        io.catalog = &test::catalog();
        io.env = c.env;
        io.modelName = c.model;
        auto first = importScript(test::dataDir() + "/" + c.script, io);
        ASSERT_TRUE(first.ok()) << first.error();
        ASSERT_FALSE(first->flags.empty());
        test::TempDir dir;
        const ImportResult again =
            exportThenImport(first->recipe, flavourOf(first->recipe.framework), dir.path(), c.env);
        const auto want = multiset(first->flags);
        const auto got = multiset(again.flags);
        for (const auto& [k, n] : want) {
            EXPECT_EQ(got.count(k) ? got.at(k) : 0, n) << "missing after export: " << k;
        }
        for (const auto& [k, n] : got) {
            // a miles launcher's own engine memory fraction is passed explicitly (and only that)
            const bool launcherDefault = c.script == "run-qwen3.8-2.4T-miles.sh" &&
                                         k == "extra:--sglang-mem-fraction-static 0.7" &&
                                         !want.count(k) && n == 1;
            EXPECT_EQ(want.count(k) ? want.at(k) : 0, launcherDefault ? 0 : n)
                << "added by export: " << k;
        }
        // and the recipe read back is the same recipe
        EXPECT_EQ(writeRecipe(again.recipe), writeRecipe(first->recipe));
    }
}

TEST(RoundTrip, UnmappedFlagsAreExportedAgainUnchangedWithTheirSource) {
    ImportOptions io;
    io.catalog = &test::catalog();
    auto first = importScript(test::dataDir() + "/run-qwen3-4B.sh", io);
    ASSERT_TRUE(first.ok());
    auto bundle = exportLaunch(first->recipe, Flavour::Slime);
    ASSERT_TRUE(bundle.ok());
    const std::string& job = bundle->files[0].content;
    const std::string src = test::dataDir() + "/run-qwen3-4B.sh";
    EXPECT_NE(
        job.find("   --log-dir '/root/logs/qwen3 4B run'  # runplane:source=\"" + src + ":123\""),
        std::string::npos)
        << job;
    EXPECT_NE(job.find("   --adam-beta2 0.98  # runplane:source=\"" + src + ":99\""),
              std::string::npos)
        << job;
}

}  // namespace
}  // namespace runplane::plan::launch
