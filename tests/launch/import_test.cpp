// Import of the launch scripts in data/ (written in the style of the frameworks' public scripts):
// fields, extra_args with source lines, notes on what was not understood, --env decisions, and
// the GLM-4.7-30B-A3B expert grid through the planner's validate() (issue 4).

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"
#ifdef RUNPLANE_HAVE_PLAN_RULES
#include "backend/plan/rules.h"
#endif

namespace runplane::plan::launch {
namespace {

ImportResult importData(const std::string& name,
                        std::vector<std::pair<std::string, std::string>> env = {},
                        std::string model = "") {
    ImportOptions options;
    options.env = std::move(env);
    options.catalog = &test::catalog();
    options.modelName = std::move(model);
    auto r = importScript(test::dataDir() + "/" + name, options);
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? *r : ImportResult{};
}

const ExtraArg* extra(const Recipe& r, const std::string& flag) {
    for (const auto& e : r.extraArgs) {
        if (e.flag == flag) {
            return &e;
        }
    }
    return nullptr;
}

std::vector<int> linesAt(const std::vector<LaunchNote>& notes, NoteLevel level) {
    std::vector<int> lines;
    for (const auto& n : notes) {
        if (n.level == level) {
            lines.push_back(n.line);
        }
    }
    return lines;
}

TEST(Import, SlimeStyleQwen3_4B) {
    const ImportResult res = importData("run-qwen3-4B.sh");
    const Recipe& r = res.recipe;
    EXPECT_FALSE(res.hadMeta);
    EXPECT_EQ(res.program, "train.py");
    EXPECT_EQ(r.framework, Framework::Slime);
    EXPECT_EQ(r.model.name, "qwen3-4B");
    EXPECT_EQ(r.placement, Placement::Colocate);
    EXPECT_EQ(r.cluster.nodes, 1);
    EXPECT_FALSE(r.trainer.nodes.has_value());
    EXPECT_EQ(r.hardware.gpusPerNode, 8);
    EXPECT_FALSE(r.trainer.gpusPerNode.has_value());
    EXPECT_EQ(r.trainer.tp, 2);
    EXPECT_TRUE(r.trainer.sequenceParallel);
    EXPECT_EQ(r.trainer.etp, 1);
    EXPECT_TRUE(r.trainer.recompute);
    EXPECT_EQ(r.batch.rolloutBatchSize, 32);
    EXPECT_EQ(r.batch.nSamplesPerPrompt, 8);
    EXPECT_EQ(r.batch.globalBatchSize, 256);  // $((32 * 8))
    EXPECT_TRUE(r.batch.dynamicBatchSize);
    EXPECT_EQ(r.batch.maxTokensPerGpu, 9216);
    EXPECT_EQ(r.batch.numRollout, 3000);
    EXPECT_EQ(r.rollout.gpusPerEngine, 2);
    EXPECT_DOUBLE_EQ(r.rollout.memFraction, 0.7);
    EXPECT_DOUBLE_EQ(r.rollout.temperature, 0.8);
    EXPECT_EQ(r.rollout.maxResponseLen, 8192);
    EXPECT_EQ(r.eval.interval, 20);
    ASSERT_EQ(r.eval.datasets.size(), 1u);
    EXPECT_EQ(r.eval.datasets[0].name, "aime");
    EXPECT_EQ(r.eval.nSamplesPerEvalPrompt, 16);
    EXPECT_EQ(r.checkpoints.hfCheckpoint, "/root/Qwen3-4B");
    EXPECT_EQ(r.checkpoints.saveInterval, 20);
    EXPECT_TRUE(r.algorithm.useKlLoss);
    EXPECT_EQ(r.algorithm.klLossType, "low_var_kl");
    EXPECT_EQ(r.algorithm.epsClipHigh, 0.28);
    EXPECT_DOUBLE_EQ(r.algorithm.lr, 1e-6);
    // the environment the script pins; MASTER_ADDR is a ${MASTER_ADDR:-...} parameter
    // NCCL_NVLS_ENABLE as the script sets it: the NVLink probe's ${HAS_NVLINK}
    EXPECT_EQ(r.environment.env,
              (std::vector<std::pair<std::string, std::string>>{
                  {"PYTHONBUFFERED", "16"}, {"NCCL_NVLS_ENABLE", "${HAS_NVLINK}"}}));
    EXPECT_TRUE(r.cluster.masterAddr.empty());
    // unmapped flags are kept verbatim with their source line
    ASSERT_NE(extra(r, "--prompt-data"), nullptr);
    EXPECT_EQ(extra(r, "--prompt-data")->source, test::dataDir() + "/run-qwen3-4B.sh:42");
    EXPECT_EQ(extra(r, "--prompt-data")->values,
              std::vector<std::string>{"/root/dapo-math-17k/dapo-math-17k.jsonl"});
    ASSERT_NE(extra(r, "--log-dir"), nullptr);
    EXPECT_EQ(extra(r, "--log-dir")->values, std::vector<std::string>{"/root/logs/qwen3 4B run"});
    ASSERT_NE(extra(r, "--eval-top-p"), nullptr);
    ASSERT_NE(extra(r, "--adam-beta2"), nullptr);
    EXPECT_EQ(extra(r, "--num-layers"), nullptr);  // MODEL_ARGS belong to the model
    // the $(nvidia-smi ...) probe and the if block deciding on it are pre-launch steps
    EXPECT_TRUE(linesAt(res.notes, NoteLevel::Warning).empty());
    ASSERT_EQ(r.launcher.preLaunch.size(), 2u);
    EXPECT_EQ(r.launcher.preLaunch[0].rfind("NVLINK_COUNT=$(nvidia-smi", 0), 0u);
    EXPECT_NE(r.launcher.preLaunch[1].find("HAS_NVLINK=0"), std::string::npos);
    EXPECT_TRUE(linesAt(res.notes, NoteLevel::Error).empty());
}

TEST(Import, VimeSingleNodeDefaults) {
    const ImportResult res = importData("run-qwen3-30B-A3B-vime.sh");
    const Recipe& r = res.recipe;
    EXPECT_EQ(r.framework, Framework::Vime);
    EXPECT_FALSE(r.rollout.engine.has_value());  // vLLM is vime's default
    EXPECT_EQ(r.model.name, "qwen3-30B-A3B");
    EXPECT_EQ(r.trainer.tp, 4);
    EXPECT_EQ(r.trainer.ep, 8);
    EXPECT_EQ(r.trainer.cp, 1);
    EXPECT_EQ(r.rollout.gpusPerEngine, 8);
    EXPECT_TRUE(r.rollout.expertParallel);
    EXPECT_TRUE(r.rollout.eplb.enabled);
    EXPECT_EQ(r.rollout.eplb.redundantExperts, 16);
    EXPECT_EQ(r.rollout.moeBackend, "triton");
    std::vector<int> sizes = {1, 2, 4, 8};
    for (int s = 16; s <= 256; s += 8) {
        sizes.push_back(s);
    }
    EXPECT_EQ(r.rollout.cudaGraphSizes, sizes);
    EXPECT_TRUE(r.optimizer.cpuOffload);
    EXPECT_TRUE(r.optimizer.precisionAware);
    EXPECT_EQ(r.batch.rolloutBatchSize, 32);
    EXPECT_EQ(r.batch.globalBatchSize, 256);
    EXPECT_EQ(r.algorithm.advantageEstimator, AdvantageEstimator::Gspo);
    EXPECT_DOUBLE_EQ(r.algorithm.epsClip, 4e-4);
    EXPECT_TRUE(r.hardware.nvlink);
    // the model file builds MOE_LAYER_FREQ with a loop: reported, and nothing guessed
    bool loopReported = false;
    for (const auto& n : res.notes) {
        loopReported =
            loopReported || (n.file.find("models/qwen3-30B-A3B.sh") != std::string::npos &&
                             n.line == 6 && n.level == NoteLevel::Warning);
    }
    EXPECT_TRUE(loopReported);
    // --kl-loss-coef 0.00 is the default and is not written back by export: kept verbatim too
    ASSERT_NE(extra(r, "--kl-loss-coef"), nullptr);
    // ENABLE_R3=0 drops the EPLB block
    const ImportResult noR3 = importData("run-qwen3-30B-A3B-vime.sh", {{"ENABLE_R3", "0"}});
    EXPECT_FALSE(noR3.recipe.rollout.eplb.enabled);
    EXPECT_EQ(noR3.recipe.rollout.eplb.redundantExperts, 0);
}

TEST(Import, VimeMultiNodeBranchChosenByEnv) {
    const ImportResult res = importData("run-qwen3-30B-A3B-vime.sh",
                                        {{"ACTOR_NUM_NODES", "2"}, {"MASTER_ADDR", "10.0.0.1"}});
    const Recipe& r = res.recipe;
    EXPECT_EQ(r.cluster.nodes, 2);
    EXPECT_FALSE(r.trainer.nodes.has_value());
    EXPECT_EQ(r.trainer.tp, 8);
    EXPECT_EQ(r.trainer.cp, 2);
    EXPECT_EQ(r.rollout.gpusPerEngine, 16);
    EXPECT_EQ(r.batch.rolloutBatchSize, 4);
    EXPECT_EQ(r.batch.nSamplesPerPrompt, 2);
    EXPECT_EQ(r.batch.globalBatchSize, 8);
    EXPECT_FALSE(r.optimizer.cpuOffload);
    EXPECT_TRUE(linesAt(res.notes, NoteLevel::Warning).size() >= 1);  // the model file's loop
    // without MASTER_ADDR the multi-node branch's ${MASTER_ADDR:?...} is reported with its line
    const ImportResult noAddr = importData("run-qwen3-30B-A3B-vime.sh", {{"ACTOR_NUM_NODES", "2"}});
    bool reported = false;
    for (const auto& n : noAddr.notes) {
        reported = reported ||
                   (n.line == 18 &&
                    n.message.find("MASTER_ADDR is required by the script") != std::string::npos);
    }
    EXPECT_TRUE(reported);
}

TEST(Import, MilesLauncherCommand) {
    const ImportResult res = importData("run-qwen3.8-2.4T-miles.sh", {{"MASTER_ADDR", "10.0.0.1"}});
    const Recipe& r = res.recipe;
    EXPECT_EQ(res.program, "scripts/run_qwen3_8.py");
    EXPECT_EQ(r.framework, Framework::Miles);
    EXPECT_EQ(r.launcher.script, "scripts/run_qwen3_8.py");
    EXPECT_EQ(r.model.variant, "full");
    EXPECT_EQ(r.cluster.nodes, 16);
    EXPECT_EQ(r.hardware.gpusPerNode, 4);
    EXPECT_EQ(r.trainer.tp, 1);
    EXPECT_EQ(r.trainer.pp, 4);
    EXPECT_EQ(r.trainer.ep, 16);
    EXPECT_EQ(r.trainer.etp, 1);
    EXPECT_EQ(r.lora.rank, 32);
    EXPECT_DOUBLE_EQ(r.lora.alpha, 64);
    EXPECT_EQ(r.batch.numRollout, 200);
    EXPECT_EQ(r.batch.globalBatchSize, 256);
    EXPECT_TRUE(r.trainer.recompute);
    EXPECT_EQ(r.rollout.gpusPerEngine, 16);  // from --extra-args
    EXPECT_DOUBLE_EQ(r.algorithm.lr, 1e-5);  // from --extra-args
    const std::string lib = "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2";
    EXPECT_EQ(r.environment.ncclSoPath, lib);
    EXPECT_EQ(r.environment.env, (std::vector<std::pair<std::string, std::string>>{
                                     {"SGLANG_NCCL_SO_PATH", lib},
                                     {"LD_PRELOAD", lib},
                                     {"MILES_SCRIPT_EXTERNAL_RAY", "1"}}));
    std::vector<std::string> extras;
    for (const auto& e : r.extraArgs) {
        extras.push_back(e.flag);
    }
    // --hardware is read into hardware.gpu; the launcher's fixed engine memory fraction (0.7,
    // run_qwen3_8.py) is what runs, so the recipe takes it
    EXPECT_EQ(extras,
              (std::vector<std::string>{"--mode", "--rollout-max-concurrency", "--skip-prepare"}));
    EXPECT_EQ(r.hardware.gpu, "GB300");
    EXPECT_DOUBLE_EQ(r.rollout.memFraction, 0.7);
    // the miles launcher picks its model itself: an error note until --model names it
    EXPECT_EQ(linesAt(res.notes, NoteLevel::Error).size(), 1u);
    const ImportResult named =
        importData("run-qwen3.8-2.4T-miles.sh", {{"MASTER_ADDR", "10.0.0.1"}}, "qwen3.8-2.4T-A95B");
    EXPECT_EQ(named.recipe.model.name, "qwen3.8-2.4T-A95B");
    EXPECT_TRUE(linesAt(named.notes, NoteLevel::Error).empty());
}

TEST(Import, GlmExpertGridIsReportedByValidate) {  // issue 4 (slime#1818 shape)
    const ImportResult res = importData("run-glm4.7-30B-A3B.sh");
    const Recipe& r = res.recipe;
    EXPECT_EQ(r.model.name, "glm4.7-30B-A3B");
    EXPECT_EQ(trainerWorldSize(r), 8);
    EXPECT_EQ(r.trainer.tp, 2);
    EXPECT_EQ(r.trainer.pp, 2);
    EXPECT_EQ(r.trainer.cp, 2);
    EXPECT_EQ(r.trainer.ep, 8);
    EXPECT_EQ(effectiveEtp(r), 1);
    EXPECT_EQ(r.rollout.dpSize, 8);
    EXPECT_TRUE(r.rollout.dpAttention);
    // MODEL_ARGS agree with the catalog: no cross-check warning
    for (const auto& n : res.notes) {
        EXPECT_NE(n.field, "model") << n.format();
    }
#ifdef RUNPLANE_HAVE_PLAN_RULES
    const std::vector<Finding> findings = validate(r, test::catalog());
    const auto grid = std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
        return f.ruleId == "trainer.expert-grid";
    });
    ASSERT_NE(grid, findings.end());
    EXPECT_EQ(grid->severity, Severity::Error);
    EXPECT_NE(grid->message.find("16"), std::string::npos) << grid->message;
    EXPECT_NE(grid->message.find("8"), std::string::npos) << grid->message;
#else
    GTEST_SKIP() << "validate() of backend/plan/rules.h is not built into runplane_plan yet";
#endif
}

// run.sh sourcing models/NAME.sh that holds MODEL_ARGS=(ARGS), imported with the catalog.
Result<ImportResult> importWithModelFile(const test::TempDir& dir, const std::string& name,
                                         const std::string& args) {
    test::writeFile(dir.file("models/" + name + ".sh"), "MODEL_ARGS=(" + args + ")\n");
    test::writeFile(dir.file("run.sh"), "source \"$(dirname \"$0\")/models/" + name +
                                            ".sh\"\n"
                                            "python3 train.py \"${MODEL_ARGS[@]}\" "
                                            "--rollout-batch-size 8\n");
    ImportOptions options;
    options.catalog = &test::catalog();
    return importScript(dir.file("run.sh"), options);
}

TEST(Import, ModelArgsAreCrossCheckedAgainstTheCatalog) {
    test::TempDir dir;
    auto res =
        importWithModelFile(dir, "glm4.7-30B-A3B", "\n   --num-layers 46\n   --num-experts 64\n");
    ASSERT_TRUE(res.ok()) << res.error();
    std::vector<std::string> messages;
    for (const auto& n : res->notes) {
        if (n.field == "model") {
            messages.push_back(n.message);
            EXPECT_EQ(n.line, 2);
        }
    }
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("--num-layers 46"), std::string::npos);
    EXPECT_NE(messages[0].find("47"), std::string::npos);
}

// The frameworks' newer models are in the catalog under their model-file names: an import takes
// the catalog model (no inline shape) and MODEL_ARGS with the public files' numbers agree with it.
TEST(Import, NewerFrameworkModelsComeFromTheCatalog) {
    const std::vector<std::pair<std::string, std::string>> models = {
        {"minimax-m2",
         "--num-layers 62 --hidden-size 3072 --num-experts 256 --moe-router-topk 8 "
         "--moe-ffn-hidden-size 1536 --num-attention-heads 48 --num-query-groups 8 "
         "--kv-channels 128 --vocab-size 200064"},
        {"mimo-7B-rl",
         "--num-layers 36 --hidden-size 4096 --ffn-hidden-size 11008 --num-attention-heads 32 "
         "--num-query-groups 8 --vocab-size 151680"},
        {"moonlight-16B-A3B",
         "--num-layers 27 --hidden-size 2048 --ffn-hidden-size 11264 --moe-ffn-hidden-size 1408 "
         "--num-experts 64 --moe-router-topk 6 --num-attention-heads 16 --vocab-size 163840"},
        {"qwen3.5-9B",
         "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 12288 --num-attention-heads 16 "
         "--num-query-groups 4 --kv-channels 256 --vocab-size 248320"},
        {"gemma4-26B-A4B",
         "--num-layers 30 --hidden-size 2816 --ffn-hidden-size 2112 --num-experts 128 "
         "--moe-ffn-hidden-size 704 --moe-router-topk 8 --num-attention-heads 16 "
         "--num-query-groups 8 --kv-channels 256 --vocab-size 262144"},
        {"gpt-oss-20B",
         "--num-layers 24 --hidden-size 2880 --num-experts 32 --moe-router-topk 4 "
         "--num-attention-heads 64 --num-query-groups 8 --kv-channels 64"},
        {"qwen3-0.6B",
         "--num-layers 28 --hidden-size 1024 --ffn-hidden-size 3072 --num-attention-heads 16 "
         "--num-query-groups 8 --kv-channels 128 --vocab-size 151936"},
        {"qwen3.5-35B-A3B",
         "--num-layers 40 --hidden-size 2048 --num-experts 256 --moe-router-topk 8 "
         "--moe-ffn-hidden-size 512 --num-attention-heads 16 --num-query-groups 2 "
         "--kv-channels 256 --vocab-size 248320"},
        {"glm4.7-flash",
         "--num-layers 47 --hidden-size 2048 --ffn-hidden-size 10240 --num-experts 64 "
         "--moe-router-topk 4 --moe-ffn-hidden-size 1536 --num-attention-heads 20 "
         "--vocab-size 154880"},
    };
    for (const auto& [name, args] : models) {
        SCOPED_TRACE(name);
        test::TempDir dir;
        auto res = importWithModelFile(dir, name, args);
        ASSERT_TRUE(res.ok()) << res.error();
        EXPECT_EQ(res->recipe.model.name, name);
        EXPECT_FALSE(res->recipe.model.shape.has_value());
        ASSERT_NE(test::catalog().find(name), nullptr);
        for (const auto& n : res->notes) {
            EXPECT_NE(n.field, "model") << n.format();
        }
    }
}

// slime and miles both name Moonlight's model file models/moonlight.sh: a variant of the catalog's
// moonlight-16B-A3B, so that an export sources the same file.
TEST(Import, MoonlightModelFileIsTheCatalogModel) {
    test::TempDir dir;
    auto res = importWithModelFile(dir, "moonlight",
                                   "--num-layers 27 --hidden-size 2048 --num-experts 64 "
                                   "--moe-router-topk 6 --vocab-size 163840");
    ASSERT_TRUE(res.ok()) << res.error();
    EXPECT_EQ(res->recipe.model.name, "moonlight-16B-A3B");
    EXPECT_FALSE(res->recipe.model.shape.has_value());
}

TEST(Import, HardErrorsOnlyForUnreadableScriptsOrNoLaunchCommand) {
    EXPECT_FALSE(importScript("/nonexistent/run.sh").ok());
    auto none = importScriptText("echo hello\nFOO=1\n", "x.sh");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("no launch command"), std::string::npos);
    // everything else is a note: an unknown flag, a missing model, no batch size
    auto weak = importScriptText("python3 train.py --what 1\n", "x.sh");
    ASSERT_TRUE(weak.ok()) << weak.error();
    EXPECT_EQ(linesAt(weak->notes, NoteLevel::Error).size(), 2u);
    ASSERT_EQ(weak->recipe.extraArgs.size(), 1u);
    EXPECT_EQ(weak->recipe.extraArgs[0].source, "x.sh:1");
}

TEST(Import, MilesLauncherDefaultsBecomeTheRecipesValues) {
    // radixark/miles scripts/run_qwen3_8.py: --hardware defaults to B300 and the launcher passes
    // --sglang-mem-fraction-static 0.7 itself; a value in --extra-args comes last and wins
    auto bare = importScriptText("python scripts/run_qwen3_8.py --rollout-batch-size 4\n", "x.sh");
    ASSERT_TRUE(bare.ok());
    EXPECT_EQ(bare->recipe.hardware.gpu, "B300");
    EXPECT_DOUBLE_EQ(bare->recipe.rollout.memFraction, 0.7);
    int notes = 0;
    for (const auto& n : bare->notes) {
        notes += n.level == NoteLevel::Info &&
                 (n.field == "hardware.gpu" || n.field == "rollout.mem_fraction") &&
                 n.message.find("run_qwen3_8.py") != std::string::npos;
    }
    EXPECT_EQ(notes, 2);
    auto given = importScriptText(
        "python scripts/run_qwen3_8.py --hardware GB300 --rollout-batch-size 4 "
        "--extra-args \"--sglang-mem-fraction-static 0.55\"\n",
        "x.sh");
    ASSERT_TRUE(given.ok());
    EXPECT_EQ(given->recipe.hardware.gpu, "GB300");
    EXPECT_DOUBLE_EQ(given->recipe.rollout.memFraction, 0.55);
    EXPECT_TRUE(given->recipe.extraArgs.empty());
    // a launcher without these facts keeps the recipe defaults
    auto other =
        importScriptText("python scripts/run_qwen3_30b_a3b.py --rollout-batch-size 4\n", "x.sh");
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other->recipe.hardware.gpu, Hardware{}.gpu);
    EXPECT_DOUBLE_EQ(other->recipe.rollout.memFraction, Rollout{}.memFraction);
}

TEST(Import, FlagsGivenTwiceLastWinsWithANote) {
    auto res = importScriptText(
        "A=(--lr 1e-6)\nB=(--lr 2e-6 --rollout-batch-size 4)\npython3 train.py \"${A[@]}\" "
        "\"${B[@]}\"\n",
        "x.sh");
    ASSERT_TRUE(res.ok());
    EXPECT_DOUBLE_EQ(res->recipe.algorithm.lr, 2e-6);
    EXPECT_EQ(linesAt(res->notes, NoteLevel::Warning), std::vector<int>{2});
}

// Issue 15: an engine flag's alias is read into its field and its spelling recorded, so that an
// export writes it back the same way; reading the rule's own spelling last forgets the alias.
TEST(Import, EngineFlagAliasSpellingIsRecorded) {
    auto res = importScriptText(
        "python3 train.py --rollout-batch-size 4 --sglang-expert-parallel-size 8 --sglang-dp 2 "
        "--sglang-pipeline-parallel-size 2\n",
        "x.sh");
    ASSERT_TRUE(res.ok()) << res.error();
    EXPECT_EQ(res->recipe.rollout.epSize, 8);
    EXPECT_EQ(res->recipe.rollout.dpSize, 2);
    EXPECT_EQ(res->recipe.rollout.ppSize, 2);
    EXPECT_EQ(res->recipe.launcher.flagSpellings,
              (std::vector<std::string>{"--sglang-expert-parallel-size", "--sglang-dp",
                                        "--sglang-pipeline-parallel-size"}));
    auto canonical = importScriptText(
        "python3 train.py --rollout-batch-size 4 --sglang-ep 8 --sglang-ep-size 4\n", "x.sh");
    ASSERT_TRUE(canonical.ok()) << canonical.error();
    EXPECT_EQ(canonical->recipe.rollout.epSize, 4);
    EXPECT_TRUE(canonical->recipe.launcher.flagSpellings.empty());
    auto vllm = importScriptText(
        "python3 train.py --rollout-batch-size 4 --vllm-dp 2 --vllm-pipeline-parallel-size 2\n",
        "x.sh");
    ASSERT_TRUE(vllm.ok()) << vllm.error();
    EXPECT_EQ(vllm->recipe.framework, Framework::Vime);
    EXPECT_EQ(vllm->recipe.rollout.dpSize, 2);
    EXPECT_EQ(vllm->recipe.launcher.flagSpellings, std::vector<std::string>{"--vllm-dp"});
}

TEST(Import, WrongValuesAreKeptVerbatimNotGuessed) {
    auto res = importScriptText(
        "python3 train.py --tensor-model-parallel-size two --rollout-batch-size 4 "
        "--advantage-estimator magic --eval-prompt-data /only/a/path.jsonl\n",
        "x.sh");
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->recipe.trainer.tp, 1);
    EXPECT_EQ(res->recipe.algorithm.advantageEstimator, AdvantageEstimator::Grpo);
    EXPECT_TRUE(res->recipe.eval.datasets.empty());
    std::vector<std::string> kept;
    for (const auto& e : res->recipe.extraArgs) {
        kept.push_back(e.flag);
    }
    EXPECT_EQ(kept, (std::vector<std::string>{"--tensor-model-parallel-size",
                                              "--advantage-estimator", "--eval-prompt-data"}));
    EXPECT_EQ(linesAt(res->notes, NoteLevel::Warning).size(), 3u);
}

#ifdef RUNPLANE_HAVE_PLAN_RULES
// The rule ids validate reports for a one-line script's import, and for the same recipe after
// `change` (so that a test shows the rule does fire without what made it quiet).
std::pair<std::set<std::string>, std::set<std::string>> ruleIds(
    const std::string& line, const std::function<void(Recipe&)>& change) {
    auto res = importScriptText("python3 train.py --rollout-batch-size 4 " + line + "\n", "x.sh");
    EXPECT_TRUE(res.ok());
    if (!res.ok()) {
        return {};
    }
    res->recipe.model.name = "qwen3-4B";  // the batch rules run on a recipe with a model
    std::pair<std::set<std::string>, std::set<std::string>> out;
    for (const Finding& f : validate(res->recipe, test::catalog())) {
        out.first.insert(f.ruleId);
    }
    change(res->recipe);
    for (const Finding& f : validate(res->recipe, test::catalog())) {
        out.second.insert(f.ruleId);
    }
    return out;
}
#endif

TEST(Import, LoneEvalPathIsEvalDataForValidate) {  // slime low_precision/run-qwen3-30B-A3B-int4.sh
#ifdef RUNPLANE_HAVE_PLAN_RULES
    const auto [as, without] = ruleIds(
        "--eval-interval 10 --eval-prompt-data /root/aime-2024/aime-2024.jsonl", [](Recipe& r) {
            EXPECT_TRUE(r.eval.datasets.empty());
            std::erase_if(r.extraArgs,
                          [](const ExtraArg& e) { return e.flag == "--eval-prompt-data"; });
        });
    EXPECT_FALSE(as.count("eval.needs-data"));
    EXPECT_TRUE(without.count("eval.needs-data"));
#else
    GTEST_SKIP() << "validate() is not built into runplane_plan";
#endif
}

// miles examples/lora/run-qwen2.5-3B-megatron-lora-disaggregated-multi-node.sh: a guard on `$1`
// (a script argument, not given: the parameter ${1}) is read as passed, like one on a site
// variable; an exit that ends the reading before the launch is named by the error.
TEST(Import, NoLaunchCommandNamesTheExitThatEndedTheReading) {
    auto guarded = importScriptText(
        "MODE=\"$1\"\nif [ \"$MODE\" != a ]; then\n  echo usage\n  exit 1\nfi\n"
        "python3 train.py --rollout-batch-size 4\n",
        "run.sh");
    ASSERT_TRUE(guarded.ok()) << guarded.error();
    ASSERT_EQ(guarded->parameters.size(), 1u);
    EXPECT_EQ(guarded->parameters[0].name, "1");
    EXPECT_TRUE(guarded->parameters[0].required);
    auto res = importScriptText(
        "if [ \"${MODE:-a}\" = a ]; then\n  echo done\n  exit 0\nfi\n"
        "python3 train.py --rollout-batch-size 4\n",
        "run.sh");
    ASSERT_FALSE(res.ok());
    EXPECT_NE(res.error().find("run.sh:3: the reading stopped at this exit"), std::string::npos)
        << res.error();
}

// slime examples/on_policy_distillation/run-qwen3-8B-topk-opd-megatron.sh runs its own
// `examples/on_policy_distillation/topkopd_train.py`: the path is kept, validate only warns.
TEST(Import, OwnEntryPointKeepsItsPathAndOnlyWarns) {
    auto res = importScriptText(
        "ray job submit --address=http://127.0.0.1:8265 -- python3 "
        "examples/opd/topk_train.py --rollout-batch-size 4\n",
        "x.sh");
    ASSERT_TRUE(res.ok()) << res.error();
    EXPECT_EQ(res->recipe.launcher.entryPoint, "examples/opd/topk_train.py");
    auto plain = importScriptText("python3 /root/slime/train.py --rollout-batch-size 4\n", "x.sh");
    ASSERT_TRUE(plain.ok()) << plain.error();
    EXPECT_EQ(plain->recipe.launcher.entryPoint, "train.py");
#ifdef RUNPLANE_HAVE_PLAN_RULES
    Recipe r = res->recipe;
    r.model.name = "qwen3-4B";
    bool warned = false;
    for (const Finding& f : validate(r, test::catalog())) {
        if (f.ruleId == "launcher.entry-point") {
            EXPECT_EQ(f.severity, Severity::Warning) << f.message;
            warned = true;
        }
    }
    EXPECT_TRUE(warned);
#endif
}

// slime examples/eval_multi_task/multi_task.sh, miles examples/eval: --eval-config names the eval
// datasets in a YAML file.
TEST(Import, EvalConfigIsEvalDataForValidate) {
#ifdef RUNPLANE_HAVE_PLAN_RULES
    const auto [as, without] =
        ruleIds("--eval-interval 20 --eval-config /root/multi_task.yaml", [](Recipe& r) {
            std::erase_if(r.extraArgs, [](const ExtraArg& e) { return e.flag == "--eval-config"; });
        });
    EXPECT_FALSE(as.count("eval.needs-data"));
    EXPECT_TRUE(without.count("eval.needs-data"));
#else
    GTEST_SKIP() << "validate() is not built into runplane_plan";
#endif
}

// slime's run-qwen3-30B-A3B-lora.sh: LoRA with a target preset and no --ref-load (the reference is
// the base model with the adapters off) is valid.
TEST(Import, LoraWithPresetAndNoRefLoadValidates) {
#ifdef RUNPLANE_HAVE_PLAN_RULES
    const auto [as, noLora] = ruleIds(
        "--use-kl-loss --use-lora --lora-rank 32 --lora-alpha 64 "
        "--lora-target-preset moe_language_all --load /ckpt/base",
        [](Recipe& r) {
            EXPECT_EQ(r.lora.rank, 32);
            r.lora.rank = 0;
        });
    EXPECT_FALSE(as.count("algorithm.kl-needs-ref"));
    EXPECT_FALSE(as.count("lora.target-modules"));
    EXPECT_TRUE(noLora.count("algorithm.kl-needs-ref"));
#else
    GTEST_SKIP() << "validate() is not built into runplane_plan";
#endif
}

// Issue 15: what a public script says of its checkpoint precision reaches rollout.weight_dtype
// (slime low_precision/run-qwen3-30B-A3B-int4.sh), and a script naming no GPU marks its hardware
// as assumed.
TEST(Import, CheckpointPrecisionFromTheScriptAndAssumedHardware) {
    auto dtypeOf = [](const std::string& flags) {
        auto res =
            importScriptText("python3 train.py --rollout-batch-size 4 " + flags + "\n", "x.sh");
        EXPECT_TRUE(res.ok());
        EXPECT_TRUE(res.ok() && res->recipe.hardware.assumed);
        return res.ok() ? res->recipe.rollout.weightDtype : WeightDtype::Fp16;
    };
    EXPECT_EQ(dtypeOf("--hf-checkpoint /root/Qwen3-30B-A3B-INT4/"), WeightDtype::Int4);
    EXPECT_EQ(dtypeOf("--hf-checkpoint /root/Qwen3-4B-FP8"), WeightDtype::Fp8);
    EXPECT_EQ(dtypeOf("--hf-checkpoint /root/Qwen3-30B-A3B-NVFP4"), WeightDtype::Nvfp4);
    // near misses: no quantization word (a word inside another word does not count)
    EXPECT_EQ(dtypeOf("--hf-checkpoint /root/Qwen3-30B-A3B"), WeightDtype::Bf16);
    EXPECT_EQ(dtypeOf("--hf-checkpoint /root/MINT4X-FP8X"), WeightDtype::Bf16);
    // slime's INT4 QAT switch in the job's environment
    auto qat = importScriptText(
        "ray job submit --address=http://127.0.0.1:8265 "
        "--runtime-env-json='{\"env_vars\": {\"OPEN_TRAINING_INT4_FAKE_QAT_FLAG\": \"1\"}}' "
        "-- python3 train.py --rollout-batch-size 4 --hf-checkpoint /root/Qwen3-30B-A3B\n",
        "x.sh");
    ASSERT_TRUE(qat.ok()) << qat.error();
    EXPECT_EQ(qat->recipe.rollout.weightDtype, WeightDtype::Int4);
}

// slime's run-qwen3-30B-A3B-lora.sh is a slime script: --lora-rank / --lora-alpha are slime flags
// too; a miles-only flag (--lora-base-cpu-backup) still reads the script as miles'.
TEST(Import, LoraFlagsAreSlimeFlagsMilesOnlyFlagStillReadsAsMiles) {
    auto frameworkOf = [](const std::string& flags) {
        auto res =
            importScriptText("python3 train.py --rollout-batch-size 4 " + flags + "\n", "x.sh");
        EXPECT_TRUE(res.ok());
        return res.ok() ? res->recipe.framework : Framework::Vime;
    };
    EXPECT_EQ(frameworkOf("--use-lora --lora-rank 32 --lora-alpha 64"), Framework::Slime);
    EXPECT_EQ(frameworkOf("--lora-rank 32 --lora-base-cpu-backup"), Framework::Miles);
}

#ifdef RUNPLANE_HAVE_PLAN_RULES
// A miles bash script (scripts/run-*.sh: ray job submit ... train.py) is launcher kind slime_bash,
// which launches miles: no launcher.kind-framework warning; miles_script on a slime recipe warns.
TEST(Import, MilesBashScriptLauncherKindValidates) {
    const auto [as, mismatched] = ruleIds("--lora-rank 8 --lora-base-cpu-backup", [](Recipe& r) {
        EXPECT_EQ(r.framework, Framework::Miles);
        EXPECT_EQ(r.launcher.kind, LauncherKind::SlimeBash);
        r.framework = Framework::Slime;
        r.launcher.kind = LauncherKind::MilesScript;
    });
    EXPECT_FALSE(as.count("launcher.kind-framework"));
    EXPECT_TRUE(mismatched.count("launcher.kind-framework"));
}
#endif

}  // namespace
}  // namespace runplane::plan::launch
