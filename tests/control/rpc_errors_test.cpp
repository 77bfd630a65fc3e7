// Error mapping of the control library: every failure is one sentence naming the daemon.
#include <gtest/gtest.h>

#include "backend/control/node_client.h"

namespace runplane::control {
namespace {

TEST(RpcErrors, UnreachableSaysConnectionRefused) {
    const std::string grpc =
        "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to "
        "connect to remote host: Connection refused";
    EXPECT_EQ(describeRpcError("127.0.0.1:1", "GetNode", RpcCode::Unavailable, grpc),
              "cannot reach runplaned at 127.0.0.1:1: connection refused");
}

TEST(RpcErrors, EveryCodeNamesTheDaemon) {
    for (int code = 1; code <= 16; ++code) {
        const std::string text =
            describeRpcError("127.0.0.1:7070", "StartRun", static_cast<RpcCode>(code), "boom");
        EXPECT_NE(text.find("127.0.0.1:7070"), std::string::npos) << code << ": " << text;
    }
    EXPECT_EQ(describeRpcError("127.0.0.1:7070", "GetNode", RpcCode::DeadlineExceeded, ""),
              "runplaned at 127.0.0.1:7070 did not answer GetNode in time (deadline exceeded)");
    EXPECT_EQ(describeRpcError("127.0.0.1:7070", "StartRun", RpcCode::InvalidArgument,
                               "workdir escapes the run root"),
              "runplaned at 127.0.0.1:7070 rejected StartRun: workdir escapes the run root");
    EXPECT_NE(describeRpcError("a:1", "GetNode", RpcCode::Unauthenticated, "").find("token"),
              std::string::npos);
    EXPECT_NE(describeRpcError("a:1", "ProbeNccl", RpcCode::Unimplemented, "")
                  .find("does not implement ProbeNccl"),
              std::string::npos);
}

// issue #23 item 8: a plaintext loopback daemon that was restarting showed "TLS handshake
// failed": gRPC calls every connection set-up a handshake.
TEST(RpcErrors, PlaintextHandshakeFailureIsUnavailabilityNotTls) {
    const std::string grpc =
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:7070: "
        "Handshake read failed";
    const std::string text =
        describeRpcError("127.0.0.1:7070", "GetNode", RpcCode::Unavailable, grpc);
    EXPECT_EQ(text.find("TLS"), std::string::npos) << text;
    EXPECT_NE(text.find("cannot reach runplaned at 127.0.0.1:7070: unavailable"), std::string::npos)
        << text;
    EXPECT_NE(describeRpcError("a:1", "GetNode", RpcCode::Unavailable,
                               "Ssl handshake failed: CERTIFICATE_VERIFY_FAILED")
                  .find("TLS handshake failed"),
              std::string::npos);
}

// issue #23 item 9: both refusals are one sentence, and one code the dispatch table acts on
// (issue #22: the code, not the sentence).
TEST(RpcErrors, AuthenticationFailureIsNamed) {
    for (RpcCode code : {RpcCode::Unauthenticated, RpcCode::PermissionDenied}) {
        const Error error = rpcFailure("a:1", "Preflight", code, "missing token");
        EXPECT_NE(error.message.find("authentication failed (token or certificate refused)"),
                  std::string::npos)
            << error.message;
        EXPECT_EQ(error.message, describeRpcError("a:1", "Preflight", code, "missing token"));
        EXPECT_EQ(error.code, ErrorCode::Unauthenticated);
    }
    EXPECT_EQ(rpcFailure("a:1", "Preflight", RpcCode::Unavailable, "Connection refused").code,
              ErrorCode::Unavailable);
    // A TLS handshake failure is a transport failure, not a refusal of our credentials.
    EXPECT_EQ(rpcFailure("a:1", "Preflight", RpcCode::Unavailable,
                         "Ssl handshake failed: CERTIFICATE_VERIFY_FAILED")
                  .code,
              ErrorCode::Unavailable);
    EXPECT_EQ(errorCodeOf(RpcCode::NotFound), ErrorCode::NotFound);
    EXPECT_EQ(errorCodeOf(RpcCode::Internal), ErrorCode::Unspecified);
}

TEST(RpcErrors, ProtocolMismatch) {
    EXPECT_EQ(describeProtocolMismatch("127.0.0.1:7070", 2),
              "daemon at 127.0.0.1:7070 speaks protocol v2, this controller speaks v1");
}

TEST(RpcErrors, LoopbackDetection) {
    EXPECT_TRUE(isLoopbackAddress("127.0.0.1:7070"));
    EXPECT_TRUE(isLoopbackAddress("127.3.2.1:1"));
    EXPECT_TRUE(isLoopbackAddress("localhost:1"));
    EXPECT_TRUE(isLoopbackAddress("[::1]:1"));
    EXPECT_FALSE(isLoopbackAddress("10.0.0.1:7070"));
    EXPECT_FALSE(isLoopbackAddress("128.0.0.1:7070"));
    EXPECT_FALSE(isLoopbackAddress("127.0.0.1.example.com:7070"));
    EXPECT_FALSE(isLoopbackAddress("node7:7070"));
}

TEST(NodeClientCreate, RejectsMalformedAddresses) {
    for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":7070", "127.0.0.1:0",
                            "127.0.0.1:70000", "127.0.0.1:x1"}) {
        auto client = NodeClient::create(bad);
        ASSERT_FALSE(client.ok()) << bad;
        EXPECT_NE(client.error().find(bad), std::string::npos) << client.error();
    }
}

TEST(NodeClientCreate, RefusesPlaintextBeyondLoopback) {
    // No connection is attempted: create() refuses before building a channel.
    auto client = NodeClient::create("10.1.2.3:7070");
    ASSERT_FALSE(client.ok());
    EXPECT_NE(client.error().find("only loopback"), std::string::npos) << client.error();
}

}  // namespace
}  // namespace runplane::control
