// Issue 41, hostile input to the controller (docs/security.md, "Red-team round (issue 41):
// controller and history"): tokens gRPC cannot send, `cluster init` over an existing cluster,
// and stored run output with a range the recorder never got. Real runplanectl invocations.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane {
namespace {

using testing::runCtl;
using testing::ScratchDir;

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// A row per hostile token: its bytes and what the error must say about it.
struct HostileToken {
    const char* name;
    std::string token;
    std::string says;
};

const std::vector<HostileToken>& hostileTokens() {
    static const std::vector<HostileToken> rows = {
        {"tab", "abcdefghij\tklmnopqrstu", "character 11 of 22 is a tab (byte 0x09)"},
        {"escape", "abcdefghijklmnop\x1b[0m",
         "character 17 of 20 is a control character (byte 0x1b)"},
        {"delete", "abcdefghijklmnopq\x7f",
         "character 18 of 18 is a control character (byte 0x7f)"},
        {"utf8", "abcdefghijklmnop\xc3\xa9", "character 17 of 18 is not ASCII (byte 0xc3)"},
        {"latin1",
         "\xe9"
         "abcdefghijklmnopq",
         "character 1 of 18 is not ASCII (byte 0xe9)"},
        {"carriage-return", "abcdefghij\rklmnopqrst",
         "character 11 of 21 is a line break (byte 0x0d)"},
    };
    return rows;
}

// Item 5: runplanectl aborted (exit 134, a gRPC assertion on the header value) on a token with a
// tab, a control or a non-ASCII character. Now: exit 2 before any call, naming the character's
// position and kind and where the token came from (file, $RUNPLANE_TOKEN, cluster profile),
// never the token itself.
TEST(RedTeamController, HostileTokenIsRefusedWithWhatAndWhereNotAnAbort) {
    ScratchDir dir;
    for (const HostileToken& row : hostileTokens()) {
        SCOPED_TRACE(row.name);
        const std::string file = dir.file(std::string("token-") + row.name);
        write(file, row.token + "\n");
        auto fromFile = runCtl({"nodes", "127.0.0.1:1", "--token-file", file}, dir.path());
        EXPECT_EQ(fromFile.exitCode, 2) << fromFile.err;
        EXPECT_NE(fromFile.err.find("--token-file " + file + ": the token's " + row.says),
                  std::string::npos)
            << fromFile.err;

        ::setenv("RUNPLANE_TOKEN", row.token.c_str(), 1);
        auto fromEnv = runCtl({"nodes", "127.0.0.1:1"}, dir.path());
        ::unsetenv("RUNPLANE_TOKEN");
        EXPECT_EQ(fromEnv.exitCode, 2) << fromEnv.err;
        EXPECT_NE(fromEnv.err.find("$RUNPLANE_TOKEN: the token's " + row.says), std::string::npos)
            << fromEnv.err;

        const std::string profile = dir.file(std::string("lab-") + row.name + ".yaml");
        write(profile, "nodes: [\"127.0.0.1:1\"]\ntoken_file: " + file + "\n");
        auto fromProfile = runCtl({"nodes", "--cluster", profile}, dir.path());
        EXPECT_EQ(fromProfile.exitCode, 2) << fromProfile.err;
        EXPECT_NE(fromProfile.err.find(": token_file " + file + ": the token's " + row.says),
                  std::string::npos)
            << fromProfile.err;
        for (const auto* r : {&fromFile, &fromEnv, &fromProfile}) {
            EXPECT_EQ(r->err.find("klmnop"), std::string::npos) << "the token must not be shown";
            EXPECT_EQ(r->out.find("klmnop"), std::string::npos) << "the token must not be shown";
        }
    }
    // Every subcommand that connects goes through the same check: `watch` and `logs` too.
    const std::string file = dir.file("token-tab");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"watch", "127.0.0.1:1", "--history", dir.file("h.sqlite"),
                                   "--seconds", "1", "--token-file", file},
          std::vector<std::string>{"logs", "127.0.0.1:1", "r1", "--token-file", file}}) {
        auto r = runCtl(args, dir.path());
        EXPECT_EQ(r.exitCode, 2) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("is a tab"), std::string::npos) << args[0] << ": " << r.err;
    }
}

// Item 10: `cluster init` into a folder holding a cluster (another profile name, so NAME.yaml
// does not exist) replaced its CA key and token without asking. Now it refuses, naming the
// files, unless --force.
TEST(RedTeamController, ClusterInitRefusesToReplaceAClusterUnlessForced) {
    ScratchDir dir;
    const std::string pki = dir.file("pki");
    auto first =
        runCtl({"cluster", "init", "--hosts", "h1", "--out", pki, "--name", "lab"}, dir.path());
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const std::string caKey = slurp(pki + "/ca.key");
    const std::string token = slurp(pki + "/token");
    auto other =
        runCtl({"cluster", "init", "--hosts", "h2", "--out", pki, "--name", "prod"}, dir.path());
    EXPECT_EQ(other.exitCode, 2);
    EXPECT_NE(other.err.find("holds a cluster already (ca.pem, ca.key, client.pem, client.key, "
                             "token); refusing to replace a cluster's keys"),
              std::string::npos)
        << other.err;
    EXPECT_NE(other.err.find("--force"), std::string::npos) << other.err;
    EXPECT_EQ(slurp(pki + "/ca.key"), caKey);
    EXPECT_EQ(slurp(pki + "/token"), token);
    EXPECT_FALSE(std::filesystem::exists(pki + "/prod.yaml"));

    auto forced =
        runCtl({"cluster", "init", "--hosts", "h2", "--out", pki, "--name", "prod", "--force"},
               dir.path());
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_NE(slurp(pki + "/ca.key"), caKey);
    EXPECT_NE(slurp(pki + "/token"), token);
    EXPECT_TRUE(std::filesystem::exists(pki + "/prod.yaml"));
}

// Item 3, the reader's half: stored output with a range the recorder never got (the daemon no
// longer had it) is shown with the hole marked where it falls and counted in the header,
// instead of the bytes around it joined under "(bytes 0..N)".
TEST(RedTeamController, StoredOutputShowsTheRangeThatWasNeverStored) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    {
        auto h = db::History::open(path);
        ASSERT_TRUE(h.ok()) << h.error();
        db::RunRecord r;
        r.id = RunId{"r1"};
        r.startedNs = 1;
        r.state = db::RunState::Finished;
        ASSERT_TRUE((*h)->upsertRun(r).ok());
        ASSERT_TRUE((*h)->appendRunLog(RunId{"r1"}, "stdout", 0, "step 1\nstep 2\n").ok());
        ASSERT_TRUE((*h)->appendRunLog(RunId{"r1"}, "stdout", 5734, "step 900\n").ok());
    }
    auto r = runCtl({"logs", "127.0.0.1:1", "r1", "--from-history", "--history", path}, dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("(bytes 0..5743, 5720 bytes missing in 1 range (14..5734)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out,
              "step 1\nstep 2\n[runplane: 5720 bytes missing here (bytes 14..5734 were not "
              "stored)]\nstep 900\n");
}

}  // namespace
}  // namespace runplane
