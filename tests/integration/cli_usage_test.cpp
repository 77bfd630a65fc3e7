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
