// issue 6: log lines in the frameworks' shapes (Python dict repr) and the JSONL twin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "compute/smoke/metrics_log.h"

using runplane::smoke::formatMetricJson;
using runplane::smoke::formatMetricLine;
using runplane::smoke::MetricsLog;
using runplane::smoke::pythonFloatRepr;

TEST(PythonFloatRepr, MatchesPythonRepr) {
    // Expected strings are what CPython's repr() prints for the same doubles.
    EXPECT_EQ(pythonFloatRepr(0.41), "0.41");
    EXPECT_EQ(pythonFloatRepr(1.0), "1.0");
    EXPECT_EQ(pythonFloatRepr(0.0), "0.0");
    EXPECT_EQ(pythonFloatRepr(-0.0), "-0.0");
    EXPECT_EQ(pythonFloatRepr(1e-06), "1e-06");
    EXPECT_EQ(pythonFloatRepr(-6.05e-09), "-6.05e-09");
    EXPECT_EQ(pythonFloatRepr(0.0001), "0.0001");
    EXPECT_EQ(pythonFloatRepr(0.00012), "0.00012");
    EXPECT_EQ(pythonFloatRepr(1.5e-05), "1.5e-05");
    EXPECT_EQ(pythonFloatRepr(371.2), "371.2");
    EXPECT_EQ(pythonFloatRepr(100.0), "100.0");
    EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
    EXPECT_EQ(pythonFloatRepr(1234567890123456.0), "1234567890123456.0");
    EXPECT_EQ(pythonFloatRepr(1.5e300), "1.5e+300");
    EXPECT_EQ(pythonFloatRepr(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(pythonFloatRepr(static_cast<double>(0.184F)), "0.18400000035762787");
    EXPECT_EQ(pythonFloatRepr(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(pythonFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
    EXPECT_EQ(pythonFloatRepr(std::nan("")), "nan");
}

TEST(MetricLine, HasTheFrameworkShape) {
    const std::string line = formatMetricLine(
        "step", 11,
        {{"train/loss", -6.05e-09}, {"train/grad_norm", 0.0799}, {"train/step", std::int64_t{11}}});
    EXPECT_EQ(line,
              "step 11: {'train/loss': -6.05e-09, 'train/grad_norm': 0.0799, 'train/step': 11}");
    EXPECT_EQ(formatMetricLine("eval", 0, {{"eval/arith", 0.41}}), "eval 0: {'eval/arith': 0.41}");
}

TEST(MetricLine, JsonTwinCarriesTheSameValues) {
    EXPECT_EQ(formatMetricJson("eval", 4, {{"eval/arith", 0.5}, {"x", std::int64_t{3}}}),
              "{\"kind\":\"eval\",\"id\":4,\"metrics\":{\"eval/arith\":0.5,\"x\":3}}");
    EXPECT_EQ(formatMetricJson("perf", 1, {{"perf/x", std::nan("")}}),
              "{\"kind\":\"perf\",\"id\":1,\"metrics\":{\"perf/x\":null}}");
}

TEST(MetricsLog, WritesLinesPhasesAndJsonl) {
    const std::string dir = ::testing::TempDir();
    const std::string textPath = dir + "/smoke_log.txt";
    const std::string jsonPath = dir + "/smoke_log.jsonl";
    std::remove(jsonPath.c_str());
    std::FILE* f = std::fopen(textPath.c_str(), "w");
    ASSERT_NE(f, nullptr);
    {
        MetricsLog log(f);
        ASSERT_TRUE(log.openJsonl(jsonPath).ok());
        log.phase("rollout");
        log.metrics("rollout", 0, {{"rollout/raw_reward", 0.25}});
    }
    std::fclose(f);
    std::ifstream text(textPath);
    std::string a, b;
    std::getline(text, a);
    std::getline(text, b);
    EXPECT_EQ(a, "[runplane-phase] rollout");
    EXPECT_EQ(b, "rollout 0: {'rollout/raw_reward': 0.25}");
    std::ifstream json(jsonPath);
    std::string j;
    std::getline(json, j);
    EXPECT_EQ(j, "{\"kind\":\"rollout\",\"id\":0,\"metrics\":{\"rollout/raw_reward\":0.25}}");
}

TEST(MetricsLog, JsonlOpenErrorNamesFlagAndPath) {
    MetricsLog log(stdout);
    auto st = log.openJsonl("/nonexistent-dir/x.jsonl");
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().find("--metrics-jsonl /nonexistent-dir/x.jsonl"), std::string::npos);
}
