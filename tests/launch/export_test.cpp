// Export: every shipped recipe in every flavour passes `bash -n`; run under fake ray / python,
// the framework receives exactly the recipe's flags; multi-node bring-up runs head, workers,
// the GPU-total wait, then the job; quoting survives hostile values (issue 4).

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "backend/launch/export_plan.h"
#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kModelArgs = {"--num-layers", "4", "--hidden-size", "1024"};

Recipe kitchenSink(Framework framework) {
    auto r = loadRecipe(test::dataDir() + "/kitchen-sink.yaml");
    EXPECT_TRUE(r.ok()) << r.error();
    Recipe recipe = r.ok() ? *r : Recipe{};
    recipe.framework = framework;
    if (framework == Framework::Miles) {
        recipe.launcher.script = "scripts/run_kitchen.py";
        recipe.extraArgs.push_back({"--extra-args", {"--foo 'a b'"}, "x.sh:3"});
    }
    return recipe;
}

/// Writes the bundle (and a model file for MODEL_ARGS) into dir.
LaunchBundle writeExport(const Recipe& r, Flavour flavour, const std::string& dir) {
    ExportOptions options;
    options.catalog = &test::catalog();
    auto bundle = exportLaunch(r, flavour, options);
    EXPECT_TRUE(bundle.ok()) << bundle.error();
    if (!bundle.ok()) {
        return {};
    }
    EXPECT_TRUE(writeBundle(*bundle, dir).ok());
    const std::string stem = detail::modelFileStem(r, &test::catalog());
    test::writeFile(dir + "/models/" + stem + ".sh",
                    "MODEL_ARGS=(\n   --num-layers 4\n   --hidden-size 1024\n)\n");
    return *bundle;
}

struct Launched {
    std::vector<test::Call> calls;
    std::vector<std::string> programArgv;  // argv after the program, as the framework sees it
    std::string runtimeEnv;
    int jobExit = -1;
    std::string output;
};

/// Runs the bundle as the steps say: head, each worker, then the job script on the head.
Launched launch(const LaunchBundle& bundle, const Recipe& r, const std::string& dir,
                int skipWorkers = 0) {
    test::FakeTools fakes(dir + "/fake");
    auto env = fakes.env();
    env.push_back({"MASTER_ADDR", "10.0.0.1"});
    env.push_back({"NCCL_SOCKET_IFNAME", "eth0"});
    env.push_back({"RUNPLANE_RAY_WAIT_TIMEOUT_S", "0"});
    env.push_back({"RUNPLANE_RAY_WAIT_INTERVAL_S", "1"});
    Launched out;
    if (r.cluster.nodes > 1) {
        auto head = test::runProcess({"bash", dir + "/ray-head.sh"}, env, dir);
        EXPECT_EQ(head.exitCode, 0) << head.output;
        for (int i = 1 + skipWorkers; i < r.cluster.nodes; ++i) {
            auto workerEnv = env;
            workerEnv.push_back({"NODE_IP", "10.0.0." + std::to_string(i + 1)});
            auto worker = test::runProcess({"bash", dir + "/ray-worker.sh"}, workerEnv, dir);
            EXPECT_EQ(worker.exitCode, 0) << worker.output;
        }
    }
    auto job = test::runProcess({"bash", dir + "/" + bundle.jobScript}, env, dir);
    out.jobExit = job.exitCode;
    out.output = job.output;
    out.calls = fakes.calls();
    out.runtimeEnv = fakes.runtimeEnvJson();
    for (const auto& c : out.calls) {
        if (c.tool == "python" || c.tool == "python3") {
            out.programArgv.assign(c.argv.begin() + 1, c.argv.end());
        }
    }
    return out;
}

std::vector<std::pair<std::string, Flavour>> allCases() {
    std::vector<std::pair<std::string, Flavour>> cases;
    for (const auto& file : test::shippedRecipeFiles()) {
        for (Flavour f : {Flavour::Slime, Flavour::Vime, Flavour::Miles}) {
            cases.emplace_back(file, f);
        }
    }
    return cases;
}

TEST(Export, EveryShippedRecipeInEveryFlavourPassesBashN) {
    const auto cases = allCases();
    ASSERT_FALSE(cases.empty());
    for (const auto& [file, flavour] : cases) {
        SCOPED_TRACE(file + " / " + toString(flavour));
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok()) << r.error();
        test::TempDir dir;
        LaunchBundle bundle = writeExport(*r, flavour, dir.path());
        for (const auto& f : bundle.files) {
            if (!f.executable) {
                continue;
            }
            auto check = test::runProcess({"bash", "-n", dir.file(f.name)}, {}, dir.path());
            EXPECT_EQ(check.exitCode, 0) << f.name << ":\n" << check.output;
        }
    }
}

TEST(Export, OutputIsDeterministic) {
    for (const auto& [file, flavour] : allCases()) {
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok());
        auto a = exportLaunch(*r, flavour);
        auto b = exportLaunch(*r, flavour);
        ASSERT_TRUE(a.ok() && b.ok());
        ASSERT_EQ(a->files.size(), b->files.size());
        for (std::size_t i = 0; i < a->files.size(); ++i) {
            EXPECT_EQ(a->files[i].content, b->files[i].content);
        }
    }
}

TEST(Export, RunningTheScriptsHandsTheFrameworkExactlyTheRecipesFlags) {
    std::vector<std::pair<Recipe, Flavour>> cases;
    for (const auto& [file, flavour] : allCases()) {
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok());
        cases.emplace_back(*r, flavour);
    }
    cases.emplace_back(kitchenSink(Framework::Slime), Flavour::Slime);
    cases.emplace_back(kitchenSink(Framework::Vime), Flavour::Vime);
    cases.emplace_back(kitchenSink(Framework::Miles), Flavour::Miles);
    for (auto& [recipe, flavour] : cases) {
        SCOPED_TRACE(recipe.name + " / " + toString(flavour));
        test::TempDir dir;
        if (!recipe.launcher.workdir.empty()) {  // the job script cd's there: make it exist
            recipe.launcher.workdir = dir.file("work dir");
            fs::create_directories(recipe.launcher.workdir);
        }
        LaunchBundle bundle = writeExport(recipe, flavour, dir.path());
        const detail::LaunchPlan plan = detail::buildPlan(recipe, flavour, {&test::catalog()});
        Launched run = launch(bundle, recipe, dir.path());
        ASSERT_EQ(run.jobExit, 0) << run.output;
        EXPECT_EQ(run.programArgv,
                  plan.expectedArgv(plan.milesScript ? std::vector<std::string>{} : kModelArgs));
        ASSERT_FALSE(run.calls.empty());
        const test::Call& last = run.calls.back();
        if (plan.milesScript) {
            EXPECT_EQ(last.tool, "python");
            EXPECT_EQ(last.argv.front(), recipe.launcher.script);
        } else {
            EXPECT_EQ(last.tool, "python3");
            EXPECT_EQ(last.argv.front(), "train.py");
            const test::Call& submit = run.calls[run.calls.size() - 2];
            ASSERT_EQ(submit.tool, "ray");
            EXPECT_EQ(std::vector<std::string>(submit.argv.begin(), submit.argv.begin() + 2),
                      (std::vector<std::string>{"job", "submit"}));
            auto json = nlohmann::json::parse(run.runtimeEnv, nullptr, false);
            ASSERT_TRUE(json.is_object()) << run.runtimeEnv;
            const auto& vars = json["env_vars"];
            // the head address given to the scripts, unless the recipe pins one
            EXPECT_EQ(vars["MASTER_ADDR"],
                      recipe.cluster.masterAddr.empty() ? "10.0.0.1" : recipe.cluster.masterAddr);
            EXPECT_TRUE(vars.contains("PYTHONPATH"));
            EXPECT_EQ(vars["CUDA_DEVICE_MAX_CONNECTIONS"], "1");
            EXPECT_EQ(vars["NCCL_NVLS_ENABLE"], recipe.hardware.nvlink ? "1" : "0");
            for (const auto& [key, value] : recipe.environment.env) {
                EXPECT_EQ(vars[key], value) << key;
            }
            if (!recipe.environment.ncclSoPath.empty()) {
                const char* soVar =
                    flavour == Flavour::Vime ? "VLLM_NCCL_SO_PATH" : "SGLANG_NCCL_SO_PATH";
                EXPECT_EQ(vars[soVar], recipe.environment.ncclSoPath);
                EXPECT_EQ(vars["LD_PRELOAD"], recipe.environment.ncclSoPath);
            }
        }
    }
}

TEST(Export, MultiNodeBringUpIsHeadThenWorkersThenWaitThenJob) {
    for (const auto& [file, flavour] : allCases()) {
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok());
        if (r->cluster.nodes < 2) {
            continue;
        }
        SCOPED_TRACE(file + " / " + toString(flavour));
        test::TempDir dir;
        LaunchBundle bundle = writeExport(*r, flavour, dir.path());
        Launched run = launch(bundle, *r, dir.path());
        ASSERT_EQ(run.jobExit, 0) << run.output;
        const int nodes = r->cluster.nodes;
        const std::string gpus = std::to_string(r->hardware.gpusPerNode);
        ASSERT_GE(run.calls.size(), static_cast<std::size_t>(nodes + 2));
        EXPECT_EQ(
            run.calls[0].argv,
            (std::vector<std::string>{"start", "--head", "--node-ip-address=10.0.0.1", "--num-gpus",
                                      gpus, "--disable-usage-stats", "--dashboard-port=8265"}));
        for (int i = 1; i < nodes; ++i) {
            EXPECT_EQ(run.calls[static_cast<std::size_t>(i)].argv,
                      (std::vector<std::string>{"start", "--address=10.0.0.1:6379",
                                                "--node-ip-address=10.0.0." + std::to_string(i + 1),
                                                "--num-gpus", gpus}));
        }
        EXPECT_EQ(run.calls[static_cast<std::size_t>(nodes)].argv,
                  std::vector<std::string>{"status"});
        EXPECT_NE(run.output.find(std::to_string(nodes * r->hardware.gpusPerNode) + " of " +
                                  std::to_string(nodes * r->hardware.gpusPerNode) + " GPUs"),
                  std::string::npos)
            << run.output;
        EXPECT_TRUE(run.calls.back().tool == "python" || run.calls.back().tool == "python3");
        EXPECT_EQ(bundle.steps.size(), 4u);
    }
}

TEST(Export, JobDoesNotStartWhileAWorkerIsMissing) {
    const Recipe recipe = kitchenSink(Framework::Slime);  // 3 nodes x 4 GPUs
    test::TempDir dir;
    LaunchBundle bundle = writeExport(recipe, Flavour::Slime, dir.path());
    Launched run = launch(bundle, recipe, dir.path(), /*skipWorkers=*/1);
    EXPECT_NE(run.jobExit, 0);
    EXPECT_NE(run.output.find("only 8 of 12 GPUs"), std::string::npos) << run.output;
    for (const auto& c : run.calls) {
        EXPECT_NE(c.tool, "python3");
        EXPECT_FALSE(c.tool == "ray" && !c.argv.empty() && c.argv[0] == "job");
    }
}

TEST(Export, MultiNodeJobRefusesToRunWithoutTheHeadAddress) {
    auto r = loadRecipe(test::shippedRecipeFiles().front());
    ASSERT_TRUE(r.ok());
    Recipe recipe = *r;
    recipe.cluster.nodes = 2;
    recipe.cluster.masterAddr.clear();
    test::TempDir dir;
    LaunchBundle bundle = writeExport(recipe, Flavour::Slime, dir.path());
    test::FakeTools fakes(dir.file("fake"));
    auto job = test::runProcess({"bash", dir.file(bundle.jobScript)}, fakes.env(), dir.path());
    EXPECT_NE(job.exitCode, 0);
    EXPECT_NE(job.output.find("MASTER_ADDR"), std::string::npos) << job.output;
    EXPECT_TRUE(fakes.calls().empty());
}

// A framework's argparse keeps the last of a repeated flag, so a flag that appears twice hides a
// disagreement (or says the same thing twice): no shipped recipe may export one.
TEST(Export, ShippedRecipesNeverRepeatAFlag) {
    for (const auto& [file, flavour] : allCases()) {
        auto r = loadRecipe(file);
        ASSERT_TRUE(r.ok());
        SCOPED_TRACE(file + " / " + toString(flavour));
        const detail::LaunchPlan plan = detail::buildPlan(*r, flavour, {&test::catalog()});
        std::map<std::string, int> seen;
        for (const auto& arg : plan.expectedArgv({})) {
            if (arg.rfind("--", 0) == 0) {
                EXPECT_EQ(++seen[arg], 1) << arg << " is exported more than once";
            }
        }
    }
}

TEST(Export, FlagSpellingPerFlavour) {
    Recipe r = kitchenSink(Framework::Slime);
    r.cluster.nodes = 1;
    auto argvOf = [&](Flavour f) {
        const auto plan = detail::buildPlan(r, f, {});
        return plan.expectedArgv({});
    };
    auto has = [](const std::vector<std::string>& argv, std::vector<std::string> seq) {
        return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
    };
    const auto slime = argvOf(Flavour::Slime);
    EXPECT_TRUE(has(slime, {"--tensor-model-parallel-size", "2"}));
    EXPECT_TRUE(has(slime, {"--expert-tensor-parallel-size", "1"}));
    EXPECT_TRUE(has(slime, {"--recompute-granularity", "full", "--recompute-method", "uniform",
                            "--recompute-num-layers", "1"}));
    EXPECT_TRUE(has(slime, {"--sglang-mem-fraction-static", "0.65"}));
    EXPECT_TRUE(has(slime, {"--sglang-ep-num-redundant-experts", "16"}));
    EXPECT_TRUE(has(
        slime, {"--eval-prompt-data", "aime", "/data/aime.jsonl", "gsm 8k", "/data/gsm 8k.jsonl"}));
    EXPECT_TRUE(has(slime, {"--update-weight-buffer-size", "1073741824"}));
    // slime has LoRA (run-qwen3-30B-A3B-lora.sh); --lora-base-cpu-backup is miles' only
    EXPECT_TRUE(has(slime, {"--lora-rank", "8"}));
    EXPECT_FALSE(has(slime, {"--lora-base-cpu-backup"}));
    const auto vime = argvOf(Flavour::Vime);
    EXPECT_TRUE(has(vime, {"--vllm-gpu-memory-utilization", "0.65"}));
    EXPECT_TRUE(has(vime, {"--vllm-eplb-config", "{\"num_redundant_experts\": 16}"}));
    EXPECT_TRUE(has(vime, {"--vllm-enable-expert-parallel"}));
    EXPECT_TRUE(has(vime, {"--vllm-enforce-eager"}));
    EXPECT_FALSE(has(vime, {"--sglang-mem-fraction-static"}));
    const auto miles = argvOf(Flavour::Miles);  // launcher kind defaults to the miles script
    EXPECT_TRUE(has(miles, {"--lora-rank", "8"}));
    EXPECT_TRUE(has(miles, {"--offload-train-target", "disk"}));
    EXPECT_TRUE(has(miles, {"--no-offload-train"}));
}

// Issue 15: an engine flag comes out in the spelling the recipe recorded (an imported script's
// alias), else in the rule's; the recorded spellings survive the recipe's YAML.
TEST(Export, EngineFlagAliasesKeepTheRecordedSpelling) {
    Recipe r = kitchenSink(Framework::Slime);
    r.cluster.nodes = 1;
    r.rollout.epSize = 8;
    r.rollout.dpSize = 2;
    r.rollout.ppSize = 2;
    auto argvOf = [&](const Recipe& recipe, Flavour f) {
        return detail::buildPlan(recipe, f, {}).expectedArgv({});
    };
    auto has = [](const std::vector<std::string>& argv, std::vector<std::string> seq) {
        return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
    };
    auto count = [](const std::vector<std::string>& argv, const std::string& word) {
        return std::count(argv.begin(), argv.end(), word);
    };
    // a recipe written by hand: the canonical spellings
    const auto plain = argvOf(r, Flavour::Slime);
    EXPECT_TRUE(has(plain, {"--sglang-ep-size", "8"}));
    EXPECT_TRUE(has(plain, {"--sglang-dp-size", "2"}));
    EXPECT_TRUE(has(plain, {"--sglang-pp-size", "2"}));
    r.launcher.flagSpellings = {"--sglang-expert-parallel-size", "--sglang-dp", "--vllm-dp"};
    auto yaml = parseRecipe(writeRecipe(r), "r.yaml");
    ASSERT_TRUE(yaml.ok()) << yaml.error();
    EXPECT_EQ(yaml->launcher.flagSpellings, r.launcher.flagSpellings);
    const auto slime = argvOf(*yaml, Flavour::Slime);
    EXPECT_TRUE(has(slime, {"--sglang-expert-parallel-size", "8"}));
    EXPECT_TRUE(has(slime, {"--sglang-dp", "2"}));
    EXPECT_TRUE(has(slime, {"--sglang-pp-size", "2"}));  // no alias recorded for it
    EXPECT_EQ(count(slime, "--sglang-ep-size"), 0);
    EXPECT_EQ(count(slime, "--sglang-dp-size"), 0);
    const auto vime = argvOf(*yaml, Flavour::Vime);
    EXPECT_TRUE(has(vime, {"--vllm-dp", "2"}));
    EXPECT_TRUE(has(vime, {"--vllm-pipeline-parallel-size", "2"}));
    EXPECT_EQ(count(vime, "--vllm-data-parallel-size"), 0);
    // the miles launcher's --extra-args string spells it the same way
    Recipe miles = *yaml;
    miles.framework = Framework::Miles;
    miles.launcher.script = "scripts/run_kitchen.py";
    const auto plan = detail::buildPlan(miles, Flavour::Miles, {});
    bool inExtraArgs = false;
    for (const auto& g : plan.groups) {
        for (const auto& line : g.lines) {
            for (const auto& w : line.words) {
                inExtraArgs = inExtraArgs || w == "--sglang-expert-parallel-size 8";
            }
        }
    }
    EXPECT_TRUE(inExtraArgs);
}

TEST(Export, UnknownFlagSpellingIsAWarningNamingItsPlace) {
    Recipe r = kitchenSink(Framework::Slime);
    r.launcher.flagSpellings = {"--sglang-ep", "--sglang-expert-size"};
    auto bundle = exportLaunch(r, Flavour::Slime);
    ASSERT_TRUE(bundle.ok()) << bundle.error();
    const auto it = std::find_if(bundle->notes.begin(), bundle->notes.end(), [](const auto& n) {
        return n.field == "launcher.flag_spellings[1]";
    });
    ASSERT_NE(it, bundle->notes.end());
    EXPECT_EQ(it->level, NoteLevel::Warning);
    EXPECT_NE(it->message.find("'--sglang-expert-size'"), std::string::npos) << it->message;
    EXPECT_EQ(std::count_if(bundle->notes.begin(), bundle->notes.end(),
                            [](const auto& n) { return n.field == "launcher.flag_spellings[0]"; }),
              0);
}

TEST(Export, MilesLauncherGetsTheMemFractionAlwaysAndHardwareWhereItHasTheOption) {
    Recipe r = kitchenSink(Framework::Miles);
    r.cluster.nodes = 1;
    r.rollout.memFraction = Rollout{}.memFraction;  // at the recipe default: still written
    r.hardware.gpu = "GB300";
    auto argvOf = [&](const std::string& script) {
        r.launcher.script = script;
        return detail::buildPlan(r, Flavour::Miles, {}).expectedArgv({});
    };
    const auto qwen38 = argvOf("scripts/run_qwen3_8.py");
    ASSERT_FALSE(qwen38.empty());
    EXPECT_NE(std::find(qwen38.begin(), qwen38.end(), "--hardware"), qwen38.end());
    EXPECT_NE(std::find(qwen38.begin(), qwen38.end(), "GB300"), qwen38.end());
    EXPECT_NE(qwen38.back().find("--sglang-mem-fraction-static 0.8"), std::string::npos)
        << qwen38.back();
    // a value the launcher does not take is written, with a warning naming its choices
    r.hardware.gpu = "H100";
    r.launcher.script = "scripts/run_qwen3_8.py";
    const auto warned = detail::buildPlan(r, Flavour::Miles, {});
    bool named = false;
    for (const auto& n : warned.notes) {
        named = named || (n.level == NoteLevel::Warning && n.field == "hardware.gpu" &&
                          n.message.find("B300 or GB300") != std::string::npos);
    }
    EXPECT_TRUE(named);
    r.hardware.gpu = "GB300";
    // another launcher has no --hardware option (its parser would reject it)
    const auto other = argvOf("scripts/run_qwen3_30b_a3b.py");
    EXPECT_EQ(std::find(other.begin(), other.end(), "--hardware"), other.end());
    EXPECT_NE(other.back().find("--sglang-mem-fraction-static 0.8"), std::string::npos);
}

TEST(Export, ShippedMilesRecipeMatchesTheDocumentedLauncherCommand) {
    // docs/domain.md, seed 000: the full launch of Qwen3.8-2.4T-A95B.
    const std::vector<std::string> documented = {"--mode",
                                                 "normal",
                                                 "--model-variant",
                                                 "full",
                                                 "--hardware",
                                                 "GB300",
                                                 "--num-nodes",
                                                 "16",
                                                 "--num-gpus-per-node",
                                                 "4",
                                                 "--tp",
                                                 "1",
                                                 "--pp",
                                                 "4",
                                                 "--ep",
                                                 "16",
                                                 "--etp",
                                                 "1",
                                                 "--cp",
                                                 "1",
                                                 "--lora",
                                                 "--lora-rank",
                                                 "32",
                                                 "--lora-alpha",
                                                 "64",
                                                 "--num-rollout",
                                                 "200",
                                                 "--rollout-batch-size",
                                                 "32",
                                                 "--n-samples-per-prompt",
                                                 "8",
                                                 "--rollout-max-response-len",
                                                 "4096",
                                                 "--global-batch-size",
                                                 "256",
                                                 "--rollout-max-concurrency",
                                                 "8",
                                                 "--recompute",
                                                 "--skip-prepare"};
    auto r = loadRecipe(test::recipesDir() + "/qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_TRUE(r.ok()) << r.error();
    test::TempDir dir;
    LaunchBundle bundle = writeExport(*r, Flavour::Miles, dir.path());
    Launched run = launch(bundle, *r, dir.path());
    ASSERT_EQ(run.jobExit, 0) << run.output;
    ASSERT_FALSE(run.programArgv.empty());
    // every documented launcher flag with its value, in the documented relative order
    std::vector<std::string> launcherPart(
        run.programArgv.begin(),
        std::find(run.programArgv.begin(), run.programArgv.end(), "--extra-args"));
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < launcherPart.size(); ++i) {
        if (launcherPart[i] == "--model-dir") {
            ++i;  // the recipe also names the model dir explicitly
            continue;
        }
        kept.push_back(launcherPart[i]);
    }
    std::vector<std::string> a = kept, b = documented;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
    const std::string extra = run.programArgv.back();
    EXPECT_NE(extra.find("--rollout-num-gpus-per-engine 16"), std::string::npos) << extra;
    EXPECT_NE(extra.find("--lr 1e-05"), std::string::npos) << extra;
    // the engine memory fraction the plan uses (the launcher's own 0.7), passed explicitly
    EXPECT_NE(extra.find("--sglang-mem-fraction-static 0.7"), std::string::npos) << extra;
    // the NCCL fix is in the job's environment
    const std::string job = test::readFile(dir.file(bundle.jobScript));
    EXPECT_NE(job.find("export SGLANG_NCCL_SO_PATH=/usr/local/lib/python3.12/dist-packages/nvidia/"
                       "nccl/lib/libnccl.so.2"),
              std::string::npos);
    EXPECT_NE(job.find("export LD_PRELOAD="), std::string::npos);
    EXPECT_NE(job.find("export MILES_SCRIPT_EXTERNAL_RAY=1"), std::string::npos);
}

TEST(Export, HostileTextStaysText) {
    test::TempDir dir;
    const std::string marker = dir.file("pwned");
    Recipe r = kitchenSink(Framework::Slime);
    r.cluster.nodes = 1;
    r.trainer.nodes.reset();
    r.launcher.workdir.clear();
    r.name = "evil\ntouch " + marker;
    r.description = "d\r\n$(touch " + marker + ") `touch " + marker + "`";
    r.extraArgs.push_back({"--note", {"$(touch " + marker + ")", "; touch " + marker}, "a\nb"});
    r.environment.env.push_back({"EVIL", "\"; touch " + marker + "; \""});
    LaunchBundle bundle = writeExport(r, Flavour::Slime, dir.path());
    Launched run = launch(bundle, r, dir.path());
    ASSERT_EQ(run.jobExit, 0) << run.output;
    EXPECT_FALSE(fs::exists(marker));
    const auto plan = detail::buildPlan(r, Flavour::Slime, {&test::catalog()});
    EXPECT_EQ(run.programArgv, plan.expectedArgv(kModelArgs));
    auto json = nlohmann::json::parse(run.runtimeEnv, nullptr, false);
    ASSERT_TRUE(json.is_object()) << run.runtimeEnv;
    EXPECT_EQ(json["env_vars"]["EVIL"], "\"; touch " + marker + "; \"");
    // and the same recipe comes back from the script
    ImportOptions io;
    io.catalog = &test::catalog();
    auto back = importScript(dir.file(bundle.jobScript), io);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(writeRecipe(back->recipe), writeRecipe(r));
}

TEST(Export, RefusesRecipesWithoutModelOrBatch) {
    Recipe r;
    r.batch.rolloutBatchSize = 8;
    EXPECT_FALSE(exportLaunch(r, Flavour::Slime).ok());
    r.model.name = "qwen3-4B";
    r.batch.rolloutBatchSize = 0;
    auto bad = exportLaunch(r, Flavour::Slime);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("rollout_batch_size"), std::string::npos);
}

TEST(Export, NotesNameFieldsTheFlavourCannotCarry) {
    const Recipe r = kitchenSink(Framework::Slime);
    auto bundle = exportLaunch(r, Flavour::Slime);
    ASSERT_TRUE(bundle.ok());
    auto noted = [&](const std::string& field) {
        return std::any_of(bundle->notes.begin(), bundle->notes.end(),
                           [&](const LaunchNote& n) { return n.field == field; });
    };
    EXPECT_TRUE(noted("lora.base_cpu_backup"));  // miles-only; slime carries lora.rank
    EXPECT_FALSE(noted("lora.rank"));
    EXPECT_TRUE(noted("rollout.expert_parallel"));
    EXPECT_FALSE(noted("trainer.tp"));
}

}  // namespace
}  // namespace runplane::plan::launch
