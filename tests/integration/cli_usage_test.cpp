// runplanectl's usage errors: exit status 2, the parser's message, and a "did you mean" for a
// misspelt subcommand or flag (backend/cli/usage_errors.cpp).
#include <gtest/gtest.h>

#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

TEST(CliUsage, MisspeltSubcommandExitsTwoAndSuggests) {
    ScratchDir dir;
    auto r = runCtl({"validat", "recipe.yaml"}, dir.path().string());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("did you mean 'validate'?"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
}

TEST(CliUsage, MisspeltFlagOfASubcommandSuggestsTheFlag) {
    ScratchDir dir;
    auto r = runCtl({"nodes", "127.0.0.1:1", "--jsno"}, dir.path().string());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("did you mean '--json'?"), std::string::npos) << r.err;
}

TEST(CliUsage, MissingRequiredArgumentExitsTwo) {
    ScratchDir dir;
    auto r = runCtl({"validate"}, dir.path().string());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("required"), std::string::npos) << r.err;
}

// --help lists the commands in sections in the order a user works, not in link order, and every
// command has a section (a new one the table misses lands under "Other commands" and fails here).
TEST(CliUsage, HelpListsEveryCommandUnderItsSectionInWorkOrder) {
    ScratchDir dir;
    auto r = runCtl({"--help"}, dir.path().string());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::size_t at = 0;
    for (const char* line : {"Design a run:",    "  validate",
                             "  plan",           "  import",
                             "  export",         "Start and stop runs:",
                             "  submit",         "  dispatch",
                             "  stop",           "Watch nodes and runs:",
                             "  nodes",          "  watch",
                             "  memory",         "  diagnose",
                             "The run history:", "  runs",
                             "  compare",        "  history",
                             "  import-runs",    "Clusters:",
                             "  cluster"}) {
        const auto found = r.out.find(std::string("\n") + line, at);
        ASSERT_NE(found, std::string::npos) << line << " not after offset " << at << "\n" << r.out;
        at = found + 1;
    }
    EXPECT_EQ(r.out.find("Other commands:"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Subcommands:"), std::string::npos) << r.out;
}

TEST(CliUsage, HelpAndVersionExitZero) {
    ScratchDir dir;
    EXPECT_EQ(runCtl({"--help"}, dir.path().string()).exitCode, 0);
    auto v = runCtl({"--version"}, dir.path().string());
    EXPECT_EQ(v.exitCode, 0) << v.err;
    EXPECT_NE(v.out.find("runplanectl "), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("(commit "), std::string::npos) << v.out;
}

}  // namespace
}  // namespace runplane::testing
