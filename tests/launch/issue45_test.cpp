// Issue 45, "import every public launcher": the constructs the reader now follows (an empty-default
// guard, `case`, `[ a ] || [ b ] && X=v`, `NAME=value source FILE`, a launch followed by
// `|| true`), vime's own argument checks (`--opd-type vllm`, `--update-weight-mode delta`) and an
// Ascend NPU run refused with its line. The fixture scripts' value-level round trip is
// ArgvFixtures.EveryFixtureHandsTheFrameworkTheSameFlagsAndValues.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"
#ifdef RUNPLANE_HAVE_PLAN_RULES
#include "backend/plan/rules.h"
#endif

namespace runplane::plan::launch {
namespace {

Result<ImportResult> importFixture(const std::string& name) {
    ImportOptions options;
    options.catalog = &test::catalog();
    return importScript(test::dataDir() + "/fixtures/" + name, options);
}

Result<ImportResult> importText(const test::TempDir& dir, const std::string& file,
                                const std::string& text) {
    test::writeFile(dir.file(file), text);
    ImportOptions options;
    options.catalog = &test::catalog();
    return importScript(dir.file(file), options);
}

const ScriptParameter* parameterNamed(const ImportResult& r, const std::string& name) {
    for (const auto& p : r.parameters) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

std::string warnings(const ImportResult& r) {
    std::string out;
    for (const auto& n : r.notes) {
        if (n.level != NoteLevel::Info) {
            out += n.file + ":" + std::to_string(n.line) + ": " + n.message + "\n";
        }
    }
    return out;
}

TEST(Issue45, EmptyDefaultGuardLeavesAParameterInsteadOfStoppingTheReader) {
    auto r = importFixture("empty-default-guards.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(hasErrors(r->notes)) << warnings(*r);
    // the guards are read as passed: the launch is found and its flags read
    EXPECT_EQ(r->recipe.rollout.gpusPerEngine, 2);
    EXPECT_EQ(r->recipe.batch.numRollout, 100);
    for (const char* name : {"BASE_DIR", "MASTER_ADDR"}) {
        const ScriptParameter* p = parameterNamed(*r, name);
        ASSERT_NE(p, nullptr) << name;
        EXPECT_TRUE(p->required) << name;
    }
    // an optional variable read with an empty default stays a parameter, not required
    const ScriptParameter* hostfile = parameterNamed(*r, "HOSTFILE");
    ASSERT_NE(hostfile, nullptr);
    EXPECT_FALSE(hostfile->required);
    EXPECT_EQ(r->recipe.checkpoints.hfCheckpoint, "${BASE_DIR}/Qwen3-4B");
}

TEST(Issue45, CaseOrListSourceAssignmentAndOrTrueAreRead) {
    auto r = importFixture("case-config-or-list.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    const std::string w = warnings(*r);
    EXPECT_EQ(w.find("not understood"), std::string::npos) << w;
    // the case item for MODEL_SIZE=4B
    EXPECT_EQ(r->recipe.trainer.tp, 2);
    EXPECT_EQ(r->recipe.batch.numRollout, 200);
    EXPECT_EQ(r->recipe.batch.maxTokensPerGpu, 9216);
    EXPECT_EQ(r->recipe.model.name, "qwen3-4B");
    // [ TP -gt 1 ] || [ PP -gt 1 ] && SEQ_PARALLEL=--sequence-parallel
    EXPECT_TRUE(r->recipe.trainer.sequenceParallel);
    // the assignment on the source line travels with the export
    const auto& pre = r->recipe.launcher.preLaunch;
    EXPECT_TRUE(std::any_of(pre.begin(), pre.end(), [](const std::string& s) {
        return s.find("MODEL_ARGS_ROTARY_BASE=5000000") != std::string::npos;
    })) << "pre_launch has no MODEL_ARGS_ROTARY_BASE line";
    bool rotary = false;
    for (const auto& f : r->flags) {
        if (f.flag == "--rotary-base") {
            rotary = f.values == std::vector<std::string>{"5000000"};
        }
    }
    EXPECT_TRUE(rotary) << "the model file saw MODEL_ARGS_ROTARY_BASE";
}

TEST(Issue45, CaseOnAnUnknownValueStaysNotUnderstoodAndAMissOfEveryPatternReadsNothing) {
    test::TempDir dir;
    const std::string tail =
        "ray job submit -- python3 train.py --tensor-model-parallel-size ${TP} "
        "--rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n";
    // the subject is a run-time value: the block is not read and TP stays unknown
    auto unknown =
        importText(dir, "a/run.sh",
                   "M=$(hostname)\ncase \"$M\" in\n  a*) TP=2 ;;\n  *) TP=4 ;;\nesac\n" + tail);
    ASSERT_TRUE(unknown.ok()) << unknown.error();
    EXPECT_NE(warnings(*unknown).find("case statement"), std::string::npos) << warnings(*unknown);
    // a known subject matching no pattern: nothing is set
    auto miss =
        importText(dir, "b/run.sh",
                   "M=zz\nTP=8\ncase \"$M\" in\n  a*|b) TP=2 ;;\n  '*') TP=4 ;;\nesac\n" + tail);
    ASSERT_TRUE(miss.ok()) << miss.error();
    EXPECT_EQ(miss->recipe.trainer.tp, 8);
    // a quoted glob character is literal, an unquoted one matches
    auto glob =
        importText(dir, "c/run.sh",
                   "M=node7\ncase $M in\n  'node*') TP=2 ;;\n  node*) TP=4 ;;\nesac\n" + tail);
    ASSERT_TRUE(glob.ok()) << glob.error();
    EXPECT_EQ(glob->recipe.trainer.tp, 4);
}

TEST(Issue45, AscendNpuRunIsRefusedWithTheLine) {
    test::TempDir dir;
    auto r = importText(dir, "vime/examples/run-npu.sh",
                        "set -ex\nNUM_NPUS=16\n"
                        "ray start --head --node-ip-address 127.0.0.1 --num-gpus 0 \\\n"
                        "    --resources \"{\\\"NPU\\\": $NUM_NPUS}\" --disable-usage-stats\n"
                        "ray job submit -- python3 -u train.py --rollout-batch-size 8 "
                        "--hf-checkpoint /m/Qwen3-4B --vllm-gpu-memory-utilization 0.7\n");
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_TRUE(hasErrors(r->notes));
    const auto it = std::find_if(r->notes.begin(), r->notes.end(),
                                 [](const LaunchNote& n) { return n.level == NoteLevel::Error; });
    EXPECT_NE(it->message.find("Ascend NPU"), std::string::npos) << it->message;
    EXPECT_EQ(it->line, 4);
}

TEST(Issue45, AMissingLineContinuationInTheLaunchIsRefusedWithTheLine) {
    test::TempDir dir;
    auto r = importText(dir, "a/run.sh",
                        "ray job submit -- python3 train.py \\\n"
                        "   --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n"
                        "   --num-rollout 10 \\\n"
                        "   --global-batch-size 64\n");
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_TRUE(hasErrors(r->notes)) << warnings(*r);
    const auto it = std::find_if(r->notes.begin(), r->notes.end(),
                                 [](const LaunchNote& n) { return n.level == NoteLevel::Error; });
    EXPECT_EQ(it->line, 3);
    EXPECT_NE(it->message.find("line continuation"), std::string::npos) << it->message;
    // with the continuation in place nothing is refused
    auto fine = importText(dir, "b/run.sh",
                           "ray job submit -- python3 train.py \\\n"
                           "   --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B \\\n"
                           "   --num-rollout 10\n");
    ASSERT_TRUE(fine.ok()) << fine.error();
    EXPECT_FALSE(hasErrors(fine->notes)) << warnings(*fine);
}

TEST(Issue45, AHereDocumentThatNeverEndsIsRefusedWithItsLine) {
    // vime's run-kimi-k2-thinking-npu.sh: `cat <<EOF` closed by an indented `  EOF`, so bash
    // reads the launch below it as the document's text; the refusal names the line that opens it.
    test::TempDir dir;
    auto r = importText(dir, "a/run.sh",
                        "set -ex\n"
                        "cat > /tmp/cfg.yaml <<EOF\n"
                        "  key: value\n"
                        "  EOF\n"
                        "ray job submit -- python3 train.py --rollout-batch-size 8 "
                        "--hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(":2: "), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("never ends"), std::string::npos) << r.error();
    // closed at column 0 (or with tabs under <<-) nothing is said of it
    for (const char* closing : {"cat > /tmp/cfg.yaml <<EOF\n  key: value\nEOF\n",
                                "cat > /tmp/cfg.yaml <<-EOF\n\tkey: value\n\tEOF\n"}) {
        auto fine = importText(dir, "b/run.sh",
                               std::string("set -ex\n") + closing +
                                   "ray job submit -- python3 train.py --rollout-batch-size 8 "
                                   "--hf-checkpoint /m/Qwen3-4B\n");
        ASSERT_TRUE(fine.ok()) << fine.error();
        EXPECT_EQ(warnings(*fine).find("never ends"), std::string::npos) << warnings(*fine);
    }
}

TEST(Issue45, RayPortsAndSubmitWordsAreKeptAndWrittenBack) {
    test::TempDir dir;
    auto r = importText(dir, "a/run.sh",
                        "ray start --head --node-ip-address 127.0.0.1 --num-gpus 8 --port=6399 "
                        "--dashboard-port=8267 --disable-usage-stats\n"
                        "ray job submit --address=\"http://127.0.0.1:8267\" --no-wait "
                        "--submission-id grpo-1 --working-dir=/root/vime -- python3 train.py "
                        "--rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_TRUE(r.ok()) << r.error();
    const auto& start = r->recipe.launcher.rayStartArgs;
    EXPECT_NE(std::find(start.begin(), start.end(), "--port=6399"), start.end());
    EXPECT_NE(std::find(start.begin(), start.end(), "--dashboard-port=8267"), start.end());
    EXPECT_EQ(r->recipe.launcher.raySubmitArgs,
              (std::vector<std::string>{"--no-wait", "--submission-id", "grpo-1",
                                        "--working-dir=/root/vime"}));
    ExportOptions eo;
    eo.catalog = &test::catalog();
    Recipe recipe = r->recipe;
    recipe.cluster.nodes = 2;  // the worker script too
    auto bundle = exportLaunch(recipe, Flavour::Slime, eo);
    ASSERT_TRUE(bundle.ok()) << bundle.error();
    std::string all;
    for (const auto& f : bundle->files) {
        all += f.content;
    }
    EXPECT_NE(all.find("--address=\"http://127.0.0.1:8267\""), std::string::npos) << all;
    EXPECT_NE(all.find("--no-wait"), std::string::npos);
    EXPECT_NE(all.find("--submission-id"), std::string::npos);
    EXPECT_NE(all.find("grpo-1"), std::string::npos);
    EXPECT_NE(all.find("${MASTER_ADDR}:6399"), std::string::npos);  // the workers join there
    EXPECT_EQ(all.find("--dashboard-port=8265"), std::string::npos);
}

// vime's and slime's scripts clear the GPUs of the last run before `set -ex`: a `kill -9` per pid
// `nvidia-smi` lists, which fails for a process gone meanwhile (here the fake nvidia-smi's words
// are no pids at all) without ending the original. The export ran its pre-launch steps under its
// own `set -e`, so the same failure ended the export before the launch (found measuring
// vllm-project/vime's run-qwen3-4B.sh: every flag "lost"). A step read while the script's
// errexit was off keeps it off in the export; one read after `set -ex` keeps it on.
TEST(Issue45, APreLaunchStepKeepsTheScriptsErrexitStateInTheExport) {
    test::TempDir dir;
    auto r = importText(
        dir, "vime/scripts/run-clear-gpus.sh",
        "#!/bin/bash\n"
        "# for rerun the task\n"
        "GPU_PIDs=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader,nounits)\n"
        "if [ -n \"$GPU_PIDs\" ]; then\n"
        "    for pid in $GPU_PIDs; do\n"
        "        echo \"Killing GPU process $pid\"\n"
        "        kill -9 \"$pid\"\n"
        "    done\n"
        "fi\n"
        "set -ex\n"
        "NVLINK_COUNT=$(nvidia-smi topo -m 2>/dev/null | grep -o 'NV[0-9][0-9]*' | wc -l)\n"
        "ray start --head --node-ip-address 127.0.0.1 --num-gpus 8 --disable-usage-stats\n"
        "ray job submit --address=\"http://127.0.0.1:8265\" "
        "--runtime-env-json='{\"env_vars\": {\"NCCL_NVLS_ENABLE\": \"'\"${NVLINK_COUNT}\"'\"}}' "
        "-- python3 train.py --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_TRUE(r.ok()) << r.error();
    const auto& steps = r->recipe.launcher.preLaunch;
    const auto kill = std::find_if(steps.begin(), steps.end(), [](const std::string& s) {
        return s.find("kill -9") != std::string::npos;
    });
    ASSERT_NE(kill, steps.end());
    EXPECT_EQ(kill->rfind("set +e\n", 0), 0u) << *kill;
    for (const auto& step : steps) {
        if (step.find("NVLINK_COUNT=") != std::string::npos) {
            EXPECT_EQ(step.find("set +e"), std::string::npos) << step;
        }
    }

    ExportOptions eo;
    eo.catalog = &test::catalog();
    auto bundle = exportLaunch(r->recipe, Flavour::Vime, eo);
    ASSERT_TRUE(bundle.ok()) << bundle.error();
    const std::string out = dir.file("export");
    for (const auto& f : bundle->files) {
        test::writeFile(out + "/" + f.name, f.content, f.executable);
    }
    test::writeFile(out + "/models/qwen3-4B.sh", "MODEL_ARGS=(--num-layers 36)\n");
    test::FakeTools fakes(dir.file("fakes"));
    const auto run = test::runProcess({"bash", out + "/" + bundle->jobScript}, fakes.env(), out);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    bool trained = false;
    for (const auto& call : fakes.calls()) {
        trained =
            trained || std::find(call.argv.begin(), call.argv.end(), "train.py") != call.argv.end();
    }
    EXPECT_TRUE(trained) << "the export never reached train.py:\n" << run.output;
}

#ifdef RUNPLANE_HAVE_PLAN_RULES
std::vector<std::string> errorIds(const Recipe& r) {
    std::vector<std::string> out;
    for (const auto& f : validate(r, test::catalog())) {
        if (f.severity == Severity::Error) {
            out.push_back(f.ruleId);
        }
    }
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Issue45, VimeChecksItsOwnOpdTypesAndRefusesDeltaWeightSync) {
    test::TempDir dir;
    const std::string head =
        "source \"$(dirname \"$0\")/models/qwen3-4B.sh\"\n"
        "ray job submit -- python3 train.py ${MODEL_ARGS[@]} --actor-num-nodes 1 "
        "--actor-num-gpus-per-node 4 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 4 "
        "--hf-checkpoint /m/Qwen3-4B --ref-load /m/Qwen3-4B_torch_dist "
        "--rollout-batch-size 8 --n-samples-per-prompt 4 --global-batch-size 32 "
        "--vllm-gpu-memory-utilization 0.7 ";
    test::writeFile(dir.file("vime/scripts/models/qwen3-4B.sh"),
                    test::readFile(test::dataDir() + "/fixtures/models/qwen3-4B.sh"));
    // vime's external teacher is a vLLM server: --opd-type vllm is valid there
    auto vllm = importText(dir, "vime/scripts/run-opd.sh", head + "--use-opd --opd-type vllm\n");
    ASSERT_TRUE(vllm.ok()) << vllm.error();
    EXPECT_EQ(vllm->recipe.framework, Framework::Vime);
    EXPECT_FALSE(contains(errorIds(vllm->recipe), "opd.needs-type"));
    // ... and sglang is not one of vime's choices
    auto sglang =
        importText(dir, "vime/scripts/run-opd2.sh", head + "--use-opd --opd-type sglang\n");
    ASSERT_TRUE(sglang.ok()) << sglang.error();
    EXPECT_TRUE(contains(errorIds(sglang->recipe), "opd.needs-type"));
    // vllm mode forbids a teacher checkpoint, as sglang mode does on slime
    auto teacher = importText(dir, "vime/scripts/run-opd3.sh",
                              head + "--use-opd --opd-type vllm --opd-teacher-load /m/t\n");
    ASSERT_TRUE(teacher.ok()) << teacher.error();
    EXPECT_TRUE(contains(errorIds(teacher->recipe), "opd.sglang-no-teacher"));
    // vime_validate_args raises NotImplementedError on delta weight sync, before its other checks
    auto delta = importText(dir, "vime/scripts/run-delta.sh",
                            head +
                                "--update-weight-mode delta --update-weight-transport disk "
                                "--update-weight-disk-dir /shared/d\n");
    ASSERT_TRUE(delta.ok()) << delta.error();
    const auto ids = errorIds(delta->recipe);
    EXPECT_TRUE(contains(ids, "weight-update.vime-delta"));
    EXPECT_FALSE(contains(ids, "weight-update.delta-local-dir"));
    // on slime the same flags meet slime's delta checks, not vime's
    test::writeFile(dir.file("slime/scripts/models/qwen3-4B.sh"),
                    test::readFile(test::dataDir() + "/fixtures/models/qwen3-4B.sh"));
    std::string slimeText = head +
                            "--update-weight-mode delta --update-weight-transport disk "
                            "--update-weight-disk-dir /shared/d\n";
    slimeText.replace(slimeText.find("--vllm-gpu-memory-utilization"),
                      std::string("--vllm-gpu-memory-utilization").size(),
                      "--sglang-mem-fraction-static");
    auto slime = importText(dir, "slime/scripts/run-delta.sh", slimeText);
    ASSERT_TRUE(slime.ok()) << slime.error();
    EXPECT_EQ(slime->recipe.framework, Framework::Slime);
    EXPECT_FALSE(contains(errorIds(slime->recipe), "weight-update.vime-delta"));
    EXPECT_TRUE(contains(errorIds(slime->recipe), "weight-update.delta-local-dir"));
}
#endif

// vime's ROCm scripts: `IFS=',' read -r -a IDS <<< "${CUDA_VISIBLE_DEVICES}"` and
// `NUM_GPUS=${NUM_GPUS:-${#IDS[@]}}` (before: the IFS on the read line made the reader skip it,
// NUM_GPUS became a required parameter and the export stopped on it)
TEST(Issue45, IfsOnTheReadLineSplitsTheListItCounts) {
    auto r = importFixture("rocm-visible-devices.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    const std::string w = warnings(*r);
    EXPECT_EQ(w.find("not understood"), std::string::npos) << w;
    EXPECT_EQ(parameterNamed(*r, "NUM_GPUS"), nullptr);
    EXPECT_EQ(r->recipe.hardware.gpusPerNode, 2);
    // bash's splitting: IFS white space trims and separates, a comma ends a field (an empty one
    // between two commas is kept, a trailing one is not)
    test::TempDir dir;
    auto split = importText(dir, "a/run.sh",
                            "IFS=', ' read -r -a IDS <<< \" 4, 5,,6, \"\n"
                            "ray job submit -- python3 train.py --actor-num-gpus-per-node "
                            "${#IDS[@]} --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_TRUE(split.ok()) << split.error();
    EXPECT_EQ(split->recipe.hardware.gpusPerNode, 4) << warnings(*split);
}

// vime's OPD example: the teacher's PID (`TEACHER_PID=$!`) and the `for` loop that waits on
// `kill -0` and /health are carried with the background server (before: the loop was "not
// understood" and left out, the PID with it, so the export started the job without waiting)
TEST(Issue45, TeacherPidAndForWaitLoopAreCarriedAsPreLaunchSteps) {
    auto r = importFixture("opd-teacher-pid-wait.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    const std::string w = warnings(*r);
    EXPECT_EQ(w.find("not understood"), std::string::npos) << w;
    const auto& pre = r->recipe.launcher.preLaunch;
    auto has = [&pre](const std::string& what) {
        return std::any_of(pre.begin(), pre.end(), [&what](const std::string& s) {
            return s.find(what) != std::string::npos;
        });
    };
    EXPECT_TRUE(has("-m vllm.entrypoints.openai.api_server")) << "no teacher";
    EXPECT_TRUE(has("TEACHER_PID=$!")) << "no PID";
    EXPECT_TRUE(has("for i in $(seq 1 60); do")) << "no wait loop";
    EXPECT_EQ(parameterNamed(*r, "TEACHER_PID"), nullptr);
}

// vime's own scripts keep slime's checkpoint folder names (`--load /root/GLM-Z1-9B-0414_slime/`)
// and may name no vLLM flag; in a vime checkout they are vime's (before: read as slime, so the
// export added --sglang-mem-fraction-static and slime's rules applied). A slime-only flag still
// says slime.
TEST(Issue45, ASlimePathInAVimeCheckoutReadsAsVime) {
    test::TempDir dir;
    test::writeFile(dir.file("vime/__init__.py"), "");
    const std::string body =
        "ray job submit -- python3 train.py --actor-num-gpus-per-node 4 --rollout-num-gpus 4 "
        "--rollout-num-gpus-per-engine 2 --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B "
        "--load /root/Qwen3-4B_slime/ --save /root/Qwen3-4B_slime/";
    auto r = importText(dir, "scripts/run-x.sh", body + "\n");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->recipe.framework, Framework::Vime);
    EXPECT_TRUE(std::any_of(r->notes.begin(), r->notes.end(), [](const auto& n) {
        return n.message.find("read as a vime script") != std::string::npos &&
               n.message.find("vime checkout") != std::string::npos;
    }));
    // outside a vime checkout the path still says slime
    test::TempDir plain;
    auto s = importText(plain, "scripts/run-x.sh", body + "\n");
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->recipe.framework, Framework::Slime);
}

// vime's run-qwen2.5-3B-ai21-async.sh sizes its batch from the GPU count the node reports:
// `ROLLOUT_BATCH_SIZE=$((8 * NUM_GPUS))` after `[ -z "$NUM_GPUS" ] || [ "$NUM_GPUS" -le 0 ] &&
// NUM_GPUS=4`. Before: the command list was "not understood", the arithmetic was not carried, and
// the import stopped with "no --rollout-batch-size". Now the lines are pre-launch steps, the flags
// stay ${NAME} for the export to compute on the node, and the import says the value depends on
// the machine (batch.rollout_batch_size holds a stand-in the recipe requires).
TEST(Issue45, ABatchComputedFromTheNodesGpuCountStaysARunTimeValue) {
    auto r = importFixture("gpu-scaled-batch.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(hasErrors(r->notes)) << warnings(*r);
    const std::string w = warnings(*r);
    EXPECT_EQ(w.find("not understood"), std::string::npos) << w;
    EXPECT_NE(w.find("--rollout-batch-size ${PROMPTS} is computed when the script runs "
                     "(`PROMPTS=$((8 * NUM_GPUS))`"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("depends on the machine"), std::string::npos) << w;
    EXPECT_EQ(r->recipe.batch.rolloutBatchSize, 1);
    const auto& pre = r->recipe.launcher.preLaunch;
    auto step = [&pre](const std::string& what) {
        return std::any_of(pre.begin(), pre.end(), [&what](const std::string& s) {
            return s.find(what) != std::string::npos;
        });
    };
    EXPECT_TRUE(step("[ -z \"$NUM_GPUS\" ] || [ \"$NUM_GPUS\" -lt 2 ] && NUM_GPUS=2"));
    EXPECT_TRUE(step("TRAIN_GPUS=${TRAIN_GPUS:-$((NUM_GPUS / 2))}"));
    EXPECT_TRUE(step("PROMPTS=$((8 * NUM_GPUS))"));
    // the script's own scalar the arithmetic reads is bound in front of the step
    EXPECT_TRUE(step("ANSWERS=4\nSAMPLES=$((PROMPTS * ANSWERS))"));
    auto extra = [&r](const std::string& flag) -> std::string {
        for (const auto& e : r->recipe.extraArgs) {
            if (e.flag == flag && e.values.size() == 1) {
                return e.values[0];
            }
        }
        return "";
    };
    EXPECT_EQ(extra("--rollout-batch-size"), "${PROMPTS}");
    EXPECT_EQ(extra("--global-batch-size"), "${SAMPLES}");
    EXPECT_EQ(extra("--rollout-num-gpus"), "${ENGINE_GPUS}");
    EXPECT_EQ(parameterNamed(*r, "PROMPTS"), nullptr);
    EXPECT_EQ(parameterNamed(*r, "NUM_GPUS"), nullptr);
    // a plain string reading a probe stays a ${PROBE} splice, not a step
    test::TempDir dir;
    auto json = importText(dir, "a/run.sh",
                           "N=$(nvidia-smi -L | wc -l)\n"
                           "ENV_JSON=\"{\\\"env_vars\\\": {\\\"NGPU\\\": \\\"${N}\\\"}}\"\n"
                           "ray job submit --runtime-env-json=\"${ENV_JSON}\" -- python3 train.py "
                           "--rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_TRUE(json.ok()) << json.error();
    for (const auto& s : json->recipe.launcher.preLaunch) {
        EXPECT_EQ(s.find("ENV_JSON="), std::string::npos) << s;
    }
#ifdef RUNPLANE_HAVE_PLAN_RULES
    // no false error from the stand-in: the GPU split and the batch sizes are the node's
    std::vector<std::string> errors;
    for (const auto& f : validate(r->recipe, test::catalog())) {
        if (f.severity == Severity::Error) {
            errors.push_back(f.ruleId);
        }
    }
    EXPECT_TRUE(errors.empty()) << errors.front();
#endif
}

// vime's coding_agent_rl/run_qwen36_35b_a3b_swe_8nodes.sh builds --moe-layer-freq with a C-style
// for loop and `printf -v ... "$(IFS=', '; echo "${arr[*]}")"`. Before: the loop was "not
// understood" and skipped while the printf was carried, so the export wrote `--moe-layer-freq []`.
TEST(Issue45, AnArithmeticLoopBuildingAFlagValueIsCarriedWithIt) {
    auto r = importFixture("arith-loop-layer-pattern.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    const std::string w = warnings(*r);
    EXPECT_EQ(w.find("for loop"), std::string::npos) << w;
    const auto& pre = r->recipe.launcher.preLaunch;
    std::size_t loop = pre.size();
    std::size_t join = pre.size();
    for (std::size_t i = 0; i < pre.size(); ++i) {
        if (pre[i].find("for ((n=0; n<LAYERS; n++)); do") != std::string::npos) {
            loop = i;
            // the script's scalars the loop reads are bound in front of it
            EXPECT_NE(pre[i].find("LAYERS=8\n"), std::string::npos) << pre[i];
            EXPECT_NE(pre[i].find("DENSE_LAYERS=2\n"), std::string::npos) << pre[i];
        }
        if (pre[i].find("printf -v LAYER_FREQ") != std::string::npos) {
            join = i;
        }
    }
    ASSERT_LT(loop, pre.size()) << "the loop is not a pre-launch step";
    ASSERT_LT(join, pre.size()) << "the printf is not a pre-launch step";
    EXPECT_LT(loop, join);
    // a loop that runs a command stays not understood
    test::TempDir dir;
    auto cmd = importText(dir, "a/run.sh",
                          "for ((i=0; i<2; i++)); do\n  ray start --head\ndone\n"
                          "ray job submit -- python3 train.py --rollout-batch-size 8 "
                          "--hf-checkpoint /m/Qwen3-4B\n");
    ASSERT_TRUE(cmd.ok()) << cmd.error();
    EXPECT_NE(warnings(*cmd).find("not understood: for loop"), std::string::npos) << warnings(*cmd);
}

}  // namespace
}  // namespace runplane::plan::launch
