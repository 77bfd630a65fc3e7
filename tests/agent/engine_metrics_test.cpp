// issue 42: the inference engines' own Prometheus metrics (engine_metrics.h), on the sample
// exposition of SGLang's documentation and a vLLM /metrics pasted into a public issue
// (tests/agent/fixtures/prometheus), served by a real HTTP server, scraped by the real daemon.
#include "backend/agent/engine_metrics.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;

std::string fixture(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src != nullptr ? src : ".") + "/tests/agent/fixtures/prometheus/" +
                     name);
    EXPECT_TRUE(in.good()) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::map<std::string, double> bySeries(const std::vector<LogMetric>& ms) {
    std::map<std::string, double> out;
    for (const auto& m : ms) {
        EXPECT_EQ(m.step, -1);
        out[m.series] = m.value;
    }
    return out;
}

// This cpp-httplib has no wait_until_ready(): wait until the listening thread runs (a stop()
// before it would be lost).
void waitRunning(const httplib::Server& server) {
    for (int i = 0; i < 500 && !server.is_running(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// A real HTTP server on 127.0.0.1:<ephemeral> serving `body` at /metrics.
class ExpositionServer {
  public:
    explicit ExpositionServer(std::string body) : m_body(std::move(body)) {
        m_server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
            res.set_content(m_body, "text/plain; version=0.0.4; charset=utf-8");
        });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        waitRunning(m_server);
    }
    ~ExpositionServer() {
        m_server.stop();
        m_thread.join();
    }
    int port() const { return m_port; }

  private:
    std::string m_body;
    httplib::Server m_server;
    int m_port = 0;
    std::thread m_thread;
};

TEST(PrometheusText, SglangDocumentationSample) {
    std::size_t skipped = 0;
    const auto samples = parsePrometheusText(fixture("sglang_production_metrics.txt"), &skipped);
    EXPECT_EQ(skipped, 0u);
    EXPECT_EQ(samples.size(), 2u + 2u + 23u + 4u);  // counters, gauges, histogram lines, gauges
    EXPECT_EQ(samples[0].name, "sglang:prompt_tokens_total");
    EXPECT_EQ(samples[0].labels.at("model_name"), "meta-llama/Llama-3.1-8B-Instruct");
    EXPECT_DOUBLE_EQ(samples[0].value, 8.128902e+06);
    EXPECT_EQ(samples[25].labels.at("le"), "+Inf");
}

TEST(PrometheusText, EscapesSpecialValuesTimestampsAndBadLines) {
    std::size_t skipped = 0;
    std::string error;
    const auto s = parsePrometheusText(
        "a{x=\"q\\\"uo\\\\te\\n\",y=\"\",} NaN\n"
        "b +Inf 1712345678000\n"
        "c{} -Inf\r\n"
        "  # indented comment\n"
        "d{x=1} 2\n"
        "e{x=\"open} 3\n"
        "9bad 1\n"
        "f 1e400x\n",
        &skipped, &error);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].labels.at("x"), "q\"uo\\te\n");
    EXPECT_EQ(s[0].labels.at("y"), "");
    EXPECT_TRUE(std::isnan(s[0].value));
    EXPECT_TRUE(std::isinf(s[1].value) && s[1].value > 0);
    EXPECT_TRUE(std::isinf(s[2].value) && s[2].value < 0);
    EXPECT_EQ(skipped, 4u);
    EXPECT_EQ(error, "line 5: expected '\"' at column 5");
    // Bounded: a label flood stops at kMaxPromLabels; a huge body at kMaxPromSamples.
    std::string flood = "m{";
    for (int i = 0; i < 100; ++i) {
        flood += "l" + std::to_string(i) + "=\"v\",";
    }
    flood += "} 1\n";
    EXPECT_TRUE(parsePrometheusText(flood).empty());
    std::string many;
    for (std::size_t i = 0; i < kMaxPromSamples + 10; ++i) {
        many += "x 1\n";
    }
    EXPECT_EQ(parsePrometheusText(many).size(), kMaxPromSamples);
}

// The chosen gauges, under the same engine/... names the engines' log lines give; counters and
// histograms give nothing.
TEST(EngineMetrics, SglangAndVllmGaugesBecomeEngineSeries) {
    const auto sglang =
        bySeries(engineMetricsFromExposition(fixture("sglang_production_metrics.txt"), 30000));
    const std::map<std::string, double> wantSglang = {
        {"engine/port30000/kv_cache_usage", 0.28},
        {"engine/port30000/cache_hit_rate", 0.007507552643049313},
        {"engine/port30000/running_requests", 162.0},
        {"engine/port30000/kv_tokens", 123859.0},
        {"engine/port30000/gen_throughput", 86.50814177726902},
        {"engine/port30000/queued_requests", 2826.0},
    };
    EXPECT_EQ(sglang, wantSglang);
    const auto vllm = bySeries(
        engineMetricsFromExposition(fixture("vllm_metrics_production_stack_318.txt"), 8000));
    const std::map<std::string, double> wantVllm = {
        {"engine/port8000/running_requests", 0.0},
        {"engine/port8000/queued_requests", 0.0},
        {"engine/port8000/kv_cache_usage", 0.0},
    };
    EXPECT_EQ(vllm, wantVllm);
    // Rank labels keep two schedulers of one server apart.
    const auto ranks = bySeries(
        engineMetricsFromExposition("sglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"1\"} 3\n"
                                    "sglang:num_running_reqs{tp_rank=\"1\",dp_rank=\"1\"} 4\n",
                                    30001));
    EXPECT_EQ(ranks.at("engine/port30001.dp1.tp0/running_requests"), 3);
    EXPECT_EQ(ranks.at("engine/port30001.dp1.tp1/running_requests"), 4);
}

TEST(EngineMetrics, PortsFromEngineCommandLines) {
    using V = std::vector<int>;
    EXPECT_EQ(enginePortsFromArgv({"python3", "-m", "sglang.launch_server", "--model-path", "m",
                                   "--port", "30010", "--enable-metrics"}),
              V{30010});
    EXPECT_EQ(enginePortsFromArgv({"python3", "-m", "sglang.launch_server", "--model-path", "m"}),
              V{30000});
    EXPECT_EQ(enginePortsFromArgv({"/usr/bin/vllm", "serve", "m", "--port=8123"}), V{8123});
    EXPECT_EQ(enginePortsFromArgv({"python", "-m", "vllm.entrypoints.openai.api_server"}), V{8000});
    EXPECT_EQ(enginePortsFromArgv({"python", "train.py", "--port", "30000"}), V{});
    EXPECT_EQ(enginePortsFromArgv({"vllm", "serve", "--port", "99999"}), V{8000});
}

// fetchMetrics against a real HTTP server; a closed port and a wrong path are errors that name
// the place; the scraper's thread delivers the scrape to its run.
TEST(EngineMetrics, RealServerScrapedByFetchAndTheScraper) {
    ExpositionServer server(fixture("sglang_production_metrics.txt"));
    ASSERT_GT(server.port(), 0);
    auto body = fetchMetrics("127.0.0.1", server.port(), 2000);
    ASSERT_TRUE(body.ok()) << body.error();
    EXPECT_EQ(*body, fixture("sglang_production_metrics.txt"));

    httplib::Server other;  // no /metrics: a 404
    const int otherPort = other.bind_to_any_port("127.0.0.1");
    std::thread t([&] { other.listen_after_bind(); });
    waitRunning(other);
    auto missing = fetchMetrics("127.0.0.1", otherPort, 2000);
    other.stop();
    t.join();
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find(":" + std::to_string(otherPort) + "/metrics: HTTP/1."),
              std::string::npos)
        << missing.error();
    EXPECT_NE(missing.error().find("404"), std::string::npos) << missing.error();
    auto closed = fetchMetrics("127.0.0.1", otherPort, 2000);
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.error().find("connect"), std::string::npos) << closed.error();

    EngineScraper scraper;
    scraper.setTargets({{"run-1", server.port()}}, std::chrono::milliseconds(100));
    std::vector<EngineScraper::Scrape> got;
    for (int i = 0; i < 100 && got.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        got = scraper.take();
    }
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got[0].runId, "run-1");
    const auto m = bySeries(got[0].metrics);
    EXPECT_EQ(m.at("engine/port" + std::to_string(server.port()) + "/running_requests"), 162.0);
    EXPECT_EQ(scraper.lastErrors().at(server.port()), "");
}

// Through a real runplaned: a run whose environment names its engine's port gets the engine's
// gauges as its own engine/... series.
TEST(EngineMetricsDaemon, RunsEngineIsScrapedIntoItsSeries) {
    ExpositionServer server(fixture("sglang_production_metrics.txt"));
    TempDir dir;
    DaemonProcess daemon(dir.path() + "/state", {"--sample-hz", "5", "--kernel-log", "off"});
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    {
        grpc::ClientContext ctx;
        v1::StartRunRequest req;
        req.set_run_id("engine");
        for (const char* a : {"/bin/sleep", "30"}) {
            req.add_argv(a);
        }
        req.set_role(v1::RUN_ROLE_STANDALONE);
        (*req.mutable_env())["RUNPLANE_ENGINE_METRICS_PORTS"] = std::to_string(server.port());
        v1::RunStatus st;
        ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    }
    const std::string series = "engine/port" + std::to_string(server.port()) + "/running_requests";
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto reader = stub->WatchTelemetry(&ctx, {});
    std::map<std::string, double> got;
    v1::TelemetryBatch batch;
    // Only this server's series: the daemon also finds engine processes anywhere on the node
    // (the role walk), such as another test's fake engines running beside this one under ctest -j.
    const std::string ours = "engine/port" + std::to_string(server.port()) + "/";
    while (got.size() < 6 && reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            if (r.has_sample() && r.run_id() == "engine" && r.sample().series().starts_with(ours)) {
                got[r.sample().series()] = r.sample().value();
            }
        }
    }
    ctx.TryCancel();
    reader->Finish();
    ASSERT_EQ(got.count(series), 1u) << daemon.stderrText();
    EXPECT_EQ(got[series], 162.0);
    EXPECT_EQ(got.size(), 6u);
    grpc::ClientContext stopCtx;
    v1::StopRunRequest stop;
    stop.set_run_id("engine");
    v1::RunStatus st;
    stub->StopRun(&stopCtx, stop, &st);
}

}  // namespace
}  // namespace runplane::agent
