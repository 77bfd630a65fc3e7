// Authentication over TLS (bearer token, client certificates) and the loopback-only default.
// issue 5
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <fstream>

#include "backend/control/dispatch.h"
#include "tests/agent/daemon_process.h"
#include "tests/agent/test_pki.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::haveOpenssl;
using testing::Pki;
using testing::TempDir;

constexpr const char* kToken = "s3cret-token-0123456789abcdef";

std::unique_ptr<v1::Agent::Stub> tlsStub(const DaemonProcess& d, const Pki& pki, bool clientCert) {
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = pki.file("ca.pem");
    if (clientCert) {
        opts.pem_private_key = pki.file("client.key");
        opts.pem_cert_chain = pki.file("client.pem");
    }
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    return v1::Agent::NewStub(
        grpc::CreateCustomChannel(d.address(), grpc::SslCredentials(opts), args));
}

grpc::Status getNode(v1::Agent::Stub& stub, const std::string& authorization) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!authorization.empty()) {
        ctx.AddMetadata("authorization", authorization);
    }
    v1::NodeInfo info;
    return stub.GetNode(&ctx, {}, &info);
}

TEST(Security, BearerTokenOverTlsRefusesAndAccepts) {
    if (!haveOpenssl()) {
        GTEST_SKIP() << "openssl not installed (scripts/install-deps.sh installs it)";
    }
    TempDir dir;
    Pki pki(dir.path());
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    std::ofstream(dir.path() + "/token") << kToken << "\n";
    DaemonProcess d(dir.path() + "/state",
                    {"--tls-cert", dir.path() + "/server.pem", "--tls-key",
                     dir.path() + "/server.key", "--token-file", dir.path() + "/token"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = tlsStub(d, pki, false);
    EXPECT_EQ(getNode(*stub, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(getNode(*stub, "Bearer wrong-token-0123456789abcdef").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(getNode(*stub, std::string("Bearer ") + kToken + "x").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(getNode(*stub, kToken).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_TRUE(getNode(*stub, std::string("Bearer ") + kToken).ok());
    // Streams are refused the same way.
    {
        grpc::ClientContext ctx;
        auto reader = stub->WatchTelemetry(&ctx, {});
        v1::TelemetryBatch b;
        EXPECT_FALSE(reader->Read(&b));
        EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    {
        grpc::ClientContext ctx;
        ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
        auto reader = stub->WatchTelemetry(&ctx, {});
        v1::TelemetryBatch b;
        EXPECT_TRUE(reader->Read(&b));
        ctx.TryCancel();
        reader->Finish();
    }
    // A plaintext client cannot talk to the TLS port at all.
    auto plain = testing::agentStub(d);
    EXPECT_FALSE(getNode(*plain, std::string("Bearer ") + kToken).ok());
    // Refusals are logged with the method.
    EXPECT_NE(d.stderrText().find("refused GetNode"), std::string::npos) << d.stderrText();
    EXPECT_EQ(d.stderrText().find(kToken), std::string::npos) << "the token must never be logged";
}

TEST(Security, MutualTlsRequiresAClientCertificate) {
    if (!haveOpenssl()) {
        GTEST_SKIP() << "openssl not installed";
    }
    TempDir dir;
    Pki pki(dir.path());
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    DaemonProcess d(dir.path() + "/state",
                    {"--tls-cert", dir.path() + "/server.pem", "--tls-key",
                     dir.path() + "/server.key", "--tls-client-ca", dir.path() + "/ca.pem"});
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_FALSE(getNode(*tlsStub(d, pki, false), "").ok());
    EXPECT_TRUE(getNode(*tlsStub(d, pki, true), "").ok());
}

TEST(Security, NonLoopbackListenWithoutTlsIsRefused) {
    TempDir dir;
    // The daemon refuses before binding anything.
    DaemonProcess a(dir.path() + "/a", {}, "0.0.0.0:0");
    EXPECT_FALSE(a.ok());
    EXPECT_NE(a.error().find("not a loopback address"), std::string::npos) << a.error();
    std::ofstream(dir.path() + "/cert") << "x";
    DaemonProcess b(dir.path() + "/b",
                    {"--tls-cert", dir.path() + "/cert", "--tls-key", dir.path() + "/cert"},
                    "10.1.2.3:0");
    EXPECT_FALSE(b.ok());
    EXPECT_NE(b.error().find("--token-file"), std::string::npos) << b.error();
}

TEST(Security, OversizedRequestIsRejected) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--max-request-bytes", "65536"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    grpc::ClientContext ctx;
    v1::StartRunRequest req;
    req.set_run_id("big");
    req.add_argv("/bin/true");
    req.set_recipe_yaml(std::string(200000, 'x'));
    v1::RunStatus st;
    EXPECT_EQ(stub->StartRun(&ctx, req, &st).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// issue #23 item 8: swapped --tls-cert/--tls-key said "address in use or not local?".
TEST(Security, SwappedCertificateAndKeyAreNamed) {
    if (!haveOpenssl()) {
        GTEST_SKIP() << "openssl not installed";
    }
    TempDir dir;
    Pki pki(dir.path());
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    const std::string cert = dir.path() + "/server.pem", key = dir.path() + "/server.key";
    std::ofstream(dir.path() + "/token") << kToken << "\n";
    DaemonProcess d(dir.path() + "/state",
                    {"--tls-cert", key, "--tls-key", cert, "--token-file", dir.path() + "/token"});
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().find("--tls-cert " + key + ": no PEM certificate"), std::string::npos)
        << d.error();
    EXPECT_NE(d.error().find("swapped"), std::string::npos) << d.error();
    EXPECT_EQ(d.error().find("address in use"), std::string::npos) << d.error();
    std::ofstream(dir.path() + "/empty.pem") << "not a key\n";
    DaemonProcess e(dir.path() + "/state2",
                    {"--tls-cert", cert, "--tls-key", dir.path() + "/empty.pem", "--token-file",
                     dir.path() + "/token"});
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("--tls-key " + dir.path() + "/empty.pem: no PEM private key"),
              std::string::npos)
        << e.error();
}

// issue #23 item 9: runplanectl dispatch called a refused token "daemon lost".
TEST(Security, RefusedTokenIsAnAuthenticationFailureNotADaemonLost) {
    TempDir dir;
    std::ofstream(dir.path() + "/token") << kToken << "\n";
    DaemonProcess d(dir.path() + "/state", {"--token-file", dir.path() + "/token"});
    ASSERT_TRUE(d.ok()) << d.error();
    control::NodeClientOptions options;
    options.bearerToken = "wrong-token-0123456789abcdef";
    const auto table = control::preflightAll({d.address()}, control::PreflightSpec{}, options);
    ASSERT_EQ(table.rows.size(), 1u);
    ASSERT_FALSE(table.rows[0].checks.empty());
    const std::string message = table.rows[0].checks[0].message;
    EXPECT_NE(message.find("authentication failed (token or certificate refused)"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("daemon lost"), std::string::npos) << message;
    const std::string text = control::formatPreflightTable(table);
    EXPECT_NE(text.find("(authentication failed)"), std::string::npos) << text;
    EXPECT_EQ(text.find("daemon lost"), std::string::npos) << text;
}

}  // namespace
}  // namespace runplane::agent
