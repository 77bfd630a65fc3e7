// issue 49: lineage on the Compare page's data layer. Three runs with known eval values in a real
// SQLite history; `runplanectl runs parent` (the real CLI) records that "resumed" resumed "base"
// at step 20 and "forked" forked "resumed" at step 30; loadCompare's curves then continue their
// ancestors' points before the branch, with the branch marks listed (docs/gui.md "Lineage").
#include <gtest/gtest.h>

#include <QProcess>

#include "db/history/history.h"
#include "gui/models/compare_data.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

int runplanectl(const QStringList& args, QString* out) {
    QProcess p;
    p.setProgram(test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/backend/cli/runplanectl"));
    p.setArguments(args);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start();
    p.waitForFinished(30000);
    *out = QString::fromUtf8(p.readAll());
    return p.exitCode();
}

std::vector<std::pair<double, double>> stepValues(const CompareRun& run, const QString& metric) {
    std::vector<std::pair<double, double>> out;
    for (const PointSeries& s : run.metrics) {
        if (s.name == metric) {
            for (std::size_t i = 0; i < s.t.size(); ++i) {
                out.emplace_back(s.step[i], s.value[i]);
            }
        }
    }
    return out;
}

TEST(CompareLineage, ChildCurvesContinueTheirAncestors) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(test::writeLineageRuns(path, ""));
    const QString h = QStringLiteral("--history");
    QString out;
    ASSERT_EQ(runplanectl({QStringLiteral("runs"), QStringLiteral("parent"),
                           QStringLiteral("resumed"), QStringLiteral("base@20"), h, path},
                          &out),
              0)
        << out.toStdString();
    ASSERT_EQ(
        runplanectl({QStringLiteral("runs"), QStringLiteral("parent"), QStringLiteral("forked"),
                     QStringLiteral("resumed@30"), QStringLiteral("--fork"), h, path},
                    &out),
        0)
        << out.toStdString();

    auto history = db::History::open(path.toStdString());
    ASSERT_TRUE(history) << history.error();
    auto data = loadCompare(
        **history, {QStringLiteral("base"), QStringLiteral("resumed"), QStringLiteral("forked")});
    ASSERT_TRUE(data) << data.error();
    const QString m = QStringLiteral("eval/score");
    using SV = std::vector<std::pair<double, double>>;
    EXPECT_EQ(stepValues(data->runs[0], m), (SV{{0, 0.5}, {10, 0.625}, {20, 0.75}, {30, 0.25}}));
    EXPECT_TRUE(data->runs[0].lineage.empty());
    EXPECT_EQ(stepValues(data->runs[1], m),
              (SV{{0, 0.5}, {10, 0.625}, {20, 0.75}, {21, 0.8125}, {30, 0.875}, {40, 0.9375}}));
    ASSERT_EQ(data->runs[1].lineage.size(), 1u);
    EXPECT_EQ(data->runs[1].lineage[0].parentId, QStringLiteral("base"));
    EXPECT_EQ(data->runs[1].lineage[0].kind, QStringLiteral("resume"));
    EXPECT_EQ(data->runs[1].lineage[0].step, 20);
    // forked: base up to 20, resumed from 21 to its fork point 30, then its own.
    EXPECT_EQ(
        stepValues(data->runs[2], m),
        (SV{{0, 0.5}, {10, 0.625}, {20, 0.75}, {21, 0.8125}, {30, 0.875}, {31, 0.375}, {40, 0.5}}));
    ASSERT_EQ(data->runs[2].lineage.size(), 2u);
    EXPECT_EQ(data->runs[2].lineage[0].parentId, QStringLiteral("resumed"));
    EXPECT_EQ(data->runs[2].lineage[1].parentId, QStringLiteral("base"));
    // The curve by step is one line through the ancestors' points.
    const CurveXY c = metricCurve(data->runs[2], m, CompareAxis::Step);
    EXPECT_EQ(c.x, (std::vector<double>{0, 10, 20, 21, 30, 31, 40}));

    // Cleared: the run's own points only.
    ASSERT_EQ(runplanectl({QStringLiteral("runs"), QStringLiteral("parent"),
                           QStringLiteral("forked"), QStringLiteral("--clear"), h, path},
                          &out),
              0)
        << out.toStdString();
    auto again = loadCompare(**history, {QStringLiteral("base"), QStringLiteral("forked")});
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(stepValues(again->runs[1], m), (SV{{31, 0.375}, {40, 0.5}}));
}

}  // namespace
