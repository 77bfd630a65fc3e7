// issue 47, "whether MASTER_ADDR is reachable from that host", past "a route exists": on three
// namespace hosts (tests/support/netns_hosts.h; each resolves every other by name through its own
// /etc/hosts), every daemon resolves MASTER_ADDR (getaddrinfo, bounded), opens a TCP connection
// to the rank-0 daemon's port at that address, and reports its interface addresses; the
// controller checks that MASTER_ADDR is an address of the rank-0 node on every host
// (net.master_addr.rank0). Cases: the head's hostname (passes everywhere); another host's address
// (not rank 0: unreachable at the rank-0 port, rank0 FAIL); a hosts file on one host with a stale
// entry for the head's name (that host alone resolves elsewhere); a name nobody resolves (FAIL in
// bounded time). Needs root; skipped with the reason elsewhere. No Ray.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>

#include "backend/control/dispatch.h"
#include "backend/control/preflight_master_rank0.h"
#include "tests/dispatch/netns_cluster.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;
using runplane::testing::NetnsHosts;

namespace {

const PreflightCheckInfo* clusterCheck(const PreflightTable& t, const std::string& id) {
    for (const auto& c : t.clusterChecks) {
        if (c.id == id) {
            return &c;
        }
    }
    return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(NetnsHostsMaster, MasterAddrResolvesToTheRank0NodeAndIsReachableFromEveryHost) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    SecuredHosts c(3);
    std::string error;
    ASSERT_TRUE(c.start({{"PATH", "/usr/bin:/bin"}}, &error)) << error;
    const auto all = c.addresses();
    PreflightSpec spec;
    spec.multiNode = true;
    spec.masterProbePort = daemonPortOf(all[0]);
    ASSERT_GT(spec.masterProbePort, 0u);
    const std::string rank0Port = std::to_string(spec.masterProbePort);
    NodeClientOptions client = c.client;
    client.callTimeout = std::chrono::seconds(20);

    // (1) The head's hostname: resolves to its LAN address on every host, which answers at the
    // rank-0 daemon's port, and is an address of rank 0.
    spec.masterAddr = c.hosts.hostname(0);
    auto table = preflightAll(all, spec, client);
    std::cout << formatPreflightTable(table) << std::endl;
    ASSERT_EQ(table.rows.size(), 3u);
    for (const auto& row : table.rows) {
        ASSERT_TRUE(row.reachable) << row.error;
        const auto* resolves = row.find("net.master_addr.resolves");
        ASSERT_NE(resolves, nullptr) << formatPreflightTable(table);
        EXPECT_EQ(resolves->status, CheckState::Pass) << resolves->message;
        EXPECT_EQ(resolves->message, "MASTER_ADDR=" + c.hosts.hostname(0) + " resolves to " +
                                         c.hosts.ip(0) + " on this node");
        const auto* reachable = row.find("net.master_addr.reachable");
        ASSERT_NE(reachable, nullptr) << formatPreflightTable(table);
        EXPECT_EQ(reachable->status, CheckState::Pass) << reachable->message;
        EXPECT_TRUE(contains(reachable->message,
                             "TCP connection from this node to " + c.hosts.ip(0) + ":" + rank0Port))
            << reachable->message;
        EXPECT_EQ(row.masterAddrResolved, std::vector<std::string>{c.hosts.ip(0)});
        // On the head, MASTER_ADDR is its own hostname: no "make sure it resolves" warning once
        // it resolved to the LAN address (the two rows agree).
        const auto* master = row.find("net.master_addr");
        ASSERT_NE(master, nullptr);
        EXPECT_EQ(master->status, CheckState::Pass) << master->message;
    }
    EXPECT_EQ(table.rows[0].find("net.master_addr")->message,
              "MASTER_ADDR=" + c.hosts.hostname(0) + " is this node's hostname and resolves to " +
                  c.hosts.ip(0) + " on this node");
    EXPECT_NE(
        std::find(table.rows[1].addresses.begin(), table.rows[1].addresses.end(), c.hosts.ip(1)),
        table.rows[1].addresses.end())
        << "each daemon reports its interface addresses";
    const auto* rank0 = clusterCheck(table, "net.master_addr.rank0");
    ASSERT_NE(rank0, nullptr) << formatPreflightTable(table);
    EXPECT_EQ(rank0->status, CheckState::Pass) << rank0->message;
    EXPECT_TRUE(contains(rank0->message, "resolves to " + c.hosts.ip(0) +
                                             ", an address of the rank-0 node " + all[0]))
        << rank0->message;
    for (const auto& f : table.failures()) {
        EXPECT_FALSE(contains(f, "net.master_addr")) << f;
    }

    // (2) Host 2's address: routed and numeric, but not rank 0's; nothing listens there at the
    // rank-0 daemon's port.
    spec.masterAddr = c.hosts.ip(1);
    table = preflightAll(all, spec, client);
    std::cout << formatPreflightTable(table) << std::endl;
    for (const auto& row : table.rows) {
        EXPECT_EQ(row.worst("net.master_addr"), CheckState::Pass) << "a route exists";
        EXPECT_EQ(row.worst("net.master_addr.resolves"), CheckState::Pass);
        const auto* reachable = row.find("net.master_addr.reachable");
        ASSERT_NE(reachable, nullptr);
        EXPECT_EQ(reachable->status, CheckState::Fail) << reachable->message;
        EXPECT_TRUE(contains(reachable->message, c.hosts.ip(1) + ":" + rank0Port + " ("))
            << reachable->message;
    }
    rank0 = clusterCheck(table, "net.master_addr.rank0");
    ASSERT_NE(rank0, nullptr);
    EXPECT_EQ(rank0->status, CheckState::Fail);
    EXPECT_TRUE(contains(rank0->message, "not an address of the rank-0 node " + all[0] + " (" +
                                             c.hosts.hostname(0) +
                                             ") (its addresses: " + c.hosts.ip(0) + ")"))
        << rank0->message;
    EXPECT_TRUE(
        contains(rank0->message, all[1] + " (" + c.hosts.hostname(1) + ") -> " + c.hosts.ip(1)))
        << rank0->message;
    bool listed = false;
    for (const auto& f : table.failures()) {
        listed = listed || f.rfind("cluster: net.master_addr.rank0: ", 0) == 0;
    }
    EXPECT_TRUE(listed) << "a launch is refused on it";

    // (3) Host 3's hosts file has a stale entry: the head's name points at host 3 itself there.
    std::string stale = "127.0.0.1 localhost\n" + c.hosts.ip(2) + " " + c.hosts.hostname(0) + "\n" +
                        c.hosts.ip(1) + " " + c.hosts.hostname(1) + "\n" + c.hosts.ip(2) + " " +
                        c.hosts.hostname(2) + "\n";
    ASSERT_TRUE(c.hosts.writeHostsFile(2, stale));
    spec.masterAddr = c.hosts.hostname(0);
    table = preflightAll(all, spec, client);
    std::cout << formatPreflightTable(table) << std::endl;
    EXPECT_EQ(table.rows[0].worst("net.master_addr.reachable"), CheckState::Pass);
    EXPECT_EQ(table.rows[1].worst("net.master_addr.reachable"), CheckState::Pass);
    EXPECT_EQ(table.rows[2].masterAddrResolved, std::vector<std::string>{c.hosts.ip(2)});
    EXPECT_EQ(table.rows[2].worst("net.master_addr.reachable"), CheckState::Fail);
    rank0 = clusterCheck(table, "net.master_addr.rank0");
    ASSERT_NE(rank0, nullptr);
    EXPECT_EQ(rank0->status, CheckState::Fail);
    EXPECT_TRUE(
        contains(rank0->message, all[2] + " (" + c.hosts.hostname(2) + ") -> " + c.hosts.ip(2)))
        << rank0->message;
    EXPECT_FALSE(contains(rank0->message, all[1])) << "host 2 resolves it right";

    // (4) A name no host resolves: every row FAILs, in bounded time (no DNS reachable here).
    spec.masterAddr = "rank0.runplane-test.invalid";
    const auto t0 = std::chrono::steady_clock::now();
    table = preflightAll(all, spec, client);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    for (const auto& row : table.rows) {
        const auto* resolves = row.find("net.master_addr.resolves");
        ASSERT_NE(resolves, nullptr) << formatPreflightTable(table);
        EXPECT_EQ(resolves->status, CheckState::Fail);
        EXPECT_TRUE(contains(resolves->message,
                             "MASTER_ADDR=rank0.runplane-test.invalid does "
                             "not resolve on this node: "))
            << resolves->message;
        EXPECT_EQ(row.find("net.master_addr.reachable"), nullptr);
    }
    EXPECT_EQ(clusterCheck(table, "net.master_addr.rank0"), nullptr) << "nothing to compare";
}
