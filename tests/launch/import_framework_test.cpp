// Issue 15, "validate raises no false error on a valid public script": which framework an import
// reads (the script's text, else the checkout it lives in, else slime with framework_assumed, where
// a rule of one framework only is a warning naming both readings); miles' Inkling launcher's own
// decisions; a model file named through `echo | sed`; a model the catalog cannot size; miles'
// diffusion trainer's LoRA modules. Each with the near miss that still fails.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"
#ifdef RUNPLANE_HAVE_PLAN_RULES
#include "backend/plan/rules.h"
#endif

namespace runplane::plan::launch {
namespace {

// A slime-shaped script whose text names neither framework, with the trainer fault-tolerance
// path slime rejects (slime's `debug.recovery-rollout-path`; miles' public GLM scripts pass it).
const char* kNeutral =
    "#!/bin/bash\n"
    "set -ex\n"
    "MODEL_ARGS=(--num-layers 36 --hidden-size 2560)\n"
    "ray job submit --address=http://127.0.0.1:8265 -- python3 train.py \\\n"
    "   --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate \\\n"
    "   --save-debug-rollout-data data.pt \\\n"
    "   --hf-checkpoint /data/Qwen3-4B --ref-load /data/Qwen3-4B_torch_dist \\\n"
    "   --rollout-batch-size 32 --n-samples-per-prompt 8 --global-batch-size 256 \\\n"
    "   --num-rollout 10 ${MODEL_ARGS[@]}\n";

Result<ImportResult> importAt(const std::string& file, const std::string& text,
                              std::vector<std::pair<std::string, std::string>> env = {},
                              std::vector<std::string> sourceRoots = {}) {
    test::writeFile(file, text);
    ImportOptions options;
    options.catalog = &test::catalog();
    options.env = std::move(env);
    options.sourceRoots = std::move(sourceRoots);
    return importScript(file, options);
}

bool hasNote(const ImportResult& res, NoteLevel level, const std::string& field,
             const std::string& part) {
    return std::any_of(res.notes.begin(), res.notes.end(), [&](const LaunchNote& n) {
        return n.level == level && n.field == field && n.message.find(part) != std::string::npos;
    });
}

#ifdef RUNPLANE_HAVE_PLAN_RULES
const Finding* findingOf(const std::vector<Finding>& findings, const std::string& id) {
    for (const auto& f : findings) {
        if (f.ruleId == id) {
            return &f;
        }
    }
    return nullptr;
}

std::vector<Finding> errorsOf(const Recipe& r) {
    std::vector<Finding> out;
    for (const Finding& f : validate(r, test::catalog())) {
        if (f.severity == Severity::Error) {
            out.push_back(f);
        }
    }
    return out;
}

std::string describe(const std::vector<Finding>& findings) {
    std::string out;
    for (const auto& f : findings) {
        out += f.ruleId + ": " + f.message + "\n";
    }
    return out;
}
#endif

TEST(ImportFramework, TheCheckoutAScriptLivesInDecidesWhereItsTextDoesNot) {
    test::TempDir dir;
    auto miles = importAt(dir.file("miles/scripts/run.sh"), kNeutral);
    ASSERT_TRUE(miles.ok()) << miles.error();
    EXPECT_EQ(miles->recipe.framework, Framework::Miles);
    EXPECT_FALSE(miles->recipe.frameworkAssumed);
    EXPECT_TRUE(hasNote(*miles, NoteLevel::Info, "framework", "whose name says miles"));
    // a downloaded copy's folder (owner__repo) says it too
    auto copy = importAt(dir.file("radixark__miles/scripts/run.sh"), kNeutral);
    ASSERT_TRUE(copy.ok());
    EXPECT_EQ(copy->recipe.framework, Framework::Miles);
    // a checkout's root holding the framework's package, whatever its folder's name
    test::writeFile(dir.file("work/slime/__init__.py"), "");
    auto slime = importAt(dir.file("work/scripts/run.sh"), kNeutral);
    ASSERT_TRUE(slime.ok());
    EXPECT_EQ(slime->recipe.framework, Framework::Slime);
    EXPECT_FALSE(slime->recipe.frameworkAssumed);
    EXPECT_TRUE(hasNote(*slime, NoteLevel::Info, "framework", "slime/ package"));
    // the script's own word beats its folder: a miles path in a slime checkout
    std::string withPath = kNeutral;
    withPath.replace(withPath.find("data.pt"), 7, "/mnt/github-miles/data.pt");
    auto worded = importAt(dir.file("work/scripts/run2.sh"), withPath);
    ASSERT_TRUE(worded.ok());
    EXPECT_EQ(worded->recipe.framework, Framework::Miles);
    EXPECT_TRUE(hasNote(*worded, NoteLevel::Info, "framework", "names a miles path"));
    // nothing decides: slime, assumed
    auto neutral = importAt(dir.file("plain/run.sh"), kNeutral);
    ASSERT_TRUE(neutral.ok());
    EXPECT_EQ(neutral->recipe.framework, Framework::Slime);
    EXPECT_TRUE(neutral->recipe.frameworkAssumed);
    EXPECT_TRUE(hasNote(*neutral, NoteLevel::Info, "framework", "framework_assumed"));
    // --framework decides
    ImportOptions options;
    options.catalog = &test::catalog();
    options.framework = Framework::Miles;
    auto chosen = importScript(dir.file("plain/run.sh"), options);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(chosen->recipe.framework, Framework::Miles);
    EXPECT_FALSE(chosen->recipe.frameworkAssumed);
}

TEST(ImportFramework, ARuleOfOneFrameworkWarnsWhenTheFrameworkIsAssumed) {
#ifdef RUNPLANE_HAVE_PLAN_RULES
    test::TempDir dir;
    auto neutral = importAt(dir.file("plain/run.sh"), kNeutral);
    ASSERT_TRUE(neutral.ok());
    Recipe r = neutral->recipe;
    r.model.name = "qwen3-4B";
    const auto assumed = validate(r, test::catalog());
    const Finding* f = findingOf(assumed, "debug.recovery-rollout-path");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warning);
    EXPECT_NE(f->message.find("read as slime this is an error, read as miles the rule does not "
                              "apply"),
              std::string::npos)
        << f->message;
    EXPECT_TRUE(errorsOf(r).empty()) << describe(errorsOf(r));
    // the same script under a slime checkout: slime's error
    auto slime = importAt(dir.file("slime/scripts/run.sh"), kNeutral);
    ASSERT_TRUE(slime.ok());
    Recipe s = slime->recipe;
    s.model.name = "qwen3-4B";
    const auto slimeFindings = validate(s, test::catalog());
    const Finding* e = findingOf(slimeFindings, "debug.recovery-rollout-path");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->severity, Severity::Error);
    // under a miles checkout: no such rule
    auto miles = importAt(dir.file("miles/scripts/run.sh"), kNeutral);
    ASSERT_TRUE(miles.ok());
    Recipe m = miles->recipe;
    m.model.name = "qwen3-4B";
    EXPECT_EQ(findingOf(validate(m, test::catalog()), "debug.recovery-rollout-path"), nullptr);
    // the known-invalid GLM-4.7-30B-A3B expert grid still fails: read as slime (its
    // `--load /root/GLM-4.7-Flash_slime/` names a slime path), and with the framework assumed
    // (the same script without that word), since the grid is a rule of both
    ImportOptions options;
    options.catalog = &test::catalog();
    auto glm = importScript(test::dataDir() + "/run-glm4.7-30B-A3B.sh", options);
    ASSERT_TRUE(glm.ok());
    EXPECT_EQ(glm->recipe.framework, Framework::Slime);
    EXPECT_FALSE(glm->recipe.frameworkAssumed);
    const auto glmFindings = validate(glm->recipe, test::catalog());
    const Finding* grid = findingOf(glmFindings, "trainer.expert-grid");
    ASSERT_NE(grid, nullptr);
    EXPECT_EQ(grid->severity, Severity::Error);
    std::string neutralGlm = test::readFile(test::dataDir() + "/run-glm4.7-30B-A3B.sh");
    for (auto at = neutralGlm.find("_slime"); at != std::string::npos;
         at = neutralGlm.find("_slime")) {
        neutralGlm.replace(at, 6, "_ckpt");
    }
    test::writeFile(dir.file("plain/models/glm4.7-30B-A3B.sh"),
                    test::readFile(test::dataDir() + "/models/glm4.7-30B-A3B.sh"));
    auto assumedGlm = importAt(dir.file("plain/run-glm.sh"), neutralGlm);
    ASSERT_TRUE(assumedGlm.ok()) << assumedGlm.error();
    EXPECT_TRUE(assumedGlm->recipe.frameworkAssumed);
    const auto assumedFindings = validate(assumedGlm->recipe, test::catalog());
    const Finding* assumedGrid = findingOf(assumedFindings, "trainer.expert-grid");
    ASSERT_NE(assumedGrid, nullptr);
    EXPECT_EQ(assumedGrid->severity, Severity::Error);
#else
    GTEST_SKIP() << "validate() is not built";
#endif
}

TEST(ImportFramework, InklingLauncherDecidesItsOwnLayout) {
    ImportOptions options;
    options.catalog = &test::catalog();
    options.env = {{"MASTER_ADDR", "10.0.0.1"}};
    auto full = importScript(test::dataDir() + "/run-inkling-style.sh", options);
    ASSERT_TRUE(full.ok()) << full.error();
    const Recipe& r = full->recipe;
    EXPECT_EQ(r.framework, Framework::Miles);
    EXPECT_EQ(r.model.name, "inkling-small");
    EXPECT_EQ(r.placement, Placement::Colocate);
    EXPECT_EQ(r.cluster.nodes, 4);
    EXPECT_EQ(r.hardware.gpusPerNode, 8);
    EXPECT_EQ(r.batch.nSamplesPerPrompt, 8);
    EXPECT_EQ(r.batch.numRollout, 100);
    EXPECT_EQ(r.batch.rolloutBatchSize, 64);  // the command's, not the launcher's 32
    EXPECT_EQ(r.batch.globalBatchSize, 128);
    EXPECT_EQ(r.rollout.maxResponseLen, 2048);
    EXPECT_EQ(r.trainer.tp, 4);
    EXPECT_EQ(r.trainer.pp, 8);
    EXPECT_EQ(r.trainer.ep, 4);
    EXPECT_EQ(r.trainer.decoderLastPipelineNumLayers, 7);
    EXPECT_TRUE(r.trainer.sequenceParallel);
    EXPECT_TRUE(r.trainer.recompute);
    EXPECT_EQ(r.rollout.gpusPerEngine, 16);
    EXPECT_DOUBLE_EQ(r.rollout.memFraction, 0.7);  // --extra-args win over the launcher's 0.6
    EXPECT_EQ(r.memory.offloadTrainTarget, OffloadTarget::Cpu);  // likewise
    EXPECT_EQ(r.lora.rank, 0);
    EXPECT_TRUE(hasNote(*full, NoteLevel::Info, "launcher.script", "8 samples per prompt"));

    options.env.emplace_back("MODE", "lora");
    auto lora = importScript(test::dataDir() + "/run-inkling-style.sh", options);
    ASSERT_TRUE(lora.ok()) << lora.error();
    EXPECT_EQ(lora->recipe.lora.rank, 32);
    EXPECT_EQ(lora->recipe.lora.targetModules, std::vector<std::string>{"all-linear"});
    EXPECT_TRUE(lora->recipe.batch.dynamicBatchSize);
    EXPECT_EQ(lora->recipe.rollout.epSize, 16);
#ifdef RUNPLANE_HAVE_PLAN_RULES
    EXPECT_TRUE(errorsOf(full->recipe).empty()) << describe(errorsOf(full->recipe));
    EXPECT_TRUE(errorsOf(lora->recipe).empty()) << describe(errorsOf(lora->recipe));
#endif
    // a node count its profile table lacks: the launcher raises there, the import says so
    test::TempDir dir;
    std::string text = test::readFile(test::dataDir() + "/run-inkling-style.sh");
    text.replace(text.find("--num-nodes 4"), 13, "--num-nodes 3");
    auto odd = importAt(dir.file("scripts/run.sh"), text, {{"MASTER_ADDR", "10.0.0.1"}});
    ASSERT_TRUE(odd.ok()) << odd.error();
    EXPECT_TRUE(hasNote(*odd, NoteLevel::Warning, "trainer.tp", "NotImplementedError"));
    EXPECT_EQ(odd->recipe.trainer.tp, 1);
}

TEST(ImportFramework, ModelFileNamedBySedAndAModelTheCatalogCannotSize) {
    test::TempDir dir;
    // slime's geo3k examples: the model file's name computed from the model's
    test::writeFile(dir.file("scripts/models/qwen3-8B.sh"),
                    "MODEL_ARGS=(--num-layers 36 --hidden-size 4096 --ffn-hidden-size 12288 "
                    "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
                    "--kv-channels 128 --vocab-size 151936 --swiglu)\n");
    auto geo = importAt(
        dir.file("examples/geo/run.sh"),
        "MODEL_NAME=${MODEL_NAME:-\"Qwen3-VL-8B-Instruct\"}\n"
        "ROOT=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")/../..\" &>/dev/null && pwd)\"\n"
        "F=$(echo \"$MODEL_NAME\" | sed 's/-Instruct//g; s/-Thinking//g; s/Qwen3-VL-/qwen3-/g')\n"
        "source \"${ROOT}/scripts/models/${F}.sh\"\n"
        "python3 train.py --colocate --rollout-batch-size 8 --n-samples-per-prompt 4 "
        "--global-batch-size 32 --num-rollout 3 \"${MODEL_ARGS[@]}\"\n",
        {}, {dir.path()});
    ASSERT_TRUE(geo.ok()) << geo.error();
    EXPECT_EQ(geo->recipe.model.name, "qwen3-8B");
    // miles: the model arguments of a model the catalog knows only by name
    auto nano = importAt(
        dir.file("scripts/run-nano.sh"),
        "SCRIPT_DIR=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" &>/dev/null && pwd)\"\n"
        "MODEL_ARGS_LINE=\"$(python3 \"${SCRIPT_DIR}/../miles/utils/external_utils/"
        "model_args_utils.py\" \"nemotron-3-nano-4b\")\"\n"
        "read -ra MODEL_ARGS <<< \"${MODEL_ARGS_LINE}\"\n"
        "python3 train.py --colocate --rollout-batch-size 8 --n-samples-per-prompt 4 "
        "--global-batch-size 32 --num-rollout 3 ${MODEL_ARGS[@]}\n");
    ASSERT_TRUE(nano.ok()) << nano.error();
    EXPECT_EQ(nano->recipe.model.name, "nemotron-3-nano-4b");
    EXPECT_FALSE(hasNote(*nano, NoteLevel::Warning, "model.name", "names no model"));
#ifdef RUNPLANE_HAVE_PLAN_RULES
    const auto geoFindings = validate(geo->recipe, test::catalog());
    EXPECT_EQ(findingOf(geoFindings, "model.unknown"), nullptr) << describe(geoFindings);
    const auto nanoFindings = validate(nano->recipe, test::catalog());
    EXPECT_TRUE(errorsOf(nano->recipe).empty()) << describe(nanoFindings);
    const Finding* unsized = findingOf(nanoFindings, "model.unsized");
    ASSERT_NE(unsized, nullptr);
    EXPECT_EQ(unsized->severity, Severity::Warning);
    EXPECT_NE(unsized->message.find("Mamba-2"), std::string::npos) << unsized->message;
#endif
}

TEST(ImportFramework, MilesDiffusionTrainerLoraNeedsNoModules) {
#ifdef RUNPLANE_HAVE_PLAN_RULES
    test::TempDir dir;
    const std::string script =
        "ROOT_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")/..\" && pwd)\"\n"
        "python -u \"${ROOT_DIR}/train_diffusion.py\" --train-backend fsdp --diffusion-train \\\n"
        "  --rollout-function-path miles.rollout.sglang_diffusion_rollout.generate_rollout \\\n"
        "  --hf-checkpoint gpt2 --rollout-batch-size 1 --n-samples-per-prompt 8 \\\n"
        "  --num-rollout 100 --actor-num-gpus-per-node 2 --num-gpus-per-node 2 --colocate \\\n"
        "  --use-lora --lora-rank 64 --lora-alpha 128 --diffusion-model Qwen/Qwen-Image \\\n"
        "  --global-batch-size 8\n";
    auto res = importAt(dir.file("miles/scripts/run-diffusion.sh"), script);
    ASSERT_TRUE(res.ok()) << res.error();
    EXPECT_EQ(res->recipe.framework, Framework::Miles);
    EXPECT_EQ(res->recipe.lora.rank, 64);
    const auto picked = validate(res->recipe, test::catalog());
    EXPECT_EQ(findingOf(picked, "lora.target-modules"), nullptr);
    // nothing says miles: the diffusion trainer is miles', so a warning naming both readings
    auto assumed = importAt(dir.file("plain/run-diffusion.sh"), script);
    ASSERT_TRUE(assumed.ok());
    EXPECT_TRUE(assumed->recipe.frameworkAssumed);
    const auto assumedFindings = validate(assumed->recipe, test::catalog());
    const Finding* warned = findingOf(assumedFindings, "lora.target-modules");
    ASSERT_NE(warned, nullptr);
    EXPECT_EQ(warned->severity, Severity::Warning);
    std::string plain = script;  // without --diffusion-train the modules are missing
    plain.erase(plain.find(" --diffusion-train"), 18);
    auto without = importAt(dir.file("miles/scripts/run-plain.sh"), plain);
    ASSERT_TRUE(without.ok());
    const auto withoutFindings = validate(without->recipe, test::catalog());
    const Finding* missing = findingOf(withoutFindings, "lora.target-modules");
    ASSERT_NE(missing, nullptr);
    EXPECT_EQ(missing->severity, Severity::Error);
#else
    GTEST_SKIP() << "validate() is not built";
#endif
}

}  // namespace
}  // namespace runplane::plan::launch
