// issue 19: metrics mean what they are (kind and better direction), TensorBoard's debiased EMA
// (even and uneven steps) and the hover text, on real SQLite histories written through
// runplane_db and real widgets (offscreen). Expected values are computed by hand here.
#include <gtest/gtest.h>

#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "common/metrics/metric_kind.h"
#include "common/units/units.h"
#include "db/history/history.h"
#include "gui/models/compare_data.h"
#include "gui/models/compare_model.h"
#include "gui/models/history_queries.h"
#include "gui/models/metric_views.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/run_view.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using metrics::Direction;
using metrics::Kind;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

// Two runs whose eval/* holds a score (0.3-0.6), its response length (~4 tokens) and its eval
// time (seconds, 30.5 s the slowest), plus a KL term and a step time.
test::SyntheticRunSpec kindRun(const std::string& id, double scoreShift) {
    test::SyntheticRunSpec spec;
    spec.runId = id;
    spec.name = id;
    spec.seconds = 600;
    spec.gpusPerNode = 1;
    spec.standardEvals = false;
    spec.regressNodeB = false;
    spec.plantSpike = false;
    spec.extra = {
        {"eval/gsm8k",
         "",
         {{0, 0.30 + scoreShift},
          {10, 0.55 + scoreShift},
          {20, 0.60 + scoreShift},
          {30, 0.50 + scoreShift}}},
        {"eval/gsm8k/response_len/mean", "", {{0, 4.1}, {10, 3.9}, {20, 4.4}, {30, 4.0}}},
        {"eval/gsm8k/time", "", {{0, 12.0}, {10, 30.5}, {20, 9.25}, {30, 15.0}}},
        {"train/ppo_kl", "", {{0, 0.02}, {10, 0.001}, {20, 0.05}}},
        {"perf/step_time", "", {{0, 400}, {10, 380}, {20, 390}}},
    };
    return spec;
}

class MetricsAnalysis : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = new QTemporaryDir;
        s_path = s_dir->filePath(QStringLiteral("history.sqlite"));
        auto h = db::History::open(s_path.toStdString());
        ASSERT_TRUE(h) << h.error();
        ASSERT_TRUE(test::writeSyntheticRun(**h, kindRun("run-a", 0)));
        test::SyntheticRunSpec b = kindRun("run-b", 0.1);
        b.startNs += kHour;
        ASSERT_TRUE(test::writeSyntheticRun(**h, b));
    }
    static void TearDownTestSuite() {
        delete s_dir;
        s_dir = nullptr;
    }
    static QTemporaryDir* s_dir;
    static QString s_path;
};
QTemporaryDir* MetricsAnalysis::s_dir = nullptr;
QString MetricsAnalysis::s_path;

const MetricValue* find(const std::vector<MetricValue>& values, const char* name) {
    for (const MetricValue& m : values) {
        if (m.name == QLatin1String(name)) {
            return &m;
        }
    }
    return nullptr;
}

QString runplanectl() {
    return test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/backend/cli/runplanectl");
}

// `runplanectl runs --history HISTORY EXTRA...`, expected to exit 0: its standard output, and
// its standard error after it where asked.
QString ctlRuns(const QString& history, const QStringList& extra, bool withStderr = false) {
    QProcess p;
    p.start(runplanectl(),
            QStringList{QStringLiteral("runs"), QStringLiteral("--history"), history} + extra);
    EXPECT_TRUE(p.waitForFinished(30000));
    EXPECT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    QByteArray out = p.readAllStandardOutput();
    if (withStderr) {
        out += p.readAllStandardError();
    }
    return QString::fromUtf8(out);
}

}  // namespace

TEST(MetricKinds, ClassifiesSlimeAndMilesNames) {
    struct Case {
        const char* name;
        Kind kind;
        Direction direction;
    };
    // Names from slime/miles logs (docs/frameworks.md §5).
    const Case cases[] = {
        {"eval/gsm8k", Kind::Score, Direction::Higher},
        {"eval/aime-pass@4", Kind::Score, Direction::Higher},
        {"rollout/raw_reward", Kind::Score, Direction::Higher},
        {"passrate/pass@1", Kind::Score, Direction::Higher},
        {"eval/aime/response_len/mean", Kind::Tokens, Direction::None},
        {"rollout/response_len/max", Kind::Tokens, Direction::None},
        {"eval/aime/time", Kind::Time, Direction::Lower},
        {"perf/rollout_time", Kind::Time, Direction::Lower},
        {"perf/actor_train_time", Kind::Time, Direction::Lower},
        {"perf/wait_time_ratio", Kind::Ratio, Direction::None},
        {"eval/aime-truncated_ratio", Kind::Ratio, Direction::None},
        {"train/pg_clipfrac", Kind::Ratio, Direction::None},
        {"perf/tokens_per_gpu_per_sec", Kind::Rate, Direction::Higher},
        {"perf/actor_train_tok_per_s", Kind::Rate, Direction::Higher},
        {"train/loss", Kind::Loss, Direction::Lower},
        {"train/kl_loss", Kind::Loss, Direction::Lower},
        {"train/ppo_kl", Kind::Loss, Direction::Lower},
        {"train/train_rollout_logprob_abs_diff", Kind::Loss, Direction::Lower},
        {"train/entropy_loss", Kind::Loss, Direction::Lower},
        {"rollout/entropy", Kind::Loss, Direction::None},
        {"rollout/zero_std/count_0", Kind::Count, Direction::None},
        {"train/step", Kind::Count, Direction::None},
        {"train/global_batch_size", Kind::Count, Direction::None},
        {"host.mem.used_bytes", Kind::Bytes, Direction::Lower},
        {"train/grad_norm", Kind::Other, Direction::None},
    };
    for (const Case& c : cases) {
        const metrics::MetricInfo info = metrics::classify(c.name);
        EXPECT_EQ(info.kind, c.kind) << c.name << " is " << metrics::kindName(info.kind);
        EXPECT_EQ(info.direction, c.direction) << c.name;
    }
    EXPECT_EQ(metrics::classify("eval/x", "bytes").kind, Kind::Bytes);  // the unit wins
    EXPECT_EQ(metrics::groupOf("eval/gsm8k/time"), "eval");
    EXPECT_EQ(metrics::groupOf("host.mem.used_bytes"), "host");
    EXPECT_EQ(metrics::primaryEval(
                  {"eval/gsm8k/time", "eval/math", "eval/aime/response_len/mean", "eval/gsm8k"}),
              "eval/gsm8k");
    EXPECT_EQ(metrics::primaryEval({"eval/gsm8k/time", "train/loss"}), "");
}

TEST_F(MetricsAnalysis, BestFollowsEachMetricsDirection) {
    auto h = db::History::open(s_path.toStdString());
    ASSERT_TRUE(h) << h.error();
    auto values = loadMetricValues(**h, RunId{"run-a"}, "");
    ASSERT_TRUE(values) << values.error();
    const MetricValue* score = find(*values, "eval/gsm8k");
    const MetricValue* time = find(*values, "eval/gsm8k/time");
    const MetricValue* tokens = find(*values, "eval/gsm8k/response_len/mean");
    const MetricValue* kl = find(*values, "train/ppo_kl");
    ASSERT_TRUE(score && time && tokens && kl);
    EXPECT_DOUBLE_EQ(score->best, 0.60);  // the highest score
    EXPECT_EQ(score->bestStep, 20);
    EXPECT_DOUBLE_EQ(score->last, 0.50);
    EXPECT_DOUBLE_EQ(time->best, 9.25);  // the fastest eval, not the slowest (30.5 s)
    EXPECT_EQ(time->bestStep, 20);
    EXPECT_DOUBLE_EQ(kl->best, 0.001);  // no "loss" in the name, still lower is better
    EXPECT_EQ(kl->bestStep, 10);
    EXPECT_FALSE(tokens->hasBest());  // a response length has no better direction
    EXPECT_TRUE(bestText(*tokens).contains(QStringLiteral("tokens")));
    EXPECT_EQ(bestText(*time), QStringLiteral("9.2500 @ step 20"));
    ASSERT_NE(primaryMetric(*values), nullptr);
    EXPECT_EQ(primaryMetric(*values)->name, QStringLiteral("eval/gsm8k"));

    // The Runs list shows the primary eval only, best by direction.
    auto rows = loadRunList(**h);
    ASSERT_TRUE(rows) << rows.error();
    RunListModel model;
    model.setRuns(std::move(*rows));
    const int row = model.indexOf(QStringLiteral("run-a"));
    ASSERT_GE(row, 0);
    const QString eval = model.index(row, RunListModel::EvalColumn).data().toString();
    EXPECT_EQ(eval, QStringLiteral("gsm8k 0.500 / 0.600"));
    const QString tip = model.index(row, RunListModel::EvalColumn).data(Qt::ToolTipRole).toString();
    EXPECT_TRUE(tip.contains(QStringLiteral("eval/gsm8k/time (time)"))) << tip.toStdString();
}

TEST_F(MetricsAnalysis, EvalPlotShowsScoresOnlyAndPanelsSplitByKind) {
    auto h = db::History::open(s_path.toStdString());
    ASSERT_TRUE(h) << h.error();
    auto snap = loadRunSnapshot(**h, QStringLiteral("run-a"), 0, 0, 1000);
    ASSERT_TRUE(snap) << snap.error();
    RunView view;
    view.resize(1400, 900);
    view.show();
    view.setSnapshot(std::make_shared<const RunSnapshot>(std::move(*snap)));
    view.showMetric(QStringLiteral("eval/*"));
    view.metricsPlot()->flush();
    // Only eval/gsm8k: the ~4-token length and the 9-30 s eval time would flatten it.
    EXPECT_EQ(view.metricsPlot()->seriesCount(), 1);
    const auto [lo, hi] = view.metricsPlot()->yRange();
    EXPECT_GE(lo, 0.2);
    EXPECT_LE(hi, 0.7);

    const QStringList titles = view.metricPanels()->titles();
    EXPECT_EQ(titles.value(0), QStringLiteral("eval · score"));
    for (const char* t : {"eval · tokens", "eval · time", "train · loss", "perf · time"}) {
        EXPECT_TRUE(titles.contains(QString::fromUtf8(t)))
            << t << " in " << titles.join(',').toStdString();
    }
    for (int i = 0; i < view.metricPanels()->panelCount(); ++i) {
        view.metricPanels()->panel(i)->flush();
        EXPECT_EQ(view.metricPanels()->panel(i)->seriesCount(), 1) << titles[i].toStdString();
    }
}

TEST_F(MetricsAnalysis, CompareBestRowFollowsDirection) {
    auto h = db::History::open(s_path.toStdString());
    ASSERT_TRUE(h) << h.error();
    auto data = loadCompare(**h, {QStringLiteral("run-a"), QStringLiteral("run-b")});
    ASSERT_TRUE(data) << data.error();
    EXPECT_EQ(data->metricNames.value(0), QStringLiteral("eval/gsm8k"));  // the score first
    CompareModel model;
    model.setData(*data, QStringLiteral("eval/gsm8k/time"), {Qt::red, Qt::blue});
    bool seen = false;
    for (int r = 0; r < model.summaryRowCount(); ++r) {
        const QString label = model.index(r, 0).data().toString();
        if (label.contains(QStringLiteral("best"))) {
            seen = true;
            EXPECT_TRUE(label.contains(QStringLiteral("lower is better"))) << label.toStdString();
            EXPECT_EQ(model.index(r, 1).data().toString(), QStringLiteral("9.2500 (20)"));
        }
    }
    EXPECT_TRUE(seen);
}

TEST(Smoothing, DebiasedEmaEvenStepsByHand) {
    // w = 0.5, y = 1, 2, 4: a = 0.5, 1.25, 2.625; 1 - w^n = 0.5, 0.75, 0.875.
    const auto s = emaSmooth({0, 1, 2}, {1, 2, 4}, 0.5);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_DOUBLE_EQ(s[0], 1.0);
    EXPECT_DOUBLE_EQ(s[1], 1.25 / 0.75);
    EXPECT_DOUBLE_EQ(s[2], 2.625 / 0.875);
    // Even spacing of 10 gives the same numbers as the step-free TensorBoard form.
    EXPECT_EQ(emaSmooth({0, 10, 20}, {1, 2, 4}, 0.5), emaSmooth({1, 2, 4}, 0.5));
    // The first value is not pulled towards 0 (the bias a plain EMA has).
    EXPECT_DOUBLE_EQ(emaSmooth({5, 6}, 0.9)[0], 5.0);
    // A constant series and non-finite points pass through.
    EXPECT_EQ(emaSmooth({3, 3, 3}, 0.9), (std::vector<double>{3, 3, 3}));
    const auto withNan = emaSmooth({1, NAN, 3}, 0.5);
    EXPECT_TRUE(std::isnan(withNan[1]));
    EXPECT_DOUBLE_EQ(withNan[2], (0.25 + 1.5) / 0.75);
}

TEST(Smoothing, DebiasedEmaUnevenStepsByHand) {
    // x = 0, 1, 3: gaps 1 and 2, median spacing (lower median) 1. The third point is two
    // spacings on: w_3 = 0.5^2 = 0.25. a = 0.5, 1.25, 0.25 * 1.25 + 0.75 * 4 = 3.3125;
    // prod w = 0.5, 0.25, 0.0625.
    const auto s = emaSmooth({0, 1, 3}, {1, 2, 4}, 0.5);
    EXPECT_DOUBLE_EQ(s[0], 1.0);
    EXPECT_DOUBLE_EQ(s[1], 1.25 / 0.75);
    EXPECT_DOUBLE_EQ(s[2], 3.3125 / 0.9375);
    // A long gap forgets more of the past than a per-point EMA would.
    EXPECT_GT(s[2], emaSmooth({1, 2, 4}, 0.5)[2]);
}

TEST(Hover, ShowsStepRawAndSmoothedOfEverySeries) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setXAxisKind(XAxisKind::Number);
    plot.setAxisLabels(QStringLiteral("step"), QStringLiteral("score"));
    PlotSeries a{QStringLiteral("run-a"), Qt::red, {0, 10, 20}, {0.30, 0.40, 0.50}, {}, {}};
    a.raw = {0.30, 0.45, 0.55};
    PlotSeries b{QStringLiteral("run-b"), Qt::blue, {0, 10, 20}, {0.60, 0.61, 0.62}, {}, {}};
    PlotSeries faint{
        QStringLiteral("run-a (raw)"), Qt::red, {0, 10, 20}, {0.3, 0.45, 0.55}, {}, {}};
    faint.faint = true;
    plot.setSeries({faint, a, b});
    plot.flush();
    const QString text = plot.hoverText(11);
    EXPECT_TRUE(text.startsWith(QStringLiteral("step 11"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("run-a @ 10: smoothed 0.4, raw 0.45")))
        << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("run-b @ 10: 0.61"))) << text.toStdString();
    EXPECT_FALSE(text.contains(QStringLiteral("(raw)")));
}

TEST_F(MetricsAnalysis, ComparePlotHoverHasBothRuns) {
    ComparePage page(s_path);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(test::waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-a"), QStringLiteral("run-b")}));
    ASSERT_TRUE(test::waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000));
    page.setMetric(QStringLiteral("eval/gsm8k"));
    page.setSmoothing(0.5);
    page.plot()->flush();
    const QString text = page.plot()->hoverText(10);
    // run-a at step 10: raw 0.55; smoothed (0.5*0.15 + 0.5*0.55) / 0.75 over the 10-step spacing.
    const double smoothedA = (0.5 * 0.5 * 0.30 + 0.5 * 0.55) / 0.75;
    EXPECT_TRUE(text.contains(QStringLiteral("run-a @ 10: smoothed %1, raw 0.55")
                                  .arg(QString::number(smoothedA, 'g', 4))))
        << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("run-b @ 10: smoothed"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("raw 0.65"))) << text.toStdString();
}

TEST_F(MetricsAnalysis, CliRunsShowsThePrimaryEval) {
    auto run = [&](const QStringList& extra) { return ctlRuns(s_path, extra); };
    const QString table = run({});
    EXPECT_TRUE(table.contains(QStringLiteral("PRIMARY EVAL"))) << table.toStdString();
    EXPECT_FALSE(table.contains(QStringLiteral("response_len"))) << table.toStdString();
    // run-b: scores 0.4 .. 0.7, best 0.700 at step 20, last 0.600.
    EXPECT_TRUE(table.contains(QStringLiteral("eval/gsm8k best 0.700@20 last 0.600")))
        << table.toStdString();
    const QString json = run({QStringLiteral("--json")});
    EXPECT_TRUE(json.contains(QStringLiteral("\"primary_eval\": \"eval/gsm8k\"")))
        << json.toStdString();
    EXPECT_TRUE(json.contains(QStringLiteral("\"kind\": \"tokens\""))) << json.toStdString();
}

TEST(CliRuns, LongCellsAreCutUnlessWide) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    const std::string longName(70, 'n');
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec spec = kindRun("run-long", 0);
        spec.name = longName;
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    }
    const QString ctl = runplanectl();
    auto run = [&](const QStringList& extra) { return ctlRuns(path, extra, true); };
    const QString cut = run({});
    EXPECT_FALSE(cut.contains(QString::fromStdString(longName)));
    EXPECT_TRUE(cut.contains(QString::fromStdString(std::string(37, 'n') + "...")))
        << cut.toStdString();
    EXPECT_TRUE(run({QStringLiteral("-o"), QStringLiteral("wide")})
                    .contains(QString::fromStdString(longName)));
    QProcess bad;
    bad.start(ctl, {QStringLiteral("runs"), QStringLiteral("--history"), path, QStringLiteral("-o"),
                    QStringLiteral("narrow")});
    ASSERT_TRUE(bad.waitForFinished(30000));
    EXPECT_NE(bad.exitCode(), 0);
    const QString err = QString::fromUtf8(bad.readAllStandardError() + bad.readAllStandardOutput());
    EXPECT_TRUE(err.contains(QStringLiteral("--output"))) << err.toStdString();  // names the flag
}

// A run on several nodes shows its highest node's peak and the node count in the table (a
// list of every node's peak, cut at the cell width, showed the first nodes instead); the JSON
// keeps every node's peak.
TEST(CliRuns, PeakColumnShowsTheHighestNodeAndTheCount) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec spec = kindRun("run-3", 0);
        spec.nodes = {"node-a", "node-b", "node-c"};
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    }
    auto run = [&](const QStringList& extra) { return ctlRuns(path, extra).toStdString(); };
    const auto list = nlohmann::json::parse(run({QStringLiteral("--json")}));
    ASSERT_EQ(list.size(), 1u);
    ASSERT_EQ(list[0]["peaks"].size(), 3u);
    double highest = 0;
    for (const auto& p : list[0]["peaks"]) {
        highest = std::max(highest, p["peak"].get<double>());
    }
    const std::string table = run({});
    const std::string expected = units::formatBytes(highest) + " (max of 3 nodes)";
    EXPECT_NE(table.find(expected), std::string::npos) << expected << "\n" << table;
}

// The recipe snapshot's analysis section: a primary metric outside eval/, and kind overrides
// that change which eval/* series is the score and which way is better.
TEST(CliRuns, RecipeAnalysisDecidesThePrimaryMetric) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    const std::string head = "schema_version: 1\nmodel: qwen3-4B\nbatch: {rollout_batch_size: 1}\n";
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec p = kindRun("run-p", 0);
        p.recipeYaml = head + "analysis:\n  primary_metric: train/ppo_kl\n";
        ASSERT_TRUE(test::writeSyntheticRun(**h, p));
        test::SyntheticRunSpec k = kindRun("run-k", 0);
        k.startNs += kHour;
        k.recipeYaml = head +
                       "analysis:\n  metric_kinds:\n    eval/gsm8k: count\n"
                       "    eval/gsm8k/time: {kind: score, direction: lower}\n";
        ASSERT_TRUE(test::writeSyntheticRun(**h, k));
    }
    auto run = [&](const QStringList& extra) { return ctlRuns(path, extra); };
    const QString table = run({QStringLiteral("-o"), QStringLiteral("wide")});
    // run-p: train/ppo_kl is a KL term (lower is better): best 0.001 at step 10, last 0.05.
    EXPECT_TRUE(table.contains(QStringLiteral("train/ppo_kl best 0.001@10 last 0.050")))
        << table.toStdString();
    // run-k: eval/gsm8k is a count now; the score is eval/gsm8k/time, lower is better.
    EXPECT_TRUE(table.contains(QStringLiteral("eval/gsm8k/time best 9.250@20 last 15.000")))
        << table.toStdString();
    // Peaks in decimal GB, as the seed and the GUI (never GiB).
    EXPECT_TRUE(table.contains(QStringLiteral(" GB"))) << table.toStdString();
    EXPECT_FALSE(table.contains(QStringLiteral("GiB"))) << table.toStdString();
    const QString json = run({QStringLiteral("--json")});
    EXPECT_TRUE(json.contains(QStringLiteral("\"primary_eval\": \"train/ppo_kl\"")))
        << json.toStdString();
    EXPECT_TRUE(json.contains(QStringLiteral("\"primary_eval\": \"eval/gsm8k/time\"")))
        << json.toStdString();
    EXPECT_TRUE(json.contains(QStringLiteral("\"kind\": \"count\""))) << json.toStdString();

    // The GUI's Runs table reads the same settings.
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    auto rows = loadRunList(**h);
    ASSERT_TRUE(rows) << rows.error();
    RunListModel model;
    model.setRuns(*rows);
    QStringList evals;
    for (int i = 0; i < model.rowCount(); ++i) {
        evals << model.index(i, RunListModel::EvalColumn).data().toString();
    }
    EXPECT_TRUE(evals.contains(QStringLiteral("train/ppo_kl 0.050 / 0.001")))
        << evals.join(QStringLiteral(" | ")).toStdString();
    EXPECT_TRUE(evals.contains(QStringLiteral("gsm8k/time 15.000 / 9.250")))
        << evals.join(QStringLiteral(" | ")).toStdString();
}

// The recipe's overrides reach the run's series: the eval plot and the automatic panels.
TEST(MetricKinds, OverridesReachTheEvalPlotAndThePanels) {
    std::vector<PointSeries> series(3);
    series[0].name = QStringLiteral("eval/gsm8k");
    series[1].name = QStringLiteral("eval/gsm8k/time");
    series[2].name = QStringLiteral("train/loss");
    for (PointSeries& s : series) {
        s.t = {0, 1};
        s.value = {1, 2};
        s.step = {0, 1};
    }
    ASSERT_EQ(evalScoreSeries(series).size(), 1u);  // the table: eval/gsm8k only
    applyKindOverrides(series, {{"eval/gsm8k", Kind::Count, {}},
                                {"eval/gsm8k/time", Kind::Score, Direction::Lower}});
    EXPECT_TRUE(series[0].info.has_value());
    EXPECT_FALSE(series[2].info.has_value());  // no override matches: the table decides
    const auto scores = evalScoreSeries(series);
    ASSERT_EQ(scores.size(), 1u);
    EXPECT_EQ(scores[0]->name, QStringLiteral("eval/gsm8k/time"));
    EXPECT_EQ(metricInfo(series[1]).direction, Direction::Lower);
    bool countPanel = false;
    for (const MetricPanel& p : metricPanels(series)) {
        if (p.kind == Kind::Count) {
            countPanel = p.names.contains(QStringLiteral("eval/gsm8k"));
        }
    }
    EXPECT_TRUE(countPanel);
}

// The pickers (Compare's metric combo) follow the recipes' kinds: an override that makes an
// eval series a score moves it up, one that makes a score a count moves it down, and the
// primary metric leads.
TEST(MetricKinds, PickerOrderFollowsOverridesAndThePrimaryMetric) {
    const QStringList names = {QStringLiteral("train/loss"), QStringLiteral("eval/arith"),
                               QStringLiteral("eval/arith/time"), QStringLiteral("eval/gsm8k"),
                               QStringLiteral("eval/custom_metric")};
    const QStringList plain = runplane::gui::orderMetricNames(names);
    EXPECT_EQ(plain.front(), QStringLiteral("eval/arith"));
    EXPECT_LT(plain.indexOf(QStringLiteral("eval/gsm8k")),
              plain.indexOf(QStringLiteral("eval/arith/time")));
    const std::map<QString, bool> kinds = {{QStringLiteral("eval/custom_metric"), true},
                                           {QStringLiteral("eval/arith"), false}};
    const QStringList overridden =
        runplane::gui::orderMetricNames(names, kinds, QStringLiteral("eval/gsm8k"));
    EXPECT_EQ(overridden.at(0), QStringLiteral("eval/gsm8k")) << "the primary metric leads";
    EXPECT_EQ(overridden.at(1), QStringLiteral("eval/custom_metric")) << "made a score";
    EXPECT_GT(overridden.indexOf(QStringLiteral("eval/arith")), 1) << "no longer a score";
    EXPECT_EQ(overridden.size(), names.size());
}
