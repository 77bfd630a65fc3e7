// Value-level round trip of the fixture scripts in data/fixtures (issue #15): each script is run
// under bash with stub ray / python3 / ssh / nvidia-smi / curl first on PATH, then imported,
// exported and the export run the same way; the argv the framework receives is compared flag by
// flag, every value word by word. Nothing real runs: the stubs only record their argv.
// One file on purpose (~860 lines): each fixture's expectations sit beside the one run-under-stubs
// machinery they share; a fixture is a few lines here plus its script in data/fixtures.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "backend/launch/export_plan.h"
#include "backend/launch/flag_rules.h"
#include "backend/launch/launch.h"
#include "backend/launch/shell_text.h"
#include "backend/plan/rules.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

namespace fs = std::filesystem;

std::string fixturesDir() {
    return test::dataDir() + "/fixtures";
}

using Env = std::vector<std::pair<std::string, std::string>>;

// `# run-env: K=V ...` of a fixture: the site variables both runs get.
Env runEnvOf(const std::string& script) {
    Env env;
    std::istringstream in(test::readFile(script));
    std::string line;
    while (std::getline(in, line)) {
        const std::string mark = "# run-env:";
        if (line.rfind(mark, 0) != 0) {
            continue;
        }
        std::istringstream words(line.substr(mark.size()));
        std::string kv;
        while (words >> kv) {
            const auto eq = kv.find('=');
            env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        }
    }
    return env;
}

// `# run-args: A B ...` of a fixture: the positional arguments both runs get (the original, and
// the export's job script, which reads the script arguments it kept as ${1}, ${2}, ...).
std::vector<std::string> runArgsOf(const std::string& script) {
    std::vector<std::string> args;
    std::istringstream in(test::readFile(script));
    std::string line;
    while (std::getline(in, line)) {
        const std::string mark = "# run-args:";
        if (line.rfind(mark, 0) != 0) {
            continue;
        }
        std::istringstream words(line.substr(mark.size()));
        std::string w;
        while (words >> w) {
            args.push_back(w);
        }
    }
    return args;
}

struct Run {
    int exitCode = -1;
    std::string output;
    std::vector<test::Call> calls;
    std::string runtimeEnv;
};

Env baseEnv(const test::FakeTools& fakes, const Env& runEnv) {
    Env env = fakes.env();
    env.push_back({"RUNPLANE_RAY_WAIT_TIMEOUT_S", "0"});
    env.push_back({"RUNPLANE_RAY_WAIT_INTERVAL_S", "1"});
    env.insert(env.end(), runEnv.begin(), runEnv.end());
    return env;
}

void copyFixtureSupport(const std::string& to) {
    fs::create_directories(to + "/models");
    for (const auto& e : fs::directory_iterator(fixturesDir() + "/models")) {
        fs::copy_file(e.path(), to + "/models/" + e.path().filename().string(),
                      fs::copy_options::overwrite_existing);
    }
    fs::copy_file(fixturesDir() + "/hosts.txt", to + "/hosts.txt",
                  fs::copy_options::overwrite_existing);
    // the scripts a wrapper fixture runs (exec-wrapper.sh: `exec bash common/grpo-common.sh`)
    fs::create_directories(to + "/common");
    for (const auto& e : fs::directory_iterator(fixturesDir() + "/common")) {
        fs::copy_file(e.path(), to + "/common/" + e.path().filename().string(),
                      fs::copy_options::overwrite_existing);
    }
}

test::FakeTools makeFakes(const std::string& root) {
    test::FakeTools fakes(root);
    fs::create_directories(root + "/model_args");
    for (const auto& e : fs::directory_iterator(fixturesDir() + "/model_args")) {
        fs::copy_file(e.path(), root + "/model_args/" + e.path().filename().string());
    }
    return fakes;
}

Run runOriginal(const std::string& name, const test::TempDir& tmp) {
    const std::string dir = tmp.file("original");
    copyFixtureSupport(dir);
    fs::copy_file(fixturesDir() + "/" + name, dir + "/" + name);
    test::FakeTools fakes = makeFakes(tmp.file("fake-original"));
    std::vector<std::string> argv = {"bash", dir + "/" + name};
    for (const auto& a : runArgsOf(fixturesDir() + "/" + name)) {
        argv.push_back(a);
    }
    auto res = test::runProcess(argv, baseEnv(fakes, runEnvOf(fixturesDir() + "/" + name)), dir);
    return {res.exitCode, res.output, fakes.calls(), fakes.runtimeEnvJson()};
}

struct Exported {
    ImportResult imported;
    LaunchBundle bundle;
    Run run;
};

Exported runExport(const std::string& name, const test::TempDir& tmp) {
    Exported out;
    ImportOptions io;
    io.catalog = &test::catalog();
    auto imported = importScript(fixturesDir() + "/" + name, io);
    EXPECT_TRUE(imported.ok()) << imported.error();
    if (!imported.ok()) {
        return out;
    }
    out.imported = *imported;
    ExportOptions eo;
    eo.catalog = &test::catalog();
    auto bundle = exportLaunch(imported->recipe, flavourOf(imported->recipe.framework), eo);
    EXPECT_TRUE(bundle.ok()) << bundle.error();
    if (!bundle.ok()) {
        return out;
    }
    out.bundle = *bundle;
    const std::string dir = tmp.file("export");
    EXPECT_TRUE(writeBundle(*bundle, dir).ok());
    copyFixtureSupport(dir);
    // the model file an export of a Python-built MODEL_ARGS sources: the same flags
    for (const auto& e : fs::directory_iterator(fixturesDir() + "/model_args")) {
        const std::string sh = dir + "/models/" + e.path().stem().string() + ".sh";
        if (!fs::exists(sh)) {
            test::writeFile(sh, "MODEL_ARGS=(" + test::readFile(e.path().string()) + ")\n");
        }
    }
    test::FakeTools fakes = makeFakes(tmp.file("fake-export"));
    Env env = baseEnv(fakes, runEnvOf(fixturesDir() + "/" + name));
    if (imported->recipe.cluster.nodes > 1) {
        auto head = test::runProcess({"bash", dir + "/ray-head.sh"}, env, dir);
        EXPECT_EQ(head.exitCode, 0) << head.output;
        for (int i = 1; i < imported->recipe.cluster.nodes; ++i) {
            Env workerEnv = env;
            workerEnv.push_back({"NODE_IP", "10.0.0." + std::to_string(i + 1)});
            auto worker = test::runProcess({"bash", dir + "/ray-worker.sh"}, workerEnv, dir);
            EXPECT_EQ(worker.exitCode, 0) << worker.output;
        }
    }
    std::vector<std::string> jobArgv = {"bash", dir + "/" + bundle->jobScript};
    for (const auto& a : runArgsOf(fixturesDir() + "/" + name)) {
        jobArgv.push_back(a);
    }
    auto job = test::runProcess(jobArgv, env, dir);
    out.run = {job.exitCode, job.output, fakes.calls(), fakes.runtimeEnvJson()};
    return out;
}

std::string baseName(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool isEntryPoint(const std::string& word) {
    const std::string b = baseName(word);
    return (b.rfind("train", 0) == 0 && b.ends_with(".py")) ||
           (b.rfind("run_", 0) == 0 && b.ends_with(".py"));
}

// The framework's call: (entry point's file name, the words after it).
std::pair<std::string, std::vector<std::string>> frameworkArgv(
    const std::vector<test::Call>& calls) {
    for (const auto& c : calls) {
        if (c.tool != "python" && c.tool != "python3") {
            continue;
        }
        for (std::size_t i = 0; i < c.argv.size(); ++i) {
            if (isEntryPoint(c.argv[i])) {
                return {baseName(c.argv[i]),
                        {c.argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, c.argv.end()}};
            }
        }
    }
    return {"", {}};
}

// argv as flags with their values (a flag = a word starting with "--", compared as spelled: an
// export writes an engine flag's alias the way the script did), in a canonical order: what the
// framework's parser sees, one entry per flag.
using Entries = std::vector<std::vector<std::string>>;
Entries entriesOf(const std::vector<std::string>& argv) {
    Entries out;
    for (const auto& w : argv) {
        if (w.rfind("--", 0) == 0 || out.empty()) {
            out.push_back({w});
        } else {
            out.back().push_back(w);
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.front() < b.front(); });
    return out;
}

std::string entryText(const std::vector<std::string>& e) {
    std::string out;
    for (const auto& w : e) {
        out += (out.empty() ? "" : " ") + w;
    }
    return out;
}

// Word by word; two numbers are the same value however they are spelled (0.00 and 0, 1e-6 and
// 1e-06): the framework's parser reads them as one.
bool sameValues(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i]) {
            continue;
        }
        char* endA = nullptr;
        char* endB = nullptr;
        const double x = std::strtod(a[i].c_str(), &endA);
        const double y = std::strtod(b[i].c_str(), &endB);
        if (a[i].empty() || b[i].empty() || *endA != '\0' || *endB != '\0' || x != y) {
            return false;
        }
    }
    return true;
}

// Flags of the original that the export hands over (last occurrence wins, as in argparse), and
// those with the same values.
struct Figure {
    int flags = 0;
    int kept = 0;
    int equal = 0;
    std::string diff;   // flags of the original missing or changed in the export
    std::string added;  // flags only the export has (defaults it spells out)
};

Figure compare(const std::vector<std::string>& original, const std::vector<std::string>& exported) {
    auto last = [](const Entries& entries) {
        std::map<std::string, std::vector<std::string>> m;
        for (const auto& e : entries) {
            m[e.front()] = e;
        }
        return m;
    };
    const auto a = last(entriesOf(original));
    const auto b = last(entriesOf(exported));
    Figure f;
    for (const auto& [flag, entry] : a) {
        ++f.flags;
        const auto it = b.find(flag);
        if (it == b.end()) {
            f.diff += "  missing: " + entryText(entry) + "\n";
            continue;
        }
        ++f.kept;
        if (sameValues(it->second, entry)) {
            ++f.equal;
        } else {
            f.diff += "  changed: " + entryText(entry) + "  ->  " + entryText(it->second) + "\n";
        }
    }
    for (const auto& [flag, entry] : b) {
        if (!a.count(flag)) {
            f.added += "  added: " + entryText(entry) + "\n";
        }
    }
    return f;
}

std::vector<std::string> fixtureNames() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fixturesDir())) {
        if (e.path().extension() == ".sh") {
            names.push_back(e.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

// A miles launcher's argv as the comparison reads it: the words of its --extra-args string
// (train.py flags, which the launcher appends last) as entries of their own, each flag marked
// "--extra-args:" so that a launcher option and a train.py flag of one spelling (--lr) stay apart.
std::vector<std::string> launcherArgv(const std::vector<std::string>& argv) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] != "--extra-args" || i + 1 == argv.size()) {
            out.push_back(argv[i]);
            continue;
        }
        auto words = detail::shellSplit(argv[++i]);
        EXPECT_TRUE(words.ok()) << argv[i];
        if (!words.ok()) {
            continue;
        }
        for (const auto& w : *words) {
            out.push_back(w.rfind("--", 0) == 0 ? "--extra-args:" + w : w);
        }
    }
    return out;
}

struct RoundTrip {
    Run original;
    Exported exported;
    std::string program;
    std::string exportedProgram;
    Figure figure;
};

RoundTrip roundTrip(const std::string& name, const test::TempDir& tmp) {
    RoundTrip rt;
    rt.original = runOriginal(name, tmp);
    EXPECT_EQ(rt.original.exitCode, 0) << name << ":\n" << rt.original.output;
    rt.exported = runExport(name, tmp);
    EXPECT_EQ(rt.exported.run.exitCode, 0) << name << ":\n" << rt.exported.run.output;
    auto [program, argv] = frameworkArgv(rt.original.calls);
    auto [exportedProgram, exportedArgv] = frameworkArgv(rt.exported.run.calls);
    rt.program = program;
    rt.exportedProgram = exportedProgram;
    EXPECT_FALSE(argv.empty()) << name << ": the original never reached the framework";
    if (program.rfind("run_", 0) == 0) {
        argv = launcherArgv(argv);
        exportedArgv = launcherArgv(exportedArgv);
    }
    rt.figure = compare(argv, exportedArgv);
    return rt;
}

const test::Call* findCall(const std::vector<test::Call>& calls, const std::string& tool,
                           const std::string& first) {
    for (const auto& c : calls) {
        if (c.tool == tool && !c.argv.empty() && c.argv[0] == first) {
            return &c;
        }
    }
    return nullptr;
}

TEST(ArgvFixtures, EveryFixtureHandsTheFrameworkTheSameFlagsAndValues) {
    int flags = 0;
    int kept = 0;
    int equal = 0;
    const auto names = fixtureNames();
    ASSERT_GE(names.size(), 7u);
    for (const auto& name : names) {
        test::TempDir tmp;
        RoundTrip rt = roundTrip(name, tmp);
        EXPECT_FALSE(hasErrors(rt.exported.imported.notes)) << name;
        EXPECT_EQ(rt.program, rt.exportedProgram) << name;
        EXPECT_EQ(rt.figure.equal, rt.figure.flags) << name << ":\n" << rt.figure.diff;
        EXPECT_TRUE(rt.figure.diff.empty()) << name << ":\n" << rt.figure.diff;
        // an export may spell out a default the script left to the framework, nothing else
        std::istringstream added(rt.figure.added);
        std::string line;
        while (std::getline(added, line)) {
            const bool spelledDefault =
                line.rfind("  added: --num-gpus-per-node ", 0) == 0 ||
                line.rfind("  added: --sglang-mem-fraction-static ", 0) == 0;
            EXPECT_TRUE(spelledDefault) << name << ":" << line;
        }
        flags += rt.figure.flags;
        kept += rt.figure.kept;
        equal += rt.figure.equal;
    }
    // the figure docs/launch-scripts.md quotes
    std::cout << "[ fixtures ] " << names.size() << " scripts, " << flags << " distinct flags, "
              << kept << " kept, " << equal << " with equal values\n";
}

TEST(ArgvFixtures, GuardClauseLeavesTheSiteVariableAParameter) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("guard-params.sh", tmp);
    const ImportResult& im = rt.exported.imported;
    ASSERT_FALSE(im.parameters.empty());
    EXPECT_EQ(im.parameters[0].name, "BASE_FOLDER");
    EXPECT_TRUE(im.parameters[0].required);
    EXPECT_EQ(im.recipe.checkpoints.hfCheckpoint, "${BASE_FOLDER}/Qwen3-4B");
    // the export needs the variable, like the script
    test::TempDir bare;
    ASSERT_TRUE(writeBundle(rt.exported.bundle, bare.path()).ok());
    const std::string job = test::readFile(bare.file(rt.exported.bundle.jobScript));
    EXPECT_EQ(job.find("'${BASE_FOLDER}"), std::string::npos) << job;
    EXPECT_NE(job.find(": \"${BASE_FOLDER:?"), std::string::npos) << job;
    // the Ray words of the script's bring-up
    const test::Call* stop = findCall(rt.exported.run.calls, "ray", "stop");
    ASSERT_NE(stop, nullptr);
    EXPECT_EQ(stop->argv, (std::vector<std::string>{"stop", "--force"}));
    const test::Call* start = findCall(rt.exported.run.calls, "ray", "start");
    ASSERT_NE(start, nullptr);
    EXPECT_NE(std::find(start->argv.begin(), start->argv.end(), "--dashboard-host=0.0.0.0"),
              start->argv.end());
    // --env fills the parameter
    ImportOptions io;
    io.catalog = &test::catalog();
    io.env = {{"BASE_FOLDER", "/data"}};
    auto given = importScript(fixturesDir() + "/guard-params.sh", io);
    ASSERT_TRUE(given.ok()) << given.error();
    EXPECT_EQ(given->recipe.checkpoints.hfCheckpoint, "/data/Qwen3-4B");
    EXPECT_TRUE(given->parameters.empty());
}

TEST(ArgvFixtures, MilesPythonModelArgsAreASpliceThatKeepsColocate) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("miles-python-model-args.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.framework, Framework::Miles);
    EXPECT_EQ(r.model.name, "qwen3-4B");
    EXPECT_EQ(r.placement, Placement::Colocate);
    EXPECT_EQ(r.trainer.gpusPerNode.value_or(r.hardware.gpusPerNode), 8);
}

TEST(ArgvFixtures, AsyncSingleNodeDisaggregatedStaysOneNode) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("async-single-node-disagg.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.launcher.entryPoint, "train_async.py");
    EXPECT_EQ(rt.exportedProgram, "train_async.py");
    EXPECT_EQ(r.cluster.nodes, 1);
    EXPECT_EQ(r.hardware.gpusPerNode, 8);
    EXPECT_EQ(r.placement, Placement::Disaggregated);
    auto a = nlohmann::json::parse(rt.original.runtimeEnv, nullptr, false);
    auto b = nlohmann::json::parse(rt.exported.run.runtimeEnv, nullptr, false);
    ASSERT_TRUE(a.is_object() && b.is_object()) << rt.original.runtimeEnv << "\n"
                                                << rt.exported.run.runtimeEnv;
    EXPECT_EQ(a["env_vars"]["NCCL_NVLS_ENABLE"], b["env_vars"]["NCCL_NVLS_ENABLE"]);
}

TEST(ArgvFixtures, EngineFlagAliasesFeedTheEngineFields) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("engine-ep-alias.sh", tmp);
    EXPECT_EQ(rt.exported.imported.recipe.rollout.epSize, 8);
    EXPECT_EQ(rt.exported.imported.recipe.rollout.dpSize, 2);
    EXPECT_TRUE(rt.figure.diff.empty()) << rt.figure.diff;
}

// The long spellings (miles low_precision/run-qwen3-30b-a3b-fp8-two-nodes.sh, slime's fp8
// scripts) come back as the script wrote them, word by word.
TEST(ArgvFixtures, EngineFlagLongAliasesComeBackAsSpelled) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("engine-long-aliases.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.rollout.epSize, 8);
    EXPECT_EQ(r.rollout.dpSize, 2);
    EXPECT_EQ(r.rollout.ppSize, 2);
    EXPECT_EQ(rt.figure.equal, rt.figure.flags) << rt.figure.diff;
    EXPECT_TRUE(rt.figure.diff.empty()) << rt.figure.diff;
    auto [program, argv] = frameworkArgv(rt.exported.run.calls);
    for (const char* word : {"--sglang-expert-parallel-size", "--sglang-data-parallel-size",
                             "--sglang-pipeline-parallel-size"}) {
        EXPECT_NE(std::find(argv.begin(), argv.end(), word), argv.end()) << word;
    }
    for (const char* word : {"--sglang-ep-size", "--sglang-dp-size", "--sglang-pp-size"}) {
        EXPECT_EQ(std::find(argv.begin(), argv.end(), word), argv.end()) << word;
    }
}

TEST(ArgvFixtures, TeacherServerAndWaitLoopRunBeforeTheJob) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("opd-teacher.sh", tmp);
    const test::Call* a = findCall(rt.original.calls, "python3", "-m");
    const test::Call* b = findCall(rt.exported.run.calls, "python3", "-m");
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr) << rt.exported.run.output;
    EXPECT_EQ(a->argv, b->argv);
    // the teacher starts before the job
    std::size_t teacherAt = 0;
    std::size_t jobAt = 0;
    for (std::size_t i = 0; i < rt.exported.run.calls.size(); ++i) {
        const auto& c = rt.exported.run.calls[i];
        if (&c == b) {
            teacherAt = i;
        }
        if (c.tool == "ray" && c.argv.size() > 1 && c.argv[0] == "job") {
            jobAt = i;
        }
    }
    EXPECT_LT(teacherAt, jobAt);
    EXPECT_NE(findCall(rt.exported.run.calls, "curl", "-sf"), nullptr);
}

// vime's OPD form: under the stubs the background teacher stays up, so the original passes its
// `kill -0 "$TEACHER_PID"` wait and reaches the job; the export runs teacher, PID and loop first
TEST(ArgvFixtures, TeacherPidAndForWaitLoopReachTheJob) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("opd-teacher-pid-wait.sh", tmp);
    EXPECT_EQ(rt.program, "train.py") << rt.original.output;
    EXPECT_EQ(rt.exportedProgram, "train.py") << rt.exported.run.output;
    EXPECT_GT(rt.figure.flags, 20) << rt.figure.diff;
    EXPECT_EQ(rt.figure.equal, rt.figure.flags) << rt.figure.diff;
    const test::Call* b = findCall(rt.exported.run.calls, "python3", "-m");
    ASSERT_NE(b, nullptr) << rt.exported.run.output;
    EXPECT_NE(findCall(rt.exported.run.calls, "curl", "-s"), nullptr);
}

TEST(ArgvFixtures, HostfileWorkersBecomeATwoNodeBringUp) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("hostfile-ssh-workers.sh", tmp);
    EXPECT_EQ(rt.exported.imported.recipe.cluster.nodes, 2);
    EXPECT_NE(findCall(rt.original.calls, "ssh", "root@10.0.0.2"), nullptr);
}

TEST(ArgvFixtures, ModelMissingFromTheCatalogTakesItsShapeFromModelArgs) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("inline-shape.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    ASSERT_TRUE(r.model.shape.has_value());
    EXPECT_EQ(r.model.shape->name, "toy-moe-16B-A3B");
    EXPECT_EQ(r.model.shape->numLayers, 27);
    EXPECT_EQ(r.model.shape->hidden, 2048);
    EXPECT_EQ(r.model.shape->ffnHidden, 11264);
    EXPECT_EQ(r.model.shape->moeFfnHidden, 1408);
    EXPECT_EQ(r.model.shape->numExperts, 64);
    EXPECT_EQ(r.model.shape->topK, 6);
    EXPECT_EQ(r.model.shape->numAttentionHeads, 16);
    EXPECT_EQ(r.model.shape->numQueryGroups, 16);
    EXPECT_EQ(r.model.shape->vocabSize, 163840);
}

TEST(ArgvFixtures, PlatformProbeKeepsTheArrayItMayAppendTo) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("platform-probe.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.rollout.gpusPerEngine, 2);
    EXPECT_DOUBLE_EQ(r.rollout.memFraction, 0.6);
    ASSERT_EQ(r.launcher.preLaunch.size(), 2u);  // the platform test and the GPU count
    bool warned = false;
    for (const auto& n : rt.exported.imported.notes) {
        warned = warned || (n.level == NoteLevel::Warning && n.line == 31 &&
                            n.message.find("may append to ENGINE") != std::string::npos);
    }
    EXPECT_TRUE(warned);
}

TEST(ArgvFixtures, FileTestAndPrintfDefinitionsTravelWithTheExport) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("file-test-default.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    ASSERT_EQ(r.launcher.preLaunch.size(), 3u);
    EXPECT_NE(r.launcher.preLaunch[0].find("latest_checkpointed_iteration.txt"), std::string::npos);
    EXPECT_NE(r.launcher.preLaunch[1].find("printf -v BUFFER_BYTES"), std::string::npos);
    EXPECT_NE(r.launcher.preLaunch[2].find("read -r -a SEED_ARGS"), std::string::npos);
}

// Issue 15 (miles run-gpt-oss-20b-bf16.sh, run-kimi-k25.sh, run-gpt-oss-20b.sh): a variable
// the script only hands to the environment, read unset without `set -u`, is empty there; the
// export (which runs under `set -u`) gives it that value instead of stopping.
TEST(ArgvFixtures, EnvironmentReadUnsetStaysEmptyUnderSetU) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("env-read-unset.sh", tmp);
    auto a = nlohmann::json::parse(rt.original.runtimeEnv, nullptr, false);
    auto b = nlohmann::json::parse(rt.exported.run.runtimeEnv, nullptr, false);
    ASSERT_TRUE(a.is_object() && b.is_object()) << rt.original.runtimeEnv << "\n"
                                                << rt.exported.run.runtimeEnv;
    EXPECT_EQ(a["env_vars"]["NCCL_NVLS_ENABLE"], b["env_vars"]["NCCL_NVLS_ENABLE"]);
    test::TempDir bare;
    ASSERT_TRUE(writeBundle(rt.exported.bundle, bare.path()).ok());
    const std::string job = test::readFile(bare.file(rt.exported.bundle.jobScript));
    EXPECT_NE(job.find(": \"${HAS_NVLINK=}\""), std::string::npos) << job;
    EXPECT_NE(job.find(": \"${PYTHONPATH=}\""), std::string::npos) << job;
    EXPECT_EQ(job.find("${HAS_NVLINK:?"), std::string::npos) << job;
}

// Issue 15 (miles run-kimi-k25.sh, run-nemotron-3-nano-4b.sh): model_args_utils.py knows models
// miles has no models/NAME.sh for; the export runs the same two lines rather than sourcing a
// file that does not exist.
TEST(ArgvFixtures, MilesModelArgsWithoutAModelFileAreComputedTheSameWay) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("miles-python-model-args-unknown.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.framework, Framework::Miles);
    EXPECT_EQ(r.model.name, "toy-next-1T");
    ASSERT_FALSE(r.launcher.preLaunch.empty());
    EXPECT_NE(r.launcher.preLaunch.back().find("model_args_utils.py"), std::string::npos);
    EXPECT_NE(r.launcher.preLaunch.back().find("read -ra MODEL_ARGS"), std::string::npos);
    test::TempDir bare;
    ASSERT_TRUE(writeBundle(rt.exported.bundle, bare.path()).ok());
    const std::string job = test::readFile(bare.file(rt.exported.bundle.jobScript));
    EXPECT_EQ(job.find("/models/toy-next-1T.sh"), std::string::npos) << job;
    // the model's flags reached the framework in both runs
    EXPECT_NE(rt.figure.flags, 0);
    EXPECT_EQ(rt.figure.diff, "");
}

// Issue 15 (slime run-qwen3-vl-8B-fsdp.sh, run-qwen3-next-80B-A3B-fsdp.sh): an FSDP script
// sourcing no model file is named by its checkpoint directory, with a warning, not an error.
TEST(ArgvFixtures, FsdpScriptWithoutModelFileIsNamedByItsCheckpoint) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("fsdp-model-from-checkpoint.sh", tmp);
    const ImportResult& im = rt.exported.imported;
    EXPECT_EQ(im.recipe.model.name, "qwen3-4B");
    EXPECT_EQ(im.recipe.trainer.backend, TrainBackend::Fsdp);
    bool warned = false;
    for (const auto& n : im.notes) {
        warned = warned || (n.level == NoteLevel::Warning && n.field == "model.name" &&
                            n.message.find("--hf-checkpoint") != std::string::npos);
    }
    EXPECT_TRUE(warned);
}

// Issue 15 (slime run-qwen3-4B-base-sft.sh, run-glm5-744B-A40B-sft.sh, ...): an SFT script
// trains only; it neither colocates nor gives the rollout GPUs, and that is valid.
TEST(ArgvFixtures, TrainOnlySftScriptNeedsNoRolloutGpus) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("sft-train-only.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    EXPECT_EQ(r.launcher.entryPoint, "train_async.py");
    EXPECT_EQ(r.placement, Placement::Disaggregated);
#ifdef RUNPLANE_HAVE_PLAN_RULES
    for (const auto& f : validate(r, test::catalog())) {
        EXPECT_NE(f.ruleId, "cluster.gpu-budget") << f.message;
    }
    // without --debug-train-only the same layout has no GPUs for its engines
    Recipe withEngines = r;
    withEngines.extraArgs.erase(
        std::remove_if(withEngines.extraArgs.begin(), withEngines.extraArgs.end(),
                       [](const ExtraArg& e) { return e.flag == "--debug-train-only"; }),
        withEngines.extraArgs.end());
    const auto findings = validate(withEngines, test::catalog());
    EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
        return f.ruleId == "cluster.gpu-budget" && f.severity == Severity::Error;
    }));
#endif
}

// Issue 15 (slime examples/strands-agents, miles lora/run-gpt-oss-20B-megatron-moe-lora.sh,
// run-diffusion-grpo-ocr.sh): a value computed when the script runs travels as a pre-launch step;
// the flag keeps its word (`..._${STAMP}`) and the name is no recipe parameter.
TEST(ArgvFixtures, ValuesComputedAtRunTimeTravelAsPreLaunchSteps) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("runtime-values.sh", tmp);
    const ImportResult& im = rt.exported.imported;
    EXPECT_EQ(im.recipe.checkpoints.save, "/ckpt/qwen3-4b_grpo_${STAMP}");
    EXPECT_TRUE(im.parameters.empty());
    ASSERT_EQ(im.recipe.launcher.preLaunch.size(), 2u);
    EXPECT_NE(im.recipe.launcher.preLaunch[0].find("GPUS=$(echo"), std::string::npos);
    EXPECT_NE(im.recipe.launcher.preLaunch[1].find("STAMP=$(date"), std::string::npos);
}

// Issue 15 (slime examples/tau-bench/tau2/run_grpo.sh, miles minimax_m3_vl): the set -u safe
// splice keeps its four flags (a value with a space stays one word), the probe written as a
// command list is a pre-launch step like its if-block form.
TEST(ArgvFixtures, SafeSpliceAndProbeCommandList) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("safe-splice-probe-list.sh", tmp);
    const Recipe& r = rt.exported.imported.recipe;
    const auto project =
        std::find_if(r.extraArgs.begin(), r.extraArgs.end(),
                     [](const ExtraArg& e) { return e.flag == "--wandb-project"; });
    ASSERT_NE(project, r.extraArgs.end());
    EXPECT_EQ(project->values, std::vector<std::string>{"grpo demo"});
    ASSERT_EQ(r.launcher.preLaunch.size(), 2u);
    EXPECT_NE(r.launcher.preLaunch[1].find("&& HAS_NVLINK=1 || HAS_NVLINK=0"), std::string::npos);
    EXPECT_TRUE(rt.exported.imported.parameters.empty());
    for (const auto& n : rt.exported.imported.notes) {
        EXPECT_NE(n.level, NoteLevel::Warning) << n.format();
    }
}

}  // namespace

bool hasWarningWith(const ImportResult& im, const std::string& text) {
    return std::any_of(im.notes.begin(), im.notes.end(), [&](const LaunchNote& n) {
        return n.level == NoteLevel::Warning && n.message.find(text) != std::string::npos;
    });
}

const ExtraArg* extraArg(const Recipe& r, const std::string& flag) {
    for (const auto& e : r.extraArgs) {
        if (e.flag == flag) {
            return &e;
        }
    }
    return nullptr;
}

TEST(ArgvFixtures, HereDocumentFedToAContainerShellIsTheRun) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("container-heredoc-run.sh", tmp);
    const ImportResult& im = rt.exported.imported;
    EXPECT_EQ(im.recipe.model.name, "qwen3-4B");
    EXPECT_EQ(im.recipe.trainer.tp, 2);
    EXPECT_EQ(im.recipe.placement, Placement::Colocate);
    // the container is a finding naming its line, not part of the recipe
    EXPECT_TRUE(hasWarningWith(im, "example/runtime:latest")) << im.notes.size();
    const auto w = std::find_if(im.notes.begin(), im.notes.end(), [](const LaunchNote& n) {
        return n.message.find("here-document") != std::string::npos;
    });
    ASSERT_NE(w, im.notes.end());
    EXPECT_EQ(w->line, 14);
    EXPECT_GT(rt.figure.flags, 30);
    EXPECT_EQ(rt.figure.equal, rt.figure.flags);
}

TEST(ArgvFixtures, HereDocumentWithAnUnquotedDelimiterIsNotGuessed) {
    // the outer shell expands $... first: not read, and the error names the line
    test::TempDir tmp;
    const std::string script = tmp.file("run.sh");
    test::writeFile(script,
                    "#!/bin/bash\nTP=2\nbash -s <<EOF\n"
                    "python3 train.py --tensor-model-parallel-size $TP --rollout-batch-size 8\n"
                    "EOF\n");
    ImportOptions io;
    io.catalog = &test::catalog();
    io.modelName = "qwen3-4B";
    auto im = importScript(script, io);
    ASSERT_FALSE(im.ok());
    EXPECT_NE(im.error().find("run.sh:3: warning: not understood: the here-document"),
              std::string::npos)
        << im.error();
    // with <<'EOF' it is the script bash runs
    test::writeFile(script,
                    "#!/bin/bash\nbash -s <<'EOF'\nTP=2\n"
                    "python3 train.py --tensor-model-parallel-size $TP --rollout-batch-size 8\n"
                    "EOF\n");
    auto quoted = importScript(script, io);
    ASSERT_TRUE(quoted.ok()) << quoted.error();
    EXPECT_EQ(quoted->recipe.trainer.tp, 2);
    EXPECT_EQ(quoted->recipe.batch.rolloutBatchSize, 8);
}

TEST(ArgvFixtures, LaunchInAFunctionDrivenByScriptArguments) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("function-launch-args.sh", tmp);
    const ImportResult& im = rt.exported.imported;
    // the `$#` guard is read as passed; the launch of NODE_RANK 0 is the recipe, with a warning
    EXPECT_TRUE(hasWarningWith(im, "the launch command runs only when")) << im.notes.size();
    EXPECT_EQ(im.recipe.rollout.numGpus, 4);
    EXPECT_EQ(im.recipe.placement, Placement::Disaggregated);
    const ExtraArg* mode = extraArg(im.recipe, "--update-weight-transfer-mode");
    ASSERT_NE(mode, nullptr);
    EXPECT_EQ(mode->values, std::vector<std::string>{"broadcast"});  // $1 unset: not p2p
    const bool argParam = std::any_of(im.parameters.begin(), im.parameters.end(),
                                      [](const auto& p) { return p.name == "2"; });
    EXPECT_TRUE(argParam);
    EXPECT_GT(rt.figure.flags, 20);
    EXPECT_EQ(rt.figure.equal, rt.figure.flags);
    // --env 1=p2p gives the script argument
    ImportOptions io;
    io.catalog = &test::catalog();
    io.env = {{"1", "p2p"}, {"2", "0"}, {"3", "10.0.0.1"}};
    auto given = importScript(fixturesDir() + "/function-launch-args.sh", io);
    ASSERT_TRUE(given.ok()) << given.error();
    const ExtraArg* p2p = extraArg(given->recipe, "--update-weight-transfer-mode");
    ASSERT_NE(p2p, nullptr);
    EXPECT_EQ(p2p->values, std::vector<std::string>{"p2p"});
    EXPECT_FALSE(hasWarningWith(*given, "the launch command runs only when"));
}

TEST(ArgvFixtures, TeacherFunctionsAndDataPrepHereDocRunBeforeTheJob) {
    test::TempDir tmp;
    RoundTrip rt = roundTrip("function-teacher-dataprep.sh", tmp);
    const auto& calls = rt.exported.run.calls;
    const test::Call* teacher = findCall(calls, "python3", "-m");
    const test::Call* original = findCall(rt.original.calls, "python3", "-m");
    ASSERT_NE(original, nullptr);
    ASSERT_NE(teacher, nullptr) << rt.exported.run.output;
    EXPECT_EQ(teacher->argv, original->argv);
    const test::Call* prep = findCall(calls, "python3", "-");
    ASSERT_NE(prep, nullptr) << rt.exported.run.output;
    EXPECT_EQ(prep->argv,
              (std::vector<std::string>{"-", "/root/data/train.jsonl", "/tmp/opd-mixed.jsonl"}));
    EXPECT_NE(findCall(calls, "curl", "-sf"), nullptr);
    // all of them before the job
    std::size_t jobAt = calls.size();
    std::size_t lastStep = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        if (&calls[i] == teacher || &calls[i] == prep) {
            lastStep = i;
        }
        if (calls[i].tool == "ray" && !calls[i].argv.empty() && calls[i].argv[0] == "job") {
            jobAt = std::min(jobAt, i);
        }
    }
    EXPECT_LT(lastStep, jobAt);
    EXPECT_EQ(rt.figure.equal, rt.figure.flags);
}

}  // namespace runplane::plan::launch

namespace runplane::plan::launch {
namespace {

// Issue 15: the export of a `run_inkling.py train` recipe writes what that launcher accepts: its
// subcommand, its own options, and train.py flags only through --extra-args (which it appends
// last); never run_qwen3_8.py's --tp / --pp / --cp / --n-samples-per-prompt / --lora.
TEST(ArgvFixtures, InklingLauncherExportWritesOnlyWhatTheLauncherTakes) {
    for (const std::string name :
         {"inkling-launcher.sh", "inkling-launcher-lora.sh", "inkling-launcher-async.sh"}) {
        test::TempDir tmp;
        RoundTrip rt = roundTrip(name, tmp);
        EXPECT_EQ(rt.exportedProgram, "run_inkling.py") << name;
        EXPECT_EQ(rt.figure.equal, rt.figure.flags) << name << ":\n" << rt.figure.diff;
        EXPECT_TRUE(rt.figure.added.empty()) << name << ":\n" << rt.figure.added;
        auto [program, argv] = frameworkArgv(rt.exported.run.calls);
        ASSERT_FALSE(argv.empty()) << name;
        EXPECT_EQ(argv[0], "train") << name;
        for (const char* refused : {"--tp", "--pp", "--cp", "--ep", "--etp",
                                    "--n-samples-per-prompt", "--lora", "--recompute"}) {
            EXPECT_EQ(std::find(argv.begin(), argv.end(), refused), argv.end())
                << name << ": " << refused;
        }
        for (const auto& n : rt.exported.bundle.notes) {
            EXPECT_NE(n.level, NoteLevel::Warning) << name << ": " << n.format();
        }
        // import(export(r)) == r: what the export leaves to the launcher comes back from it
        ImportOptions io;
        io.catalog = &test::catalog();
        auto again = importScript(tmp.file("export") + "/" + rt.exported.bundle.jobScript, io);
        ASSERT_TRUE(again.ok()) << again.error();
        EXPECT_EQ(writeRecipe(again->recipe), writeRecipe(rt.exported.imported.recipe)) << name;
        EXPECT_TRUE(again->recipe == rt.exported.imported.recipe) << name;
        if (name == "inkling-launcher-async.sh") {
            EXPECT_EQ(again->recipe.placement, Placement::Disaggregated);
            EXPECT_EQ(again->recipe.launcher.entryPoint, "train_async.py");
            EXPECT_EQ(again->recipe.rollout.numGpus, 16);
        }
    }
}

// A recipe the launcher cannot be told in part: its own layout is overridden in --extra-args, a
// switch it passes (--colocate) cannot be taken back and is a warning naming the field.
TEST(ArgvFixtures, InklingLauncherExportOverridesOrWarns) {
    ImportOptions io;
    io.catalog = &test::catalog();
    auto imported = importScript(fixturesDir() + "/inkling-launcher.sh", io);
    ASSERT_TRUE(imported.ok()) << imported.error();
    Recipe r = imported->recipe;
    r.trainer.tp = 8;
    r.trainer.pp = 4;
    r.placement = Placement::Disaggregated;
    r.rollout.numGpus = 8;
    auto plan = detail::buildPlan(r, Flavour::Miles, {});
    const auto argv = launcherArgv(plan.expectedArgv({}));
    auto has = [&](const std::vector<std::string>& words) {
        return std::search(argv.begin(), argv.end(), words.begin(), words.end()) != argv.end();
    };
    EXPECT_TRUE(has({"--extra-args:--tensor-model-parallel-size", "8"}));
    EXPECT_TRUE(has({"--extra-args:--pipeline-model-parallel-size", "4"}));
    EXPECT_TRUE(has({"--extra-args:--rollout-num-gpus", "8"}));
    bool placementWarned = false;
    for (const auto& n : plan.notes) {
        placementWarned =
            placementWarned || (n.level == NoteLevel::Warning && n.field == "placement" &&
                                n.message.find("--colocate") != std::string::npos);
    }
    EXPECT_TRUE(placementWarned);
}

}  // namespace
}  // namespace runplane::plan::launch
