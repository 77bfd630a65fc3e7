// issue 42: engines found by the sockets they listen on, not by a `--port` (an SGLang server that
// slime's SGLangEngine Ray actor starts as a child on a port chosen at run time). A real process
// titled as Ray titles that actor (`ray::SGLangEngine`, a rollout row of the role table) holds
// two non-HTTP listening sockets (a ZMTP greeting, a silent one) and starts a child under a
// multiprocessing-spawn command line that serves SGLang's documented /metrics sample on
// 127.0.0.1:<ephemeral> (tests/agent/fake_engine_server.cpp). A real runplaned must scrape the
// child's port into the run's engine/... series, probe each non-HTTP port once, and scrape a port
// that both a `--port` and the socket scan find once. EngineScraperProbes: the scraper's probe
// verdicts against real servers (an engine's /metrics, another HTTP /metrics, a silent port).
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
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
using EngineGroup = test::FakeEngine;
using test::freePort;
using test::serves;

std::string fixturePath(const std::string& name) {
    return test::prometheusFixture(name);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Waits for a file holding a number; 0 if it never comes.
int waitNumber(const std::string& path) {
    for (int i = 0; i < 200; ++i) {
        const std::string text = readFile(path);
        if (!text.empty()) {
            return std::atoi(text.c_str());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
}

// Occurrences of `needle` in `hay`.
std::size_t count(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) {
        ++n;
    }
    return n;
}

// A real HTTP server on 127.0.0.1:<ephemeral> serving `body` at /metrics, counting requests.
class CountingServer {
  public:
    explicit CountingServer(std::string body) : m_body(std::move(body)) {
        m_server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
            ++m_requests;
            res.set_content(m_body, "text/plain; version=0.0.4; charset=utf-8");
        });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        for (int i = 0; i < 500 && !m_server.is_running(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    ~CountingServer() {
        m_server.stop();
        m_thread.join();
    }
    int port() const { return m_port; }
    int requests() const { return m_requests.load(); }

  private:
    std::string m_body;
    std::atomic<int> m_requests{0};
    httplib::Server m_server;
    int m_port = 0;
    std::thread m_thread;
};

// The scraper's probes of socket-found ports: an engine's /metrics is scraped from then on; an
// HTTP server whose /metrics holds no engine names is asked once; a port that accepts and never
// answers times out (probeTimeoutMs) and is not asked again within a minute; a verdict belongs to
// its (pid, port): the same port under another pid is probed again.
TEST(EngineScraperProbes, EachSocketFoundPortIsProbedOnce) {
    CountingServer engine(readFile(fixturePath("sglang_production_metrics.txt")));
    // Not an engine: a Prometheus client's process collector, as any Python server exports.
    CountingServer other(
        "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n");
    const int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(silent, 8), 0);  // the kernel completes connections; no one accepts
    ::getsockname(silent, reinterpret_cast<sockaddr*>(&a), &len);
    const int silentPort = ntohs(a.sin_port);

    EngineScraper scraper("127.0.0.1", 1000, 200);
    const std::vector<EngineScraper::Target> targets = {{"run", engine.port(), "", 4242},
                                                        {"run", other.port(), "", 4242},
                                                        {"run", silentPort, "", 4242}};
    scraper.setTargets(targets, std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    scraper.setTargets(targets, std::chrono::milliseconds(100));  // a discovery: verdicts stay
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    EXPECT_EQ(scraper.probeCount(), 3u);
    EXPECT_EQ(other.requests(), 1);
    EXPECT_GE(engine.requests(), 5);  // probed, then scraped every 100 ms
    std::map<int, EngineScraper::Probe> probes;
    for (auto& p : scraper.takeProbes()) {
        probes[p.port] = p;
    }
    ASSERT_EQ(probes.size(), 3u);
    EXPECT_TRUE(probes[engine.port()].metrics);
    EXPECT_FALSE(probes[other.port()].metrics);
    EXPECT_TRUE(probes[other.port()].final);
    EXPECT_EQ(probes[other.port()].why, "HTTP /metrics without sglang: or vllm: samples");
    EXPECT_FALSE(probes[silentPort].final);
    EXPECT_NE(probes[silentPort].why.find("timed out"), std::string::npos)
        << probes[silentPort].why;
    bool scraped = false;
    for (const auto& sc : scraper.take()) {
        for (const auto& m : sc.metrics) {
            scraped = scraped || m.series == "engine/port" + std::to_string(engine.port()) +
                                                 "/running_requests";
        }
    }
    EXPECT_TRUE(scraped);
    // The same port in another process (a restarted server): probed again.
    scraper.setTargets({{"run", other.port(), "", 4243}}, std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_EQ(scraper.probeCount(), 4u);
    EXPECT_EQ(other.requests(), 2);
    ::close(silent);
}

TEST(EngineMetricsDaemon, AnEngineWithoutAPortIsFoundByItsListeningSocket) {
    TempDir dir;
    const std::string side = dir.path() + "/side";
    ASSERT_EQ(::mkdir(side.c_str(), 0700), 0);
    // The Ray actor and its server child; no --port on either command line.
    EngineGroup actor({"ray::SGLangEngine"},
                      {{"RUNPLANE_FAKE_METRICS_FILE", fixturePath("sglang_production_metrics.txt")},
                       {"RUNPLANE_FAKE_PORT_FILE", dir.path() + "/http.port"},
                       {"RUNPLANE_FAKE_SERVE_IN_CHILD", "1"},
                       {"RUNPLANE_FAKE_SIDE_DIR", side}});
    // An engine whose command line names its port, which the socket scan also finds.
    const int httpPort = waitNumber(dir.path() + "/http.port");
    const int zmtpPort = waitNumber(side + "/zmtp.port");
    const int silentPort = waitNumber(side + "/silent.port");
    ASSERT_TRUE(httpPort > 0 && zmtpPort > 0 && silentPort > 0);
    ASSERT_TRUE(serves(httpPort));
    const int vllmPort = freePort();
    ASSERT_GT(vllmPort, 0);
    EngineGroup vllm(
        {"/usr/bin/vllm", "serve", "Qwen/Qwen3-4B", "--port=" + std::to_string(vllmPort)},
        {{"RUNPLANE_FAKE_METRICS_FILE", fixturePath("vllm_metrics_production_stack_318.txt")}});
    ASSERT_TRUE(serves(vllmPort));
    // Nothing has connected to the side sockets yet.
    EXPECT_EQ(readFile(side + "/zmtp.accepts"), "0");
    EXPECT_EQ(readFile(side + "/silent.accepts"), "0");

    DaemonProcess daemon(dir.path() + "/state",
                         {"--sample-hz", "5", "--kernel-log", "off", "--no-gpu"});
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    {
        grpc::ClientContext ctx;
        v1::StartRunRequest req;
        req.set_run_id("sockets");
        for (const char* a : {"/bin/sleep", "60"}) {
            req.add_argv(a);
        }
        req.set_role(v1::RUN_ROLE_STANDALONE);
        v1::RunStatus st;
        ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    }
    const std::string ours = "engine/port" + std::to_string(httpPort) + "/";
    const std::string vllmSeries = "engine/port" + std::to_string(vllmPort) + "/kv_cache_usage";
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub->WatchTelemetry(&ctx, {});
    std::map<std::string, double> got;
    std::map<std::string, std::string> runOf;
    const auto start = std::chrono::steady_clock::now();
    auto firstSeen = std::chrono::steady_clock::time_point{};
    v1::TelemetryBatch batch;
    // Until the socket-found engine's six gauges came, then 11 s more: two more discoveries
    // (every 5 s), each of which lists the side ports again.
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(50) &&
           reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            const auto& name = r.sample().series();
            if (r.has_sample() && name.starts_with("engine/")) {
                got[name] = r.sample().value();
                runOf[name] = r.run_id();
            }
        }
        std::size_t mine = 0;
        for (const auto& [name, v] : got) {
            mine += name.starts_with(ours) ? 1 : 0;
        }
        if (mine == 6 && firstSeen == std::chrono::steady_clock::time_point{}) {
            firstSeen = std::chrono::steady_clock::now();
        }
        if (firstSeen != std::chrono::steady_clock::time_point{} &&
            std::chrono::steady_clock::now() - firstSeen > std::chrono::seconds(11)) {
            break;
        }
    }
    ctx.TryCancel();
    reader->Finish();
    const std::string log = daemon.stderrText();
    const std::string series = ours + "running_requests";
    ASSERT_EQ(got.count(series), 1u) << log;
    EXPECT_EQ(got[series], 162.0);  // sglang:num_running_reqs of SGLang's documented sample
    EXPECT_EQ(got[ours + "queued_requests"], 2826.0);
    EXPECT_EQ(runOf[series], "sockets");
    // The non-HTTP ports give no series, and each was connected to once in three discoveries.
    for (const auto& [name, value] : got) {
        EXPECT_FALSE(name.starts_with("engine/port" + std::to_string(zmtpPort) + "/")) << name;
        EXPECT_FALSE(name.starts_with("engine/port" + std::to_string(silentPort) + "/")) << name;
    }
    // Each side port was really connected to (under ctest -j another test's daemon, whose role
    // walk sees this node's engines too, may connect as well: the count is this daemon's log).
    EXPECT_GE(std::atoi(readFile(side + "/zmtp.accepts").c_str()), 1) << log;
    EXPECT_GE(std::atoi(readFile(side + "/silent.accepts").c_str()), 1) << log;
    EXPECT_EQ(count(log, "probe of pid " + std::to_string(actor.pid()) + " 127.0.0.1:" +
                             std::to_string(zmtpPort) + ": not an engine's /metrics"),
              1u)
        << log;
    EXPECT_EQ(count(log, "127.0.0.1:" + std::to_string(silentPort) + ": silent"), 1u) << log;
    // The HTTP port was found in the child (not the actor) and probed once.
    EXPECT_EQ(count(log, "127.0.0.1:" + std::to_string(httpPort) + ": an engine's /metrics"), 1u)
        << log;
    EXPECT_EQ(count(log, "probe of pid " + std::to_string(actor.pid()) +
                             " 127.0.0.1:" + std::to_string(httpPort)),
              0u)
        << log;
    // The vLLM port is named by its command line and found by the socket scan: one target, never
    // probed, its series from one scrape a report.
    ASSERT_EQ(got.count(vllmSeries), 1u) << log;
    EXPECT_EQ(got[vllmSeries], 0.0);
    EXPECT_EQ(count(log, "127.0.0.1:" + std::to_string(vllmPort) + " (socket of pid"), 0u) << log;
    EXPECT_GE(count(log, "127.0.0.1:" + std::to_string(vllmPort) + " (command line"), 1u) << log;
    EXPECT_EQ(count(log, "probe of pid " + std::to_string(vllm.pid())), 0u) << log;
    // Every target line names each port at most once.
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("engine metrics: targets:") == std::string::npos) {
            continue;
        }
        for (const int p : {httpPort, vllmPort, zmtpPort, silentPort}) {
            EXPECT_LE(count(line, ":" + std::to_string(p) + " ("), 1u) << line;
        }
    }
    grpc::ClientContext stopCtx;
    v1::StopRunRequest stop;
    stop.set_run_id("sockets");
    stop.set_grace_seconds(1);
    v1::RunStatus st;
    stub->StopRun(&stopCtx, stop, &st);
}

}  // namespace
}  // namespace runplane::agent
