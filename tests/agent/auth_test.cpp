// The auth lockout, the /metrics web config and credentials, and the journald log format.
// issues 18 and 20
#include <crypt.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>

#include "backend/agent/auth.h"
#include "backend/agent/logger.h"
#include "backend/agent/metrics_web_config.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::TempDir;
using Clock = std::chrono::steady_clock;

struct FakeClock {
    Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
    AuthThrottle::Clock fn() {
        return [this] { return now; };
    }
};

TEST(AuthThrottle, LocksOutAfterTheLimitAndDoublesEachTime) {
    FakeClock clock;
    AuthThrottleOptions o;
    o.maxFailures = 3;
    AuthThrottle t(o, clock.fn());
    EXPECT_FALSE(t.recordFailure("10.0.0.1"));
    EXPECT_FALSE(t.recordFailure("10.0.0.1"));
    EXPECT_EQ(t.lockedForSeconds("10.0.0.1"), 0);
    EXPECT_TRUE(t.recordFailure("10.0.0.1"));
    EXPECT_EQ(t.lockedForSeconds("10.0.0.1"), 2);
    EXPECT_EQ(t.lockedForSeconds("10.0.0.2"), 0) << "another host is not affected";
    clock.now += std::chrono::milliseconds(2001);
    EXPECT_EQ(t.lockedForSeconds("10.0.0.1"), 0);
    for (int i = 0; i < 2; ++i) {
        EXPECT_FALSE(t.recordFailure("10.0.0.1"));
    }
    EXPECT_TRUE(t.recordFailure("10.0.0.1"));
    EXPECT_EQ(t.lockedForSeconds("10.0.0.1"), 4) << "the second lockout is twice as long";
}

TEST(AuthThrottle, FailuresOutsideTheWindowAndAfterASuccessAreForgotten) {
    FakeClock clock;
    AuthThrottleOptions o;
    o.maxFailures = 3;
    AuthThrottle t(o, clock.fn());
    t.recordFailure("h");
    t.recordFailure("h");
    clock.now += std::chrono::seconds(61);
    EXPECT_FALSE(t.recordFailure("h")) << "the first two are older than the window";
    t.recordFailure("h");
    t.recordSuccess("h");
    EXPECT_FALSE(t.recordFailure("h"));
    EXPECT_FALSE(t.recordFailure("h"));
}

TEST(AuthThrottle, LockoutIsCappedAndMemoryIsBounded) {
    FakeClock clock;
    AuthThrottleOptions o;
    o.maxFailures = 1;
    o.maxTrackedHosts = 8;
    AuthThrottle t(o, clock.fn());
    for (int i = 0; i < 20; ++i) {
        t.recordFailure("h");
        clock.now += std::chrono::seconds(400);
    }
    t.recordFailure("h");
    EXPECT_EQ(t.lockedForSeconds("h"), 300);
    for (int i = 0; i < 100; ++i) {
        clock.now += std::chrono::milliseconds(1);
        t.recordFailure("host-" + std::to_string(i));
    }
    EXPECT_LE(t.trackedHosts(), 8u);
}

TEST(AuthThrottle, OffWhenMaxFailuresIsZero) {
    AuthThrottleOptions o;
    o.maxFailures = 0;
    AuthThrottle t(o);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_FALSE(t.recordFailure("h"));
    }
    EXPECT_EQ(t.lockedForSeconds("h"), 0);
}

TEST(Auth, PeerHostDropsThePort) {
    EXPECT_EQ(peerHost("ipv4:127.0.0.1:5000"), "127.0.0.1");
    EXPECT_EQ(peerHost("ipv6:[::1]:5000"), "::1");
    EXPECT_EQ(peerHost("unix:/tmp/s"), "unix:/tmp/s");
}

TEST(Auth, LockedOutHostIsRefusedEvenWithTheRightToken) {
    NullLogger log;
    AuthThrottleOptions o;
    o.maxFailures = 3;
    const std::string token = "0123456789abcdef0123";
    Authenticator a(token, log, o);
    const std::string right = "Bearer " + token;
    EXPECT_TRUE(a.checkPresented("ipv4:10.1.1.1:1", right, "GetNode").ok());
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(a.checkPresented("ipv4:10.1.1.1:" + std::to_string(i), "Bearer nope", "GetNode")
                      .error_code(),
                  grpc::StatusCode::UNAUTHENTICATED);
    }
    const grpc::Status locked = a.checkPresented("ipv4:10.1.1.1:9", right, "GetNode");
    EXPECT_EQ(locked.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(locked.error_message().find("retry in 2 s"), std::string::npos)
        << locked.error_message();
    EXPECT_TRUE(a.checkPresented("ipv4:10.1.1.2:1", right, "GetNode").ok());
    EXPECT_EQ(a.checkPresented("ipv4:10.1.1.3:1", std::nullopt, "GetNode").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
}

std::string bcryptHash(const std::string& password) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    EXPECT_NE(::crypt_gensalt_rn("$2b$", 5, nullptr, 0, salt, sizeof(salt)), nullptr);
    crypt_data data{};
    const char* hash = ::crypt_r(password.c_str(), salt, &data);
    return hash != nullptr ? hash : "";
}

std::string base64(const std::string& text) {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    int val = 0, bits = -6;
    for (unsigned char c : text) {
        val = (val << 8) + c;
        bits += 8;
        while (bits >= 0) {
            out.push_back(k[(val >> bits) & 0x3F]);
            bits -= 6;
        }
    }
    if (bits > -6) {
        out.push_back(k[((val << 8) >> (bits + 8)) & 0x3F]);
    }
    while (out.size() % 4 != 0) {
        out.push_back('=');
    }
    return out;
}

TEST(MetricsAuth, BasicAuthWithBcryptAndBearerToken) {
    const std::string hash = bcryptHash("hunter2-but-longer");
    ASSERT_EQ(hash.rfind("$2b$05$", 0), 0u) << hash;
    EXPECT_TRUE(verifyBcrypt("hunter2-but-longer", hash));
    EXPECT_FALSE(verifyBcrypt("hunter3-but-longer", hash));
    EXPECT_FALSE(verifyBcrypt("x", "not-a-hash"));

    MetricsAuth auth({{"prometheus", hash}}, "bearer-0123456789abcdef");
    EXPECT_TRUE(auth.required());
    EXPECT_TRUE(auth.allowed("Basic " + base64("prometheus:hunter2-but-longer")));
    EXPECT_TRUE(auth.allowed("Basic " + base64("prometheus:hunter2-but-longer"))) << "cached";
    EXPECT_FALSE(auth.allowed("Basic " + base64("prometheus:wrong")));
    EXPECT_FALSE(auth.allowed("Basic " + base64("grafana:hunter2-but-longer")));
    EXPECT_FALSE(auth.allowed("Basic !!!"));
    EXPECT_FALSE(auth.allowed(""));
    EXPECT_TRUE(auth.allowed("Bearer bearer-0123456789abcdef"));
    EXPECT_FALSE(auth.allowed("Bearer bearer-0123456789abcdeF"));
    EXPECT_TRUE(MetricsAuth({}, "").allowed("")) << "nothing configured: open (loopback only)";
}

TEST(MetricsWebConfig, ReadsTheExporterToolkitSubsetAndNamesMistakes) {
    TempDir dir;
    const std::string token = dir.path() + "/token";
    std::ofstream(token) << "bearer-0123456789abcdef\n";
    std::ofstream(dir.path() + "/cert.pem") << "-----BEGIN CERTIFICATE-----\n";
    std::ofstream(dir.path() + "/key.pem") << "-----BEGIN PRIVATE KEY-----\n";
    const std::string good = dir.path() + "/web.yml";
    std::ofstream(good) << "tls_server_config:\n  cert_file: " << dir.path()
                        << "/cert.pem\n  key_file: " << dir.path()
                        << "/key.pem\n  min_version: TLS12\nbasic_auth_users:\n  prom: "
                           "$2y$10$abcdefghijklmnopqrstuuvwxyz0123456789ABCDEFGHIJKLMNOP\n"
                        << "bearer_token_file: " << token << "\n";
    auto c = loadMetricsWebConfig(good);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_TRUE(c->tls());
    EXPECT_TRUE(c->authenticates());
    EXPECT_EQ(c->bearerToken, "bearer-0123456789abcdef");
    EXPECT_EQ(c->basicAuthUsers.size(), 1u);
    EXPECT_NE(c->certPem.find("BEGIN CERTIFICATE"), std::string::npos);

    const auto expectError = [&](const std::string& text, const std::string& needle) {
        const std::string path = dir.path() + "/bad.yml";
        std::ofstream(path) << text;
        auto r = loadMetricsWebConfig(path);
        ASSERT_FALSE(r.ok()) << text;
        EXPECT_NE(r.error().find(needle), std::string::npos) << r.error();
    };
    expectError("tls_server_config:\n  certfile: x\n", "bad.yml:2:3: unknown key");
    expectError("basic_auth_users:\n  prom: plaintext\n", "must be a bcrypt hash");
    expectError("tls_server_config:\n  cert_file: /nonexistent\n  key_file: /nonexistent\n",
                "tls_server_config.cert_file /nonexistent: cannot open");
    expectError("tls_server_config:\n  min_version: TLS10\n", "TLS12 or TLS13");
    expectError("tls_server_config: [\n", "bad.yml:");
    expectError("scheme: https\n", "unknown key 'scheme'");
}

// Captures what a StderrLogger writes to fd 2.
std::string captureStderr(const std::function<void()>& body) {
    TempDir dir;
    const std::string path = dir.path() + "/err";
    std::fflush(stderr);
    const int saved = ::dup(2);
    FILE* f = std::fopen(path.c_str(), "w");
    ::dup2(::fileno(f), 2);
    body();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(f);
    return testing::slurp(path);
}

TEST(Logger, JournaldFormatHasPriorityPrefixesAndNoTimestamp) {
    const std::string out = captureStderr([] {
        StderrLogger log(LogLevel::Debug, LogOutputFormat::Journald);
        log.info("hello");
        log.warn("careful");
        log.error("broken");
        log.log(LogLevel::Debug, "detail");
    });
    EXPECT_EQ(out, "<6>hello\n<4>careful\n<3>broken\n<7>detail\n");
}

TEST(Logger, TextFormatKeepsTheDaemonsLineShape) {
    const std::string out = captureStderr([] {
        StderrLogger log(LogLevel::Info, LogOutputFormat::Text);
        log.warn("careful");
        log.log(LogLevel::Debug, "dropped below the level");
    });
    // "2026-01-02T03:04:05.678Z runplaned[123] WARN careful\n"
    ASSERT_GE(out.size(), 25u) << out;
    EXPECT_EQ(out[4], '-');
    EXPECT_EQ(out[10], 'T');
    EXPECT_EQ(out[23], 'Z');
    EXPECT_NE(out.find(" runplaned[" + std::to_string(::getpid()) + "] WARN careful\n"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("dropped"), std::string::npos);
}

TEST(Logger, AutoPicksJournaldOnlyWhenStderrIsTheJournalStream) {
    ::unsetenv("JOURNAL_STREAM");
    EXPECT_FALSE(stderrIsJournal());
    struct stat st {};
    ASSERT_EQ(::fstat(2, &st), 0);
    const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    ::setenv("JOURNAL_STREAM", mine.c_str(), 1);
    EXPECT_TRUE(stderrIsJournal());
    ::setenv("JOURNAL_STREAM", "1:2", 1);
    EXPECT_FALSE(stderrIsJournal())
        << "a stream inherited from a parent whose stderr was the journal";
    ::unsetenv("JOURNAL_STREAM");
    EXPECT_TRUE(parseLogFormat("journald").ok());
    EXPECT_FALSE(parseLogFormat("json").ok());
}

}  // namespace
}  // namespace runplane::agent
