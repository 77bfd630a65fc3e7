// issue 11 with real Ray: two runplaned "nodes" on 127.0.0.11 and 127.0.0.12, Ray from PyPI in a
// venv made by the `ray_venv` CTest fixture (scripts/setup-ray-venv.sh), GPUs declared with
// --num-gpus. The launcher is tests/dispatch/ray_job.py, a real Ray job that places one task per
// declared GPU and prints framework-shaped lines. Checked: preflight sees one Ray version; bring-up
// waits for the GPU total; the job ran across both nodes; its eval lines reach the SQLite history;
// a worker daemon killed mid-run reads "daemon lost" while the head's run stays running; stop
// tears the run and Ray down.
//
// Both Ray nodes share this host, so `ray stop` on either ends every Ray process here; the test
// stops the workers first and the head last, as stopMultiNode does anyway. 127.0.0.1 is avoided for
// the head because Ray replaces it with the host's routable address.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/control/dispatch.h"
#include "backend/control/dispatch_history.h"
#include "backend/control/telemetry_ingestor.h"
#include "tests/dispatch/node_process.h"
#include "tests/dispatch/ray_test_support.h"
#include "tests/support/history_check.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;

namespace {

/// A TCP port free on `ip` right now (bound and released; Ray takes it a moment later).
std::uint32_t freePort(const char* ip) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, ip, &a.sin_addr);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    std::uint32_t port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
        port = ntohs(a.sin_port);
    }
    ::close(fd);
    return port;
}

}  // namespace

TEST(RealRay, BringUpLaunchLostWorkerAndTeardown) {
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray"))
        << venv << "/bin/ray is missing: the ray_venv fixture (scripts/setup-ray-venv.sh) makes it";
    const std::string source = envOr("RUNPLANE_SOURCE_DIR", ".");

    ScratchDir dir;
    // The nodes' home holds a Ray token, as every home does where Ray 2.60's `ray.init()` once
    // made a local cluster: left to Ray, the head would enable token authentication because of it
    // and the worker could not join. Dispatch sets RAY_AUTH_MODE on every node instead.
    const std::string home = dir.path() + "/home";
    std::filesystem::create_directories(home + "/.ray");
    std::ofstream(home + "/.ray/auth_token") << std::string(64, 'a');
    const std::map<std::string, std::string> env{
        {"PATH", venv + "/bin:/usr/bin:/bin"}, {"HOME", home}, {"RAY_USAGE_STATS_ENABLED", "0"}};
    NodeProcess head(dir.path() + "/head", "ray-head", "127.0.0.11:0", env);
    NodeProcess worker(dir.path() + "/worker", "ray-worker", "127.0.0.12:0", env);
    ASSERT_TRUE(head.ok()) << head.error();
    ASSERT_TRUE(worker.ok()) << worker.error();

    LaunchRequest r;
    r.head = head.address();
    r.workers = {worker.address()};
    r.gpusPerNode = 2;
    r.rayPort = freePort("127.0.0.11");
    ASSERT_NE(r.rayPort, 0u);
    r.clusterTimeout = std::chrono::seconds(120);
    r.pollInterval = std::chrono::milliseconds(500);
    r.preflight.expectedGpus = 0;  // --no-gpu daemons: Ray is told about GPUs that do not exist
    r.preflight.env = env;
    r.overridePreflight = true;  // MASTER_ADDR on loopback is a real FAIL for multi-node; recorded
    r.client.callTimeout = std::chrono::seconds(150);
    r.run.runId = runplane::RunId{"ray-run-1"};
    r.run.argv = {venv + "/bin/python", source + "/tests/dispatch/ray_job.py"};
    r.run.env = env;

    std::vector<DispatchEvent> progress;
    const auto result = launchMultiNode(r, [&](const DispatchEvent& e) {
        if (!e.done) {
            progress.push_back(e);
        }
    });
    ASSERT_TRUE(result.launched) << result.error;
    EXPECT_EQ(result.runEnv.count("RAY_AUTH_MODE") ? result.runEnv.at("RAY_AUTH_MODE") : "",
              "disabled")
        << "the job must use the nodes' mode";

    // Preflight against the real executable: one version on both nodes.
    ASSERT_EQ(result.preflight.rows.size(), 2u);
    for (const auto& row : result.preflight.rows) {
        const auto* ray = row.find("ray.installed");
        ASSERT_NE(ray, nullptr) << row.address;
        EXPECT_EQ(rayVersionFromMessage(ray->message), "2.60.0") << ray->message;
    }
    bool sameVersionPass = false;
    for (const auto& c : result.preflight.clusterChecks) {
        if (c.id == "ray.same_version") {
            sameVersionPass = c.status == CheckState::Pass;
        }
    }
    EXPECT_TRUE(sameVersionPass) << formatPreflightTable(result.preflight);

    // The wait ended on the full total reported by the real `ray status`.
    ASSERT_FALSE(progress.empty());
    EXPECT_DOUBLE_EQ(progress.back().progress, 1.0) << progress.back().message;
    EXPECT_NE(progress.back().message.find("4/4 GPUs"), std::string::npos)
        << progress.back().message;

    // The job saw both nodes and placed a task on each declared GPU.
    std::string out;
    ASSERT_TRUE(waitFor(
        [&] {
            out = stdoutOf(r.head, r.run.runId.value());
            return out.find("eval 3:") != std::string::npos;
        },
        std::chrono::seconds(90)))
        << out;
    EXPECT_NE(out.find("placed 4 tasks on nodes 127.0.0.11,127.0.0.12"), std::string::npos) << out;
    EXPECT_NE(out.find("env ACTOR_NUM_NODES=2 ACTOR_NUM_GPUS_PER_NODE=2"), std::string::npos)
        << out;

    // The launch and its steps are in the history; the job's eval lines reach it through the
    // controller's ingest.
    const std::string history = dir.path() + "/history.sqlite";
    DispatchRecordSpec record;
    record.historyPath = history;
    record.runName = "real ray";
    ASSERT_TRUE(recordLaunch(record, r, result).ok());
    EXPECT_EQ(runplane::testing::queryInt(
                  history,
                  "SELECT count(*) FROM runs WHERE id = 'ray-run-1' AND status = 'running'"
                  " AND nodes_json LIKE '%127.0.0.12%';"),
              1);
    EXPECT_EQ(runplane::testing::queryInt(
                  history,
                  "SELECT count(*) FROM events WHERE run_id = 'ray-run-1' AND kind IN "
                  "('dispatch.preflight', 'dispatch.ray_start_head',"
                  " 'dispatch.ray_start_worker', 'dispatch.wait_cluster',"
                  " 'dispatch.start_run');"),
              5);
    IngestorOptions io;
    io.address = r.head;
    io.historyPath = history;
    TelemetryIngestor ingestor(io);
    ASSERT_TRUE(ingestor.start().ok());
    const std::string evalCount =
        "SELECT count(*) FROM samples s JOIN series r ON r.id = s.series_id"
        " WHERE r.name = 'eval/arith' AND r.run_id = 'ray-run-1';";
    EXPECT_TRUE(waitFor([&] { return runplane::testing::queryInt(history, evalCount) >= 4; },
                        std::chrono::seconds(30)))
        << runplane::testing::queryInt(history, evalCount) << " eval samples; "
        << ingestor.status().lastError;
    ingestor.stop();

    // A worker daemon killed mid-run: that node reads "daemon lost", the run itself goes on.
    worker.kill9();
    NodeClientOptions quick;
    quick.callTimeout = std::chrono::seconds(20);
    const auto after = preflightAll({r.head, r.workers[0]}, r.preflight, quick);
    ASSERT_EQ(after.rows.size(), 2u);
    EXPECT_TRUE(after.rows[0].reachable);
    EXPECT_FALSE(after.rows[1].reachable);
    ASSERT_NE(after.rows[1].find("daemon"), nullptr);
    EXPECT_NE(after.rows[1].find("daemon")->message.find("daemon lost"), std::string::npos);
    EXPECT_EQ(runState(r.head, r.run.runId.value()), NodeRunState::Running)
        << "a lost worker daemon is not a failed run";

    // Stop: the run, then Ray on the (unreachable) worker and the head. The worker's step fails
    // and is reported; the head's `ray stop` ends every Ray process on this host.
    StopRequest s;
    s.head = r.head;
    s.workers = r.workers;
    s.runId = r.run.runId.value();
    s.graceSeconds = 5;
    s.force = true;
    s.client.callTimeout = std::chrono::seconds(150);
    const auto stopped = stopMultiNode(s);
    EXPECT_FALSE(stopped.ok);
    ASSERT_FALSE(stopped.errors.empty());
    EXPECT_NE(stopped.errors.front().find(r.workers[0]), std::string::npos)
        << stopped.errors.front();
    EXPECT_EQ(runState(r.head, r.run.runId.value()), NodeRunState::Stopped);
    ASSERT_TRUE(recordStop(history, r.run.runId.value(), stopped).ok());
    EXPECT_EQ(
        runplane::testing::queryInt(
            history, "SELECT count(*) FROM runs WHERE id = 'ray-run-1' AND status = 'stopped';"),
        1);
    EXPECT_EQ(runplane::testing::queryInt(
                  history,
                  "SELECT count(*) FROM events WHERE run_id = 'ray-run-1' AND kind = "
                  "'dispatch.ray_stop' AND attrs_json LIKE '%\"ok\":false%';"),
              1)
        << "the unreachable worker's teardown step is recorded as failed";
    const auto status = rayStatus(r.head, s.client);
    ASSERT_TRUE(status.ok()) << status.error();
    EXPECT_FALSE(status->reachable) << status->raw;
}
