// issue 42: engines found by the role walk, not by the run's own tree. Real child processes with
// an SGLang and a vLLM server's command line (tests/agent/fake_engine_server.cpp: a real
// cpp-httplib server of a real engine's /metrics exposition), started beside the daemon's run,
// not inside it, as Ray starts a slime run's engines; a real runplaned scrapes the ports of their
// argv into the run's engine/... series. A process that serves the same /metrics on a `--port`
// but is no engine (a training script's argv) is not scraped.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/engine_metrics.h"
#include "tests/agent/daemon_process.h"
#include "tests/agent/fake_engine.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;
using EngineProcess = test::FakeEngine;
using test::freePort;
using test::serves;

std::string fixturePath(const std::string& name) {
    return test::prometheusFixture(name);
}

TEST(EngineMetricsDaemon, EnginesTheRoleWalkFindsAreScrapedIntoTheRun) {
    const int sglangPort = freePort(), vllmPort = freePort(), trainPort = freePort();
    ASSERT_TRUE(sglangPort > 0 && vllmPort > 0 && trainPort > 0);
    const std::string sglangMetrics = fixturePath("sglang_production_metrics.txt");
    const std::string vllmMetrics = fixturePath("vllm_metrics_production_stack_318.txt");
    EngineProcess sglang({"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-4B",
                          "--port", std::to_string(sglangPort), "--enable-metrics"},
                         sglangMetrics);
    EngineProcess vllm(
        {"/usr/bin/vllm", "serve", "Qwen/Qwen3-4B", "--port=" + std::to_string(vllmPort)},
        vllmMetrics);
    EngineProcess train({"python3", "train.py", "--port", std::to_string(trainPort)},
                        sglangMetrics);
    ASSERT_TRUE(serves(sglangPort));
    ASSERT_TRUE(serves(vllmPort));
    ASSERT_TRUE(serves(trainPort));

    TempDir dir;
    DaemonProcess daemon(dir.path() + "/state",
                         {"--sample-hz", "5", "--kernel-log", "off", "--no-gpu"});
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    {
        // The run itself names no engine: its tree is one sleep.
        grpc::ClientContext ctx;
        v1::StartRunRequest req;
        req.set_run_id("beside");
        for (const char* a : {"/bin/sleep", "60"}) {
            req.add_argv(a);
        }
        req.set_role(v1::RUN_ROLE_STANDALONE);
        v1::RunStatus st;
        ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    }
    const std::string sglangSeries =
        "engine/port" + std::to_string(sglangPort) + "/running_requests";
    const std::string vllmSeries = "engine/port" + std::to_string(vllmPort) + "/kv_cache_usage";
    const std::string trainPrefix = "engine/port" + std::to_string(trainPort) + "/";
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(40));
    auto reader = stub->WatchTelemetry(&ctx, {});
    std::map<std::string, double> got;
    std::map<std::string, std::string> runOf;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
    v1::TelemetryBatch batch;
    while ((got.count(sglangSeries) == 0 || got.count(vllmSeries) == 0) &&
           std::chrono::steady_clock::now() < deadline && reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            if (r.has_sample() && r.sample().series().starts_with("engine/")) {
                got[r.sample().series()] = r.sample().value();
                runOf[r.sample().series()] = r.run_id();
            }
        }
    }
    // A few more reports: the training script's port must still be absent.
    const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < settle && reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            if (r.has_sample() && r.sample().series().starts_with("engine/")) {
                got[r.sample().series()] = r.sample().value();
                runOf[r.sample().series()] = r.run_id();
            }
        }
    }
    ctx.TryCancel();
    reader->Finish();
    ASSERT_EQ(got.count(sglangSeries), 1u) << daemon.stderrText();
    EXPECT_EQ(got[sglangSeries], 162.0);  // sglang:num_running_reqs of the SGLang exposition
    EXPECT_EQ(runOf[sglangSeries], "beside");
    ASSERT_EQ(got.count(vllmSeries), 1u) << daemon.stderrText();
    EXPECT_EQ(got[vllmSeries], 0.0);  // vllm:gpu_cache_usage_perc of the vLLM paste
    EXPECT_EQ(runOf[vllmSeries], "beside");
    for (const auto& [name, value] : got) {
        EXPECT_FALSE(name.starts_with(trainPrefix)) << name << " = " << value;
    }
    grpc::ClientContext stopCtx;
    v1::StopRunRequest stop;
    stop.set_run_id("beside");
    stop.set_grace_seconds(1);
    v1::RunStatus st;
    stub->StopRun(&stopCtx, stop, &st);
}

}  // namespace
}  // namespace runplane::agent
