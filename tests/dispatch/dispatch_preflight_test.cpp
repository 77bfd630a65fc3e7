// issue 11: preflight fanned out to real daemons on distinct loopback addresses; planted faults
// (host RAM short of the plan on one node, too few GPUs on one node, a different Ray version on
// one node, loopback MASTER_ADDR on a multi-node run) and a killed daemon ("daemon lost").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "backend/control/dispatch.h"
#include "tests/dispatch/dispatch_test_support.h"
#include "tests/support/tcp_proxy.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;

namespace {

PreflightSpec baseSpec() {
    PreflightSpec s;
    s.multiNode = true;
    s.masterAddr = "127.0.0.1";
    s.env["PATH"] = fakeRayDir() + ":/usr/bin:/bin";
    s.plannedPeakHostBytes = 1ull << 20;  // 1 MiB: fits anywhere
    return s;
}

NodeClientOptions fast() {
    NodeClientOptions o;
    o.callTimeout = std::chrono::milliseconds(3000);
    return o;
}

}  // namespace

TEST(DispatchPreflight, TableNodeByCheckWithPlantedFaultsAndCrossNodeRayVersion) {
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.9.3"});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    EXPECT_EQ(c.nodes[1]->address().rfind("127.0.0.2:", 0), 0u) << c.nodes[1]->address();

    std::vector<PreflightSpec> specs(3, baseSpec());
    specs[1].plannedPeakHostBytes = 1ull << 52;  // 4 PiB: the plan does not fit node 1
    specs[2].expectedGpus = 8;                   // node 2 has no GPU (--no-gpu)
    const auto table = preflightNodes(c.addresses(), specs, fast());

    ASSERT_EQ(table.rows.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& row = table.rows[i];
        EXPECT_EQ(row.address, c.nodes[i]->address());
        ASSERT_TRUE(row.reachable) << row.error;
        EXPECT_EQ(row.worst("net.master_addr"), CheckState::Fail)
            << "loopback MASTER_ADDR on a multi-node run";
        EXPECT_EQ(row.worst("ray.installed"), CheckState::Pass);
    }
    EXPECT_NE(table.rows[0].worst("host.ram"), CheckState::Fail);
    EXPECT_EQ(table.rows[1].worst("host.ram"), CheckState::Fail);
    EXPECT_NE(table.rows[2].worst("host.ram"), CheckState::Fail);
    EXPECT_EQ(table.rows[0].worst("gpu.count"), CheckState::Skip);
    EXPECT_EQ(table.rows[2].worst("gpu.count"), CheckState::Fail);

    ASSERT_EQ(table.clusterChecks.size(), 1u);
    const auto& ray = table.clusterChecks[0];
    EXPECT_EQ(ray.id, "ray.same_version");
    EXPECT_EQ(ray.status, CheckState::Fail);
    EXPECT_NE(ray.message.find("2.9.3 on " + c.nodes[2]->address()), std::string::npos)
        << ray.message;
    EXPECT_NE(ray.message.find("2.40.0"), std::string::npos) << ray.message;

    const auto text = formatPreflightTable(table);
    EXPECT_NE(text.find("host.ram"), std::string::npos) << text;
    EXPECT_NE(text.find(c.nodes[2]->address()), std::string::npos) << text;
    const auto doc = nlohmann::json::parse(preflightTableToJson(table));
    EXPECT_TRUE(doc["fail"].get<bool>());
    EXPECT_EQ(doc["nodes"].size(), 3u);

    // Same version everywhere, but not the required one.
    Cluster same;
    same.start({"2.40.0", "2.40.0"});
    ASSERT_TRUE(same.nodes[1]->ok()) << same.nodes[1]->error();
    const auto t2 = preflightAll(same.addresses(), baseSpec(), fast(), "2.41.0");
    ASSERT_EQ(t2.clusterChecks.size(), 1u);
    EXPECT_EQ(t2.clusterChecks[0].status, CheckState::Fail) << t2.clusterChecks[0].message;
    const auto t3 = preflightAll(same.addresses(), baseSpec(), fast(), "2.40.0");
    EXPECT_EQ(t3.clusterChecks[0].status, CheckState::Pass) << t3.clusterChecks[0].message;
}

TEST(DispatchPreflight, KilledDaemonIsADaemonLostRowNotACrashAndTheFanOutIsConcurrent) {
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.40.0"});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    c.nodes[1]->kill9();
    const auto t0 = std::chrono::steady_clock::now();
    const auto table = preflightAll(c.addresses(), baseSpec(), fast());
    const auto elapsed = std::chrono::steady_clock::now() - t0;

    ASSERT_EQ(table.rows.size(), 3u);
    EXPECT_TRUE(table.rows[0].reachable);
    EXPECT_TRUE(table.rows[2].reachable);
    const auto& lost = table.rows[1];
    EXPECT_FALSE(lost.reachable);
    ASSERT_EQ(lost.checks.size(), 1u);
    EXPECT_EQ(lost.checks[0].id, "daemon");
    EXPECT_EQ(lost.checks[0].status, CheckState::Fail);
    EXPECT_EQ(lost.checks[0].message.rfind("daemon lost: ", 0), 0u) << lost.checks[0].message;
    EXPECT_NE(lost.checks[0].message.find(c.nodes[1]->address()), std::string::npos)
        << lost.checks[0].message;
    // The cross-node Ray check is computed from the reachable nodes only.
    EXPECT_EQ(table.clusterChecks.at(0).status, CheckState::Pass)
        << table.clusterChecks.at(0).message;
    bool named = false;
    for (const auto& f : table.failures()) {
        named = named || f.rfind(c.nodes[1]->address() + ": daemon: daemon lost", 0) == 0;
    }
    EXPECT_TRUE(named);
    EXPECT_NE(formatPreflightTable(table).find("(daemon lost)"), std::string::npos);
    EXPECT_LT(elapsed, std::chrono::seconds(6))
        << "one deadline for the whole fan-out, not one per node";
}

TEST(DispatchPreflight, RayVersionFromMessage) {
    EXPECT_EQ(rayVersionFromMessage("/usr/bin/ray: ray, version 2.40.0"), "2.40.0");
    EXPECT_EQ(rayVersionFromMessage("ray, version 2.9.3\n"), "2.9.3");
    EXPECT_EQ(rayVersionFromMessage("ray not found on PATH=/bin"), "");
}

// The 64-daemon preflight benchmark lost most rows ("the connection closed while it was being set
// up"): the node client set GRPC_ARG_MIN_RECONNECT_BACKOFF_MS to 100 ms, which gRPC core reads as
// the minimum time one connection attempt may take, so any set-up slower than 100 ms (a busy
// controller, a distant node) was cut. Here the daemon sits behind a relay that holds every byte
// for 600 ms after the connection opens (a slow link): the node is there and must read so.
TEST(DispatchPreflight, ConnectionSetUpSlowerThanATenthOfASecondIsNotADaemonLost) {
    Cluster c;
    c.start({"2.40.0"});
    ASSERT_TRUE(c.nodes[0]->ok()) << c.nodes[0]->error();
    runplane::testing::TcpProxy slow(c.nodes[0]->address());
    ASSERT_FALSE(slow.address().empty());
    slow.partition();
    auto healer = std::async(std::launch::async, [&slow] {
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        slow.heal();
    });
    const auto table = preflightAll({slow.address()}, baseSpec(), fast());
    healer.get();
    ASSERT_EQ(table.rows.size(), 1u);
    EXPECT_TRUE(table.rows[0].reachable) << formatPreflightTable(table);
    EXPECT_EQ(table.rows[0].worst("ray.installed"), CheckState::Pass)
        << formatPreflightTable(table);
}
