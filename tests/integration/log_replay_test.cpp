// issue 42: real pastes from public issues replayed through the real path: `runplanectl submit
// ADDR -- sh -c 'cat FILES; exit 1'`, `runplanectl watch`, then the history's series and events
// and `runplanectl runs`, which names the failed run's cause in one line.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

TEST(LogReplayIntegration, RealPastesBecomeSeriesEventsAndTheRunsCause) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "replay-node");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string fixtures = sourceDir() + "/tests/agent/fixtures/logs/";
    std::vector<std::string> argv = {"submit", address, "--history", history, "--run-id",
                                     "replay", "--",    "/bin/sh",   "-c",    "cat \"$@\"; exit 1",
                                     "sh"};
    // The run's story: training and engines working, then it dies of a CUDA OOM (last).
    for (const char* f : {"slime_step_timer_1136.log", "sglang_prefill_cache_hit_1612.log",
                          "megatron_iteration_megatron_llm_11.log", "vllm_v1_engine_43295.log",
                          "verl_step_wrapped_7412.log", "slime_weight_sync_sglang_26032.log",
                          "nccl_error2_hunyuanvideo_114.log", "ray_oom_flingbot_11.log",
                          "host_oom_kernel_docker_1001.log", "cuda_oom_slime_1951.log"}) {
        argv.push_back(fixtures + f);
    }
    auto submit = runCtl(argv, dir.path().string());
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    auto watch =
        runCtl({"watch", address, "--history", history, "--seconds", "4"}, dir.path().string());
    EXPECT_EQ(watch.exitCode, 0) << watch.err;

    auto runs = runCtl({"runs", "--history", history, "--json"}, dir.path().string());
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    const auto list = nlohmann::json::parse(runs.out);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["status"], "failed");
    ASSERT_TRUE(list[0]["cause"].is_object()) << runs.out;
    EXPECT_EQ(list[0]["cause"]["kind"], "cuda_oom");
    EXPECT_EQ(list[0]["cause"]["summary"], "CUDA OOM on GPU 0: tried 58.15 GiB, 47.69 GiB free");
    auto table = runCtl({"runs", "--history", history, "-o", "wide"}, dir.path().string());
    EXPECT_NE(table.out.find("CUDA OOM on GPU 0: tried 58.15 GiB, 47.69 GiB free"),
              std::string::npos)
        << table.out;

    auto opened = db::History::open(history);
    ASSERT_TRUE(opened.ok()) << opened.error();
    auto& h = **opened;
    db::EventFilter filter;
    filter.runId = RunId{"replay"};
    auto events = h.listEvents(filter);
    ASSERT_TRUE(events.ok()) << events.error();
    std::map<std::string, int> kinds;
    for (const auto& e : *events) {
        ++kinds[e.kind];
    }
    EXPECT_EQ(kinds["cuda_oom"], 1);
    EXPECT_EQ(kinds["ray_oom"], 1);
    EXPECT_EQ(kinds["host_oom"], 1);
    EXPECT_EQ(kinds["nccl_error"], 1);
    EXPECT_EQ(kinds["weight_sync_failure"], 1);
    EXPECT_EQ(kinds["crash"], 2);  // the two tracebacks' last lines (NCCL's, Ray's OOM)
    EXPECT_GE(kinds["phase"], 1);
    for (const auto& e : *events) {
        if (e.kind == "ray_oom") {
            EXPECT_EQ(db::attrText(e.attrs, "node_used_gb"), "59.49");
            EXPECT_EQ(db::attrText(e.attrs, "node_total_gb"), "62.58");
        }
        if (e.kind == "weight_sync_failure") {
            EXPECT_EQ(db::attrText(e.attrs, "engine"), "pid1493437.dp6.tp6");
        }
    }

    db::SeriesFilter sf;
    sf.runId = RunId{"replay"};
    auto series = h.listSeries(sf);
    ASSERT_TRUE(series.ok()) << series.error();
    std::set<std::string> names;
    for (const auto& s : *series) {
        names.insert(s.name);
    }
    for (const char* want :
         {"train/grad_norm", "timer/actor_train_seconds", "engine/tp0/cache_hit_rate",
          "megatron/lm_loss", "megatron/elapsed_time_per_iteration_ms",
          "engine/pid3646.engine000/prefix_cache_hit_rate", "critic/rewards/min"}) {
        EXPECT_EQ(names.count(want), 1u) << want;
    }
    for (const auto& n : names) {  // no garbage: a wrapped key never becomes a series
        EXPECT_FALSE(n == "critic" || n.starts_with("/")) << n;
    }
    auto loss = h.findSeries(NodeId{"replay-node"}, RunId{"replay"}, "megatron/lm_loss");
    ASSERT_TRUE(loss.ok() && loss->has_value());
    daemon.stop();
}

}  // namespace
}  // namespace runplane::testing
