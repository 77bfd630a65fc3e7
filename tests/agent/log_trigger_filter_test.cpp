// issue 42 (speed): the literal pre-filter in front of the trigger set (log_trigger_filter.h) and
// the 16-at-a-time logfmt::find. Neither may change a result: every row whose trigger matches a
// line is among the rows the filter names (checked with each trigger's own RE2 on every line of
// the real pastes, at every alignment), and find answers as std::string_view::find.
#include "backend/agent/log_trigger_filter.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

std::vector<std::string_view> tableTriggers() {
    std::vector<std::string_view> triggers;
    for (const LogFormat& f : logFormats()) {
        triggers.push_back(f.trigger);
    }
    return triggers;
}

// Every line of the real pastes: the fixtures and the held-out rounds.
std::vector<std::string> pastedLines() {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    const std::string root = std::string(src != nullptr ? src : ".") + "/tests/agent";
    std::vector<std::string> lines;
    for (const std::string dir :
         {"/fixtures/logs", "/heldout/round1", "/heldout/round2", "/heldout/round3"}) {
        if (!std::filesystem::exists(root + dir)) {
            continue;
        }
        for (const auto& e : std::filesystem::recursive_directory_iterator(root + dir)) {
            if (!e.is_regular_file() || e.path().extension() != ".log") {
                continue;
            }
            std::ifstream in(e.path(), std::ios::binary);
            std::string line;
            while (std::getline(in, line)) {
                lines.push_back(line);
            }
        }
    }
    return lines;
}

TEST(LogTriggerFilter, EveryTriggerOfTheTableIsRead) {
    const TriggerFilter filter(tableTriggers());
    EXPECT_TRUE(filter.usable()) << "a trigger the pre-filter cannot read switches it off: every "
                                    "line then goes through the whole set (slower, same results)";
    EXPECT_FALSE(filter.pieces().empty());
    EXPECT_FALSE(filter.anchored().empty());
}

TEST(LogTriggerFilter, NamesEveryRowWhoseTriggerMatchesARealLine) {
    const auto triggers = tableTriggers();
    const TriggerFilter filter(triggers);
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingLatin1);
    std::vector<std::unique_ptr<RE2>> res;
    for (auto t : triggers) {
        res.push_back(std::make_unique<RE2>(t, options));
        ASSERT_TRUE(res.back()->ok()) << t;
    }
    const auto lines = pastedLines();
    ASSERT_GT(lines.size(), 500u);
    std::size_t matched = 0;
    std::size_t skipped = 0;
    std::size_t sure = 0;
    for (const std::string& line : lines) {
        // Every start (alignment of the 16-byte blocks, the anchored starts) up to 40 bytes in.
        for (std::size_t from = 0; from < std::min<std::size_t>(line.size(), 40); ++from) {
            const std::string_view lead = std::string_view(line).substr(from);
            const TriggerRows found = filter.match(lead);
            const std::uint64_t rows = found.maybe;
            skipped += rows == 0 ? 1 : 0;
            EXPECT_EQ(found.sure & ~rows, 0u);
            for (std::size_t r = 0; r < res.size(); ++r) {
                const bool matches = RE2::PartialMatch(lead, *res[r]);
                if (matches) {
                    ++matched;
                    EXPECT_TRUE((rows >> r) & 1u) << "row " << logFormats()[r].name
                                                  << " matches but was filtered out: " << lead;
                }
                if ((found.sure >> r) & 1u) {
                    ++sure;
                    EXPECT_TRUE(matches) << "row " << logFormats()[r].name
                                         << " said sure but does not match: " << lead;
                }
            }
        }
    }
    EXPECT_GT(matched, 1000u);
    EXPECT_GT(skipped, 1000u);  // the filter does skip lines
    EXPECT_GT(sure, 500u);      // and spares RE2 where a literal says it all
}

TEST(LogTriggerFilter, ReadsTheTriggersSyntaxAndRefusesTheRest) {
    const TriggerFilter f({R"(^time \(ms\) \|)", R"(iteration +\d)", R"(x*NCCL|^\{)"});
    ASSERT_TRUE(f.usable());
    EXPECT_EQ(f.anchored(), (std::vector<std::string>{"time (ms) |", "{"}));
    ASSERT_EQ(f.pieces().size(), 2u);
    EXPECT_NE(std::string("iteration ").find(f.pieces()[0]), std::string::npos);
    EXPECT_NE(std::string("NCCL").find(f.pieces()[1]), std::string::npos);
    EXPECT_EQ(f.rows("time (ms) | forward: 1.0"), 1u);
    EXPECT_EQ(f.rows("  time (ms) |"), 0u);  // anchored: the start only
    EXPECT_EQ(f.rows("[2024] iteration  12/ 100 |"), 2u);
    EXPECT_EQ(f.rows("{\"loss\": 1} NCCL"), 4u);
    EXPECT_EQ(f.rows("nothing of any format here, a line long enough for a block or two"), 0u);
    // A piece alone is not its literal: "ite" without the rest of "iteration ".
    EXPECT_EQ(f.rows("the write lock was taken, then iterations stopped"), 0u);
    // Sure only where the alternative is its literal: `x*NCCL` is "NCCL" but not only that.
    EXPECT_EQ(f.match("time (ms) | a").sure, 1u);
    EXPECT_EQ(f.match("iteration 5").sure, 0u);
    EXPECT_EQ(f.match("NCCL").sure, 0u);
    EXPECT_EQ(TriggerFilter({R"(out of memory)"}).match("CUDA out of memory.").sure, 1u);
    // Groups, counted repeats, hex escapes and alternatives with no 3-byte literal switch it off.
    for (const char* t : {R"((a|b)cde)", R"(ab{2}c)", R"(\x41BC)", R"(ab|xyz)", R"(\d+)"}) {
        const TriggerFilter off({t});
        EXPECT_FALSE(off.usable()) << t;
        EXPECT_EQ(off.rows("anything"), ~std::uint64_t(0)) << t;
    }
    // An optional byte is not required: `ab?cd` gives a piece of "cd..." only if 3 bytes long.
    EXPECT_FALSE(TriggerFilter({R"(ab?cd)"}).usable());
    EXPECT_EQ(TriggerFilter({R"(ab?cde)"}).pieces(), (std::vector<std::string>{"cde"}));
}

TEST(LogFindFast, AnswersAsStringViewFind) {
    std::mt19937 rng(42);
    const std::string alphabet = "ab c,:";
    for (int round = 0; round < 20000; ++round) {
        std::string hay(rng() % 90, ' ');
        for (char& c : hay) {
            c = alphabet[rng() % alphabet.size()];
        }
        std::string needle(rng() % 7, ' ');
        for (char& c : needle) {
            c = alphabet[rng() % alphabet.size()];
        }
        const std::size_t from = rng() % (hay.size() + 2);
        EXPECT_EQ(logfmt::find(hay, needle, from), std::string_view(hay).find(needle, from))
            << '"' << hay << "\" \"" << needle << "\" " << from;
    }
    const std::string line(200, 'x');
    EXPECT_EQ(logfmt::find(line + "out of memory", "out of memory"), 200u);
    EXPECT_EQ(logfmt::find(line, "xxxx", 150), 150u);
    EXPECT_EQ(logfmt::find(line, "xy"), std::string_view::npos);
}

}  // namespace
}  // namespace runplane::agent
