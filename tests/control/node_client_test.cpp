// NodeClient against real gRPC endpoints on loopback: a closed port and a scripted daemon.
#include "backend/control/node_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/control/fake_agent.h"

namespace runplane::control {
namespace {

// A loopback port that nothing listens on (bound, then closed).
int closedPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

// issue 2: an unreachable address gives a clear message.
TEST(NodeClient, UnreachableAddressIsOneClearSentence) {
    for (const std::string& address :
         {std::string("127.0.0.1:1"), "127.0.0.1:" + std::to_string(closedPort())}) {
        auto client = NodeClient::create(address);
        ASSERT_TRUE(client.ok()) << client.error();
        auto node = (*client)->getNode();
        ASSERT_FALSE(node.ok());
        EXPECT_EQ(node.error(), "cannot reach runplaned at " + address + ": connection refused");
        auto runs = (*client)->listRuns();
        ASSERT_FALSE(runs.ok());
        EXPECT_EQ(runs.error(), "cannot reach runplaned at " + address + ": connection refused");
    }
}

// issue 2: a daemon of another protocol version is refused by name.
TEST(NodeClient, OtherProtocolVersionIsRefused) {
    testing::FakeAgent agent;
    agent.setProtocolVersion(2);
    const std::string address = agent.start();
    auto client = NodeClient::create(address);
    ASSERT_TRUE(client.ok());
    auto node = (*client)->getNode();
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error(),
              "daemon at " + address + " speaks protocol v2, this controller speaks v1");
}

TEST(NodeClient, GetNodeMapsTheInventory) {
    testing::FakeAgent agent;
    agent.setNodeId("node-xyz");
    const std::string address = agent.start();
    auto client = NodeClient::create(address);
    ASSERT_TRUE(client.ok());
    auto node = (*client)->getNode();
    ASSERT_TRUE(node.ok()) << node.error();
    EXPECT_EQ(node->nodeId.value(), "node-xyz");
    EXPECT_EQ(node->hostname, "fakehost");
    EXPECT_EQ(node->address, address);
    EXPECT_EQ(node->protocolVersion, 1u);
}

TEST(NodeClient, UnimplementedCallIsNamed) {
    testing::FakeAgent agent;  // implements GetNode/WatchTelemetry/AckTelemetry only
    const std::string address = agent.start();
    auto client = NodeClient::create(address);
    ASSERT_TRUE(client.ok());
    auto runs = (*client)->listRuns();
    ASSERT_FALSE(runs.ok());
    EXPECT_EQ(runs.error(), "runplaned at " + address +
                                " does not implement ListRuns (an older or different daemon?)");
}

TEST(NodeClient, CancellerStopsAWatchFromAnotherThread) {
    testing::FakeAgent agent;
    const std::string address = agent.start();
    auto client = NodeClient::create(address);
    ASSERT_TRUE(client.ok());
    StreamCanceller canceller;
    canceller.cancel();  // cancelled before the call: returns at once without a call
    Status s = (*client)->watchTelemetry(
        0, 0, [](TelemetryBatchInfo&&) { return true; }, &canceller);
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(agent.watchCalls(), 0);
}

}  // namespace
}  // namespace runplane::control
