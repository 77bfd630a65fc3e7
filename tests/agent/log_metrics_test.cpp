// Log-derived metrics on the frameworks' real lines (frameworks.md §5). issue 5
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "backend/agent/log_metrics.h"
#include "backend/agent/python_literal.h"

namespace runplane::agent {
namespace {

std::map<std::string, LogMetric> byName(const ParsedLogLine& p) {
    std::map<std::string, LogMetric> out;
    for (const auto& m : p.metrics) {
        out[m.series] = m;
    }
    return out;
}

// Real line from THUDM/slime#1136 (the elided pg_loss value filled in).
TEST(LogMetrics, SlimeTrainStepThroughRayPrefix) {
    const auto p = parseLogLine(
        "(MegatronTrainRayActor pid=32167) [2025-12-17 14:10:28] model.py:649 - step 11: "
        "{'train/loss': -6.05e-09, 'train/pg_loss': -6.05e-09, 'train/entropy_loss': 0.184, "
        "'train/pg_clipfrac': 0.0, 'train/ppo_kl': 0.0, "
        "'train/train_rollout_logprob_abs_diff': 0.0184, 'train/kl_loss': 0.0020, "
        "'train/grad_norm': 0.0799, 'train/lr-pg_0': 1e-06, 'train/step': 11}");
    EXPECT_TRUE(p.warning.empty()) << p.warning;
    EXPECT_TRUE(p.progress);
    auto m = byName(p);
    ASSERT_EQ(m.size(), 10u);
    EXPECT_DOUBLE_EQ(m["train/loss"].value, -6.05e-09);
    EXPECT_EQ(m["train/loss"].step, 11);
    EXPECT_DOUBLE_EQ(m["train/lr-pg_0"].value, 1e-06);
    EXPECT_DOUBLE_EQ(m["train/train_rollout_logprob_abs_diff"].value, 0.0184);
    EXPECT_DOUBLE_EQ(m["train/step"].value, 11);
}

// Real line from THUDM/slime#1837 (trailing elision removed).
TEST(LogMetrics, RolloutManagerPerfLine) {
    const auto p = parseLogLine(
        "(RolloutManager pid=1805485) [2026-04-15 07:57:53] rollout.py:1193 - perf 0: "
        "{'rollout/response_len/mean': 2773.7, 'rollout/response_len/median': 2837.5, "
        "'rollout/response_len/max': 4096, 'rollout/response_len/min': 593, "
        "'rollout/zero_std/count_0': 12, 'rollout/zero_std/count_1': 14, "
        "'rollout/repetition_frac': 0.0, 'rollout/truncated_ratio': 0.46, "
        "'perf/rollout_time': 371.2, 'perf/tokens_per_gpu_per_sec': 239.1, "
        "'perf/longest_sample_tokens_per_sec': 11.0, "
        "'perf/effective_tokens_per_gpu_per_sec': 239.1}");
    auto m = byName(p);
    ASSERT_EQ(m.size(), 12u);
    EXPECT_EQ(m["rollout/response_len/max"].value, 4096);
    EXPECT_EQ(m["perf/rollout_time"].step, 0);
    EXPECT_DOUBLE_EQ(m["perf/tokens_per_gpu_per_sec"].value, 239.1);
}

TEST(LogMetrics, EvalLineWithMilesPrefixAndStep) {
    const auto p = parseLogLine(
        "[2026-01-02 03:04:05.678 RolloutManager] rollout.py:88 - eval 19: {'eval/gsm8k': 0.75, "
        "'eval/gsm8k-truncated_ratio': 0.05, 'eval/aime': 0.933, 'eval/aime-pass@1': 0.5}");
    auto m = byName(p);
    ASSERT_EQ(m.size(), 4u);
    EXPECT_DOUBLE_EQ(m["eval/gsm8k"].value, 0.75);
    EXPECT_EQ(m["eval/gsm8k"].step, 19);
    EXPECT_DOUBLE_EQ(m["eval/aime-pass@1"].value, 0.5);
}

TEST(LogMetrics, TrainerRolloutMultiTurnPassrateAndCriticLines) {
    auto r =
        byName(parseLogLine("rollout 3: {'rollout/raw_reward': 0.64, 'rollout/rewards': -0.0, "
                            "'rollout/response_lengths': 812.5}"));
    EXPECT_DOUBLE_EQ(r["rollout/raw_reward"].value, 0.64);
    EXPECT_EQ(r["rollout/raw_reward"].step, 3);
    auto mt = byName(parseLogLine("multi_turn 2: {'multi_turn/turns/mean': 3.5}"));
    EXPECT_DOUBLE_EQ(mt["multi_turn/turns/mean"].value, 3.5);
    auto pr =
        byName(parseLogLine("passrate 4: {'passrate/pass@1': 0.25, 'passrate/pass@8': 0.875}"));
    EXPECT_DOUBLE_EQ(pr["passrate/pass@8"].value, 0.875);
    EXPECT_EQ(pr["passrate/pass@8"].step, 4);
    auto cr = byName(
        parseLogLine("(CriticRayActor pid=9) [2025-12-17 14:10:28] model.py:700 - critic-step 7: "
                     "{'train/critic-value_loss': 0.12, 'train/critic-value_clipfrac': 0.01}"));
    EXPECT_DOUBLE_EQ(cr["train/critic-value_loss"].value, 0.12);
    EXPECT_EQ(cr["train/critic-value_loss"].step, 7);
}

TEST(LogMetrics, TrainerPerfTimersAndRayRepeatSuffix) {
    auto m = byName(parseLogLine(
        "\x1b[36m(MegatronTrainRayActor pid=1, ip=10.0.0.2)\x1b[0m perf 5: "
        "{'perf/actor_train_time': "
        "81.3, 'perf/step_time': 415.0, 'perf/wait_time_ratio': 0.12, 'perf/actor_train_tflops': "
        "312.5} [repeated 7x across cluster]"));
    ASSERT_EQ(m.size(), 4u);
    EXPECT_DOUBLE_EQ(m["perf/step_time"].value, 415.0);
    EXPECT_EQ(m["perf/step_time"].step, 5);
}

TEST(LogMetrics, NonFiniteNumpyAndNestedValues) {
    auto m = byName(parseLogLine(
        "step 2: {'a': nan, 'b': -inf, 'c': np.float64(0.5), 'd': float('nan'), 'e': True, "
        "'f': None, 'g': 'text', 'h': [1, 2.5], 'i': {'j': 3}, 'k': (4,), 'l': tensor(0.25, "
        "device='cuda:0'), 'm': 1_000}"));
    EXPECT_TRUE(std::isnan(m["a"].value));
    EXPECT_TRUE(std::isinf(m["b"].value) && m["b"].value < 0);
    EXPECT_DOUBLE_EQ(m["c"].value, 0.5);
    EXPECT_TRUE(std::isnan(m["d"].value));
    EXPECT_DOUBLE_EQ(m["e"].value, 1.0);
    EXPECT_EQ(m.count("f"), 0u);
    EXPECT_EQ(m.count("g"), 0u);
    EXPECT_DOUBLE_EQ(m["h/1"].value, 2.5);
    EXPECT_DOUBLE_EQ(m["i/j"].value, 3);
    EXPECT_DOUBLE_EQ(m["k/0"].value, 4);
    EXPECT_DOUBLE_EQ(m["l"].value, 0.25);
    EXPECT_DOUBLE_EQ(m["m"].value, 1000);
}

TEST(LogMetrics, MalformedPayloadGivesWarningWithColumn) {
    const auto p = parseLogLine("step 3: {'train/loss': 0.1, 'x' 2}");
    ASSERT_EQ(p.metrics.size(), 1u);  // kept up to the bad spot (issue 42)
    EXPECT_TRUE(p.progress);
    EXPECT_NE(p.warning.find("column 33"), std::string::npos) << p.warning;
}

TEST(LogMetrics, OrdinaryLinesAreIgnored) {
    for (const char* line : {"Loading checkpoint shards: 100%", "step: {'a': 1}",
                             "mystep 3: {'a': 1}", "the step 3 was {'a': 1}", ""}) {
        const auto p = parseLogLine(line);
        EXPECT_TRUE(p.metrics.empty()) << line;
        EXPECT_FALSE(p.progress) << line;
    }
}

TEST(LogMetrics, JsonLines) {
    auto a = byName(parseLogLine(R"({"metric": "train/loss", "value": 0.25, "step": 4})"));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_DOUBLE_EQ(a["train/loss"].value, 0.25);
    EXPECT_EQ(a["train/loss"].step, 4);
    auto b = byName(
        parseLogLine(R"({"kind":"eval","id":40,"metrics":{"eval/arith":0.75,"eval/n":64}})"));
    EXPECT_DOUBLE_EQ(b["eval/arith"].value, 0.75);
    EXPECT_EQ(b["eval/arith"].step, 40);
    auto c = byName(
        parseLogLine(R"((Actor pid=3) {"train/loss": 0.5, "ok": true, "_step": 9, "x": null})"));
    EXPECT_DOUBLE_EQ(c["train/loss"].value, 0.5);
    EXPECT_EQ(c["train/loss"].step, 9);
    EXPECT_EQ(c.count("_step"), 0u);
    EXPECT_EQ(c.count("x"), 0u);
}

// fuzz_log_line: a step beyond int64_t (1e21, a 60-digit int, inf, nan) was cast to int64_t,
// undefined behaviour; it is now an unknown step (-1) and the metric is still read.
TEST(LogMetrics, JsonLineStepOutOfRangeIsUnknown) {
    for (const char* line :
         {R"({"train/loss": 0.5, "_step": 1e21})", R"({"train/loss": 0.5, "step": -1e300})",
          R"({"train/loss": 0.5, "step": 9223372036854775808})",
          "{'train/loss': 0.5, 'step': 666666666666666666666666666666666666}",
          "{'train/loss': 0.5, 'step': float('nan')}",
          "{'train/loss': 0.5, 'step': float('inf')}"}) {
        auto m = byName(parseLogLine(line));
        ASSERT_EQ(m.count("train/loss"), 1u) << line;
        EXPECT_DOUBLE_EQ(m["train/loss"].value, 0.5) << line;
        EXPECT_EQ(m["train/loss"].step, -1) << line;
    }
    auto edge = byName(parseLogLine(R"({"train/loss": 0.5, "step": 9223372036854774784})"));
    EXPECT_EQ(edge["train/loss"].step, 9223372036854774784);  // the largest double below 2^63
}

TEST(LogMetrics, PhaseMarkersAndTimers) {
    auto p = parseLogLine("[runplane-phase] weight_sync");
    ASSERT_EQ(p.events.size(), 1u);
    EXPECT_EQ(p.events[0].kind, LogEventKind::Phase);
    EXPECT_EQ(p.events[0].attrs.at("phase"), "weight_sync");
    EXPECT_TRUE(p.progress);

    auto t = parseLogLine(
        "(MegatronTrainRayActor pid=5) [2025-12-17 14:10:28] timer.py:24 - "
        "Timer actor_train end (elapsed: 81.3s)");
    ASSERT_EQ(t.events.size(), 1u);
    EXPECT_EQ(t.events[0].attrs.at("phase"), "train");
    EXPECT_EQ(t.events[0].attrs.at("edge"), "end");
    ASSERT_EQ(t.metrics.size(), 1u);
    EXPECT_EQ(t.metrics[0].series, "timer/actor_train_seconds");
    EXPECT_DOUBLE_EQ(t.metrics[0].value, 81.3);

    auto u = parseLogLine("Timer update_weights start");
    ASSERT_EQ(u.events.size(), 1u);
    EXPECT_EQ(u.events[0].attrs.at("phase"), "weight_sync");
    EXPECT_EQ(phaseForTimer("sleep"), "");
}

TEST(LogMetrics, NcclWarningsAndErrors) {
    auto w = parseLogLine("node-3:1234:5678 [0] NCCL WARN NET/Socket : message truncated");
    ASSERT_EQ(w.events.size(), 1u);
    EXPECT_EQ(w.events[0].kind, LogEventKind::NcclWarning);
    auto e = parseLogLine(
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5 "
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed");
    ASSERT_EQ(e.events.size(), 1u);
    EXPECT_EQ(e.events[0].kind, LogEventKind::NcclError);
    EXPECT_EQ(e.events[0].attrs.at("match"), "ncclSystemError");
    auto b = parseLogLine(
        "misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote "
        "peer: Bad address");
    ASSERT_EQ(b.events.size(), 1u);
    EXPECT_EQ(b.events[0].kind, LogEventKind::NcclError);
    auto wd = parseLogLine(
        "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1089, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600045 milliseconds before timing out.");
    ASSERT_EQ(wd.events.size(), 1u);
    EXPECT_EQ(wd.events[0].kind, LogEventKind::NcclError);
    EXPECT_TRUE(parseLogLine("NCCL INFO Channel 00/02 : 0 1").events.empty());
}

TEST(LogMetrics, EvalSkippedIsInfo) {
    auto p = parseLogLine("[2026-01-02 03:04:05] rollout.py:12 - eval 3 skipped: no eval data");
    ASSERT_EQ(p.events.size(), 1u);
    EXPECT_EQ(p.events[0].kind, LogEventKind::Info);
    EXPECT_EQ(p.events[0].attrs.at("what"), "eval_skipped");
}

TEST(PythonLiteral, StringsAndEscapes) {
    auto v =
        parsePythonLiteral(R"({'a\'b': "x\"y", 'u': '\u00e9\x41\n', r'raw\d': 1, 'c' 'd': 2})");
    ASSERT_TRUE(v.ok()) << v.error();
    ASSERT_EQ(v->entries.size(), 4u);
    EXPECT_EQ(v->entries[0].first.text, "a'b");
    EXPECT_EQ(v->entries[0].second.text, "x\"y");
    EXPECT_EQ(v->entries[1].second.text,
              "\xc3\xa9"
              "A\n");
    EXPECT_EQ(v->entries[2].first.text, "raw\\d");
    EXPECT_EQ(v->entries[3].first.text, "cd");
}

TEST(PythonLiteral, NumbersAndErrors) {
    auto v = parsePythonLiteral("[1, -2, 3.5, .5, 5., 1e-06, -1.5E+10, 99999999999999999999]");
    ASSERT_TRUE(v.ok()) << v.error();
    EXPECT_EQ(v->items[0].kind, PyValue::Kind::Int);
    EXPECT_EQ(v->items[1].integer, -2);
    EXPECT_DOUBLE_EQ(v->items[3].number, 0.5);
    EXPECT_DOUBLE_EQ(v->items[4].number, 5.0);
    EXPECT_DOUBLE_EQ(v->items[5].number, 1e-06);
    EXPECT_DOUBLE_EQ(v->items[6].number, -1.5e10);
    EXPECT_EQ(v->items[7].kind, PyValue::Kind::Float);  // beyond int64
    auto bad = parsePythonLiteral("{'a': 1,, }");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("column 9"), std::string::npos) << bad.error();
    EXPECT_FALSE(parsePythonLiteral("{'a': 1").ok());
    EXPECT_FALSE(parsePythonLiteral("'unterminated").ok());
    EXPECT_FALSE(parsePythonLiteral("{'a': os.system('x')}").ok() &&
                 parsePythonLiteral("{'a': os.system('x')}")->entries[0].second.isNumeric());
    EXPECT_FALSE(parsePythonLiteral("1j").ok());
    std::string deep(100, '[');
    EXPECT_FALSE(parsePythonLiteral(deep).ok());
}

// Issue #20 (found by tests/fuzz/python_literal_fuzz.cpp): a signed name ("-inf(", "-x(") started
// counting nesting at 0 again, so "-f((" repeated 20,000 times overflowed the stack.
TEST(PythonLiteral, NestingThroughSignedCallsIsBounded) {
    std::string deep;
    for (int i = 0; i < 20000; ++i) {
        deep += "-f((";
    }
    auto v = parsePythonLiteral(deep);
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.error().find("nesting deeper than 64 levels"), std::string::npos) << v.error();
}

TEST(PythonLiteral, EmptyContainersSetsAndTrailingCommas) {
    auto v = parsePythonLiteral("{'a': [], 'b': {}, 'c': (), 'd': {1, 2,}, 'e': [1,],}");
    ASSERT_TRUE(v.ok()) << v.error();
    EXPECT_EQ(v->entries.size(), 5u);
    EXPECT_EQ(v->entries[3].second.kind, PyValue::Kind::List);
    EXPECT_EQ(v->entries[3].second.items.size(), 2u);
}

}  // namespace
}  // namespace runplane::agent

namespace runplane::agent {
namespace {

// SGLang's scheduler lines (scheduler decode / prefill stats), through Ray's prefix; the engine's
// Ray pid and TP rank label its series (issue 42).
TEST(LogMetrics, SglangDecodeAndPrefillLines) {
    const auto d = byName(parseLogLine(
        "(SGLangEngine pid=4242) [2026-04-15 07:57:53 TP0] Decode batch. #running-req: 39, "
        "#token: 123456, token usage: 0.45, cuda graph: True, gen throughput (token/s): 1855.20, "
        "#queue-req: 3, "));
    ASSERT_EQ(d.size(), 5u);
    EXPECT_DOUBLE_EQ(d.at("engine/pid4242.tp0/running_requests").value, 39);
    EXPECT_DOUBLE_EQ(d.at("engine/pid4242.tp0/queued_requests").value, 3);
    EXPECT_DOUBLE_EQ(d.at("engine/pid4242.tp0/kv_tokens").value, 123456);
    EXPECT_DOUBLE_EQ(d.at("engine/pid4242.tp0/kv_cache_usage").value, 0.45);
    EXPECT_DOUBLE_EQ(d.at("engine/pid4242.tp0/gen_throughput").value, 1855.2);
    const auto p = parseLogLine(
        "[2026-04-15 07:57:50 TP0] Prefill batch, #new-seq: 4, #new-token: 2048, "
        "#cached-token: 0, token usage: 0.01, #running-req: 35, #queue-req: 0");
    EXPECT_TRUE(p.progress);
    const auto m = byName(p);
    EXPECT_DOUBLE_EQ(m.at("engine/tp0/prefill_tokens").value, 2048);
    EXPECT_DOUBLE_EQ(m.at("engine/tp0/running_requests").value, 35);
    EXPECT_EQ(m.count("engine/tp0/gen_throughput"), 0u);
}

// vLLM's periodic stats line, current (Waiting) and older (Pending) wording.
TEST(LogMetrics, VllmStatsLines) {
    const auto m = byName(parseLogLine(
        "INFO 04-15 07:57:53 [loggers.py:123] Engine 000: Avg prompt throughput: 120.3 tokens/s, "
        "Avg generation throughput: 1855.2 tokens/s, Running: 39 reqs, Waiting: 2 reqs, GPU KV "
        "cache usage: 45.2%, Prefix cache hit rate: 12.0%"));
    EXPECT_DOUBLE_EQ(m.at("engine/engine000/prompt_throughput").value, 120.3);
    EXPECT_DOUBLE_EQ(m.at("engine/engine000/gen_throughput").value, 1855.2);
    EXPECT_DOUBLE_EQ(m.at("engine/engine000/running_requests").value, 39);
    EXPECT_DOUBLE_EQ(m.at("engine/engine000/queued_requests").value, 2);
    EXPECT_NEAR(m.at("engine/engine000/kv_cache_usage").value, 0.452, 1e-12);
    const auto old = byName(parseLogLine(
        "INFO 01-02 03:04:05 metrics.py:345] Avg prompt throughput: 0.0 tokens/s, Avg generation "
        "throughput: 512.0 tokens/s, Running: 8 reqs, Swapped: 0 reqs, Pending: 5 reqs, GPU KV "
        "cache usage: 9.5%, CPU KV cache usage: 0.0%."));
    EXPECT_DOUBLE_EQ(old.at("engine/queued_requests").value, 5);
    EXPECT_NEAR(old.at("engine/kv_cache_usage").value, 0.095, 1e-12);
}

// A line that names the words but carries no numbers yields nothing.
TEST(LogMetrics, EngineWordsWithoutNumbersAreNotMetrics) {
    const auto p = parseLogLine("Decode batch. #running-req: n/a");
    EXPECT_TRUE(p.metrics.empty());
    EXPECT_FALSE(p.progress);
}

}  // namespace
}  // namespace runplane::agent
