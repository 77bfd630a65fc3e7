// issue 42: the gaps the held-out replay found (docs/results/2026-12-06-replay-heldout.md), each
// with the real paste that showed it as a fixture (tests/agent/fixtures/logs, headed by its
// source) and the values and events a careful reader reads off it, written by hand. Replayed as
// the collector does: a LogReader fed line by line.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "backend/agent/log_metrics.h"
#include "tests/agent/log_fixture_replay.h"

namespace runplane::agent {
namespace {

struct Replayed {
    std::map<std::string, std::vector<double>> values;  // every value of each series, in order
    std::map<std::string, std::vector<std::int64_t>> steps;
    std::vector<LogEvent> events;
};

Replayed replayFixture(const std::string& name) {
    Replayed r;
    test::replayLines(test::nonEmpty(test::fixtureLines(name)), [&r](ParsedLogLine p) {
        for (auto& m : p.metrics) {
            r.values[m.series].push_back(m.value);
            r.steps[m.series].push_back(m.step);
        }
        for (auto& e : p.events) {
            r.events.push_back(std::move(e));
        }
    });
    return r;
}

std::set<std::string> seriesOf(const Replayed& r) {
    std::set<std::string> out;
    for (const auto& [name, v] : r.values) {
        out.insert(name);
    }
    return out;
}

std::string attr(const LogEvent& e, const std::string& key) {
    const auto it = e.attrs.find(key);
    return it == e.attrs.end() ? "<absent>" : it->second;
}

void expectValues(const Replayed& r, const std::string& series, std::vector<double> want) {
    const auto it = r.values.find(series);
    ASSERT_NE(it, r.values.end()) << series;
    ASSERT_EQ(it->second.size(), want.size()) << series;
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_DOUBLE_EQ(it->second[i], want[i]) << series << " #" << i;
    }
}

// Docker's RFC 3339 stamp before Ray's `(APIServer pid=1)` prefix: the prefix is still read, so
// the engine keeps its label (tenstorrent/tt-inference-server#3359).
TEST(LogHeldout, VllmStatLinesBehindADockerTimestampKeepTheirEngineLabel) {
    const auto r = replayFixture("vllm_v1_docker_timestamp_3359.log");
    const std::string e = "engine/pid1.engine000/";
    EXPECT_EQ(seriesOf(r),
              (std::set<std::string>{e + "prompt_throughput", e + "gen_throughput",
                                     e + "running_requests", e + "queued_requests",
                                     e + "kv_cache_usage", e + "prefix_cache_hit_rate"}));
    expectValues(r, e + "prompt_throughput", {6335.3, 0.0, 3411.1, 0.0});
    expectValues(r, e + "gen_throughput", {4.8, 7.2, 5.7, 7.2});
    expectValues(r, e + "running_requests", {9, 9, 10, 10});
    expectValues(r, e + "queued_requests", {0, 1, 0, 0});
    expectValues(r, e + "kv_cache_usage", {0.628, 0.688, 0.745, 0.799});
    expectValues(r, e + "prefix_cache_hit_rate", {0, 0, 0, 0});
}

// Speculative decoding's `accept rate` beside `accept len` (sgl-project/sgl-kernel-npu#608);
// `npu graph: True` is no value; the HTTP access lines give nothing.
TEST(LogHeldout, SglangAcceptRateIsASeries) {
    const auto r = replayFixture("sglang_accept_rate_npu_608.log");
    const std::string e = "engine/tp0.ep0/";
    EXPECT_EQ(seriesOf(r),
              (std::set<std::string>{
                  e + "prefill_new_seqs", e + "prefill_tokens", e + "prefill_cached_tokens",
                  e + "kv_cache_usage", e + "running_requests", e + "queued_requests",
                  e + "pending_tokens", e + "input_throughput", e + "kv_tokens",
                  e + "spec_accept_length", e + "spec_accept_rate", e + "gen_throughput"}));
    expectValues(r, e + "spec_accept_rate", {0.68, 0.54, 0.61});
    expectValues(r, e + "spec_accept_length", {3.05, 2.63, 2.83});
    expectValues(r, e + "running_requests", {16, 24, 23, 22});
    expectValues(r, e + "queued_requests", {2, 2, 3, 4});
    expectValues(r, e + "prefill_cached_tokens", {482304});
    expectValues(r, e + "input_throughput", {2793.64});
}

// A file name pasted before SGLang's `[time TP0 EP0]` prefix moves it past the first 64 bytes:
// the ranks are still the engine's label, so the line's series are not a second, unlabelled
// engine (sgl-project/sglang#36081).
TEST(LogHeldout, SglangRanksAreReadBehindPastedText) {
    const auto r = replayFixture("sglang_swa_pasted_name_36081.log");
    for (const auto& s : seriesOf(r)) {
        EXPECT_TRUE(s.starts_with("engine/tp0.ep0/")) << s;
    }
    const std::string e = "engine/tp0.ep0/";
    expectValues(r, e + "full_kv_tokens", {165376});
    expectValues(r, e + "swa_kv_tokens", {768});
    expectValues(r, e + "spec_accept_length", {5.30});
    expectValues(r, e + "spec_accept_rate", {0.86});
    expectValues(r, e + "gen_throughput", {167.04});
    expectValues(r, e + "running_requests", {1, 0, 0, 0});
    expectValues(r, e + "pending_tokens", {0, 157704, 149512});
    expectValues(r, e + "swa_kv_cache_usage", {0.00, 0.00, 0.01, 0.01});
    expectValues(r, e + "full_kv_cache_usage", {0.02, 0.00, 0.00, 0.00});
    expectValues(r, e + "input_throughput", {12.33, 824.28, 13663.01});
}

// Megatron-LM's `time (ms) | forward-compute: 193.77 | ...` timers (NVIDIA/nccl#743), beside
// its iteration record (10 skipped iterations: the event) and nothing from the setup lines.
TEST(LogHeldout, MegatronTimersLineGivesOneSeriesPerTimer) {
    const auto r = replayFixture("megatron_timers_nccl_743.log");
    const std::string t = "megatron/timers/";
    expectValues(r, t + "model_and_optimizer_setup_ms", {294.00});
    expectValues(r, t + "train_valid_test_data_iterators_setup_ms", {3654.81});
    expectValues(r, t + "forward_compute_ms", {193.77});
    expectValues(r, t + "backward_compute_ms", {73.02});
    expectValues(r, t + "backward_params_all_reduce_ms", {20.10});
    expectValues(r, t + "backward_layernorm_all_reduce_ms", {0.02});
    expectValues(r, t + "backward_embedding_all_reduce_ms", {0.04});
    expectValues(r, t + "backward_reduce_model_grads_ms", {20.22});
    expectValues(r, t + "optimizer_copy_to_main_grad_ms", {12.19});
    expectValues(r, t + "optimizer_unscale_and_check_inf_ms", {50.71});
    expectValues(r, t + "optimizer_ms", {63.01});
    expectValues(r, t + "batch_generator_ms", {25.27});
    expectValues(r, "megatron/number_of_skipped_iterations", {10});
    expectValues(r, "megatron/loss_scale", {8388608.0});
    int timers = 0;
    for (const auto& s : seriesOf(r)) {
        timers += s.starts_with(t) ? 1 : 0;
        EXPECT_TRUE(s.starts_with("megatron/")) << s;  // not the datasets' ratios, not `(sec)`
    }
    EXPECT_EQ(timers, 12);
    EXPECT_EQ(seriesOf(r).size(), 12u + 9u);  // 9 from the iteration record
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::SkippedIteration);
    EXPECT_EQ(attr(r.events[0], "skipped_iterations"), "10");
    EXPECT_EQ(attr(r.events[0], "iteration"), "10");
}

// syslog wrote the raylet's colour codes as `#033[2m` and wrapped its message at a fixed width,
// inside `(tasks / actors)` and inside the node's ID (vllm-project/vllm#1160): one event, with
// the workers killed and the node's IP.
TEST(LogHeldout, RayletOomWrappedBySyslogIsOneEventWithItsIp) {
    const auto r = replayFixture("ray_oom_raylet_syslog_wrapped_vllm_1160.log");
    EXPECT_TRUE(r.values.empty());
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::RayOom);
    EXPECT_EQ(attr(r.events[0], "workers_killed"), "2");
    EXPECT_EQ(attr(r.events[0], "ip"), "10.0.167.26");
    EXPECT_EQ(attr(r.events[0], "what"), "workers_killed");
}

// The paste starts inside a traceback: Python 3.11's `~~~^^^` marker line is a frame, so the
// exception line below it is the crash (pytorch/pytorch#170045); the NCCL error, told on two lines
// in a row with the same code (`DistBackendError: NCCL error in: ...` then
// `ncclUnhandledCudaError: ...`), is one event.
TEST(LogHeldout, CaretMarkerLinesAreTracebackFrames) {
    const auto r = replayFixture("crash_caret_frames_170045.log");
    int crashes = 0;
    int nccl = 0;
    for (const auto& e : r.events) {
        if (e.kind == LogEventKind::Crash) {
            ++crashes;
            EXPECT_EQ(attr(e, "exception"), "torch.distributed.DistBackendError");
        }
        nccl += e.kind == LogEventKind::NcclError ? 1 : 0;
    }
    EXPECT_EQ(crashes, 1);
    EXPECT_EQ(nccl, 1);
}

// A CI console put `Oct 16 02:07:00 ` before every line (pytorch/pytorch#12744): the traceback
// is still one, its last line the crash; the NCCL error in `what():` is still read.
TEST(LogHeldout, CollectorTimestampsBeforeATracebackAreDropped) {
    const auto r = replayFixture("crash_ci_timestamped_12744.log");
    ASSERT_EQ(r.events.size(), 2u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::NcclError);
    EXPECT_EQ(attr(r.events[0], "code"), "1");
    EXPECT_EQ(r.events[1].kind, LogEventKind::Crash);
    EXPECT_EQ(attr(r.events[1], "exception"), "RuntimeError");
    EXPECT_EQ(r.events[1].message, "RuntimeError: test_c10d failed! Received signal: SIGIOT");
}

// Ray's head line of a failed task above the task's frames (THUDM/slime#795, a slime trainer):
// the crash, with no frames before it; the frames after it do not make a second one.
TEST(LogHeldout, RayTaskErrorHeadLineIsTheCrash) {
    const auto r = replayFixture("crash_ray_task_head_slime_795.log");
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::Crash);
    EXPECT_EQ(attr(r.events[0], "exception"), "ray.exceptions.RayTaskError(RuntimeError)");
}

// The collector time stamps are only read at a line's start, in their exact shapes: a metric
// line whose text merely contains a date keeps its values (a verl record, a vLLM line).
TEST(LogHeldout, OnlyALeadingCollectorStampIsDropped) {
    LogReader reader;
    auto p = reader.feed("step:3 - actor/pg_loss:0.5 - Oct 16 02:07:00");
    ASSERT_EQ(p.metrics.size(), 1u);
    EXPECT_EQ(p.metrics[0].series, "actor/pg_loss");
    // A stamp without the space after it is text, not a stamp: the Ray prefix is not read.
    p = reader.feed(
        "2026-05-12T08:01:39.331095044Z(APIServer pid=1) INFO Engine 000: Avg prompt "
        "throughput: 1.0 tokens/s");
    ASSERT_EQ(p.metrics.size(), 1u);
    EXPECT_EQ(p.metrics[0].series, "engine/engine000/prompt_throughput");
}

}  // namespace
}  // namespace runplane::agent

namespace runplane::agent {
namespace {

// Held-out round 3: a Slurm job's stderr (ArjunaCluster/ArjunaUsers#52): bash's report of the
// child it lost to SIGKILL names the pid and the command; Slurm's step daemon says its cgroup
// saw an OOM kill. One failure: one event with both (log_event_folds.cpp).
TEST(LogHeldout, SlurmJobKilledByTheCgroupOomKillerIsAHostOom) {
    const auto r = replayFixture("host_oom_shell_slurm_job_arjuna_52.log");
    EXPECT_TRUE(r.values.empty());
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::HostOom);
    EXPECT_EQ(attr(r.events[0], "source"), "shell");
    EXPECT_EQ(attr(r.events[0], "pid"), "8156");
    EXPECT_EQ(attr(r.events[0], "name"), "python3");
    EXPECT_EQ(attr(r.events[0], "oom_kill_events"), "1");
    EXPECT_EQ(attr(r.events[0], "slurm_step"), "191.batch");
    // Slurm's line alone is still a host OOM.
    LogReader reader;
    const auto p = reader.feed(
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.");
    ASSERT_EQ(p.events.size(), 1u);
    EXPECT_EQ(attr(p.events[0], "source"), "slurm");
}

// `**Killed**`: the shell's word, bold inside a pasted code block (CharlesShang/FastMaskRCNN#172);
// the training lines around it are no framework's format and give nothing.
TEST(LogHeldout, BoldKilledInAPasteIsTheShellsKilled) {
    const auto r = replayFixture("host_oom_shell_bold_fastmaskrcnn_172.log");
    EXPECT_TRUE(r.values.empty());
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].kind, LogEventKind::HostOom);
    EXPECT_EQ(attr(r.events[0], "source"), "shell");
}

// bash's job report only in its own shape: a number before ` Killed ` elsewhere is no kill.
TEST(LogHeldout, OnlyBashsJobReportShapeIsAKill) {
    LogReader reader;
    EXPECT_TRUE(reader.feed("Process 123 Killed by the user").events.empty());
    EXPECT_TRUE(reader.feed("run.sh: line x:  8156 Killed  python3 a.py").events.empty());
    // A shell kill is held a few lines for Slurm's restatement (log_event_folds.cpp).
    EXPECT_TRUE(reader.feed("./train.sh: line 7:   991 Killed                  torchrun x.py")
                    .events.empty());
    const auto p = reader.finish();
    ASSERT_EQ(p.events.size(), 1u);
    EXPECT_EQ(attr(p.events[0], "pid"), "991");
    EXPECT_EQ(attr(p.events[0], "name"), "torchrun");
}

}  // namespace
}  // namespace runplane::agent
