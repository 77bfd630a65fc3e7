// The headless report's Diagnosis section (issue #44): a real history file holding a run with two
// stored diagnoses (stored by control::storeDiagnosis, the path `runplanectl diagnose` and the
// GUI take), reported by the real `runplane --report` child process; a run without one says none.
#include <gtest/gtest.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <fstream>
#include <sstream>

#include "backend/control/diagnose.h"
#include "backend/diagnosis/diagnosis.h"
#include "db/history/history.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(test::envPath("RUNPLANE_SOURCE_DIR").toStdString() +
                     "/tests/diagnosis/fixtures/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// One node's collection from what the GPU host recorded (docs/results/diagnosis-gpu.md): its RAS
// report and py-spy's dump of the job blocked in wait_for_peer.
diagnosis::NodeDiagnosis recordedNode(const std::string& rasFixture) {
    diagnosis::NodeDiagnosis n;
    n.address = "127.0.0.1:7070";
    n.nodeId = "node-a";
    n.hostname = "gpu-a";
    n.runId = "run-synthetic-1";
    n.runState = "RUN_STATE_RUNNING";
    auto ras = diagnosis::parseRasReport(fixture(rasFixture));
    EXPECT_TRUE(ras) << ras.error();
    if (ras) {
        n.rasAvailable = true;
        n.ras = *ras;
    }
    auto threads = diagnosis::parsePySpyJson(fixture("pyspy_h100_wait_for_peer.json"));
    EXPECT_TRUE(threads) << threads.error();
    if (threads) {
        diagnosis::ProcessStacks p;
        p.pid = n.ras.communicators.empty() || n.ras.communicators[0].ranks.empty()
                    ? 611
                    : n.ras.communicators[0].ranks[0].pid;
        p.threads = *threads;
        n.stacks.push_back(p);
    }
    return n;
}

int runReport(const QString& history, const QString& out, const QString& run, QString* output,
              const QString& flag = QStringLiteral("--run")) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/gui/app/runplane"),
            {QStringLiteral("--history"), history, QStringLiteral("--report"), out, flag, run});
    EXPECT_TRUE(p.waitForFinished(60000));
    *output = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    return p.exitCode();
}

}  // namespace

TEST(ReportDiagnosis, EachStoredDiagnosisWithItsVerdictEvidenceAndTime) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    {
        auto h = db::History::open(history.toStdString());
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec spec;
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
        test::SyntheticRunSpec other;
        other.runId = "run-synthetic-2";
        ASSERT_TRUE(test::writeSyntheticRun(**h, other));
    }
    // The older: the H100 host's one-rank job, all in wait_for_peer; the newer: a missing rank.
    diagnosis::RunDiagnosis first;
    first.runId = "run-synthetic-1";
    first.trigger = "stall";
    first.tUnixNs = 1765000000000000000LL;  // 2025-12-06 05:46:40 UTC
    first.nodes = {recordedNode("ras_h100_one_rank_nccl2289.json")};
    first.verdict = diagnosis::judge(first.nodes);
    diagnosis::RunDiagnosis second = first;
    second.trigger = "on_demand";
    second.tUnixNs = first.tUnixNs + 600'000'000'000LL;
    second.nodes = {recordedNode("ras_missing_rank.json")};
    second.verdict = diagnosis::judge(second.nodes);
    ASSERT_EQ(second.verdict.findings.front().kind, "missing_rank");
    auto id1 = control::storeDiagnosis(history.toStdString(), first);
    auto id2 = control::storeDiagnosis(history.toStdString(), second);
    ASSERT_TRUE(id1 && id2);

    QString output;
    const QString out = dir.filePath(QStringLiteral("report"));
    ASSERT_EQ(runReport(history, out, QStringLiteral("run-synthetic-1"), &output), 0)
        << output.toStdString();
    const QString md = readAll(out + QStringLiteral("/report.md"));
    ASSERT_TRUE(md.contains(QStringLiteral("\n## Diagnosis\n\n2 stored, newest first.")))
        << md.toStdString();
    const QString h1 = QString::fromStdString(first.verdict.headline);
    const QString h2 = QString::fromStdString(second.verdict.headline);
    EXPECT_TRUE(h1.contains(QStringLiteral("wait_for_peer"))) << h1.toStdString();
    // The list: id, when (UTC), trigger, nodes, verdict; newest first.
    const QString row2 =
        QStringLiteral("| %1 | 2025-12-06 05:56:40 UTC | on_demand | 1 | ").arg(*id2);
    const QString row1 = QStringLiteral("| %1 | 2025-12-06 05:46:40 UTC | stall | 1 | ").arg(*id1);
    ASSERT_TRUE(md.contains(row2) && md.contains(row1)) << md.toStdString();
    EXPECT_LT(md.indexOf(row2), md.indexOf(row1));
    // Each diagnosis: its verdict and its evidence (every finding, the stack groups).
    EXPECT_TRUE(
        md.contains(QStringLiteral("### Diagnosis %1 (stall, 2025-12-06 05:46:40 UTC)").arg(*id1) +
                    QStringLiteral("\n\n**Verdict:** ") + h1))
        << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("**Verdict:** ") + h2));
    for (const auto& f : second.verdict.findings) {
        QString text = QString::fromStdString(f.text);
        text.replace(QLatin1Char('|'), QStringLiteral("\\|"));
        EXPECT_TRUE(md.contains(QStringLiteral("| ") + QString::fromStdString(f.kind) +
                                QStringLiteral(" | ") + text + QStringLiteral(" |")))
            << f.text << "\n"
            << md.toStdString();
    }
    EXPECT_TRUE(md.contains(QStringLiteral("| stack group | 1 process(es) in wait_for_peer (")))
        << md.toStdString();
    const QString html = readAll(out + QStringLiteral("/report.html"));
    EXPECT_TRUE(html.contains(QStringLiteral("<h2>Diagnosis</h2>")));
    EXPECT_TRUE(html.contains(h2.toHtmlEscaped())) << html.toStdString();

    // A run without a stored diagnosis says none.
    const QString out2 = dir.filePath(QStringLiteral("report2"));
    ASSERT_EQ(runReport(history, out2, QStringLiteral("run-synthetic-2"), &output), 0)
        << output.toStdString();
    const QString md2 = readAll(out2 + QStringLiteral("/report.md"));
    EXPECT_TRUE(
        md2.contains(QStringLiteral("## Diagnosis\n\nnone: no diagnosis is stored with this run.")))
        << md2.toStdString();

    // The compare report: per run, the stored count and the newest verdict, or none.
    const QString out3 = dir.filePath(QStringLiteral("compare"));
    ASSERT_EQ(runReport(history, out3, QStringLiteral("run-synthetic-1,run-synthetic-2"), &output,
                        QStringLiteral("--runs")),
              0)
        << output.toStdString();
    const QString md3 = readAll(out3 + QStringLiteral("/report.md"));
    QString newest = h2;
    newest.replace(QLatin1Char('|'), QStringLiteral("\\|"));
    EXPECT_TRUE(
        md3.contains(QStringLiteral("## Diagnoses\n\n| run | stored | newest verdict | "
                                    "trigger | when |")))
        << md3.toStdString();
    EXPECT_TRUE(md3.contains(QStringLiteral("| run-synthetic-1 | 2 | ") + newest +
                             QStringLiteral(" | on_demand | 2025-12-06 05:56:40 UTC |")))
        << md3.toStdString();
    EXPECT_TRUE(md3.contains(QStringLiteral("| run-synthetic-2 | 0 | none | – | – |")))
        << md3.toStdString();
}
