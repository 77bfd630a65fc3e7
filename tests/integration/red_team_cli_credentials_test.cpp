// Issue 41 item 8, runplanectl's side: a cluster profile whose token_file (or the profile itself)
// is a FIFO hung the CLI for good, and one naming /dev/zero read without bound. The shared
// reader (common/credential_file.h) refuses them at once; docs/security.md, "Red-team round
// (issue 41): daemon".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "tests/agent/daemon_process.h"
#include "tests/support/process.h"

namespace runplane {
namespace {

using agent::testing::TempDir;
using testing::runCtl;

TEST(RedTeam41Cli, ProfileCredentialPathsThatAreNotFilesAreRefusedAtOnce) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    struct Case {
        std::string tokenFile, needle;
    };
    for (const Case& c : {Case{fifo, "a FIFO (named pipe), not a regular file"},
                          Case{"/dev/zero", "a character device, not a regular file"}}) {
        const std::string profile = dir.path() + "/c.yaml";
        std::ofstream(profile) << "nodes:\n  - address: 127.0.0.1:1\ntoken_file: " << c.tokenFile
                               << "\n";
        const auto t0 = std::chrono::steady_clock::now();
        const auto r =
            runCtl({"nodes", "--cluster", profile}, dir.path(), std::chrono::seconds(20));
        EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
        EXPECT_NE(r.err.find("token_file " + c.tokenFile + ": " + c.needle), std::string::npos)
            << r.err;
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << c.tokenFile;
    }
    // The profile itself as a FIFO.
    const std::string profileFifo = dir.path() + "/p.yaml";
    ASSERT_EQ(::mkfifo(profileFifo.c_str(), 0600), 0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r =
        runCtl({"nodes", "--cluster", profileFifo}, dir.path(), std::chrono::seconds(20));
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("a FIFO (named pipe)"), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
}  // namespace runplane
