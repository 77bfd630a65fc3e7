// issue 49: `runplane --report DIR --runs A,B,C --baseline B` (and `runplanectl compare
// --baseline`): the report's "Deltas vs baseline" is against the named run, with exact deltas
// (values exact in binary), and its "Lineage" section names what `runs parent` recorded. Real
// history file, the real runplane and runplanectl executables, no display.
#include <gtest/gtest.h>

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/app/command_line.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

std::pair<int, QString> run(const QString& binary, const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_RUNTIME_DIR"}) {
        env.remove(QString::fromLatin1(v));
    }
    p.setProcessEnvironment(env);
    p.start(test::envPath("RUNPLANE_BINARY_DIR") + binary, args);
    EXPECT_TRUE(p.waitForFinished(90000)) << p.errorString().toStdString();
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())};
}

QString readText(const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
    return QString::fromUtf8(f.readAll());
}

QString writeThreeRuns(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    auto h = db::History::open(path.toStdString());
    EXPECT_TRUE(h) << h.error();
    test::SyntheticRunSpec a;
    a.runId = "run-a";
    a.name = "a";
    a.seconds = 120;
    a.standardEvals = false;
    a.plantSpike = false;
    a.regressNodeB = false;
    a.extra = {{"eval/score", "", {{0, 0.5}, {20, 0.75}}}};
    EXPECT_TRUE(test::writeSyntheticRun(**h, a));
    test::SyntheticRunSpec b = a;
    b.runId = "run-b";
    b.name = "b";
    b.startNs += kHour;
    b.extra = {{"eval/score", "", {{0, 0.25}, {20, 1.0}}}};
    EXPECT_TRUE(test::writeSyntheticRun(**h, b));
    test::SyntheticRunSpec c = a;
    c.runId = "run-c";
    c.name = "c";
    c.startNs += 2 * kHour;
    c.extra = {{"eval/score", "", {{30, 0.625}}}};
    EXPECT_TRUE(test::writeSyntheticRun(**h, c));
    return path;
}

TEST(ReportBaseline, DeltasAreAgainstTheNamedRun) {
    QTemporaryDir dir;
    const QString history = writeThreeRuns(dir);
    const QString h = QStringLiteral("--history");
    // run-c forked run-a at 20: its curve starts with a's points (0.5, 0.75), then its 0.625.
    auto [pc, po] = run(QStringLiteral("/backend/cli/runplanectl"),
                        {QStringLiteral("runs"), QStringLiteral("parent"), QStringLiteral("run-c"),
                         QStringLiteral("run-a@20"), QStringLiteral("--fork"), h, history});
    ASSERT_EQ(pc, 0) << po.toStdString();
    const QString out = dir.filePath(QStringLiteral("cmp"));
    auto [code, output] = run(QStringLiteral("/gui/app/runplane"),
                              {h, history, QStringLiteral("--report"), out,
                               QStringLiteral("--runs"), QStringLiteral("run-a,run-b,run-c"),
                               QStringLiteral("--baseline"), QStringLiteral("run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString md = readText(out + QStringLiteral("/report.md"));
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
    std::tie(code, output) = run(QStringLiteral("/gui/app/runplane"),
                                 {h, history, QStringLiteral("--report"), out2,
                                  QStringLiteral("--runs"), QStringLiteral("run-a,run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    const QString md2 = readText(out2 + QStringLiteral("/report.md"));
    EXPECT_TRUE(md2.contains(QStringLiteral("| eval/score | b | +0.2500 | +0.2500 |")))
        << md2.toStdString();
    EXPECT_FALSE(md2.contains(QStringLiteral("## Lineage")));

    // Through `runplanectl compare --baseline`.
    const QString md3 = dir.filePath(QStringLiteral("c.md"));
    std::tie(code, output) = run(
        QStringLiteral("/backend/cli/runplanectl"),
        {QStringLiteral("compare"), QStringLiteral("run-a"), QStringLiteral("run-b"), h, history,
         QStringLiteral("--md"), md3, QStringLiteral("--baseline"), QStringLiteral("run-b")});
    ASSERT_EQ(code, 0) << output.toStdString();
    EXPECT_TRUE(readText(md3).contains(QStringLiteral("| eval/score | a | −0.2500 | −0.2500 |")));
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
    auto ok =
        parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--report"),
                          QStringLiteral("o"), QStringLiteral("--runs"), QStringLiteral("a,b"),
                          QStringLiteral("--baseline"), QStringLiteral("b")});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->baselineRunId, QStringLiteral("b"));
}

}  // namespace
