// runplaned flags and the security rule. issue 5
#include <gtest/gtest.h>

#include <fstream>

#include "backend/agent/auth.h"
#include "backend/agent/daemon_config.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

Result<DaemonConfig> parse(std::vector<std::string> args) {
    args.insert(args.begin(), "runplaned");
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    bool help = false;
    return parseDaemonArgs(static_cast<int>(argv.size()), argv.data(), &help);
}

TEST(DaemonConfig, DefaultsAndFlags) {
    auto c = parse({"--state-dir", "/tmp/s", "--mem-alarm-bytes", "750G", "--sample-hz", "10"});
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->runRoot, "/tmp/s/runs");
    EXPECT_EQ(c->memAlarmBytes, 750ull << 30);  // G = GiB
    auto decimal = parse({"--state-dir", "/tmp/s", "--mem-alarm-bytes", "750GB"});
    ASSERT_TRUE(decimal.ok()) << decimal.error();
    EXPECT_EQ(decimal->memAlarmBytes, 750'000'000'000ull);  // GB = 10^9: the source's 750 GB
    EXPECT_EQ(c->listen, "127.0.0.1:7070");
    EXPECT_FALSE(c->nodeId.empty());
    EXPECT_FALSE(parse({"--sample-hz", "0"}).ok());
    EXPECT_FALSE(parse({"--mem-alarm-bytes", "lots"}).ok());
    auto bad = parse({"--sample-hz", "11"});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("--sample-hz"), std::string::npos);
    EXPECT_FALSE(parse({"--no-such-flag"}).ok());
}

TEST(DaemonConfig, SecurityRule) {
    DaemonConfig c;
    c.listen = "127.0.0.1:0";
    EXPECT_TRUE(checkSecurity(c).ok());
    c.listen = "[::1]:0";
    EXPECT_TRUE(checkSecurity(c).ok());
    c.listen = "0.0.0.0:7070";
    EXPECT_FALSE(checkSecurity(c).ok());
    testing::TempDir dir;
    const std::string f = dir.path() + "/f";
    std::ofstream(f) << "0123456789abcdef0123\n";
    c.tlsCert = c.tlsKey = f;
    EXPECT_FALSE(checkSecurity(c).ok()) << "TLS without token or client CA";
    c.tokenFile = f;
    EXPECT_TRUE(checkSecurity(c).ok());
    c.tokenFile.clear();
    c.tlsClientCa = f;
    EXPECT_TRUE(checkSecurity(c).ok());
    c.tlsKey.clear();
    EXPECT_FALSE(checkSecurity(c).ok());
    DaemonConfig m;
    m.listen = "127.0.0.1:0";
    m.metricsListen = "0.0.0.0:9100";
    EXPECT_FALSE(checkSecurity(m).ok());
    EXPECT_TRUE(isLoopbackHost("127.1.2.3"));
    EXPECT_FALSE(isLoopbackHost("128.0.0.1"));
    std::ofstream(dir.path() + "/short") << "abc\n";
    EXPECT_FALSE(readTokenFile(dir.path() + "/short").ok());
    EXPECT_EQ(*readTokenFile(f), "0123456789abcdef0123");
}

TEST(Auth, ConstantTimeEquals) {
    EXPECT_TRUE(constantTimeEquals("abc", "abc"));
    EXPECT_FALSE(constantTimeEquals("abc", "abd"));
    EXPECT_FALSE(constantTimeEquals("abc", "abcd"));
    EXPECT_FALSE(constantTimeEquals("", "a"));
    EXPECT_TRUE(constantTimeEquals("", ""));
}

}  // namespace
}  // namespace runplane::agent
