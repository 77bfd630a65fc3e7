// What stock tools see of a real runplaned: gRPC health by service name, /metrics over HTTPS with
// basic auth or a bearer token (as a remote Prometheus scrapes it), TLS 1.2 as the floor, the
// auth lockout, journald-style logs, and dropping root. issues 18 and 20
#include <crypt.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>

#include "tests/agent/daemon_process.h"
#include "tests/agent/test_pki.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::haveOpenssl;
using testing::Pki;
using testing::TempDir;

constexpr const char* kToken = "s3cret-token-0123456789abcdef";

// grpc.health.v1.Health/Check with a hand-encoded HealthCheckRequest {service = name}; returns the
// `openssl s_client` offering TLS 1.1 only. SECLEVEL=0 lets the client itself offer 1.1 (Debian's
// OpenSSL refuses to by default, which would make the check pass without reaching the server).
// Returns the exit status; `out` gets the transcript.
int connectWithTls11(const std::string& target, const std::string& caFile, std::string* out) {
    return testing::runCommand(
        {"sh", "-c",
         "echo | openssl s_client -connect " + target +
             " -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' -CAfile " + caFile + " 2>&1"},
        out);
}

// status code and the response's ServingStatus (field 1), -1 when absent.
std::pair<grpc::StatusCode, int> healthCheck(const std::string& address, const std::string& name) {
    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    std::string request;
    if (!name.empty()) {
        request.push_back(0x0a);
        request.push_back(static_cast<char>(name.size()));
        request += name;
    }
    grpc::Slice slice(request);
    grpc::ByteBuffer in(&slice, 1), out;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status result;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &in, &out,
                   [&](grpc::Status s) {
                       std::lock_guard lock(m);
                       result = s;
                       done = true;
                       cv.notify_one();
                   });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done; });
    if (!result.ok()) {
        return {result.error_code(), -1};
    }
    std::vector<grpc::Slice> slices;
    (void)out.Dump(&slices);
    std::string bytes;
    for (const auto& s : slices) {
        bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    if (bytes.size() == 2 && bytes[0] == 0x08) {
        return {grpc::StatusCode::OK, bytes[1]};
    }
    return {grpc::StatusCode::OK, bytes.empty() ? 0 : -1};  // proto3 omits UNKNOWN (0)
}

TEST(StockTools, HealthAnswersByServiceName) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state");
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_EQ(healthCheck(d.address(), ""), std::make_pair(grpc::StatusCode::OK, 1));
    EXPECT_EQ(healthCheck(d.address(), "runplane.v1.Agent"),
              std::make_pair(grpc::StatusCode::OK, 1))
        << "SERVING for the service by name (grpc-health-probe -service=runplane.v1.Agent)";
    EXPECT_EQ(healthCheck(d.address(), "no.such.Service").first, grpc::StatusCode::NOT_FOUND);
}

int metricsPort(DaemonProcess& d, const std::string& scheme) {
    std::string rest;
    testing::waitFor(
        [&] {
            rest = d.stdoutRest();
            return rest.find("/metrics") != std::string::npos;
        },
        std::chrono::seconds(5));
    const std::string prefix = scheme + "://127.0.0.1:";
    const auto at = rest.find(prefix);
    return at == std::string::npos ? -1 : std::atoi(rest.c_str() + at + prefix.size());
}

std::string bcryptHash(const std::string& password) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (::crypt_gensalt_rn("$2b$", 5, nullptr, 0, salt, sizeof(salt)) == nullptr) {
        return "";
    }
    crypt_data data{};
    const char* hash = ::crypt_r(password.c_str(), salt, &data);
    return hash != nullptr ? hash : "";
}

TEST(StockTools, MetricsOverHttpsWithBasicAuthAndBearerToken) {
    if (!haveOpenssl()) {
        GTEST_SKIP() << "openssl not installed";
    }
    TempDir dir;
    Pki pki(dir.path());
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    std::ofstream(dir.path() + "/metrics.token") << "metrics-token-0123456789\n";
    const std::string web = dir.path() + "/web.yml";
    std::ofstream(web) << "tls_server_config:\n  cert_file: " << dir.path()
                       << "/server.pem\n  key_file: " << dir.path()
                       << "/server.key\nbasic_auth_users:\n  prometheus: '"
                       << bcryptHash("scrape-password") << "'\nbearer_token_file: " << dir.path()
                       << "/metrics.token\n";
    DaemonProcess d(dir.path() + "/state",
                    {"--metrics-listen", "127.0.0.1:0", "--metrics-web-config", web});
    ASSERT_TRUE(d.ok()) << d.error();
    const int port = metricsPort(d, "https");
    ASSERT_GT(port, 0) << d.stdoutRest();

    httplib::SSLClient client("127.0.0.1", port);
    client.set_ca_cert_path((dir.path() + "/ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    client.set_connection_timeout(5);
    auto none = client.Get("/metrics");
    ASSERT_TRUE(none) << httplib::to_string(none.error());
    EXPECT_EQ(none->status, 401);
    EXPECT_NE(none->get_header_value("WWW-Authenticate").find("Basic"), std::string::npos);

    client.set_basic_auth("prometheus", "wrong-password");
    auto wrong = client.Get("/metrics");
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->status, 401);

    client.set_basic_auth("prometheus", "scrape-password");
    auto basic = client.Get("/metrics");
    ASSERT_TRUE(basic);
    EXPECT_EQ(basic->status, 200);
    EXPECT_NE(basic->body.find("runplane_build_info{"), std::string::npos);
    EXPECT_NE(basic->body.find("process_cpu_seconds_total "), std::string::npos);
    EXPECT_NE(basic->body.find("process_start_time_seconds "), std::string::npos);
    EXPECT_NE(basic->body.find("process_resident_memory_bytes "), std::string::npos);

    httplib::SSLClient bearer("127.0.0.1", port);
    bearer.set_ca_cert_path((dir.path() + "/ca.pem").c_str());
    bearer.enable_server_certificate_verification(true);
    bearer.set_bearer_token_auth("metrics-token-0123456789");
    auto byToken = bearer.Get("/metrics");
    ASSERT_TRUE(byToken);
    EXPECT_EQ(byToken->status, 200);

    // The start time is this process's, in epoch seconds (within the last hour).
    const auto at = basic->body.find("\nprocess_start_time_seconds ");
    ASSERT_NE(at, std::string::npos);
    const double started = std::strtod(basic->body.c_str() + at + 28, nullptr);
    const double now = static_cast<double>(std::time(nullptr));
    EXPECT_LE(started, now + 1);
    EXPECT_GT(started, now - 3600);

    // TLS 1.1 is refused, TLS 1.2 accepted (openssl s_client).
    std::string out;
    const std::string target = "127.0.0.1:" + std::to_string(port);
    EXPECT_NE(connectWithTls11(target, dir.path() + "/ca.pem", &out), 0) << out;
    EXPECT_NE(out.find("Cipher is (NONE)"), std::string::npos) << "no session: " << out;
    out.clear();  // runCommand appends
    EXPECT_EQ(testing::runCommand({"sh", "-c",
                                   "echo | openssl s_client -connect " + target +
                                       " -tls1_2 -CAfile " + dir.path() + "/ca.pem"},
                                  &out),
              0)
        << out;
    EXPECT_EQ(out.find("Cipher is (NONE)"), std::string::npos) << out;
}

TEST(StockTools, MetricsOffLoopbackNeedsTlsAndCredentials) {
    TempDir dir;
    DaemonProcess plain(dir.path() + "/a", {"--metrics-listen", "0.0.0.0:0"});
    EXPECT_FALSE(plain.ok());
    EXPECT_NE(plain.error().find("--metrics-web-config"), std::string::npos) << plain.error();
    const std::string web = dir.path() + "/web.yml";
    std::ofstream(web) << "basic_auth_users:\n  p: "
                          "'$2y$05$abcdefghijklmnopqrstuuvwxyz0123456789ABCDEFGHIJKLMNOP'\n";
    DaemonProcess noTls(dir.path() + "/b",
                        {"--metrics-listen", "0.0.0.0:0", "--metrics-web-config", web});
    EXPECT_FALSE(noTls.ok());
    EXPECT_NE(noTls.error().find("must give tls_server_config"), std::string::npos)
        << noTls.error();
}

TEST(StockTools, GrpcPortRefusesTls11) {
    if (!haveOpenssl()) {
        GTEST_SKIP() << "openssl not installed";
    }
    TempDir dir;
    Pki pki(dir.path());
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    std::ofstream(dir.path() + "/token") << kToken << "\n";
    DaemonProcess d(dir.path() + "/state",
                    {"--require-tls", "--tls-cert", dir.path() + "/server.pem", "--tls-key",
                     dir.path() + "/server.key", "--token-file", dir.path() + "/token"});
    ASSERT_TRUE(d.ok()) << d.error();
    std::string out;
    EXPECT_NE(connectWithTls11(d.address(), dir.path() + "/ca.pem", &out), 0) << out;
    EXPECT_NE(out.find("Cipher is (NONE)"), std::string::npos) << "no session: " << out;
}

TEST(StockTools, RepeatedWrongTokensLockTheHostOut) {
    TempDir dir;
    std::ofstream(dir.path() + "/token") << kToken << "\n";
    DaemonProcess d(dir.path() + "/state",
                    {"--token-file", dir.path() + "/token", "--auth-max-failures", "3"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const auto call = [&](const std::string& token) {
        grpc::ClientContext ctx;
        ctx.AddMetadata("authorization", "Bearer " + token);
        v1::NodeInfo info;
        return stub->GetNode(&ctx, {}, &info);
    };
    EXPECT_TRUE(call(kToken).ok());
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(call("guess-0123456789abcdef" + std::to_string(i)).error_code(),
                  grpc::StatusCode::UNAUTHENTICATED);
    }
    const grpc::Status locked = call(kToken);
    EXPECT_EQ(locked.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(locked.error_message().find("too many failed authentication attempts"),
              std::string::npos)
        << locked.error_message();
    EXPECT_TRUE(testing::waitFor([&] { return call(kToken).ok(); }, std::chrono::seconds(5)))
        << "the first lockout lasts 2 s";
    EXPECT_NE(d.stderrText().find("locked out for"), std::string::npos) << d.stderrText();
}

TEST(StockTools, JournaldLogFormat) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--log-format", "journald"});
    ASSERT_TRUE(d.ok()) << d.error();
    ASSERT_TRUE(
        testing::waitFor([&] { return d.stderrText().find("serving on") != std::string::npos; },
                         std::chrono::seconds(5)));
    const std::string err = d.stderrText();
    EXPECT_EQ(err.rfind("<", 0), 0u) << err;
    EXPECT_NE(err.find("<6>runplaned "), std::string::npos) << err;
    EXPECT_EQ(err.find("runplaned["), std::string::npos) << "journald adds the pid itself";
}

TEST(StockTools, StartedAsRootTheDaemonRunsAsTheServiceUser) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root (it drops to 'nobody')";
    }
    passwd* nobody = ::getpwnam("nobody");
    if (nobody == nullptr) {
        GTEST_SKIP() << "no 'nobody' account";
    }
    // The service user must be able to reach runplaned and runplane-supervisor: a build tree
    // under a 0700 home (root's, in some CI checkouts) is out of its reach.
    for (std::string p = testing::daemonBinary(); p.size() > 1;) {
        p = p.substr(0, p.rfind('/'));
        struct stat st {};
        if (p.empty() || ::stat(p.c_str(), &st) != 0) {
            break;
        }
        if ((st.st_mode & S_IXOTH) == 0) {
            GTEST_SKIP() << p << " is not searchable by other users, so 'nobody' cannot run "
                         << "the daemon from this build tree";
        }
    }
    TempDir dir;
    const std::string state = dir.path() + "/state";
    ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
    ASSERT_EQ(::chown(state.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
    // The temp dir itself must be traversable by the service user.
    ::chmod(dir.path().c_str(), 0711);
    DaemonProcess d(state, {"--user", "nobody"});
    ASSERT_TRUE(d.ok()) << d.error();
    const std::string status = testing::slurp("/proc/" + std::to_string(d.pid()) + "/status");
    const auto at = status.find("\nUid:");
    ASSERT_NE(at, std::string::npos);
    std::istringstream uids(status.substr(at + 5));
    unsigned real = 0, effective = 0, saved = 0;
    uids >> real >> effective >> saved;
    EXPECT_EQ(real, nobody->pw_uid);
    EXPECT_EQ(effective, nobody->pw_uid);
    EXPECT_EQ(saved, nobody->pw_uid);
    EXPECT_NE(d.stderrText().find("now running as nobody"), std::string::npos) << d.stderrText();
}

TEST(StockTools, NonRootCannotSwitchUsers) {
    if (::geteuid() == 0) {
        GTEST_SKIP() << "runs as root here";
    }
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--user", "root"});
    EXPECT_FALSE(d.ok());
    EXPECT_NE(d.error().find("only root can switch users"), std::string::npos) << d.error();
}

}  // namespace
}  // namespace runplane::agent
