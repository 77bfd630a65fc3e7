// Issue #18, client half: real runplaned daemons on 127.0.0.1 with --require-tls, certificates
// from `runplanectl cluster init` / the cluster_certs API, and real runplanectl invocations.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backend/control/cluster_certs.h"
#include "backend/control/cluster_profile.h"
#include "tests/agent/daemon_process.h"
#include "tests/support/process.h"

namespace runplane {
namespace {

using agent::testing::DaemonProcess;
using agent::testing::TempDir;
using testing::runCtl;

mode_t modeOf(const std::string& path) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_mode & 0777;
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

class TlsCluster : public ::testing::Test {
  protected:
    void SetUp() override {
        pki = dir.path() + "/pki";
        auto r = runCtl(
            {"cluster", "init", "--hosts", "127.0.0.1,localhost", "--out", pki, "--name", "lab"},
            dir.path());
        ASSERT_EQ(r.exitCode, 0) << r.err;
        ASSERT_NE(r.out.find("--tls-client-ca ca.pem --token-file token"), std::string::npos)
            << r.out;
    }
    std::string f(const std::string& name) const { return pki + "/" + name; }
    std::vector<std::string> serverFlags(const std::string& host) const {
        return {"--require-tls", "--tls-cert", f("server-" + host + ".pem"), "--tls-key",
                f("server-" + host + ".key")};
    }
    TempDir dir;
    std::string pki;
};

TEST_F(TlsCluster, InitWritesPrivateKeysAndALoadableProfile) {
    for (const char* secret :
         {"ca.key", "client.key", "server-127.0.0.1.key", "server-localhost.key", "token"}) {
        EXPECT_EQ(modeOf(f(secret)), 0600u) << secret;
    }
    EXPECT_EQ(modeOf(pki), 0700u);
    auto p = control::loadClusterProfile(f("lab.yaml"));
    ASSERT_TRUE(p.ok()) << p.error();
    ASSERT_EQ(p->nodes.size(), 2u);
    EXPECT_EQ(p->nodes[0].address, "127.0.0.1:7070");
    EXPECT_EQ(p->tlsCa, f("ca.pem"));
    EXPECT_EQ(p->tokenFile, f("token"));
    EXPECT_EQ(agent::testing::slurp(f("token")).size(), 65u);  // 64 hex + newline
    // A second init must not silently replace the cluster's keys.
    auto again =
        runCtl({"cluster", "init", "--hosts", "h1", "--out", pki, "--name", "lab"}, dir.path());
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_NE(again.err.find("refusing to replace"), std::string::npos) << again.err;
}

TEST_F(TlsCluster, RequireTlsRefusesPlaintextOnLoopback) {
    DaemonProcess d(dir.path() + "/s", {"--require-tls"});
    EXPECT_FALSE(d.ok());
    EXPECT_NE(d.error().find("--require-tls"), std::string::npos) << d.error();
}

TEST_F(TlsCluster, MutualTlsAcceptsTheClientCertificateOnly) {
    auto flags = serverFlags("127.0.0.1");
    flags.insert(flags.end(), {"--tls-client-ca", f("ca.pem")});
    DaemonProcess d(dir.path() + "/s", flags);
    ASSERT_TRUE(d.ok()) << d.error();
    auto ok = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem"), "--tls-cert", f("client.pem"),
                      "--tls-key", f("client.key")},
                     dir.path());
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    auto noCert = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem")}, dir.path());
    EXPECT_NE(noCert.exitCode, 0);
    EXPECT_NE(noCert.err.find("cannot reach runplaned at " + d.address()), std::string::npos)
        << noCert.err;
}

TEST_F(TlsCluster, TokenFromFileOrEnvironmentAndWrongTokenRefused) {
    auto flags = serverFlags("127.0.0.1");
    flags.insert(flags.end(), {"--token-file", f("token")});
    DaemonProcess d(dir.path() + "/s", flags);
    ASSERT_TRUE(d.ok()) << d.error();
    auto ok = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem"), "--token-file", f("token")},
                     dir.path());
    EXPECT_EQ(ok.exitCode, 0) << ok.err;

    write(dir.path() + "/wrong", "not-the-token-0123456789\n");
    auto wrong = runCtl(
        {"nodes", d.address(), "--tls-ca", f("ca.pem"), "--token-file", dir.path() + "/wrong"},
        dir.path());
    EXPECT_EQ(wrong.exitCode, 1);
    EXPECT_NE(wrong.err.find("authentication failed"), std::string::npos) << wrong.err;
    EXPECT_NE(wrong.err.find("wrong token"), std::string::npos) << wrong.err;

    std::string token = agent::testing::slurp(f("token"));
    token.pop_back();
    ::setenv("RUNPLANE_TOKEN", token.c_str(), 1);
    auto env = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem")}, dir.path());
    ::unsetenv("RUNPLANE_TOKEN");
    EXPECT_EQ(env.exitCode, 0) << env.err;
    EXPECT_EQ(d.stderrText().find(token), std::string::npos) << "the token must never be logged";

    // There is no --token flag any more: a secret on the command line shows in ps and history.
    auto flag =
        runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem"), "--token", token}, dir.path());
    EXPECT_NE(flag.exitCode, 0);
}

TEST_F(TlsCluster, WrongCaAndExpiredCertificatesGiveClearMessages) {
    DaemonProcess d(dir.path() + "/s", [&] {
        auto flags = serverFlags("127.0.0.1");
        flags.insert(flags.end(), {"--token-file", f("token")});
        return flags;
    }());
    ASSERT_TRUE(d.ok()) << d.error();
    auto other = control::makeCertificateAuthority("another CA");
    ASSERT_TRUE(other.ok()) << other.error();
    write(dir.path() + "/other-ca.pem", other->certPem);
    auto wrongCa = runCtl({"nodes", d.address(), "--tls-ca", dir.path() + "/other-ca.pem",
                           "--token-file", f("token")},
                          dir.path());
    EXPECT_EQ(wrongCa.exitCode, 1);
    EXPECT_NE(wrongCa.err.find("TLS handshake failed"), std::string::npos) << wrongCa.err;
    EXPECT_NE(wrongCa.err.find("certificate verify failed"), std::string::npos) << wrongCa.err;

    // An expired server certificate: the client refuses the handshake.
    control::CertPair ca{agent::testing::slurp(f("ca.pem")), agent::testing::slurp(f("ca.key"))};
    control::Validity past{-3 * 86400, -86400};
    auto expired = control::makeSignedCertificate(ca, "127.0.0.1", {"127.0.0.1"}, true, past);
    ASSERT_TRUE(expired.ok()) << expired.error();
    write(dir.path() + "/old.pem", expired->certPem);
    write(dir.path() + "/old.key", expired->keyPem);
    DaemonProcess old(dir.path() + "/s2",
                      {"--require-tls", "--tls-cert", dir.path() + "/old.pem", "--tls-key",
                       dir.path() + "/old.key", "--token-file", f("token")});
    ASSERT_TRUE(old.ok()) << old.error();
    auto stale = runCtl(
        {"nodes", old.address(), "--tls-ca", f("ca.pem"), "--token-file", f("token")}, dir.path());
    EXPECT_EQ(stale.exitCode, 1);
    EXPECT_NE(stale.err.find("TLS handshake failed"), std::string::npos) << stale.err;

    // An expired client certificate is caught before connecting, naming the file and date.
    auto oldClient = control::makeSignedCertificate(ca, "runplanectl", {}, false, past);
    ASSERT_TRUE(oldClient.ok());
    write(dir.path() + "/oldc.pem", oldClient->certPem);
    write(dir.path() + "/oldc.key", oldClient->keyPem);
    auto mine = runCtl(
        {"nodes", d.address(), "--tls-ca", f("ca.pem"), "--tls-cert", dir.path() + "/oldc.pem",
         "--tls-key", dir.path() + "/oldc.key", "--token-file", f("token")},
        dir.path());
    EXPECT_NE(mine.exitCode, 0);
    EXPECT_NE(mine.err.find(dir.path() + "/oldc.pem: the client certificate expired on"),
              std::string::npos)
        << mine.err;
}

TEST_F(TlsCluster, WrongServerNameRefusedUnlessOverridden) {
    auto flags = serverFlags("localhost");  // SAN DNS:localhost only; we dial 127.0.0.1
    flags.insert(flags.end(), {"--token-file", f("token")});
    DaemonProcess d(dir.path() + "/s", flags);
    ASSERT_TRUE(d.ok()) << d.error();
    auto bad = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem"), "--token-file", f("token")},
                      dir.path());
    EXPECT_EQ(bad.exitCode, 1);
    EXPECT_NE(bad.err.find("Peer name 127.0.0.1 is not in peer certificate"), std::string::npos)
        << bad.err;
    auto good = runCtl({"nodes", d.address(), "--tls-ca", f("ca.pem"), "--token-file", f("token"),
                        "--tls-server-name", "localhost"},
                       dir.path());
    EXPECT_EQ(good.exitCode, 0) << good.err;
}

TEST_F(TlsCluster, ProfileDrivesNodesWatchAndSubmit) {
    auto flags = serverFlags("127.0.0.1");
    flags.insert(flags.end(), {"--tls-client-ca", f("ca.pem"), "--token-file", f("token")});
    DaemonProcess d(dir.path() + "/s", flags);
    ASSERT_TRUE(d.ok()) << d.error();
    // A profile in another folder, paths relative to it, found by name through XDG_CONFIG_HOME.
    const std::string clusters = dir.path() + "/xdg/runplane/clusters";
    std::filesystem::create_directories(clusters);
    write(clusters + "/lab.yaml", "nodes:\n  - address: \"" + d.address() +
                                      "\"\n    name: n1\n    role: head\ntls:\n  ca: ../../../pki/"
                                      "ca.pem\n  cert: ../../../pki/client.pem\n  key: "
                                      "../../../pki/client.key\ntoken_file: ../../../pki/token\n"
                                      "telemetry_hz: 5\n");
    ::setenv("XDG_CONFIG_HOME", (dir.path() + "/xdg").c_str(), 1);
    auto nodes = runCtl({"nodes", "--cluster", "lab", "--json"}, dir.path());
    ::unsetenv("XDG_CONFIG_HOME");
    EXPECT_EQ(nodes.exitCode, 0) << nodes.err;
    EXPECT_NE(nodes.out.find(d.address()), std::string::npos) << nodes.out;

    const std::string profile = clusters + "/lab.yaml";
    const std::string history = dir.path() + "/h.db";
    auto watch = runCtl({"watch", "--cluster", profile, "--seconds", "1.5", "--history", history},
                        dir.path());
    EXPECT_EQ(watch.exitCode, 0) << watch.err;
    EXPECT_NE(watch.err.find("streaming from " + d.address()), std::string::npos) << watch.err;

    auto submit = runCtl(
        {"submit", "--cluster", profile, "--history", history, "n1", "--", "/bin/echo", "hello"},
        dir.path());
    EXPECT_EQ(submit.exitCode, 0) << submit.err;
    EXPECT_NE(submit.out.find("started run"), std::string::npos) << submit.out;
    std::string token = agent::testing::slurp(f("token"));
    token.pop_back();
    std::ifstream in(history, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(bytes.find(token), std::string::npos) << "the token must not reach the history";

    // Explicit flags override the profile: a wrong CA flag beats the profile's right one.
    auto other = control::makeCertificateAuthority("another CA");
    write(dir.path() + "/other.pem", other->certPem);
    auto over =
        runCtl({"nodes", "--cluster", profile, "--tls-ca", dir.path() + "/other.pem"}, dir.path());
    EXPECT_EQ(over.exitCode, 1) << over.err;
    EXPECT_NE(over.err.find("certificate verify failed"), std::string::npos) << over.err;
}

// Regression: `nodes --cluster` without addresses printed failed rows by indexing the (empty)
// command-line address list and crashed.
TEST_F(TlsCluster, NodesFromProfileReportsEachUnreachableNode) {
    auto r = runCtl({"nodes", "--cluster", f("lab.yaml"), "--timeout", "1"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.out.find("127.0.0.1:7070"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("localhost:7070"), std::string::npos) << r.out << r.err;
}

TEST_F(TlsCluster, BadProfilesNameFileLineAndColumn) {
    const std::string p = dir.path() + "/bad.yaml";
    write(p, "nodes:\n  - address: \"h:1\"\n    colour: red\n");
    auto r = control::loadClusterProfile(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(p + ":3:5: nodes[0].colour: unknown key"), std::string::npos)
        << r.error();
    write(p, "tls:\n  ca: [1, 2]\n");
    r = control::loadClusterProfile(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(p + ":2:7: tls.ca: must be a non-empty string"), std::string::npos)
        << r.error();
    write(p, "nodes: [\n");
    r = control::loadClusterProfile(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(p + ":"), std::string::npos) << r.error();
    write(p, "telemetry_hz: 99\n");
    auto ctl = runCtl({"nodes", "--cluster", p}, dir.path());
    EXPECT_EQ(ctl.exitCode, 2);
    EXPECT_NE(ctl.err.find(p + ":1:15: telemetry_hz"), std::string::npos) << ctl.err;
}

}  // namespace
}  // namespace runplane
