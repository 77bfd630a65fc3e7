// issue 11: Ray bring-up order, wait for the GPU total, launch on the head with the multi-node
// environment, teardown, rollback on failure, preflight blocking + recorded override; all
// against real daemons. `ray` here is tests/dispatch/fakebin/ray (records calls, keeps the
// cluster's GPU total in files) because Ray is not installed on this machine; see
// docs/dispatch.md for what the real-Ray test still needs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "backend/control/dispatch.h"
#include "backend/control/dispatch_membership.h"
#include "tests/dispatch/dispatch_test_support.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;

namespace {

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        out.push_back(l);
    }
    return out;
}

std::size_t indexOf(const std::vector<std::string>& v, const std::string& prefix) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i].rfind(prefix, 0) == 0) {
            return i;
        }
    }
    return v.size();
}

LaunchRequest request(const Cluster& c) {
    LaunchRequest r;
    r.head = c.nodes[0]->address();
    for (std::size_t i = 1; i < c.nodes.size(); ++i) {
        r.workers.push_back(c.nodes[i]->address());
    }
    r.gpusPerNode = 2;
    r.clusterTimeout = std::chrono::seconds(20);
    r.pollInterval = std::chrono::milliseconds(200);
    r.preflight.env["PATH"] = fakeRayDir() + ":/usr/bin:/bin";
    r.client.callTimeout = std::chrono::milliseconds(3000);
    r.run.runId = runplane::RunId{"mn-1"};
    r.run.argv = {"/bin/sh", "-c",
                  "echo \"MASTER_ADDR=$MASTER_ADDR ACTOR_NUM_NODES=$ACTOR_NUM_NODES "
                  "ACTOR_NUM_GPUS_PER_NODE=$ACTOR_NUM_GPUS_PER_NODE RAY_ADDRESS=$RAY_ADDRESS\"; "
                  "exec sleep 60"};
    return r;
}

std::string headStdout(const std::string& head, const std::string& runId) {
    auto client = NodeClient::create(head);
    std::string out;
    for (int i = 0; i < 50 && out.find('\n') == std::string::npos; ++i) {
        out.clear();
        (void)(*client)->tailLogs(runplane::RunId{runId}, LogStreamKind::Stdout, 0, false,
                                  [&](const LogChunkInfo& ch) {
                                      out += ch.data;
                                      return true;
                                  });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return out;
}

}  // namespace

TEST(DispatchLaunch, BringUpWaitsForGpuTotalThenRunsOnHeadAndStopTearsDown) {
    Cluster c;
    // Workers' raylets "register" 1 s after `ray start` returns: the wait loop must see 2/6 first.
    c.start({"2.40.0", "2.40.0", "2.40.0"},
            {{}, {{"FAKE_RAY_JOIN_DELAY", "1"}}, {{"FAKE_RAY_JOIN_DELAY", "1"}}});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    LaunchRequest r = request(c);
    r.overridePreflight = true;  // MASTER_ADDR is a loopback address in this test: a real FAIL
    std::vector<DispatchEvent> progress;
    const auto result = launchMultiNode(r, [&](const DispatchEvent& e) {
        if (!e.done) {
            progress.push_back(e);
        }
    });
    ASSERT_TRUE(result.launched) << result.error;
    EXPECT_TRUE(result.preflightOverridden);
    bool masterRecorded = false;
    for (const auto& f : result.overriddenFailures) {
        masterRecorded = masterRecorded || f.find("net.master_addr") != std::string::npos;
    }
    EXPECT_TRUE(masterRecorded) << "the override records what it accepted";

    // Order: head start, then both workers join the head's address, then status polls.
    const auto calls = lines(c.calls());
    const auto headStart =
        indexOf(calls, "n0 start --head --port=6379 --node-ip-address=127.0.0.1 --num-gpus=2");
    const auto w1 = indexOf(
        calls, "n1 start --address=127.0.0.1:6379 --node-ip-address=127.0.0.2 --num-gpus=2");
    const auto w2 = indexOf(
        calls, "n2 start --address=127.0.0.1:6379 --node-ip-address=127.0.0.3 --num-gpus=2");
    const auto firstStatus = indexOf(calls, "n0 status");
    ASSERT_LT(headStart, calls.size()) << c.calls();
    ASSERT_LT(w1, calls.size()) << c.calls();
    ASSERT_LT(w2, calls.size()) << c.calls();
    EXPECT_LT(headStart, w1);
    EXPECT_LT(headStart, w2);
    EXPECT_LT(std::max(w1, w2), firstStatus);
    EXPECT_EQ(calls.end(), std::find_if(calls.begin(), calls.end(),
                                        [](const std::string& l) {
                                            return l.rfind("n1 status", 0) == 0 ||
                                                   l.rfind("n2 status", 0) == 0;
                                        }))
        << "status is asked on the head only";

    // The wait saw the partial cluster before the full one.
    ASSERT_GE(progress.size(), 2u);
    EXPECT_LT(progress.front().progress, 1.0) << progress.front().message;
    EXPECT_DOUBLE_EQ(progress.back().progress, 1.0);
    EXPECT_NE(progress.back().message.find("6/6 GPUs"), std::string::npos)
        << progress.back().message;

    // Steps in order, all ok.
    std::vector<DispatchStep> steps;
    for (const auto& e : result.events) {
        steps.push_back(e.step);
    }
    // The fake `ray` starts no raylet, so each node's membership is noted as not verified.
    const std::vector<DispatchStep> want{
        DispatchStep::Preflight,      DispatchStep::RayStartHead,  DispatchStep::RayStartWorker,
        DispatchStep::RayStartWorker, DispatchStep::WaitCluster,   DispatchStep::VerifyCluster,
        DispatchStep::VerifyCluster,  DispatchStep::VerifyCluster, DispatchStep::StartRun};
    EXPECT_EQ(steps, want);

    // The launcher ran on the head with the multi-node environment.
    EXPECT_EQ(result.headRun.runId.value(), "mn-1");
    EXPECT_EQ(result.headRun.role, RunRole::Head);
    const auto out = headStdout(r.head, "mn-1");
    EXPECT_NE(out.find("MASTER_ADDR=127.0.0.1 ACTOR_NUM_NODES=3 ACTOR_NUM_GPUS_PER_NODE=2 "
                       "RAY_ADDRESS=127.0.0.1:6379"),
              std::string::npos)
        << out;
    auto workerClient = NodeClient::create(r.workers[0]);
    auto workerRuns = (*workerClient)->listRuns();
    ASSERT_TRUE(workerRuns.ok()) << workerRuns.error();
    EXPECT_TRUE(workerRuns->empty()) << "the launcher runs on the head only";

    // Teardown: the run stops, then every node's Ray, head last.
    StopRequest s;
    s.head = r.head;
    s.workers = r.workers;
    s.runId = "mn-1";
    s.graceSeconds = 2;
    s.force = true;
    const auto stopped = stopMultiNode(s);
    EXPECT_TRUE(stopped.ok) << (stopped.errors.empty() ? "" : stopped.errors.front());
    ASSERT_EQ(stopped.events.size(), 4u);
    EXPECT_EQ(stopped.events[0].step, DispatchStep::StopRun);
    EXPECT_EQ(stopped.events[3].node, r.head);
    auto headClient = NodeClient::create(r.head);
    auto runs = (*headClient)->listRuns();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().state, NodeRunState::Stopped);
    const auto after = lines(c.calls());
    EXPECT_LT(indexOf(after, "n1 stop --force"), indexOf(after, "n0 stop --force"));
    EXPECT_FALSE(std::filesystem::exists(c.state() + "/head"));
    EXPECT_FALSE(std::filesystem::exists(c.state() + "/node.n2"));
}

TEST(DispatchLaunch, LostDaemonBlocksLaunchAndOverrideIsRecordedThenRollsBack) {
    Cluster c;
    c.start({"2.40.0", "2.40.0"});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    c.nodes[1]->kill9();
    LaunchRequest r = request(c);
    const auto blocked = launchMultiNode(r);
    EXPECT_FALSE(blocked.launched);
    EXPECT_NE(blocked.error.find("launch blocked"), std::string::npos) << blocked.error;
    EXPECT_FALSE(blocked.preflight.rows.at(1).reachable);
    EXPECT_EQ(c.calls().find("start"), std::string::npos) << "nothing was started: " << c.calls();

    r.overridePreflight = true;
    const auto forced = launchMultiNode(r);
    EXPECT_FALSE(forced.launched);
    EXPECT_TRUE(forced.preflightOverridden);
    bool lostRecorded = false;
    for (const auto& f : forced.overriddenFailures) {
        lostRecorded = lostRecorded || f.find("daemon lost") != std::string::npos;
    }
    EXPECT_TRUE(lostRecorded);
    EXPECT_NE(forced.error.find("worker " + r.workers[0]), std::string::npos) << forced.error;
    // The head had started; it is rolled back, so nothing is left half-started.
    const auto calls = lines(c.calls());
    EXPECT_LT(indexOf(calls, "n0 start --head"), indexOf(calls, "n0 stop --force")) << c.calls();
    EXPECT_FALSE(std::filesystem::exists(c.state() + "/head"));
    ASSERT_FALSE(forced.events.empty());
    EXPECT_EQ(forced.events.back().step, DispatchStep::Rollback);
}

TEST(DispatchLaunch, ClusterThatNeverReachesTheGpuTotalTimesOutAndRollsBack) {
    Cluster c;
    c.start({"2.40.0", "2.40.0"}, {{}, {{"FAKE_RAY_JOIN_DELAY", "8"}}});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    LaunchRequest r = request(c);
    r.skipPreflight = true;
    r.clusterTimeout = std::chrono::milliseconds(1500);
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = launchMultiNode(r);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
    EXPECT_FALSE(result.launched);
    EXPECT_NE(result.error.find("did not reach the expected size"), std::string::npos)
        << result.error;
    EXPECT_NE(result.error.find("2/4 GPUs"), std::string::npos) << result.error;
    std::size_t rollbacks = 0;
    for (const auto& e : result.events) {
        rollbacks += e.step == DispatchStep::Rollback ? 1 : 0;
        EXPECT_NE(e.step, DispatchStep::StartRun);
    }
    EXPECT_EQ(rollbacks, 2u);
}

TEST(DispatchLaunch, FailingWorkerStartRollsBackEveryTouchedNode) {
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.40.0"}, {{}, {}, {{"FAKE_RAY_FAIL_START", "1"}}});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    LaunchRequest r = request(c);
    r.skipPreflight = true;
    const auto result = launchMultiNode(r);
    EXPECT_FALSE(result.launched);
    EXPECT_NE(result.error.find("cannot start on n2"), std::string::npos) << result.error;
    const auto calls = c.calls();
    for (const char* n : {"n0", "n1", "n2"}) {
        EXPECT_NE(calls.find(std::string(n) + " stop --force"), std::string::npos) << calls;
    }
    EXPECT_EQ(calls.find("n0 status"), std::string::npos) << "no wait after a failed join";
    EXPECT_FALSE(std::filesystem::exists(c.state() + "/node.n1"));
}

// issue 43: each node's own plan by role. The head's rows go with its run; each worker's with a
// plan-holder run of the same id (role Worker), so every daemon reports its own node's plan
// (run-level role.<role>.planned_<phase>_bytes) beside what it measures; stop ends the holders.
TEST(DispatchLaunch, EachWorkerGetsItsOwnNodesPlanByRoleAndStopEndsIt) {
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.40.0"});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    LaunchRequest r = request(c);
    r.skipPreflight = true;
    r.run.runId = runplane::RunId{"mn-plan"};
    // Node i: trainer 1 + i MB in train, rollout 10 + i MB in rollout (distinct per node).
    for (int i = 0; i < 3; ++i) {
        r.plannedRolesPerNode.push_back({{"trainer", "train", (1 + i) * 1e6, "backup"},
                                         {"rollout", "rollout", (10 + i) * 1e6, "mirror"}});
    }
    const auto result = launchMultiNode(r);
    ASSERT_TRUE(result.launched) << result.error;
    int held = 0;
    for (const auto& e : result.events) {
        if (e.step == DispatchStep::StartRun && e.node != r.head) {
            EXPECT_TRUE(e.ok) << e.message;
            ++held;
        }
    }
    EXPECT_EQ(held, 2);

    std::vector<std::string> all{r.head};
    all.insert(all.end(), r.workers.begin(), r.workers.end());
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto client = NodeClient::create(all[i]);
        ASSERT_TRUE(client.ok()) << client.error();
        auto runs = (*client)->listRuns();
        ASSERT_TRUE(runs.ok()) << runs.error();
        ASSERT_EQ(runs->size(), 1u) << all[i];
        EXPECT_EQ(runs->front().runId.value(), "mn-plan");
        EXPECT_EQ(runs->front().role, i == 0 ? RunRole::Head : RunRole::Worker);
        // The node's daemon reports its own rows for the run.
        std::map<std::string, double> planned;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        (void)(*client)->watchTelemetry(0, 4, [&](TelemetryBatchInfo&& batch) {
            for (const auto& rec : batch.records) {
                if (!rec.isEvent && rec.runId == "mn-plan" &&
                    rec.sample.series.find(".planned_") != std::string::npos) {
                    planned[rec.sample.series] = rec.sample.value;
                }
            }
            return planned.size() < 2 && std::chrono::steady_clock::now() < deadline;
        });
        EXPECT_DOUBLE_EQ(planned["role.trainer.planned_train_bytes"], (1.0 + i) * 1e6) << all[i];
        EXPECT_DOUBLE_EQ(planned["role.rollout.planned_rollout_bytes"], (10.0 + i) * 1e6) << all[i];
    }

    StopRequest s;
    s.head = r.head;
    s.workers = r.workers;
    s.runId = "mn-plan";
    s.graceSeconds = 2;
    s.force = true;
    const auto stopped = stopMultiNode(s);
    EXPECT_TRUE(stopped.ok) << (stopped.errors.empty() ? "" : stopped.errors.front());
    for (const auto& w : r.workers) {
        auto runs = (*NodeClient::create(w))->listRuns();
        ASSERT_TRUE(runs.ok());
        ASSERT_EQ(runs->size(), 1u);
        EXPECT_EQ(runs->front().state, NodeRunState::Stopped) << w;
    }
}

TEST(DispatchLaunch, MultiNodeEnvironmentFromTheRequest) {
    LaunchRequest r;
    r.head = "127.0.0.5:7000";
    r.workers = {"127.0.0.6:7000"};
    r.nodeIps[r.head] = "127.0.0.50";
    r.gpusPerNode = 8;
    r.rayPort = 6380;
    r.run.env = {{"MASTER_ADDR", "wrong"}, {"NCCL_DEBUG", "WARN"}};
    const auto env = multiNodeEnv(r);
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.50");
    EXPECT_EQ(env.at("ACTOR_NUM_NODES"), "2");
    EXPECT_EQ(env.at("ACTOR_NUM_GPUS_PER_NODE"), "8");
    EXPECT_EQ(env.at("RAY_ADDRESS"), "127.0.0.50:6380");
    EXPECT_EQ(env.at("NCCL_DEBUG"), "WARN");
    EXPECT_EQ(env.at("RAY_AUTH_MODE"), "disabled");
    EXPECT_EQ(env.count("RAY_AUTH_TOKEN_PATH"), 0u);
}

// Ray's token authentication is one explicit mode for the whole cluster (docs/dispatch.md).
TEST(DispatchLaunch, RayAuthModeIsExplicitAndChecked) {
    LaunchRequest r;
    r.rayAuthMode = "token";
    EXPECT_FALSE(rayAuthEnv(r).ok()) << "token mode without a token path";
    r.rayAuthTokenPath = "/etc/ray/token";
    const auto env = rayAuthEnv(r);
    ASSERT_TRUE(env.ok()) << env.error();
    EXPECT_EQ(env->at("RAY_AUTH_MODE"), "token");
    EXPECT_EQ(env->at("RAY_AUTH_TOKEN_PATH"), "/etc/ray/token");
    r.rayAuthMode = "Token";
    const auto bad = rayAuthEnv(r);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("'Token' is neither"), std::string::npos) << bad.error();

    r.head = "127.0.0.5:1";  // refused before any node is asked
    const DispatchResult result = launchMultiNode(r);
    EXPECT_FALSE(result.launched);
    EXPECT_EQ(result.error, bad.error());
}

// issue 47: membership is judged from the raylets a node's own daemon sees.
TEST(VerifyJoined, ANodeBelongsOnlyToTheHeadsGcsAndCluster) {
    const std::vector<RayletIdentity> ours{{41, "198.18.0.11:6379", "198.18.0.12", "c0ffee"}};
    EXPECT_EQ(verifyJoined(ours, "198.18.0.12", "198.18.0.11:6379", "c0ffee"), "");
    EXPECT_EQ(verifyJoined(ours, "198.18.0.12", "198.18.0.11:6379", ""), "");

    const std::vector<RayletIdentity> stranger{{42, "198.18.0.99:6379", "198.18.0.12", "beef"}};
    EXPECT_NE(verifyJoined(stranger, "198.18.0.12", "198.18.0.11:6379", "c0ffee")
                  .find("joined the GCS at 198.18.0.99:6379, not the head's 198.18.0.11:6379"),
              std::string::npos);

    // Same address, another cluster: a foreign head answered on the head's port.
    const std::vector<RayletIdentity> foreign{{43, "198.18.0.11:6379", "198.18.0.12", "beef"}};
    EXPECT_NE(verifyJoined(foreign, "198.18.0.12", "198.18.0.11:6379", "c0ffee")
                  .find("belongs to cluster beef, not the head's c0ffee"),
              std::string::npos);

    // Two raylets of this address, ours listed first: the one in the stranger's GCS still fails
    // the node (its GPUs would be offered to both clusters), and is the one named.
    const std::vector<RayletIdentity> both{ours.front(), stranger.front()};
    EXPECT_NE(verifyJoined(both, "198.18.0.12", "198.18.0.11:6379", "c0ffee")
                  .find("(pid 42) joined the GCS at 198.18.0.99:6379"),
              std::string::npos)
        << verifyJoined(both, "198.18.0.12", "198.18.0.11:6379", "c0ffee");

    // No raylet of this node's address on its host.
    EXPECT_NE(verifyJoined(ours, "198.18.0.13", "198.18.0.11:6379", "")
                  .find("no raylet with node IP 198.18.0.13"),
              std::string::npos);
}

// issue 47: `dispatch preflight` shows which Ray cluster each node's raylets belong to.
TEST(RayMembership, OneLinePerRayletAndHowManyClustersTheNodesAreIn) {
    std::vector<NodeMembership> nodes(4);
    nodes[0] = {"198.18.0.11:7001", true, "", {{41, "198.18.0.11:6379", "198.18.0.11", "c0ffee"}}};
    nodes[1] = {"198.18.0.12:7001", true, "", {{42, "198.18.0.11:6379", "198.18.0.12", "c0ffee"}}};
    nodes[2] = {"198.18.0.13:7001", true, "", {}};
    nodes[3] = {"198.18.0.14:7001", false, "connection refused", {}};
    std::string text = formatMembership(nodes);
    EXPECT_NE(
        text.find("198.18.0.12:7001  42          198.18.0.12      198.18.0.11:6379       c0ffee"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("198.18.0.13:7001  -           (no raylet: not in a Ray cluster)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("198.18.0.14:7001  (daemon lost: connection refused)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("one Ray cluster: GCS 198.18.0.11:6379"), std::string::npos) << text;

    nodes[2].raylets = {{43, "198.18.0.99:6379", "198.18.0.13", "beef"}};
    EXPECT_EQ(membershipClusters(nodes),
              (std::vector<std::string>{"198.18.0.11:6379", "198.18.0.99:6379"}));
    text = formatMembership(nodes);
    EXPECT_NE(text.find("2 different Ray clusters (GCS 198.18.0.11:6379 198.18.0.99:6379)"),
              std::string::npos)
        << text;
    const auto json = nlohmann::json::parse(membershipToJson(nodes));
    ASSERT_EQ(json.size(), 4u);
    EXPECT_EQ(json[2]["raylets"][0]["gcs_address"], "198.18.0.99:6379");
    EXPECT_EQ(json[3]["reachable"], false);
    EXPECT_EQ(json[3]["error"], "connection refused");

    EXPECT_NE(formatMembership({}).find("no node is in a Ray cluster"), std::string::npos);
}
