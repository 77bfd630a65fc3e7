#pragma once
// Shared histories of the Compare page and report tests (issue 49): runs whose only run-level
// series are given exactly (no standard evals, no memory regression, no spike), written to a real
// SQLite history; the four runs of the grouping tests and the three runs of the lineage tests;
// the documented EMA (docs/gui.md) of three evenly spaced points.

#include <gtest/gtest.h>

#include <QString>
#include <QTemporaryDir>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "db/history/history.h"
#include "tests/gui/synthetic_history.h"

namespace runplane::gui::test {

inline constexpr std::int64_t kRunHour = 3600LL * 1000000000LL;

/// A run of `seconds` at 1 Hz, started `hour` hours after the default start, whose only
/// run-level series are `series`.
inline SyntheticRunSpec evalRun(std::string id, std::string name, int hour,
                                std::vector<ExtraSeries> series, int seconds = 300) {
    SyntheticRunSpec spec;
    spec.runId = std::move(id);
    spec.name = std::move(name);
    spec.seconds = seconds;
    spec.standardEvals = false;
    spec.plantSpike = false;
    spec.regressNodeB = false;
    spec.startNs += kRunHour * hour;
    spec.extra = std::move(series);
    return spec;
}

/// Writes `runs` to the history at `path` (created when absent). Use as
/// ASSERT_NO_FATAL_FAILURE(writeRuns(path, {...})).
inline void writeRuns(const QString& path, const std::vector<SyntheticRunSpec>& runs) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    for (const SyntheticRunSpec& run : runs) {
        ASSERT_TRUE(writeSyntheticRun(**h, run)) << run.runId;
    }
}

/// A history file ("history.sqlite") in a temporary folder of its own, removed with it.
struct TempHistory {
    QTemporaryDir dir;
    QString path = dir.filePath(QStringLiteral("history.sqlite"));
};

/// The recipe snapshot `yaml` with its `lr:` line set to `lr`.
inline std::string withLr(std::string yaml, const char* lr) {
    const auto at = yaml.find("lr:");
    EXPECT_NE(at, std::string::npos);
    yaml.replace(at, yaml.find('\n', at) - at, std::string("lr: ") + lr);
    return yaml;
}

/// The grouping tests' runs, eval/score by step, recipe qwen3.8-2.4T-A95B-full.yaml with two
/// learning rates, tags set through the history's API:
/// a, b: lr 1e-5, tag sweep-a;  c: lr 2e-5, tag sweep-b;  d: lr 2e-5, untagged, ends at step 10.
/// Use as ASSERT_NO_FATAL_FAILURE(writeGroupRuns(path)).
inline void writeGroupRuns(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    const std::string recipe = sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_FALSE(recipe.empty());
    struct Spec {
        const char* id;
        const char* lr;
        const char* tag;
        std::vector<std::pair<std::int64_t, double>> score;
    };
    const std::vector<Spec> specs = {
        {"run-a", "1.0e-05", "sweep-a", {{0, 0.5}, {10, 0.75}, {20, 1.0}}},
        {"run-b", "1.0e-05", "sweep-a", {{0, 0.25}, {20, 0.5}}},
        {"run-c", "2.0e-05", "sweep-b", {{0, 0.125}, {10, 0.25}, {20, 0.375}}},
        {"run-d", "2.0e-05", "", {{0, 0.5}, {10, 0.625}}},
    };
    int hour = 0;
    for (const Spec& s : specs) {
        SyntheticRunSpec spec = evalRun(s.id, s.id, hour++, {{"eval/score", "", s.score}});
        spec.recipeYaml = withLr(recipe, s.lr);
        ASSERT_TRUE(writeSyntheticRun(**h, spec));
        if (*s.tag != '\0') {
            ASSERT_TRUE((*h)->addRunTag(RunId{s.id}, s.tag));
        }
    }
}

/// The lineage tests' runs, eval/score by step, ids `prefix` + base, resumed, forked (named base,
/// resumed, forked), an hour apart; their parents are for the test to set:
///   base:    0 0.5, 10 0.625, 20 0.75, 30 0.25
///   resumed: 21 0.8125, 30 0.875, 40 0.9375 (resumes after base's checkpoint at 20: base's 30,
///            logged after that checkpoint, is not part of its history)
///   forked:  31 0.375, 40 0.5 (to fork resumed at 30)
/// Use as ASSERT_NO_FATAL_FAILURE(writeLineageRuns(path, "...")).
inline void writeLineageRuns(const QString& path, const std::string& prefix) {
    writeRuns(path, {evalRun(prefix + "base", "base", 0,
                             {{"eval/score", "", {{0, 0.5}, {10, 0.625}, {20, 0.75}, {30, 0.25}}}}),
                     evalRun(prefix + "resumed", "resumed", 1,
                             {{"eval/score", "", {{21, 0.8125}, {30, 0.875}, {40, 0.9375}}}}),
                     evalRun(prefix + "forked", "forked", 2,
                             {{"eval/score", "", {{31, 0.375}, {40, 0.5}}}})});
}

/// The documented EMA with even spacing (docs/gui.md): a_n = w a_{n-1} + (1-w) y_n from a_0 = 0,
/// s_n = a_n / (1 - w^n), written out for three points.
inline std::vector<double> ema3(double w, double y1, double y2, double y3) {
    const double a1 = (1 - w) * y1;
    const double a2 = w * a1 + (1 - w) * y2;
    const double a3 = w * a2 + (1 - w) * y3;
    return {a1 / (1 - w), a2 / (1 - w * w), a3 / (1 - w * w * w)};
}

}  // namespace runplane::gui::test
