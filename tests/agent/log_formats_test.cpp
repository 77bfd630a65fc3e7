// issue 42: every log format and failure event on real pastes from public issues
// (tests/agent/fixtures/logs/*.log, each headed by its source). A fixture is replayed through a
// LogReader line by line, as the collector does; the expected values are written by hand from
// the pasted text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend/agent/log_formats.h"
#include "backend/agent/log_metrics.h"

namespace runplane::agent {
namespace {

std::string fixtureDir() {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    return std::string(src != nullptr ? src : ".") + "/tests/agent/fixtures/logs";
}

std::string readFixture(const std::string& name) {
    std::ifstream in(fixtureDir() + "/" + name, std::ios::binary);
    EXPECT_TRUE(in.good()) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Replay {
    std::vector<LogMetric> metrics;
    std::vector<LogEvent> events;
    std::vector<std::string> warnings;

    // The last value of a series (and its step); fails the test when absent.
    const LogMetric& at(const std::string& series) const {
        for (auto it = metrics.rbegin(); it != metrics.rend(); ++it) {
            if (it->series == series) {
                return *it;
            }
        }
        ADD_FAILURE() << "no series " << series;
        static LogMetric none;
        return none;
    }
    std::vector<double> values(const std::string& series) const {
        std::vector<double> out;
        for (const auto& m : metrics) {
            if (m.series == series) {
                out.push_back(m.value);
            }
        }
        return out;
    }
    std::set<std::string> names() const {
        std::set<std::string> out;
        for (const auto& m : metrics) {
            out.insert(m.series);
        }
        return out;
    }
    std::vector<LogEvent> of(LogEventKind kind) const {
        std::vector<LogEvent> out;
        for (const auto& e : events) {
            if (e.kind == kind) {
                out.push_back(e);
            }
        }
        return out;
    }
};

void collect(Replay& r, ParsedLogLine&& p) {
    for (auto& m : p.metrics) {
        r.metrics.push_back(std::move(m));
    }
    for (auto& e : p.events) {
        r.events.push_back(std::move(e));
    }
    if (!p.warning.empty()) {
        r.warnings.push_back(p.warning);
    }
}

Replay replayText(const std::string& text) {
    Replay r;
    LogReader reader;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string::npos) {
            nl = text.size();
        }
        const std::string_view line(text.data() + start, nl - start);
        start = nl + 1;
        if (line.empty() || line.starts_with("# source:")) {
            continue;  // the collector skips empty lines; the header is ours
        }
        collect(r, reader.feed(line));
    }
    collect(r, reader.finish());
    return r;
}

Replay replay(const std::string& name) {
    return replayText(readFixture(name));
}

const std::string& attr(const LogEvent& e, const std::string& key) {
    static const std::string none = "<absent>";
    const auto it = e.attrs.find(key);
    return it == e.attrs.end() ? none : it->second;
}

// Every fixture says where it comes from, and there are enough of them (issue: >= 40, >= 8 from
// slime/miles/vime runs).
TEST(LogFixtures, EveryFixtureNamesItsSource) {
    int count = 0;
    int slimeFamily = 0;
    for (const auto& entry : std::filesystem::directory_iterator(fixtureDir())) {
        const std::string text = readFixture(entry.path().filename().string());
        ASSERT_TRUE(text.starts_with("# source: ")) << entry.path();
        const std::string head = text.substr(0, text.find('\n'));
        EXPECT_NE(head.find('#', 2), std::string::npos) << "no issue number: " << head;
        ++count;
        if (head.find("slime") != std::string::npos || head.find("miles") != std::string::npos ||
            head.find("vime") != std::string::npos) {
            ++slimeFamily;
        }
    }
    EXPECT_GE(count, 40);
    EXPECT_GE(slimeFamily, 8);
}

// ------------------------------------------------------------------ the table
TEST(LogFormatsTable, EveryRowHasATriggerAndAFixturePrefix) {
    std::set<std::string> names;
    for (const auto& f : logFormats()) {
        EXPECT_TRUE(names.insert(std::string(f.name)).second) << f.name;
        EXPECT_FALSE(f.trigger.empty()) << f.name;
        EXPECT_NE(f.recognize, nullptr) << f.name;
    }
    EXPECT_GE(names.size(), 19u);
}

// ------------------------------------------------------------------ metric formats
TEST(LogFormatSlimeDict, StepRecordOfASlimeRun) {
    const auto r = replay("slime_step_prorl_40.log");
    EXPECT_EQ(r.names().size(), 15u);
    EXPECT_DOUBLE_EQ(r.at("train/grad_norm").value, 2955012562.8240876);
    EXPECT_DOUBLE_EQ(r.at("train/kl_loss").value, -7.420481763775744e-12);
    EXPECT_DOUBLE_EQ(r.at("train/lr-pg_1").value, 1e-07);
    EXPECT_EQ(r.at("train/loss").step, 1);
    EXPECT_TRUE(r.events.empty());
}

TEST(LogFormatSlimeDict, StepThroughRayPrefixWithTimerAndRepeatSuffix) {
    const auto r = replay("slime_step_timer_1136.log");
    EXPECT_DOUBLE_EQ(r.at("train/loss").value, -6.05359673500061e-09);
    EXPECT_DOUBLE_EQ(r.at("train/grad_norm").value, 0.07986056034213801);
    EXPECT_DOUBLE_EQ(r.at("train/lr-pg_2").value, 1e-06);
    EXPECT_EQ(r.at("train/step").step, 11);
    EXPECT_DOUBLE_EQ(r.at("timer/actor_train_seconds").value, 81.3);
    const auto phases = r.of(LogEventKind::Phase);
    ASSERT_EQ(phases.size(), 1u);
    EXPECT_EQ(attr(phases[0], "phase"), "train");
    EXPECT_EQ(attr(phases[0], "edge"), "end");
    EXPECT_EQ(attr(phases[0], "pid"), "32167");  // the process the phase lane belongs to
    EXPECT_EQ(attr(phases[0], "actor"), "MegatronTrainRayActor");
    EXPECT_EQ(r.names().size(), 13u);  // 12 keys + the timer; the AMEM lines give nothing
    // Our marker keeps the process too (a phase lane per rank).
    const auto m = parseLogLine("[rank3]: [runplane-phase] weight_sync");
    ASSERT_EQ(m.events.size(), 1u);
    EXPECT_EQ(attr(m.events[0], "rank"), "3");
    EXPECT_EQ(attr(m.events[0], "phase"), "weight_sync");
}

TEST(LogFormatSlimeDict, RolloutManagerPerfRecord) {
    const auto r = replay("slime_perf_rollout_1837.log");
    EXPECT_EQ(r.names().size(), 13u);
    EXPECT_DOUBLE_EQ(r.at("perf/rollout_time").value, 371.1796889305115);
    EXPECT_DOUBLE_EQ(r.at("rollout/response_len/max").value, 4096);
    EXPECT_EQ(r.at("perf/rollout_time").step, 0);
    EXPECT_TRUE(r.events.empty());
}

// A dict that breaks at a bad spot keeps its values up to the spot and stores a finding.
TEST(LogFormatSlimeDict, PartialDictKeepsValuesAndStoresAFinding) {
    const auto p = parseLogLine("step 3: {'train/loss': 0.1, 'x' 2}");
    ASSERT_EQ(p.metrics.size(), 1u);
    EXPECT_EQ(p.metrics[0].series, "train/loss");
    EXPECT_DOUBLE_EQ(p.metrics[0].value, 0.1);
    EXPECT_NE(p.warning.find("column 33"), std::string::npos) << p.warning;
    ASSERT_EQ(p.events.size(), 1u);
    EXPECT_EQ(p.events[0].kind, LogEventKind::Info);
    EXPECT_EQ(attr(p.events[0], "what"), "partial_record");
    EXPECT_EQ(attr(p.events[0], "kept"), "1");
    EXPECT_EQ(attr(p.events[0], "column"), "33");
}

// The same record cut in the middle of a number and continued on the next line is joined; the
// cut number is never read as a value of its own.
TEST(LogFormatSlimeDict, RecordBrokenAcrossTwoLinesIsJoined) {
    const std::string line =
        "step 1: {'train/loss': 0.10215942561626434, 'train/pg_loss': 0.10215942561626434, "
        "'train/entropy_loss': 0.6176612973213196}";
    const std::size_t cut = line.find("0.6176") + 3;  // "...: 0.61" | "76612973213196}"
    const auto r = replayText(line.substr(0, cut) + "\n" + line.substr(cut) + "\n");
    EXPECT_DOUBLE_EQ(r.at("train/entropy_loss").value, 0.6176612973213196);
    EXPECT_EQ(r.values("train/entropy_loss").size(), 1u);
    EXPECT_EQ(r.names().size(), 3u);
    EXPECT_TRUE(r.events.empty());
    // Alone (no continuation), the cut record keeps what is certain and says where it broke.
    const auto alone = replayText(line.substr(0, cut) + "\n");
    EXPECT_EQ(alone.names().size(), 2u);
    EXPECT_EQ(alone.values("train/entropy_loss").size(), 0u);
    ASSERT_EQ(alone.events.size(), 1u);
    EXPECT_EQ(attr(alone.events[0], "what"), "partial_record");
}

TEST(LogFormatMegatron, IterationRecordsEveryField) {
    const auto r = replay("megatron_iteration_megatron_llm_11.log");
    const auto& loss = r.at("megatron/lm_loss");
    EXPECT_DOUBLE_EQ(loss.value, 2.493043);
    EXPECT_EQ(loss.step, 123);
    EXPECT_EQ(r.values("megatron/lm_loss"), (std::vector<double>{2.504220, 2.493043}));
    EXPECT_DOUBLE_EQ(r.at("megatron/elapsed_time_per_iteration_ms").value, 87871.6);
    EXPECT_DOUBLE_EQ(r.at("megatron/learning_rate").value, 9.225E-06);
    EXPECT_DOUBLE_EQ(r.at("megatron/global_batch_size").value, 1024);
    EXPECT_DOUBLE_EQ(r.at("megatron/consumed_samples").value, 125952);
    EXPECT_DOUBLE_EQ(r.at("megatron/grad_norm").value, 0.236);
    EXPECT_DOUBLE_EQ(r.at("megatron/loss_scale").value, 1.0);
    EXPECT_DOUBLE_EQ(r.at("megatron/number_of_skipped_iterations").value, 0);
    EXPECT_DOUBLE_EQ(r.at("megatron/number_of_nan_iterations").value, 0);
    EXPECT_DOUBLE_EQ(r.at("megatron/train_iters").value, 250000);
    EXPECT_EQ(r.names().size(), 11u);
    EXPECT_TRUE(r.events.empty());
}

TEST(LogFormatMegatron, BadGradNormAndTheSkippedStepWithoutLoss) {
    const auto r = replay("megatron_bad_grad_norm_megatron_llm_34.log");
    const auto nan = r.of(LogEventKind::NanLoss);
    ASSERT_EQ(nan.size(), 1u);
    EXPECT_EQ(attr(nan[0], "grad_norm"), "nan");
    const auto skipped = r.of(LogEventKind::SkippedIteration);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(attr(skipped[0], "iteration"), "3634");
    EXPECT_EQ(attr(skipped[0], "skipped_iterations"), "1");
    EXPECT_DOUBLE_EQ(r.at("megatron/elapsed_time_per_iteration_ms").value, 8295.0);
    EXPECT_EQ(r.at("megatron/elapsed_time_per_iteration_ms").step, 3634);
    EXPECT_EQ(r.values("megatron/grad_norm"), (std::vector<double>{0.794}));  // 3634 has none
}

TEST(LogFormatMegatron, NanGradNormIsKeptAsNan) {
    const auto r = replay("megatron_grad_norm_nan_deepspeed_396.log");
    EXPECT_TRUE(std::isnan(r.at("megatron/grad_norm").value));
    EXPECT_DOUBLE_EQ(r.at("megatron/tflops").value, 78.36);
    EXPECT_DOUBLE_EQ(r.at("megatron/consumed_tokens").value, 88899584);
    EXPECT_DOUBLE_EQ(r.at("megatron/actual_seqlen").value, 2048);
    EXPECT_DOUBLE_EQ(r.at("megatron/samples_per_second").value, 1.883);
    EXPECT_EQ(r.at("megatron/tflops").step, 5426);
    EXPECT_TRUE(r.events.empty());
}

TEST(LogFormatMegatron, RecordCutBeforeItsLastBarIsJoined) {
    const std::string text = readFixture("megatron_iteration_megatron_llm_11.log");
    const std::string first =
        text.substr(text.find('\n') + 1, text.find(" | grad norm") - text.find('\n') - 1 + 15);
    // " iteration 122/ ... | grad norm: 0." | "231 | number of ..."
    const std::string rest = text.substr(text.find(" | grad norm") + 15);
    const auto r = replayText(first + "\n" + rest.substr(0, rest.find('\n')) + "\n");
    EXPECT_EQ(r.values("megatron/grad_norm"), (std::vector<double>{0.231}));
    EXPECT_DOUBLE_EQ(r.at("megatron/number_of_nan_iterations").value, 0);
}

TEST(LogFormatSglang, DecodeBatchWithTpPrefix) {
    const auto r = replay("sglang_decode_comma_22331.log");
    EXPECT_EQ(r.values("engine/tp0/gen_throughput"), (std::vector<double>{144.95, 140.27}));
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/running_requests").value, 5);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/kv_tokens").value, 20800);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/kv_cache_usage").value, 0.29);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/queued_requests").value, 0);
    EXPECT_EQ(r.names().size(), 5u);  // `cuda graph: True` is not a number
}

TEST(LogFormatSglang, PrefillWithCacheHitRate) {
    const auto r = replay("sglang_prefill_cache_hit_1612.log");
    EXPECT_EQ(r.values("engine/tp0/prefill_new_seqs"), (std::vector<double>{4, 6}));
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/prefill_tokens").value, 8192);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/prefill_cached_tokens").value, 2753);
    EXPECT_NEAR(r.at("engine/tp0/cache_hit_rate").value, 0.1416, 1e-12);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/kv_cache_usage").value, 0.18);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/running_requests").value, 4);
    EXPECT_DOUBLE_EQ(r.at("engine/tp0/queued_requests").value, 34);
    EXPECT_EQ(r.names().size(), 7u);
}

TEST(LogFormatSglang, PrefillAndDecodeWithoutRankAndInputThroughput) {
    const auto r = replay("sglang_prefill_decode_22166.log");
    EXPECT_DOUBLE_EQ(r.at("engine/gen_throughput").value, 1635.11);
    EXPECT_DOUBLE_EQ(r.at("engine/input_throughput").value, 559.53);
    EXPECT_DOUBLE_EQ(r.at("engine/prefill_new_seqs").value, 1);
    EXPECT_DOUBLE_EQ(r.at("engine/prefill_tokens").value, 158);
    EXPECT_EQ(r.values("engine/running_requests"), (std::vector<double>{32, 31}));
    const auto d = replay("sglang_decode_938.log");
    EXPECT_DOUBLE_EQ(d.at("engine/queued_requests").value, 12279);
    EXPECT_DOUBLE_EQ(d.at("engine/kv_cache_usage").value, 0.93);
    const auto l = replay("sglang_decode_largest_len_4407.log");
    EXPECT_DOUBLE_EQ(l.at("engine/tp0/running_requests").value, 509);
    EXPECT_EQ(l.names().count("engine/tp0/largest_len"), 0u);
    EXPECT_EQ(l.names().size(), 5u);
    const auto p = replay("sglang_prefill_6291.log");
    EXPECT_DOUBLE_EQ(p.at("engine/prefill_cached_tokens").value, 8027);
}

// Two real records printed on one physical line (the two lines of sglang#22331 joined) are
// both read.
TEST(LogFormatSglang, SeveralRecordsOnOneLine) {
    const std::string text = readFixture("sglang_decode_comma_22331.log");
    std::string a = text.substr(text.find('\n') + 1);
    const std::string b = a.substr(a.find('\n') + 1);
    a = a.substr(0, a.find('\n'));
    const auto r = replayText(a + b);
    EXPECT_EQ(r.values("engine/tp0/gen_throughput"), (std::vector<double>{144.95, 140.27}));
}

TEST(LogFormatVllm, V0StatsWithSwappedAndCpuCache) {
    const auto r = replay("vllm_v0_3094.log");
    EXPECT_DOUBLE_EQ(r.at("engine/prompt_throughput").value, 0.0);
    EXPECT_DOUBLE_EQ(r.at("engine/gen_throughput").value, 44.9);
    EXPECT_DOUBLE_EQ(r.at("engine/running_requests").value, 2);
    EXPECT_DOUBLE_EQ(r.at("engine/swapped_requests").value, 0);
    EXPECT_DOUBLE_EQ(r.at("engine/queued_requests").value, 3);
    EXPECT_NEAR(r.at("engine/kv_cache_usage").value, 0.821, 1e-12);
    EXPECT_DOUBLE_EQ(r.at("engine/cpu_kv_cache_usage").value, 0.0);
    EXPECT_EQ(r.names().size(), 7u);
    EXPECT_DOUBLE_EQ(replay("vllm_v0_pending_6737.log").at("engine/kv_cache_usage").value, 1.0);
    EXPECT_NEAR(replay("vllm_v0_bracket_15018.log").at("engine/kv_cache_usage").value, 0.006,
                1e-12);
    EXPECT_NEAR(replay("vllm_v0_tenstorrent_55.log").at("engine/kv_cache_usage").value, 0.921,
                1e-12);
}

TEST(LogFormatVllm, V1EngineIdAndApiServerPidAreTheLabel) {
    const auto r = replay("vllm_v1_engine_43295.log");
    const std::string e = "engine/pid3646.engine000/";
    EXPECT_EQ(r.values(e + "prompt_throughput"), (std::vector<double>{0.0, 12068.8}));
    EXPECT_DOUBLE_EQ(r.at(e + "queued_requests").value, 33);
    EXPECT_NEAR(r.at(e + "kv_cache_usage").value, 0.877, 1e-12);
    EXPECT_DOUBLE_EQ(r.at(e + "prefix_cache_hit_rate").value, 0.0);
    EXPECT_EQ(r.names().size(), 6u);
    // Another engine (another API server) keeps its own series.
    const auto other = replay("vllm_v1_llm_scaler_391.log");
    EXPECT_NEAR(other.at("engine/pid851.engine000/prefix_cache_hit_rate").value, 0.92, 1e-12);
    EXPECT_EQ(other.names().count(e + "prefix_cache_hit_rate"), 0u);
}

TEST(LogFormatVerl, StepRecord) {
    const auto r = replay("verl_step_2060.log");
    EXPECT_DOUBLE_EQ(r.at("val-core/openai/gsm8k/acc/mean@1").value, 0.508);
    EXPECT_EQ(r.at("val-core/openai/gsm8k/acc/mean@1").step, 0);
    EXPECT_EQ(r.names().size(), 3u);
}

TEST(LogFormatVerl, RecordWrappedInsideAKeyIsJoined) {
    const auto r = replay("verl_step_wrapped_7412.log");
    EXPECT_DOUBLE_EQ(r.at("critic/rewards/min").value, -1.0);
    EXPECT_DOUBLE_EQ(r.at("critic/advantages/mean").value, -0.0423407182097435);
    EXPECT_DOUBLE_EQ(r.at("actor/grad_norm").value, 0.129638671875);
    EXPECT_DOUBLE_EQ(r.at("actor/ppo_kl").value, -8.163164312320433e-06);
    EXPECT_EQ(r.at("actor/grad_norm").step, 34);
    for (const auto& n : r.names()) {
        EXPECT_FALSE(n.starts_with("/") || n == "critic") << n;
    }
    EXPECT_EQ(r.names().size(), 30u);
}

TEST(LogFormatVerl, RecordCutAtTheEndKeepsTheWholeFields) {
    const auto r = replay("verl_step_sglang_1208.log");
    EXPECT_DOUBLE_EQ(r.at("response_length/min").value, 9.0);
    EXPECT_DOUBLE_EQ(r.at("perf/cpu_memory_used_gb").value, 360.092);
    EXPECT_EQ(r.at("perf/cpu_memory_used_gb").step, 2);
    EXPECT_EQ(r.names().count("response_length/cl"), 0u);
    EXPECT_EQ(r.names().size(), 33u);
}

// ------------------------------------------------------------------ events
TEST(LogEventCudaOom, NewWordingWithPyTorchReserve) {
    const auto r = replay("cuda_oom_slime_1951.log");
    const auto e = r.of(LogEventKind::CudaOom);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(attr(e[0], "gpu"), "0");
    EXPECT_EQ(attr(e[0], "tried"), "58.15 GiB");
    EXPECT_EQ(attr(e[0], "capacity"), "139.81 GiB");
    EXPECT_EQ(attr(e[0], "free"), "47.69 GiB");
    EXPECT_EQ(attr(e[0], "reserved"), "2.06 GiB");
    EXPECT_EQ(attr(e[0], "reserved_kind"), "unallocated");
    EXPECT_NEAR(std::stod(attr(e[0], "tried_bytes")), 58.15 * 1073741824.0, 1.0);
    EXPECT_NEAR(std::stod(attr(e[0], "allocated_bytes")), 82.55 * 1073741824.0, 1.0);
    EXPECT_EQ(attr(e[0], "summary"), "CUDA OOM on GPU 0: tried 58.15 GiB, 47.69 GiB free");
    EXPECT_TRUE(r.metrics.empty());
}

TEST(LogEventCudaOom, OldWordingMisspellingQuotesAndZeroBytes) {
    const auto old = replay("cuda_oom_chatglm_finetuning_28.log").of(LogEventKind::CudaOom);
    ASSERT_EQ(old.size(), 1u);
    EXPECT_EQ(attr(old[0], "capacity"), "44.99 GiB");
    EXPECT_EQ(attr(old[0], "free"), "37.32 GiB");
    EXPECT_EQ(attr(old[0], "reserved"), "6.15 GiB");
    EXPECT_EQ(attr(old[0], "reserved_kind"), "total");
    EXPECT_EQ(attr(old[0], "summary"), "CUDA OOM on GPU 0: tried 128.00 MiB, 37.32 GiB free");
    const auto typo = replay("cuda_oom_scene_splatter_4.log").of(LogEventKind::CudaOom);
    ASSERT_EQ(typo.size(), 1u);
    EXPECT_EQ(attr(typo[0], "capacity"), "39.59 GiB");  // "capacty", as PyTorch once spelt it
    EXPECT_EQ(attr(typo[0], "reserved"), "921.15 MiB");
    const auto zero = replay("cuda_oom_zero_free_ml_neuman_38.log").of(LogEventKind::CudaOom);
    ASSERT_EQ(zero.size(), 1u);
    EXPECT_EQ(attr(zero[0], "free"), "0 bytes");
    EXPECT_EQ(attr(zero[0], "free_bytes"), "0");
    const auto shortForm = replay("cuda_oom_pin_slam_18.log").of(LogEventKind::CudaOom);
    ASSERT_EQ(shortForm.size(), 1u);
    EXPECT_EQ(attr(shortForm[0], "free"), "348.00 MiB");
    EXPECT_EQ(replay("cuda_oom_vlm_rl_12.log").of(LogEventKind::CudaOom).size(), 1u);
    EXPECT_EQ(replay("cuda_oom_nice_slam_43.log").of(LogEventKind::CudaOom).size(), 1u);
}

TEST(LogEventRayOom, TaskKilledAndItsNodeFiguresAreOneEvent) {
    const auto r = replay("ray_oom_flingbot_11.log");
    const auto e = r.of(LogEventKind::RayOom);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(attr(e[0], "ip"), "192.168.0.107");
    EXPECT_EQ(attr(e[0], "node_used_gb"), "59.49");
    EXPECT_EQ(attr(e[0], "node_total_gb"), "62.58");
    EXPECT_EQ(attr(e[0], "fraction"), "0.950744");
    EXPECT_EQ(attr(e[0], "threshold"), "0.95");
    EXPECT_EQ(attr(e[0], "task_name"), "SimEnv.__init__");
    EXPECT_EQ(attr(e[0], "task_pid"), "4331");
    EXPECT_EQ(attr(e[0], "task_memory_used_gb"), "2.22");
    // The traceback's last line is the crash.
    const auto crash = r.of(LogEventKind::Crash);
    ASSERT_EQ(crash.size(), 1u);
    EXPECT_EQ(attr(crash[0], "exception"), "ray.exceptions.OutOfMemoryError");
    const auto t = replay("ray_oom_task_30312.log").of(LogEventKind::RayOom);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(attr(t[0], "node_used_gb"), "21.91");
    EXPECT_EQ(attr(t[0], "threshold"), "0.65");
    EXPECT_EQ(attr(t[0], "task_name"), "allocate_memory");
    const auto d = replay("ray_oom_dataset_28776.log").of(LogEventKind::RayOom);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(attr(d[0], "node_total_gb"), "57.6");
    const auto s = replay("slime_ray_oom_status_202.log").of(LogEventKind::RayOom);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(attr(s[0], "ip"), "172.17.0.3");
}

TEST(LogEventRayOom, RayletWorkersKilled) {
    const auto a = replay("ray_oom_raylet_34695.log").of(LogEventKind::RayOom);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(attr(a[0], "workers_killed"), "13");
    EXPECT_EQ(attr(a[0], "ip"), "10.0.10.135");
    EXPECT_EQ(attr(a[0], "summary"),
              "Ray OOM: 13 workers killed for memory pressure on 10.0.10.135");
    const auto slime = replay("slime_ray_oom_raylet_1845.log").of(LogEventKind::RayOom);
    ASSERT_EQ(slime.size(), 1u);
    EXPECT_EQ(attr(slime[0], "workers_killed"), "1");
    EXPECT_EQ(attr(slime[0], "ip"), "10.22.72.139");  // from the (raylet, ip=...) prefix line
    EXPECT_EQ(replay("ray_oom_raylet_wrapped_wmpo_3.log").of(LogEventKind::RayOom).size(), 1u);
    const auto e = replay("ray_oom_raylet_easyr1_185.log");
    ASSERT_EQ(e.of(LogEventKind::RayOom).size(), 1u);
    EXPECT_EQ(attr(e.of(LogEventKind::RayOom)[0], "ip"), "10.95.143.76");
    EXPECT_TRUE(e.of(LogEventKind::Crash).empty());  // the pasted traceback has no last line
}

TEST(LogEventHostOom, KernelLineWithPidNameAndRss) {
    const auto k = replay("host_oom_kernel_docker_1001.log").of(LogEventKind::HostOom);
    ASSERT_EQ(k.size(), 1u);  // the reaper's line is not a second kill
    EXPECT_EQ(attr(k[0], "pid"), "15784");
    EXPECT_EQ(attr(k[0], "name"), "python3");
    EXPECT_EQ(attr(k[0], "anon_rss_bytes"), std::to_string(4288 * 1024));
    EXPECT_EQ(attr(k[0], "rss_bytes"), std::to_string((4288 + 3028) * 1024));
    EXPECT_EQ(attr(k[0], "source"), "kernel");
    EXPECT_EQ(attr(k[0], "summary"), "host OOM: kernel killed pid 15784 (python3, 7.14 MiB RSS)");
    const auto old = replay("host_oom_kernel_old_deepspeech_48.log").of(LogEventKind::HostOom);
    ASSERT_EQ(old.size(), 1u);
    EXPECT_EQ(attr(old[0], "pid"), "25635");
    EXPECT_EQ(attr(old[0], "anon_rss_bytes"), std::to_string(23902876LL * 1024));
}

TEST(LogEventHostOom, ShellKilledAndItsLocalizedForm) {
    const auto k = replay("host_oom_killed_vectornet_37.log").of(LogEventKind::HostOom);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(attr(k[0], "source"), "shell");
    const auto z = replay("host_oom_killed_localized_dreamerv3_203.log").of(LogEventKind::HostOom);
    ASSERT_EQ(z.size(), 1u);
    EXPECT_EQ(attr(z[0], "line"), "已杀死");
    EXPECT_TRUE(parseLogLine("Killed process list shown").events.empty());
    EXPECT_TRUE(parseLogLine("Workers Killed: none").events.empty());
}

TEST(LogEventNcclError, EverySpelling) {
    const auto h = replay("nccl_error2_hunyuanvideo_114.log");
    const auto e = h.of(LogEventKind::NcclError);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(attr(e[0], "code"), "2");
    EXPECT_EQ(attr(e[0], "rank"), "0");
    EXPECT_EQ(attr(e[0], "summary"), "NCCL error 2 on rank 0");
    const auto crash = h.of(LogEventKind::Crash);  // the frames came before it, rank 0's
    ASSERT_EQ(crash.size(), 1u);
    EXPECT_EQ(attr(crash[0], "exception"), "RuntimeError");
    EXPECT_EQ(attr(crash[0], "rank"), "0");
    for (const char* name : {"nccl_error2_romp_80.log", "nccl_error_ragflow_3432.log",
                             "nccl_error_xinference_2945.log"}) {
        const auto x = replay(name).of(LogEventKind::NcclError);
        ASSERT_EQ(x.size(), 1u) << name;
        EXPECT_EQ(attr(x[0], "code"), "2") << name;
    }
    // One failure told on two lines in a row with the same code (`NCCL error in: ..., unhandled
    // system error` then `ncclSystemError: ...`) is one event; the second spelling alone is one.
    const auto seg = replay("nccl_error_in_segmenter_60.log").of(LogEventKind::NcclError);
    ASSERT_EQ(seg.size(), 1u);
    EXPECT_EQ(attr(seg[0], "match"), "NCCL error in:");
    const auto alone =
        parseLogLine("ncclSystemError: System call (socket, malloc, munmap, etc) failed.");
    ASSERT_EQ(alone.events.size(), 1u);
    EXPECT_EQ(attr(alone.events[0], "match"), "ncclSystemError");
    const auto internal = replay("nccl_internal_error_1726.log").of(LogEventKind::NcclError);
    ASSERT_EQ(internal.size(), 1u);
    EXPECT_EQ(attr(internal[0], "code"), "3");
    const auto wd = replay("nccl_watchdog_llamafactory_6269.log").of(LogEventKind::NcclError);
    ASSERT_EQ(wd.size(), 1u);
    EXPECT_EQ(attr(wd[0], "summary"), "NCCL watchdog timeout on rank 0");
    // Update-weight lines and an ibverbs error are no NCCL event and no series.
    const auto quiet = replay("nccl_aborted_openrlhf_621.log");
    EXPECT_TRUE(quiet.events.empty());
    EXPECT_TRUE(quiet.metrics.empty());
}

TEST(LogEventWeightSync, SglangFailedToUpdateParameterOnlineInASlimeRun) {
    const auto r = replay("slime_weight_sync_sglang_26032.log");
    const auto e = r.of(LogEventKind::WeightSyncFailure);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(attr(e[0], "engine"), "pid1493437.dp6.tp6");
    EXPECT_EQ(attr(e[0], "reason"), "start out of range (expected to be in ra");
    EXPECT_EQ(attr(e[0], "engine_kind"), "sglang");
    EXPECT_TRUE(r.metrics.empty());
    // Successful `Update weights begin/end` lines of SGLang are no failure.
    EXPECT_TRUE(replay("sglang_update_weights_dp_1814.log").events.empty());
}

// No public paste of vLLM's `update_weight` failure or of the batch-size mismatch was found, so
// neither has a positive test here (docs/daemon.md says so). vLLM's wording for any failed worker
// method is real (OpenRLHF/OpenRLHF#313, below); a method other than a weight update must not be
// read as a weight-sync failure.
TEST(LogEventWeightSync, AnotherFailedVllmWorkerMethodIsNotAWeightSyncFailure) {
    // Source: OpenRLHF/OpenRLHF#313 (a user's paste, one line).
    const auto p = parseLogLine(
        "(RayWorkerWrapper pid=4183, ip=10.3.32.122) ERROR 06-03 23:13:39 worker_base.py:148] "
        "Error executing method start_worker_execution_loop. This might cause deadlock in "
        "distributed execution.");
    for (const auto& e : p.events) {
        EXPECT_NE(e.kind, LogEventKind::WeightSyncFailure);
    }
}

TEST(LogEventCrash, FinalExceptionOfATraceback) {
    const auto a = replay("crash_ray_actor_died_33157.log").of(LogEventKind::Crash);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(attr(a[0], "exception"), "ray.exceptions.RayActorError");
    EXPECT_EQ(attr(a[0], "summary"),
              "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this "
              "task.");
    const auto b = replay("crash_ray_task_error_minio3_21.log").of(LogEventKind::Crash);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(attr(b[0], "exception"), "ray.exceptions.RayTaskError(ValueError)");
    // A traceback pasted without its last line raises nothing.
    EXPECT_TRUE(replay("crash_ray_prefixed_23475.log").of(LogEventKind::Crash).empty());
    // The CUDA OOM that ends a traceback is both.
    const auto oom =
        replayText("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" +
                   readFixture("cuda_oom_pin_slam_18.log")
                       .substr(readFixture("cuda_oom_pin_slam_18.log").find('\n') + 1));
    EXPECT_EQ(oom.of(LogEventKind::Crash).size(), 1u);
    EXPECT_EQ(oom.of(LogEventKind::CudaOom).size(), 1u);
}

TEST(LogEventNanLoss, NanLossInASlimeRecord) {
    const auto p = parseLogLine("step 2: {'train/loss': nan, 'train/pg_loss': 0.5}");
    const auto nan = std::count_if(p.events.begin(), p.events.end(),
                                   [](const auto& e) { return e.kind == LogEventKind::NanLoss; });
    EXPECT_EQ(nan, 1);
    EXPECT_EQ(p.metrics.size(), 2u);
}

// ------------------------------------------------------------------ bounds and bad input
TEST(LogBounds, LongLinesNoNewlineInvalidUtf8AnsiRemnantsAndQuotes) {
    // Over 1 MiB: ignored whole, said in the warning.
    std::string huge = "Decode batch. #running-req: 5, " + std::string(1 << 20, 'x');
    const auto h = parseLogLine(huge);
    EXPECT_TRUE(h.metrics.empty());
    EXPECT_FALSE(h.warning.empty());
    // 10 MB without a newline, looking like a record cut at its end: no garbage, nothing held
    // beyond the reader's bound.
    std::string tenMb = "step 1: {'a': 1, 'b': [" + std::string(10'000'000, '1');
    LogReader reader;
    const auto t = reader.feed(tenMb);
    EXPECT_TRUE(t.metrics.empty());
    const auto f = reader.finish();
    EXPECT_TRUE(f.metrics.empty());
    // Invalid UTF-8 and the escape byte lost from Ray's colour codes.
    const auto u = parseLogLine(
        "[36m(SGLangEngine pid=7)[0m [2026-04-08 14:05:21 TP0] Decode batch, \xff\xfe#running-req: "
        "5, #token: 20800, token usage: 0.29");
    std::map<std::string, double> m;
    for (const auto& x : u.metrics) {
        m[x.series] = x.value;
    }
    EXPECT_EQ(m.size(), 2u);  // the field behind the invalid bytes is not a key it knows
    EXPECT_DOUBLE_EQ(m["engine/pid7.tp0/kv_tokens"], 20800);
    // A pasted quote marker does not hide the record.
    const auto q = parseLogLine("> step:3 - actor/pg_loss:0.5");
    ASSERT_EQ(q.metrics.size(), 1u);
    EXPECT_EQ(q.metrics[0].step, 3);
}

}  // namespace
}  // namespace runplane::agent
