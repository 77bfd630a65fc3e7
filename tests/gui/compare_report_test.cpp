// issue 19: `runplane --report DIR --runs A,B` renders the Compare view headless, run as the real
// binary in a child process without a display, on a synthetic two-run history.
#include <gtest/gtest.h>

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>

#include "db/history/history.h"
#include "gui/app/command_line.h"
#include "gui/models/compare_data.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

QString readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

std::pair<int, QString> runBinary(const QStringList& args,
                                  const QString& binary = QStringLiteral("/gui/app/runplane")) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("XDG_RUNTIME_DIR"));
    p.setProcessEnvironment(env);
    p.start(test::envPath("RUNPLANE_BINARY_DIR") + binary, args);
    EXPECT_TRUE(p.waitForFinished(60000)) << p.errorString().toStdString();
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())};
}

// Two runs of one recipe, the second with another learning rate; node-b of the first peaks at
// the planted 900 GB spike. The second run's token length is a non-score eval series.
QString writeTwoRuns(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    auto h = db::History::open(path.toStdString());
    EXPECT_TRUE(h) << h.error();
    const std::string recipe = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    EXPECT_FALSE(recipe.empty());
    test::SyntheticRunSpec a;
    a.recipeYaml = recipe;
    a.seconds = 1200;
    a.extra = {{"eval/gsm8k/response_len/mean", "", {{0, 4.0}, {5, 4.2}}}};
    EXPECT_TRUE(test::writeSyntheticRun(**h, a));
    test::SyntheticRunSpec b = a;
    b.runId = "run-synthetic-2";
    b.name = "lr 2e-5";
    b.startNs += 3600LL * 1000000000LL;
    b.plantSpike = false;
    b.regressNodeB = false;
    std::string yaml = recipe;
    const auto lr = yaml.find("lr:");
    EXPECT_NE(lr, std::string::npos);
    yaml.replace(lr, yaml.find('\n', lr) - lr, "lr: 2.0e-05");
    b.recipeYaml = yaml;
    EXPECT_TRUE(test::writeSyntheticRun(**h, b));
    return path;
}

}  // namespace

TEST(CompareReport, ParsesRunsFlag) {
    auto o =
        parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--report"),
                          QStringLiteral("out"), QStringLiteral("--runs"), QStringLiteral("a, b")});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->runIds, (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
    auto bad = [](const QStringList& args) {
        auto r = parseCommandLine(QStringList{QStringLiteral("runplane")} + args);
        EXPECT_FALSE(r);
        return r ? std::string() : r.error();
    };
    EXPECT_NE(bad({QStringLiteral("--report"), QStringLiteral("o"), QStringLiteral("--runs"),
                   QStringLiteral("a")})
                  .find("--runs: compares 2 to 10 runs, got 1"),
              std::string::npos);
    EXPECT_NE(bad({QStringLiteral("--report"), QStringLiteral("o"), QStringLiteral("--runs"),
                   QStringLiteral("a,,b")})
                  .find("--runs: 'a,,b' has an empty run id"),
              std::string::npos);
    EXPECT_NE(bad({QStringLiteral("--runs"), QStringLiteral("a,b")})
                  .find("--runs: is only used with --report"),
              std::string::npos);
    EXPECT_NE(bad({QStringLiteral("--report"), QStringLiteral("o"), QStringLiteral("--run"),
                   QStringLiteral("a"), QStringLiteral("--runs"), QStringLiteral("a,b")})
                  .find("--runs: cannot be used with --run"),
              std::string::npos);
}

TEST(CompareReport, BinaryWritesTheComparisonHeadless) {
    QTemporaryDir dir;
    const QString history = writeTwoRuns(dir);
    const QString out = dir.filePath(QStringLiteral("cmp"));
    auto [code, output] =
        runBinary({QStringLiteral("--history"), history, QStringLiteral("--report"), out,
                   QStringLiteral("--runs"), QStringLiteral("run-synthetic-1,run-synthetic-2")});
    ASSERT_EQ(code, 0) << output.toStdString();
    // One overlay per score-kind eval metric; none for the token length.
    for (const char* png : {"compare_eval_aime.png", "compare_eval_gsm8k.png"}) {
        const QImage image(out + QLatin1Char('/') + QLatin1String(png));
        ASSERT_FALSE(image.isNull()) << png;
        EXPECT_EQ(image.size(), QSize(1400, 560));
        EXPECT_TRUE(output.contains(QLatin1String(png))) << output.toStdString();
    }
    EXPECT_FALSE(
        QFileInfo::exists(out + QStringLiteral("/compare_eval_gsm8k_response_len_mean.png")));
    const QString md = readText(out + QStringLiteral("/report.md"));
    EXPECT_TRUE(
        md.contains(QStringLiteral("# Comparison: qwen3.8 full LoRA (synthetic) vs lr 2e-5")))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("![eval/gsm8k](compare_eval_gsm8k.png)")));
    // Peaks per run and node: run 1's node-b holds the 900 GB spike, run 2 does not.
    EXPECT_TRUE(
        md.contains(QStringLiteral("| qwen3.8 full LoRA (synthetic) | node-b | 900.0 GB |")))
        << md.toStdString();
    EXPECT_FALSE(md.contains(QStringLiteral("| lr 2e-5 | node-b | 900.0 GB |")));
    // The recipe diff holds the learning rate and not the fields that are equal.
    EXPECT_TRUE(md.contains(QStringLiteral("| algorithm.lr |"))) << md.toStdString();
    EXPECT_FALSE(md.contains(QStringLiteral("| model.name |")));
    // Deltas vs the baseline (issue 49; the first run listed): run 2's last minus run 1's.
    {
        auto h = db::History::open(history.toStdString());
        ASSERT_TRUE(h) << h.error();
        auto data = loadCompare(
            **h, {QStringLiteral("run-synthetic-1"), QStringLiteral("run-synthetic-2")});
        ASSERT_TRUE(data) << data.error();
        double last[2] = {0, 0};
        for (int i = 0; i < 2; ++i) {
            for (const MetricValue& m : data->runs[static_cast<size_t>(i)].run.metrics) {
                if (m.name == QStringLiteral("eval/gsm8k")) {
                    last[i] = m.last;
                }
            }
        }
        const double d = last[1] - last[0];
        // (The two synthetic runs share their eval curves: the exact deltas are checked in
        // compare_baseline_test.cpp; here the report's row and its sign rule.)
        const QString cell = d == 0 ? QStringLiteral("0.0000")
                                    : (d > 0 ? QStringLiteral("+") : QStringLiteral("−")) +
                                          QString::number(std::abs(d), 'f', 4);
        EXPECT_TRUE(md.contains(QStringLiteral("## Deltas vs baseline"))) << md.toStdString();
        EXPECT_TRUE(
            md.contains(QStringLiteral("Baseline: qwen3.8 full LoRA (synthetic) "
                                       "(run-synthetic-1)")))
            << md.toStdString();
        EXPECT_TRUE(md.contains(QStringLiteral("| eval/gsm8k | lr 2e-5 | ") + cell + " |"))
            << md.toStdString() << " expected " << cell.toStdString();
    }
    const QString html = readText(out + QStringLiteral("/report.html"));
    EXPECT_TRUE(html.contains(QStringLiteral("<img src=\"compare_eval_gsm8k.png\"")));
    EXPECT_TRUE(html.contains(QStringLiteral("<td>algorithm.lr</td>")));

    // An unknown run is named, with the history file.
    std::tie(code, output) =
        runBinary({QStringLiteral("--history"), history, QStringLiteral("--report"),
                   dir.filePath(QStringLiteral("o2")), QStringLiteral("--runs"),
                   QStringLiteral("run-synthetic-1,nope")});
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(output.contains(QStringLiteral("'nope'")) && output.contains(history))
        << output.toStdString();
}

// `runplanectl compare A B --csv --html --png` (no window, no display): the same comparison,
// written where asked, through the runplane executable the build tree holds.
TEST(CompareCli, WritesCsvHtmlAndPngFromTheHistory) {
    QTemporaryDir dir;
    const QString history = writeTwoRuns(dir);
    const QString ctl = QStringLiteral("/backend/cli/runplanectl");
    const QString csv = dir.filePath(QStringLiteral("out/cmp.csv"));
    const QString html = dir.filePath(QStringLiteral("page/cmp.html"));
    const QString png = dir.filePath(QStringLiteral("cmp.png"));
    auto [code, output] = runBinary({QStringLiteral("compare"), QStringLiteral("run-synthetic-1"),
                                     QStringLiteral("run-synthetic-2"), QStringLiteral("--history"),
                                     history, QStringLiteral("--csv"), csv,
                                     QStringLiteral("--html"), html, QStringLiteral("--png"), png},
                                    ctl);
    ASSERT_EQ(code, 0) << output.toStdString();
    EXPECT_TRUE(output.contains(QStringLiteral("wrote ") + csv)) << output.toStdString();

    // The PNG is the first score metric's overlay (eval/aime before eval/gsm8k), full size.
    const QImage image(png);
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.size(), QSize(1400, 560));

    // The CSV holds every score metric's points of both runs: as many rows as the history has
    // samples of eval/aime and eval/gsm8k for the two runs.
    auto h = db::History::open(history.toStdString());
    ASSERT_TRUE(h) << h.error();
    std::int64_t samples = 0;
    for (const char* run : {"run-synthetic-1", "run-synthetic-2"}) {
        db::SeriesFilter f;
        f.runId = RunId{run};
        auto series = (*h)->listSeries(f);
        ASSERT_TRUE(series) << series.error();
        for (const db::SeriesInfo& s : *series) {
            if (s.name == "eval/aime" || s.name == "eval/gsm8k") {
                samples += s.count;
            }
        }
    }
    ASSERT_GT(samples, 0);
    const QStringList lines = readText(csv).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    ASSERT_FALSE(lines.isEmpty());
    EXPECT_EQ(lines.front(), QStringLiteral("run_id,run_name,metric,step,value,smoothed"));
    EXPECT_EQ(lines.size() - 1, samples);
    EXPECT_EQ(lines.filter(QStringLiteral(",eval/gsm8k,")).size() +
                  lines.filter(QStringLiteral(",eval/aime,")).size(),
              samples);

    // The page, with its plots beside it.
    const QString page = readText(html);
    EXPECT_TRUE(page.contains(QStringLiteral("lr 2e-5")));
    EXPECT_TRUE(page.contains(QStringLiteral("<td>algorithm.lr</td>")));
    EXPECT_FALSE(QImage(dir.filePath(QStringLiteral("page/compare_eval_gsm8k.png"))).isNull());

    // --metric picks the plot; an unknown one is refused by name.
    std::tie(code, output) = runBinary(
        {QStringLiteral("compare"), QStringLiteral("run-synthetic-1"),
         QStringLiteral("run-synthetic-2"), QStringLiteral("--history"), history,
         QStringLiteral("--png"), png, QStringLiteral("--metric"), QStringLiteral("eval/nope")},
        ctl);
    EXPECT_EQ(code, 2);
    EXPECT_TRUE(output.contains(QStringLiteral("--metric eval/nope"))) << output.toStdString();
    // An unknown run: exit 1, named.
    std::tie(code, output) = runBinary(
        {QStringLiteral("compare"), QStringLiteral("run-synthetic-1"), QStringLiteral("nope"),
         QStringLiteral("--history"), history, QStringLiteral("--csv"), csv},
        ctl);
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(output.contains(QStringLiteral("'nope'"))) << output.toStdString();
    // No output asked for: a usage error.
    std::tie(code, output) = runBinary({QStringLiteral("compare"), QStringLiteral("a"),
                                        QStringLiteral("b"), QStringLiteral("--history"), history},
                                       ctl);
    EXPECT_EQ(code, 2);
    EXPECT_TRUE(output.contains(QStringLiteral("--csv"))) << output.toStdString();
}
