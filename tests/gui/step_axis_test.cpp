// issue 19: train steps (optimizer steps) and eval steps (rollout ids) are never put on one x
// axis as the same number. The smoke recipe's 64 x 8 / 128 = 4 optimizer steps per rollout is
// worked out by hand here; the plots are real widgets (offscreen) fed from a real history.
#include <gtest/gtest.h>

#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>

#include "db/history/history.h"
#include "gui/models/compare_data.h"
#include "gui/models/history_queries.h"
#include "gui/models/run_derivations.h"
#include "gui/models/step_axis.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/run_view.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

std::string withGbs(std::string yaml, const std::string& gbsLine) {
    const std::string from = "  global_batch_size: 128\n";
    const auto at = yaml.find(from);
    if (at != std::string::npos) {
        yaml.replace(at, from.size(), gbsLine);
    }
    return yaml;
}

// A run like the smoke workload's: train/loss at optimizer steps 0..159, eval/arith at rollout
// ids 0..39 (every 5), perf/step_time at every rollout.
test::SyntheticRunSpec smokeLikeRun(const std::string& id, const std::string& recipe) {
    test::SyntheticRunSpec spec;
    spec.runId = id;
    spec.name = id;
    spec.seconds = 300;
    spec.gpusPerNode = 1;
    spec.nodes = {"node-a"};
    spec.standardEvals = false;
    spec.regressNodeB = false;
    spec.plantSpike = false;
    spec.recipeYaml = recipe;
    test::ExtraSeries loss{"train/loss", "", {}};
    for (int s = 0; s < 160; ++s) {
        loss.points.emplace_back(s, 1.0 / (s + 1));
    }
    test::ExtraSeries eval{"eval/arith", "", {}};
    for (int r = 4; r < 40; r += 5) {
        eval.points.emplace_back(r, 0.3 + 0.01 * r);
    }
    test::ExtraSeries perf{"perf/step_time", "s", {}};
    for (int r = 0; r < 40; ++r) {
        perf.points.emplace_back(r, 10.0 + r);
    }
    spec.extra = {loss, eval, perf};
    return spec;
}

double maxX(const TimeSeriesPlot& plot, const QString& name) {
    double m = -1;
    for (const PlotSeries& s : plot.series()) {
        if (s.name == name && !s.t.empty()) {
            m = std::max(m, *std::max_element(s.t.begin(), s.t.end()));
        }
    }
    return m;
}

TimeSeriesPlot* panelTitled(MetricPanelsView& v, const QString& title) {
    for (int i = 0; i < v.panelCount(); ++i) {
        if (v.titles()[i] == title) {
            return v.panel(i);
        }
    }
    return nullptr;
}

}  // namespace

TEST(StepAxes, DomainsFollowSlimeWandbStepKeys) {
    EXPECT_EQ(stepDomain("train/loss"), StepDomain::Optimizer);
    EXPECT_EQ(stepDomain("train/critic-value_loss"), StepDomain::Optimizer);
    for (const char* n : {"eval/arith", "rollout/raw_reward", "perf/step_time", "multi_turn/turns",
                          "passrate/pass@1"}) {
        EXPECT_EQ(stepDomain(n), StepDomain::Rollout) << n;
    }
    EXPECT_EQ(stepDomain("custom/thing"), StepDomain::Unknown);
}

TEST(StepAxes, MappingFromTheRecipeSnapshot) {
    const std::string smoke = test::sourceRecipe("smoke-local.yaml");
    ASSERT_FALSE(smoke.empty());
    // 64 prompts x 8 samples / 128 samples per optimizer step = 4.
    EXPECT_EQ(stepMappingFromRecipe(QString::fromStdString(smoke)).stepsPerRollout, 4);
    EXPECT_EQ(
        stepMappingFromRecipe(QString::fromStdString(withGbs(smoke, "  global_batch_size: 256\n")))
            .stepsPerRollout,
        2);
    const StepMapping none = stepMappingFromRecipe(QString());
    EXPECT_FALSE(none.known());
    EXPECT_FALSE(none.source.isEmpty());
    // No global batch size: Megatron would pick one from the parallel layout; not guessed here.
    EXPECT_FALSE(stepMappingFromRecipe(QString::fromStdString(withGbs(smoke, ""))).known());
}

TEST(StepAxes, ConversionAndPlans) {
    StepMapping four;
    four.stepsPerRollout = 4;
    EXPECT_DOUBLE_EQ(*stepOnAxis(10, StepDomain::Optimizer, StepAxis::Rollout, four), 2.5);
    EXPECT_DOUBLE_EQ(*stepOnAxis(3, StepDomain::Rollout, StepAxis::Optimizer, four), 12);
    EXPECT_DOUBLE_EQ(*stepOnAxis(3, StepDomain::Rollout, StepAxis::Rollout, StepMapping{}), 3);
    EXPECT_FALSE(stepOnAxis(10, StepDomain::Optimizer, StepAxis::Rollout, StepMapping{}));
    EXPECT_FALSE(stepOnAxis(1, StepDomain::Unknown, StepAxis::Rollout, four));

    const QStringList mixed = {"eval/arith", "train/loss"};
    const StepPlan ok = planStepAxis(mixed, StepAxis::Rollout, four);
    EXPECT_TRUE(ok.leftOut.isEmpty());
    EXPECT_TRUE(ok.xLabel.contains(QStringLiteral("÷ 4"))) << ok.xLabel.toStdString();
    // Unknown mapping: the train series is left out and named, never drawn as rollouts.
    const StepPlan cut = planStepAxis(mixed, StepAxis::Rollout, StepMapping{});
    EXPECT_EQ(cut.include, (std::vector<bool>{true, false}));
    ASSERT_EQ(cut.leftOut.size(), 1);
    EXPECT_TRUE(cut.leftOut[0].startsWith(QStringLiteral("train/loss")));
    EXPECT_TRUE(cut.xLabel.contains(QStringLiteral("not shown")));
    // One domain that cannot convert keeps its own axis and says so.
    const StepPlan own = planStepAxis({"train/loss"}, StepAxis::Rollout, StepMapping{});
    EXPECT_TRUE(own.ownDomain);
    EXPECT_EQ(own.axis, StepAxis::Optimizer);
    EXPECT_TRUE(own.xLabel.startsWith(QStringLiteral("optimizer step (not on the rollout axis")))
        << own.xLabel.toStdString();
}

TEST(StepAxes, RunPanelsAlignTrainAndEvalByTheRecipe) {
    QTemporaryDir dir;
    auto h = db::History::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(h) << h.error();
    ASSERT_TRUE(test::writeSyntheticRun(
        **h, smokeLikeRun("with-recipe", test::sourceRecipe("smoke-local.yaml"))));
    test::SyntheticRunSpec bare = smokeLikeRun("no-recipe", "");
    bare.startNs += 3600LL * 1000000000LL;
    ASSERT_TRUE(test::writeSyntheticRun(**h, bare));

    for (const char* id : {"with-recipe", "no-recipe"}) {
        auto snap = loadRunSnapshot(**h, id, 0, 0, 800, defaultModelCatalog());
        ASSERT_TRUE(snap) << snap.error();
        RunView view;
        view.resize(1200, 800);
        view.setSnapshot(std::make_shared<const RunSnapshot>(std::move(*snap)));
        MetricPanelsView& panels = *view.metricPanels();
        TimeSeriesPlot* train = panelTitled(panels, QStringLiteral("train · loss"));
        TimeSeriesPlot* eval = panelTitled(panels, QStringLiteral("eval · score"));
        ASSERT_NE(train, nullptr) << panels.titles().join(',').toStdString();
        ASSERT_NE(eval, nullptr);
        EXPECT_DOUBLE_EQ(maxX(*eval, "eval/arith"), 39);
        EXPECT_EQ(eval->xAxisLabel(), QStringLiteral("rollout"));
        if (std::string(id) == "with-recipe") {
            // Optimizer step 159 of 4 per rollout is rollout 39.75: the same x range as eval.
            EXPECT_DOUBLE_EQ(maxX(*train, "train/loss"), 159.0 / 4);
            EXPECT_EQ(train->xAxisLabel(), QStringLiteral("rollout (train/*: optimizer step ÷ 4)"));
            view.showMetric(QStringLiteral("train/loss"));
            EXPECT_DOUBLE_EQ(maxX(*view.metricsPlot(), "train/loss"), 159.0 / 4);
        } else {
            // No mapping: the train panel keeps optimizer steps and its label says why.
            EXPECT_DOUBLE_EQ(maxX(*train, "train/loss"), 159);
            EXPECT_TRUE(train->xAxisLabel().startsWith(
                QStringLiteral("optimizer step (not on the rollout axis: steps per rollout "
                               "unknown: no recipe snapshot")))
                << train->xAxisLabel().toStdString();
        }
    }
}

TEST(StepAxes, CompareAlignsRunsWithDifferentBatchShapes) {
    QTemporaryDir dir;
    auto h = db::History::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
    ASSERT_TRUE(h) << h.error();
    const std::string smoke = test::sourceRecipe("smoke-local.yaml");
    ASSERT_TRUE(test::writeSyntheticRun(**h, smokeLikeRun("four", smoke)));
    test::SyntheticRunSpec two = smokeLikeRun("two", withGbs(smoke, "  global_batch_size: 256\n"));
    two.startNs += 3600LL * 1000000000LL;
    ASSERT_TRUE(test::writeSyntheticRun(**h, two));
    test::SyntheticRunSpec none = smokeLikeRun("none", "");
    none.startNs += 7200LL * 1000000000LL;
    ASSERT_TRUE(test::writeSyntheticRun(**h, none));

    auto data = loadCompare(**h, {"four", "two", "none"});
    ASSERT_TRUE(data) << data.error();
    const CurveXY four = metricCurve(data->runs[0], "train/loss", CompareAxis::Rollout);
    const CurveXY twoC = metricCurve(data->runs[1], "train/loss", CompareAxis::Rollout);
    const CurveXY noneC = metricCurve(data->runs[2], "train/loss", CompareAxis::Rollout);
    ASSERT_EQ(four.x.size(), 160u);
    EXPECT_DOUBLE_EQ(four.x.back(), 159.0 / 4);
    EXPECT_DOUBLE_EQ(twoC.x.back(), 159.0 / 2);
    EXPECT_TRUE(noneC.x.empty());
    const QString label = compareXLabel(*data, "train/loss", CompareAxis::Rollout);
    EXPECT_TRUE(label.contains(QStringLiteral("four ÷ 4"))) << label.toStdString();
    EXPECT_TRUE(label.contains(QStringLiteral("two ÷ 2")));
    EXPECT_TRUE(label.contains(QStringLiteral("not shown (steps per rollout unknown): none")));
    // The step axis names its domain; eval is in rollout ids on every axis.
    EXPECT_EQ(compareXLabel(*data, "train/loss", CompareAxis::Step),
              QStringLiteral("optimizer step (train/*)"));
    EXPECT_EQ(compareXLabel(*data, "eval/arith", CompareAxis::Step), QStringLiteral("rollout id"));
    EXPECT_EQ(metricCurve(data->runs[2], "eval/arith", CompareAxis::Rollout).x.back(), 39);
}
