// issue 47, speed: a preflight reuses the channel of the last one to the same daemon (one TCP
// connection and HTTP/2 set-up per daemon, not one per preflight), and stays honest about a link
// that was cut: the failed preflight says "daemon lost", and the next one after the link is back
// reaches the daemon through a fresh connection at once (a pooled channel never answers with a
// cached failure). The link is a TcpProxy in front of a real runplaned.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "backend/control/dispatch.h"
#include "backend/control/preflight_clients.h"
#include "tests/dispatch/dispatch_test_support.h"
#include "tests/support/tcp_proxy.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;

namespace {

PreflightSpec spec() {
    PreflightSpec s;
    s.multiNode = true;
    s.masterAddr = "198.18.0.1";
    s.env["PATH"] = fakeRayDir() + ":/usr/bin:/bin";
    return s;
}

NodeClientOptions options() {
    NodeClientOptions o;
    o.callTimeout = std::chrono::milliseconds(3000);
    return o;
}

bool rayPasses(const PreflightTable& t) {
    return t.rows.size() == 1 && t.rows[0].reachable &&
           t.rows[0].worst("ray.installed") == CheckState::Pass;
}

}  // namespace

TEST(DispatchPreflightReuse, RepeatedPreflightsShareOneConnectionAndACutLinkIsLostThenBack) {
    Cluster c;
    c.start({"2.40.0"});
    ASSERT_TRUE(c.nodes[0]->ok()) << c.nodes[0]->error();
    runplane::testing::TcpProxy link(c.nodes[0]->address());
    ASSERT_FALSE(link.address().empty());

    for (int i = 0; i < 3; ++i) {
        const auto t = preflightAll({link.address()}, spec(), options());
        ASSERT_TRUE(rayPasses(t)) << formatPreflightTable(t);
    }
    EXPECT_EQ(link.connectionsAccepted(), 1) << "each preflight opened a connection of its own";

    // the link cut while no preflight runs, and back before the next one: reached again
    link.cut();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    link.resume();
    auto t = preflightAll({link.address()}, spec(), options());
    EXPECT_TRUE(rayPasses(t)) << formatPreflightTable(t);
    EXPECT_EQ(link.connectionsAccepted(), 2);

    // cut during the next preflight: daemon lost, and the pooled channel is dropped
    link.cut();
    t = preflightAll({link.address()}, spec(), options());
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_FALSE(t.rows[0].reachable) << formatPreflightTable(t);
    EXPECT_EQ(t.rows[0].checks.at(0).message.rfind("daemon lost: ", 0), 0u)
        << t.rows[0].checks.at(0).message;
    // back: the very next preflight reaches it (no backoff of a failed channel waited out)
    link.resume();
    const auto t0 = std::chrono::steady_clock::now();
    t = preflightAll({link.address()}, spec(), options());
    EXPECT_TRUE(rayPasses(t)) << formatPreflightTable(t);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(DispatchPreflightReuse, OtherOptionsGetAClientOfTheirOwn) {
    Cluster c;
    c.start({"2.40.0"});
    ASSERT_TRUE(c.nodes[0]->ok()) << c.nodes[0]->error();
    const std::string address = c.nodes[0]->address();
    auto a = pooledNodeClient(address, options());
    auto b = pooledNodeClient(address, options());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->get(), b->get());
    NodeClientOptions withToken = options();
    withToken.bearerToken = "t0ken";
    auto d = pooledNodeClient(address, withToken);
    ASSERT_TRUE(d.ok());
    EXPECT_NE(a->get(), d->get()) << "a token must never ride on another caller's client";
    dropPooledNodeClient(address, options());
    auto e = pooledNodeClient(address, options());
    ASSERT_TRUE(e.ok());
    EXPECT_NE(a->get(), e->get());
    dropPooledNodeClient(address, options());
    dropPooledNodeClient(address, withToken);
}
