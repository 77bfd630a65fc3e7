// Quoting rule and number spelling of the launch exporter (issue 4).

#include <gtest/gtest.h>

#include "backend/launch/shell_text.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

using namespace detail;

TEST(ShellQuote, BareWordsStayBareEverythingElseSingleQuoted) {
    EXPECT_EQ(shellQuote("--lr"), "--lr");
    EXPECT_EQ(shellQuote("/root/Qwen3-4B_torch_dist/"), "/root/Qwen3-4B_torch_dist/");
    EXPECT_EQ(shellQuote("q_proj,k_proj"), "q_proj,k_proj");
    EXPECT_EQ(shellQuote(""), "''");
    EXPECT_EQ(shellQuote("a b"), "'a b'");
    EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
    EXPECT_EQ(shellQuote("$HOME"), "'$HOME'");
    EXPECT_EQ(shellQuote("{\"a\": 1}"), "'{\"a\": 1}'");
    EXPECT_EQ(shellQuote("~/x"), "'~/x'");
    EXPECT_EQ(shellQuote("[0]*3"), "'[0]*3'");
}

TEST(ShellQuote, BashReadsEveryQuotedWordBackUnchanged) {
    const std::vector<std::string> words = {
        "plain", "a b", "it's",   "$HOME `id` $(id)", "tab\there",           "new\nline",
        "*?[x]", "",    "\\back", "\"dq\"",           "semi;colon&amp|pipe", "-n"};
    test::TempDir dir;
    std::string script = "for a in " + shellJoin(words) + "; do printf '%s\\0' \"$a\"; done\n";
    test::writeFile(dir.file("q.sh"), script);
    auto run = test::runProcess({"bash", dir.file("q.sh")}, {}, dir.path());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    std::vector<std::string> back;
    std::string cur;
    for (char c : run.output) {
        if (c == '\0') {
            back.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    EXPECT_EQ(back, words);
}

TEST(ShellSplit, ReadsQuotesAndRefusesExpansions) {
    auto w = shellSplit("--a 1 --b 'x y' \"q\\\"r\" c\\ d");
    ASSERT_TRUE(w.ok()) << w.error();
    EXPECT_EQ(*w, (std::vector<std::string>{"--a", "1", "--b", "x y", "q\"r", "c d"}));
    EXPECT_FALSE(shellSplit("--lr $LR").ok());
    EXPECT_FALSE(shellSplit("'open").ok());
    auto round = shellSplit(shellJoin({"--x", "it's", "a b"}));
    ASSERT_TRUE(round.ok());
    EXPECT_EQ(*round, (std::vector<std::string>{"--x", "it's", "a b"}));
}

TEST(Numbers, ShortestRoundTripSpelling) {
    EXPECT_EQ(formatDouble(1e-5), "1e-05");
    EXPECT_EQ(formatDouble(0.7), "0.7");
    EXPECT_EQ(formatDouble(64), "64");
    EXPECT_EQ(formatDouble(0.536870912), "0.536870912");
    for (double d : {1e-6, 0.28, 4e-4, 1.0 / 3.0, 123456.789}) {
        EXPECT_EQ(parseDouble(formatDouble(d)), d);
    }
    EXPECT_EQ(parseInt("42"), 42);
    EXPECT_FALSE(parseInt("4x").has_value());
    EXPECT_FALSE(parseInt("").has_value());
    EXPECT_FALSE(parseDouble("1e-5x").has_value());
}

}  // namespace
}  // namespace runplane::plan::launch
