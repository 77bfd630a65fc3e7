// issue 46: a run's colour on the Compare page follows its id, not the order the runs were
// selected in (the curves' builder the Compare page and its report use).
#include <gtest/gtest.h>

#include "gui/models/compare_data.h"
#include "gui/pages/metric_panels.h"

using namespace runplane::gui;

namespace {

CompareRun runOf(const QString& id) {
    CompareRun r;
    r.run.id = id;
    r.run.name = id;
    PointSeries s;
    s.runId = id;
    s.name = QStringLiteral("eval/gsm8k");
    s.t = {1, 2, 3};
    s.value = {0.5, 0.6, 0.7};
    s.step = {10, 20, 30};
    r.metrics.push_back(s);
    return r;
}

}  // namespace

TEST(CompareColors, ARunKeepsItsColourWhenTheSelectionOrderChanges) {
    CompareData ab;
    ab.runs = {runOf(QStringLiteral("run-a")), runOf(QStringLiteral("run-b"))};
    CompareData ba;
    ba.runs = {runOf(QStringLiteral("run-b")), runOf(QStringLiteral("run-a"))};
    std::vector<QColor> cab;
    std::vector<QColor> cba;
    compareSeries(ab, QStringLiteral("eval/gsm8k"), CompareAxis::Step, 0, &cab);
    compareSeries(ba, QStringLiteral("eval/gsm8k"), CompareAxis::Step, 0, &cba);
    ASSERT_EQ(cab.size(), 2U);
    ASSERT_EQ(cba.size(), 2U);
    EXPECT_EQ(cab[0], cba[1]) << "run-a";
    EXPECT_EQ(cab[1], cba[0]) << "run-b";
    EXPECT_NE(cab[0], cab[1]);
    // A third run joining the selection leaves the first two as they were.
    CompareData abc;
    abc.runs = {runOf(QStringLiteral("run-c")), runOf(QStringLiteral("run-a")),
                runOf(QStringLiteral("run-b"))};
    std::vector<QColor> cabc;
    compareSeries(abc, QStringLiteral("eval/gsm8k"), CompareAxis::Step, 0, &cabc);
    EXPECT_EQ(cabc[1], cab[0]);
    EXPECT_EQ(cabc[2], cab[1]);
}
