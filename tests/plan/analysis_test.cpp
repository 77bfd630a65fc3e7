// The recipe's analysis section (docs/recipe.md "analysis"): parsing both metric_kinds forms,
// errors with their place, the round trip, the override rules of metrics::classify, and the
// alarm line reaching the memory plan and its rule. (issue 19)

#include <gtest/gtest.h>

#include "backend/plan/detail/enum_tables.h"
#include "backend/plan/planner.h"
#include "backend/plan/recipe.h"
#include "common/metrics/metric_kind.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

using metrics::Direction;
using metrics::Kind;

const char* kAnalysis = R"(schema_version: 1
model: qwen3-4B
batch:
  rollout_batch_size: 32
analysis:
  primary_metric: eval/gsm8k
  metric_kinds:
    eval/arith/time: time
    "eval/judge/*": {kind: score, direction: lower}
  memory_alarm_gb: 20
)";

TEST(RecipeAnalysis, ParsesBothMetricKindForms) {
    auto r = parseRecipe(kAnalysis, "a.yaml");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->analysis.primaryMetric, "eval/gsm8k");
    ASSERT_EQ(r->analysis.metricKinds.size(), 2u);
    EXPECT_EQ(r->analysis.metricKinds[0].pattern, "eval/arith/time");
    EXPECT_EQ(r->analysis.metricKinds[0].kind, Kind::Time);
    EXPECT_FALSE(r->analysis.metricKinds[0].direction.has_value());
    EXPECT_EQ(r->analysis.metricKinds[1].pattern, "eval/judge/*");
    EXPECT_EQ(r->analysis.metricKinds[1].kind, Kind::Score);
    EXPECT_EQ(r->analysis.metricKinds[1].direction, Direction::Lower);
    ASSERT_TRUE(r->analysis.memoryAlarmGb.has_value());
    EXPECT_DOUBLE_EQ(*r->analysis.memoryAlarmGb, 20);
    // Written back and read again: the same analysis.
    auto again = parseRecipe(writeRecipe(*r), "again.yaml");
    ASSERT_TRUE(again.ok()) << again.error() << "\n" << writeRecipe(*r);
    EXPECT_EQ(again->analysis, r->analysis);
}

TEST(RecipeAnalysis, DefaultsAreEmptyAndNotWritten) {
    auto r = parseRecipe("schema_version: 1\nmodel: m\nbatch: {rollout_batch_size: 1}\n", "d");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->analysis, Analysis{});
    EXPECT_EQ(writeRecipe(*r).find("analysis"), std::string::npos);
}

std::string errorsOf(const std::string& analysis) {
    const std::string text =
        "schema_version: 1\nmodel: m\nbatch: {rollout_batch_size: 1}\nanalysis:\n" + analysis;
    auto r = parseRecipe(text, "bad.yaml");
    return r.ok() ? std::string() : r.error();
}

TEST(RecipeAnalysis, BadValuesNameTheirPlace) {
    const std::string unknownKind = errorsOf("  metric_kinds:\n    eval/x: scroe\n");
    EXPECT_NE(unknownKind.find("bad.yaml:6:13: error: unknown value 'scroe' for "
                               "'analysis.metric_kinds.eval/x'"),
              std::string::npos)
        << unknownKind;
    EXPECT_NE(unknownKind.find("did you mean 'score'?"), std::string::npos) << unknownKind;

    const std::string noKind = errorsOf("  metric_kinds:\n    eval/x: {direction: lower}\n");
    EXPECT_NE(noKind.find("'analysis.metric_kinds.eval/x' needs a kind"), std::string::npos)
        << noKind;

    const std::string badDirection =
        errorsOf("  metric_kinds:\n    eval/x: {kind: loss, direction: up}\n");
    EXPECT_NE(badDirection.find("unknown value 'up' for 'analysis.metric_kinds.eval/x.direction'"),
              std::string::npos)
        << badDirection;

    const std::string star = errorsOf("  metric_kinds:\n    \"*\": score\n");
    EXPECT_NE(star.find("keys must name a series or a prefix"), std::string::npos) << star;

    const std::string list = errorsOf("  metric_kinds:\n    eval/x: [score]\n");
    EXPECT_NE(list.find("must be a kind or {kind, direction}"), std::string::npos) << list;

    const std::string alarm = errorsOf("  memory_alarm_gb: 0\n");
    EXPECT_NE(alarm.find("analysis.memory_alarm_gb"), std::string::npos) << alarm;

    const std::string typo = errorsOf("  primary_metrc: eval/x\n");
    EXPECT_NE(typo.find("did you mean 'primary_metric'?"), std::string::npos) << typo;
}

TEST(RecipeAnalysis, KindSpellingsAgreeWithTheMetricsTable) {
    for (Kind k : {Kind::Score, Kind::Loss, Kind::Count, Kind::Time, Kind::Tokens, Kind::Bytes,
                   Kind::Rate, Kind::Ratio, Kind::Other}) {
        EXPECT_EQ(std::string(detail::enumName(k)), std::string(metrics::kindName(k)));
        Kind back = Kind::Other;
        ASSERT_TRUE(metrics::kindFromName(metrics::kindName(k), back));
        EXPECT_EQ(back, k);
    }
    for (Direction d : {Direction::Higher, Direction::Lower, Direction::None}) {
        EXPECT_EQ(std::string(detail::enumName(d)), std::string(metrics::directionName(d)));
    }
    Kind k{};
    EXPECT_FALSE(metrics::kindFromName("scores", k));
}

TEST(MetricOverrides, ExactBeatsPrefixAndLongerPrefixBeatsShorter) {
    const std::vector<metrics::KindOverride> o = {
        {"eval/*", Kind::Count, {}},
        {"eval/judge/*", Kind::Score, Direction::Lower},
        {"eval/judge/len", Kind::Tokens, {}},
    };
    // Without overrides, eval/judge/err is a higher-is-better score from its eval/ prefix.
    EXPECT_EQ(metrics::classify("eval/judge/err").direction, Direction::Higher);
    const auto err = metrics::classify("eval/judge/err", "", o);
    EXPECT_EQ(err.kind, Kind::Score);
    EXPECT_EQ(err.direction, Direction::Lower);
    EXPECT_EQ(metrics::classify("eval/judge/len", "", o).kind, Kind::Tokens);
    const auto other = metrics::classify("eval/arith", "", o);
    EXPECT_EQ(other.kind, Kind::Count);
    EXPECT_EQ(other.direction, Direction::None);  // the kind's default direction
    // An override wins over the stored unit; a name it does not match keeps the table.
    EXPECT_EQ(metrics::classify("eval/x", "bytes", o).kind, Kind::Count);
    EXPECT_EQ(metrics::classify("train/loss", "", o).kind, Kind::Loss);
    EXPECT_EQ(metrics::findOverride("train/loss", o), nullptr);
    // "eval/*" does not match "evalx" (the prefix includes the slash).
    EXPECT_EQ(metrics::findOverride("evalx", o), nullptr);
}

TEST(MetricOverrides, PrimaryEvalHonoursTheRecipe) {
    const std::vector<std::string> names = {"eval/aime", "eval/gsm8k", "eval/gsm8k/time"};
    EXPECT_EQ(metrics::primaryEval(names), "eval/aime");
    EXPECT_EQ(metrics::primaryEval(names, "eval/gsm8k"), "eval/gsm8k");
    // A preferred metric the run does not have falls back to the default rule.
    EXPECT_EQ(metrics::primaryEval(names, "eval/math"), "eval/aime");
    // Overrides decide what is a score: eval/aime turned into a count is skipped.
    EXPECT_EQ(metrics::primaryEval(names, "", {{"eval/aime", Kind::Count, {}}}), "eval/gsm8k");
}

TEST(RecipeAnalysis, AlarmLineReachesThePlanAndItsRule) {
    Recipe r = test::loadShipped("qwen3.8-2.4T-A95B-full.yaml");
    const Plan base = planRecipe(r, test::catalog());
    EXPECT_NEAR(base.memory.hostAlarmBytes, r.hardware.hostRamGb * 1e9 * 750.0 / 956.0, 1.0);
    r.analysis.memoryAlarmGb = 100;  // far below the planned peak
    const Plan own = planRecipe(r, test::catalog());
    EXPECT_DOUBLE_EQ(own.memory.hostAlarmBytes, 100e9);
    bool found = false;
    for (const Finding& f : own.findings) {
        if (f.ruleId == "memory.host-over-alarm") {
            found = true;
            EXPECT_EQ(f.fieldPath, "analysis.memory_alarm_gb");
            EXPECT_NE(f.message.find("(analysis.memory_alarm_gb)"), std::string::npos) << f.message;
        }
    }
    EXPECT_TRUE(found);
}

}  // namespace
}  // namespace runplane::plan
