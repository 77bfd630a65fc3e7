// issue 49: the Compare page's baseline. Two runs with known eval values written to a real
// SQLite history; the table's deltas (last, best, at a step) and the difference curve are
// checked exactly (values chosen to be exact in binary).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/models/compare_baseline.h"
#include "gui/models/compare_model.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;
const QString kMetric = QStringLiteral("eval/score");

// base: steps 0,10,20 = 0.5, 0.75, 0.625 (last 0.625, best 0.75).
// other: steps 0,10,15,20 = 0.25, 0.875, 0.9375, 1.0 (last 1.0, best 1.0).
void writeRuns(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    test::SyntheticRunSpec base;
    base.runId = "run-base";
    base.name = "base";
    base.seconds = 600;
    base.standardEvals = false;
    base.plantSpike = false;
    base.regressNodeB = false;
    base.extra = {{"eval/score", "", {{0, 0.5}, {10, 0.75}, {20, 0.625}}}};
    ASSERT_TRUE(test::writeSyntheticRun(**h, base));
    test::SyntheticRunSpec other = base;
    other.runId = "run-other";
    other.name = "other";
    other.startNs += kHour;
    other.extra = {{"eval/score", "", {{0, 0.25}, {10, 0.875}, {15, 0.9375}, {20, 1.0}}}};
    ASSERT_TRUE(test::writeSyntheticRun(**h, other));
}

int columnOf(const CompareModel& m, const QString& startsWith) {
    for (int c = 1; c < m.columnCount(); ++c) {
        if (m.headerData(c, Qt::Horizontal).toString().startsWith(startsWith)) {
            return c;
        }
    }
    return -1;
}

int rowOf(const CompareModel& m, const QString& field) {
    for (int r = 0; r < m.rowCount(); ++r) {
        if (m.index(r, 0).data().toString() == field) {
            return r;
        }
    }
    return -1;
}

}  // namespace

TEST(CompareBaseline, TableShowsExactDeltasAndDifferenceCurve) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    writeRuns(path);
    if (HasFatalFailure()) {
        return;
    }
    ComparePage page(path);
    page.resize(1400, 900);
    page.show();
    QAbstractItemModelTester tester(page.compareModel(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-base"), QStringLiteral("run-other")}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000));
    page.setAxis(CompareAxis::Step);
    page.setMetric(kMetric);
    page.setSmoothing(0);
    const CompareModel& m = *page.compareModel();
    // No baseline yet: no delta rows.
    EXPECT_EQ(rowOf(m, QStringLiteral("Δ eval/score last vs baseline")), -1);

    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDeltaStep(10);
    EXPECT_EQ(page.baselineRunId(), QStringLiteral("run-base"));
    const int baseCol = columnOf(m, QStringLiteral("base"));
    const int otherCol = columnOf(m, QStringLiteral("other"));
    ASSERT_GT(baseCol, 0);
    ASSERT_GT(otherCol, 0);
    EXPECT_EQ(m.headerData(baseCol, Qt::Horizontal).toString(), QStringLiteral("base (baseline)"));
    EXPECT_EQ(m.headerData(otherCol, Qt::Horizontal).toString(), QStringLiteral("other"));

    const int lastRow = rowOf(m, QStringLiteral("Δ eval/score last vs baseline"));
    const int bestRow = rowOf(m, QStringLiteral("Δ eval/score best vs baseline"));
    const int stepRow = rowOf(m, QStringLiteral("Δ eval/score at step 10 vs baseline"));
    ASSERT_GE(lastRow, 0);
    ASSERT_GE(bestRow, 0);
    ASSERT_GE(stepRow, 0);
    EXPECT_LT(stepRow, m.summaryRowCount());  // summary rows, above the recipe diff
    // other − base: last 1.0 − 0.625, best 1.0 − 0.75, at step 10: 0.875 − 0.75.
    EXPECT_EQ(m.index(lastRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.375);
    EXPECT_EQ(m.index(bestRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.25);
    EXPECT_EQ(m.index(stepRow, otherCol).data(CompareModel::DeltaRole).toDouble(), 0.125);
    EXPECT_EQ(m.index(lastRow, otherCol).data().toString(), QStringLiteral("+0.3750"));
    EXPECT_EQ(m.index(bestRow, otherCol).data().toString(), QStringLiteral("+0.2500"));
    EXPECT_EQ(m.index(stepRow, otherCol).data().toString(), QStringLiteral("+0.1250"));
    EXPECT_EQ(m.index(lastRow, baseCol).data().toString(), QStringLiteral("baseline"));

    // A step only one run has: no delta.
    page.setDeltaStep(15);
    const int step15 = rowOf(m, QStringLiteral("Δ eval/score at step 15 vs baseline"));
    ASSERT_GE(step15, 0);
    EXPECT_FALSE(m.index(step15, otherCol).data(CompareModel::DeltaRole).isValid());
    EXPECT_EQ(m.index(step15, otherCol).data().toString(), QStringLiteral("–"));

    // The other run as baseline: the signs flip.
    page.setBaselineRun(QStringLiteral("run-other"));
    const int lastRow2 = rowOf(m, QStringLiteral("Δ eval/score last vs baseline"));
    ASSERT_GE(lastRow2, 0);
    EXPECT_EQ(m.index(lastRow2, columnOf(m, QStringLiteral("base")))
                  .data(CompareModel::DeltaRole)
                  .toDouble(),
              -0.375);
    EXPECT_EQ(m.index(lastRow2, columnOf(m, QStringLiteral("base"))).data().toString(),
              QStringLiteral("−0.3750"));

    // Difference curves against run-base: other − base at other's steps; step 15 against the
    // baseline interpolated between 0.75 (10) and 0.625 (20) = 0.6875.
    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDifferenceCurves(true);
    page.plot()->flush();
    const std::vector<PlotSeries>& series = page.plot()->series();
    const PlotSeries* diff = nullptr;
    for (const PlotSeries& s : series) {
        if (s.name == QStringLiteral("other − baseline")) {
            diff = &s;
        }
    }
    ASSERT_NE(diff, nullptr);
    EXPECT_EQ(diff->t, (std::vector<double>{0, 10, 15, 20}));
    EXPECT_EQ(diff->value, (std::vector<double>{-0.25, 0.125, 0.25, 0.375}));
    EXPECT_EQ(series.size(), 2u);  // the baseline's zero line and the other run's difference

    // Clearing the baseline removes the delta rows and the difference curves.
    page.setBaselineRun(QString());
    EXPECT_EQ(rowOf(m, QStringLiteral("Δ eval/score last vs baseline")), -1);
    page.plot()->flush();
    for (const PlotSeries& s : page.plot()->series()) {
        EXPECT_FALSE(s.name.endsWith(QStringLiteral("baseline"))) << s.name.toStdString();
    }
    test::pump(200);
    page.setBaselineRun(QStringLiteral("run-base"));
    page.setDifferenceCurves(false);
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare_baseline.png"))));
}
