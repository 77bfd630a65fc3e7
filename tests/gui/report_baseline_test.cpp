// issue 49: `runplane --report DIR --runs A,B,C --baseline B` (and `runplanectl compare
// --baseline`): the report's "Deltas vs baseline" is against the named run, with exact deltas
// (values exact in binary), and its "Lineage" section names what `runs parent` recorded. Real
// history file, the real runplane and runplanectl executables, no display.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/app/command_line.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/report_process.h"

using namespace runplane;
using namespace runplane::gui;

TEST(ReportBaseline, DeltasAreAgainstTheNamedRun) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    // a: 0 0.5, 20 0.75;  b: 0 0.25, 20 1.0;  c: 30 0.625.
    ASSERT_NO_FATAL_FAILURE(test::writeRuns(
        history, {test::evalRun("run-a", "a", 0, {{"eval/score", "", {{0, 0.5}, {20, 0.75}}}}, 120),
                  test::evalRun("run-b", "b", 1, {{"eval/score", "", {{0, 0.25}, {20, 1.0}}}}, 120),
                  test::evalRun("run-c", "c", 2, {{"eval/score", "", {{30, 0.625}}}}, 120)}));
    const QString h = QStringLiteral("--history");
    // run-c forked run-a at 20: its curve starts with a's points (0.5, 0.75), then its 0.625.
    auto [pc, po] = test::runHeadless(
        QStringLiteral("/backend/cli/runplanectl"),
        {QStringLiteral("runs"), QStringLiteral("parent"), QStringLiteral("run-c"),
         QStringLiteral("run-a@20"), QStringLiteral("--fork"), h, history});
    ASSERT_EQ(pc, 0) << po.toStdString();
    const QString out = dir.filePath(QStringLiteral("cmp"));
    auto [code, output] =
        test::runHeadless(QStringLiteral("/gui/app/runplane"),
                          {h, history, QStringLiteral("--report"), out, QStringLiteral("--runs"),
                           QStringLiteral("run-a,run-b,run-c"), QStringLiteral("--baseline"),
                           QStringLiteral("run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString md = test::readText(out + QStringLiteral("/report.md"));
    EXPECT_TRUE(md.contains(QStringLiteral("Baseline: b (run-b)"))) << md.toStdString();
    // last: a 0.75 - 1.0, c 0.625 - 1.0; best (score: higher): a 0.75 - 1.0, c 0.625 - 1.0 (a
    // run's last and best are of its own points; its ancestors' show in its curve only).
    EXPECT_TRUE(md.contains(QStringLiteral("| eval/score | a | −0.2500 | −0.2500 |")))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("| eval/score | c | −0.3750 | −0.3750 |")))
        << md.toStdString();
    // The baseline has no row of its own in the deltas (it has one in the eval table above).
    const QString deltas = md.mid(md.indexOf(QStringLiteral("## Deltas vs baseline")));
    EXPECT_FALSE(deltas.left(deltas.indexOf(QStringLiteral("\n## "), 3))
                     .contains(QStringLiteral("| eval/score | b |")))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("## Lineage"))) << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("| run-c | run-a | fork | 20 |"))) << md.toStdString();

    // Without --baseline: the first run listed.
    const QString out2 = dir.filePath(QStringLiteral("cmp2"));
    std::tie(code, output) =
        test::runHeadless(QStringLiteral("/gui/app/runplane"),
                          {h, history, QStringLiteral("--report"), out2, QStringLiteral("--runs"),
                           QStringLiteral("run-a,run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString md2 = test::readText(out2 + QStringLiteral("/report.md"));
    EXPECT_TRUE(md2.contains(QStringLiteral("| eval/score | b | +0.2500 | +0.2500 |")))
        << md2.toStdString();
    EXPECT_FALSE(md2.contains(QStringLiteral("## Lineage")));

    // Through `runplanectl compare --baseline`.
    const QString md3 = dir.filePath(QStringLiteral("c.md"));
    std::tie(code, output) = test::runHeadless(
        QStringLiteral("/backend/cli/runplanectl"),
        {QStringLiteral("compare"), QStringLiteral("run-a"), QStringLiteral("run-b"), h, history,
         QStringLiteral("--md"), md3, QStringLiteral("--baseline"), QStringLiteral("run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    EXPECT_TRUE(
        test::readText(md3).contains(QStringLiteral("| eval/score | a | −0.2500 | −0.2500 |")));
}

TEST(ReportBaseline, CommandLineNamesABadBaseline) {
    auto bad = [](const QStringList& args) {
        auto r = parseCommandLine(QStringList{QStringLiteral("runplane")} + args);
        EXPECT_FALSE(r);
        return r ? std::string() : r.error();
    };
    EXPECT_NE(bad({QStringLiteral("--report"), QStringLiteral("o"), QStringLiteral("--runs"),
                   QStringLiteral("a,b"), QStringLiteral("--baseline"), QStringLiteral("c")})
                  .find("--baseline: 'c' is not one of --runs a,b"),
              std::string::npos);
    EXPECT_NE(bad({QStringLiteral("--report"), QStringLiteral("o"), QStringLiteral("--run"),
                   QStringLiteral("a"), QStringLiteral("--baseline"), QStringLiteral("a")})
                  .find("--baseline: is only used with --report OUT_DIR --runs"),
              std::string::npos);
    auto ok = test::parseReportOfTwoRuns({QStringLiteral("--baseline"), QStringLiteral("b")});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->baselineRunId, QStringLiteral("b"));
}
