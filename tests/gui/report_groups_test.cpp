// issue 49: grouping in the headless comparison. `runplane --report DIR --runs ... --group-by
// KEY` (and `runplanectl compare --group-by`) draws each score metric per group and adds a
// Groups table (each group's curve at its last step: mean, min, max, how many runs reach it)
// and compare_groups.csv (every point of every group curve), as the Compare page draws them
// (docs/gui.md "Grouping"). Real history file; the real runplane / runplanectl executables; the
// same report in-process with the EMA off for exact values.
#include <gtest/gtest.h>

#include <QFile>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/app/command_line.h"
#include "gui/app/compare_report.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/report_process.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

const QStringList kRuns{QStringLiteral("run-a"), QStringLiteral("run-b"), QStringLiteral("run-c"),
                        QStringLiteral("run-d")};

}  // namespace

TEST(ReportGroups, GroupsByTagWithMeanAndMinMaxAtEachStep) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    ASSERT_NO_FATAL_FAILURE(test::writeGroupRuns(history));
    CompareReportRequest request;
    request.historyPath = history;
    request.runIds = kRuns;
    request.outDir = dir.filePath(QStringLiteral("exact"));
    request.smoothing = 0;  // raw curves: every value exact in binary
    request.groupBy = QStringLiteral("tags");
    request.width = 700;
    request.height = 300;
    auto files = writeCompareReport(request);
    ASSERT_TRUE(files) << files.error();
    const QString md = test::readText(request.outDir + QStringLiteral("/report.md"));
    ASSERT_TRUE(md.contains(QStringLiteral("## Groups"))) << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("Grouped by tags")));
    // sweep-a at 20: a 1.0, b 0.5. sweep-b: c alone. (untagged): d, which ends at 10.
    EXPECT_TRUE(
        md.contains(QStringLiteral("| eval/score | tags: sweep-a | run-a, run-b | 3 | 20 | "
                                   "0.7500 | 0.5000 | 1.0000 | 2 of 2 |")))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| eval/score | tags: sweep-b | run-c | 3 | 20 | 0.3750 | 0.3750 | 0.3750 | 1 of 1 |")))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| eval/score | (untagged) | run-d | 2 | 10 | 0.6250 | 0.6250 | 0.6250 | 1 of 1 |")))
        << md.toStdString();
    EXPECT_TRUE(test::readText(request.outDir + QStringLiteral("/report.html"))
                    .contains(QStringLiteral("<h2>Groups</h2>")));
    // Every point of the group curves: at 10 b is interpolated between 0.25 and 0.5.
    const QString csv = test::readText(request.outDir + QStringLiteral("/compare_groups.csv"));
    EXPECT_EQ(csv, QStringLiteral("metric,group,x,mean,min,max,runs\n"
                                  "eval/score,tags: sweep-a,0,0.375,0.25,0.5,2\n"
                                  "eval/score,tags: sweep-a,10,0.5625,0.375,0.75,2\n"
                                  "eval/score,tags: sweep-a,20,0.75,0.5,1,2\n"
                                  "eval/score,tags: sweep-b,0,0.125,0.125,0.125,1\n"
                                  "eval/score,tags: sweep-b,10,0.25,0.25,0.25,1\n"
                                  "eval/score,tags: sweep-b,20,0.375,0.375,0.375,1\n"
                                  "eval/score,(untagged),0,0.5,0.5,0.5,1\n"
                                  "eval/score,(untagged),10,0.625,0.625,0.625,1\n"));
    EXPECT_TRUE(files->written.contains(request.outDir + QStringLiteral("/compare_groups.csv")));
    // The grouped plot, for docs/gui.md.
    const QString png = test::screenshotPath(QStringLiteral("report-groups.png"));
    QFile::remove(png);
    EXPECT_TRUE(QFile::copy(request.outDir + QStringLiteral("/compare_eval_score.png"), png));

    // Without --group-by: no Groups section.
    request.groupBy.clear();
    request.outDir = dir.filePath(QStringLiteral("plain"));
    ASSERT_TRUE(writeCompareReport(request));
    EXPECT_FALSE(test::readText(request.outDir + QStringLiteral("/report.md"))
                     .contains(QStringLiteral("## Groups")));
    EXPECT_FALSE(QFile::exists(request.outDir + QStringLiteral("/compare_groups.csv")));
}

TEST(ReportGroups, ThroughTheExecutablesByARecipeField) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    ASSERT_NO_FATAL_FAILURE(test::writeGroupRuns(history));
    const QString h = QStringLiteral("--history");
    // An unknown key names the keys there are.
    const QString out = dir.filePath(QStringLiteral("cmp"));
    auto [code, output] = test::runHeadless(
        QStringLiteral("/gui/app/runplane"),
        {h, history, QStringLiteral("--report"), out, QStringLiteral("--runs"),
         kRuns.join(QLatin1Char(',')), QStringLiteral("--group-by"), QStringLiteral("nope")});
    EXPECT_EQ(code, 1) << output.toStdString();
    EXPECT_TRUE(output.contains(
        QStringLiteral("--group-by: 'nope' is not a key these runs can be grouped by (tags, ")))
        << output.toStdString();
    const int at = static_cast<int>(output.indexOf(QStringLiteral("(tags, ")));
    const QString lrKey =
        output.mid(at + 7, output.indexOf(QLatin1Char(')'), at) - at - 7).trimmed();
    ASSERT_TRUE(lrKey.endsWith(QStringLiteral("lr"))) << output.toStdString();

    // By the learning rate, through `runplanectl compare --group-by`, with the report's EMA
    // (weight 0.6): the 2e-5 group at 20 is c alone (d ended at 10), c's debiased EMA there is
    // a_3 / (1 - 0.6^3) with a_1 = 0.4 * 0.125, a_2 = 0.6 a_1 + 0.4 * 0.25, a_3 = 0.6 a_2 + 0.4 *
    // 0.375.
    const double a1 = 0.4 * 0.125;
    const double a2 = 0.6 * a1 + 0.4 * 0.25;
    const double a3 = 0.6 * a2 + 0.4 * 0.375;
    const QString c20 = QString::number(a3 / (1 - 0.6 * 0.6 * 0.6), 'f', 4);
    const QString md = dir.filePath(QStringLiteral("c.md"));
    std::tie(code, output) = test::runHeadless(
        QStringLiteral("/backend/cli/runplanectl"),
        {QStringLiteral("compare"), kRuns[0], kRuns[1], kRuns[2], kRuns[3], h, history,
         QStringLiteral("--md"), md, QStringLiteral("--group-by"), lrKey});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString text = test::readText(md);
    EXPECT_TRUE(text.contains(QStringLiteral("Grouped by ") + lrKey)) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("| eval/score | %1 = 2e-05 | run-c, run-d | 3 | 20 | "
                                             "%2 | %2 | %2 | 1 of 2 |")
                                  .arg(lrKey, c20)))
        << text.toStdString();
    EXPECT_TRUE(text.contains(
        QStringLiteral("| eval/score | %1 = 1e-05 | run-a, run-b | 3 | 20 |").arg(lrKey)))
        << text.toStdString();
}

TEST(ReportGroups, CommandLineNeedsRuns) {
    auto r = parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--report"),
                               QStringLiteral("o"), QStringLiteral("--run"), QStringLiteral("a"),
                               QStringLiteral("--group-by"), QStringLiteral("tags")});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("--group-by: is only used with --report OUT_DIR --runs"),
              std::string::npos)
        << r.error();
    auto ok = test::parseReportOfTwoRuns({QStringLiteral("--group-by"), QStringLiteral("tags")});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->groupBy, QStringLiteral("tags"));
}

// The report's EMA weight is the user's (`--smoothing S`, as the Compare page's slider): the tags
// grouping through `runplanectl compare --smoothing 0.3`, c alone at 20 is its debiased EMA
// a_3 / (1 - 0.3^3) with a_i = 0.3 a_(i-1) + 0.7 x_i over c's 0.125, 0.25, 0.375.
TEST(ReportGroups, TheCurvesSmoothingIsTheUsers) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    ASSERT_NO_FATAL_FAILURE(test::writeGroupRuns(history));
    const double a1 = 0.7 * 0.125;
    const double a2 = 0.3 * a1 + 0.7 * 0.25;
    const double a3 = 0.3 * a2 + 0.7 * 0.375;
    const QString c20 = QString::number(a3 / (1 - 0.3 * 0.3 * 0.3), 'f', 4);
    const QString md = dir.filePath(QStringLiteral("c.md"));
    auto [code, output] =
        test::runHeadless(QStringLiteral("/backend/cli/runplanectl"),
                          {QStringLiteral("compare"), kRuns[0], kRuns[1], kRuns[2], kRuns[3],
                           QStringLiteral("--history"), history, QStringLiteral("--md"), md,
                           QStringLiteral("--group-by"), QStringLiteral("tags"),
                           QStringLiteral("--smoothing"), QStringLiteral("0.3")});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString text = test::readText(md);
    EXPECT_TRUE(text.contains(
        QStringLiteral("| eval/score | tags: sweep-b | run-c | 3 | 20 | %1 | %1 | %1 | 1 of 1 |")
            .arg(c20)))
        << c20.toStdString() << "\n"
        << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("(weight 0.3)"))) << "the report says its smoothing";

    // a weight of 1 or more, not a number, or without --runs: refused, naming the flag
    for (const QString& bad : {QStringLiteral("1"), QStringLiteral("x"), QStringLiteral("-0.1")}) {
        auto r = test::parseReportOfTwoRuns({QStringLiteral("--smoothing"), bad});
        ASSERT_FALSE(r) << bad.toStdString();
        EXPECT_NE(r.error().find("--smoothing: expects a number from 0 to 0.99"), std::string::npos)
            << r.error();
    }
    auto single =
        parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--report"),
                          QStringLiteral("o"), QStringLiteral("--run"), QStringLiteral("a"),
                          QStringLiteral("--smoothing"), QStringLiteral("0.5")});
    ASSERT_FALSE(single);
    EXPECT_NE(single.error().find("--smoothing: is only used with --report OUT_DIR --runs"),
              std::string::npos)
        << single.error();
    auto ok = test::parseReportOfTwoRuns({QStringLiteral("--smoothing"), QStringLiteral("0")});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->smoothing, 0.0);
}
