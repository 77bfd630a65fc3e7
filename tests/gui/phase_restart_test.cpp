// issue 46: "after the daemon came back, the new peak was attributed to the wrong phase".
// A REAL runplaned (tests/support Daemon: restartable on its port over its state dir) supervises
// a bash run that prints phase markers; the daemon reads host memory from a meminfo file the
// test writes (`--meminfo`), so the peak is known. The daemon is stopped in "rollout"; while it
// is down the run enters "train" and memory rises; the daemon restarts and re-attaches the run.
// A real controller ingests everything into a real SQLite history, and the Runs page's peaks
// table (real widgets, offscreen) must say the peak was in "train": the phase the run was in
// when the restarted daemon first measured it.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cstdint>
#include <string>

#include "backend/control/controller.h"
#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/support/process.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

/// A meminfo file in the kernel's format with MemTotal 100 GiB and `usedGiB` in use, replaced
/// atomically (the daemon never reads half a file).
void writeMeminfo(const QString& path, std::uint64_t usedGiB) {
    const std::uint64_t totalKiB = 100 * kGiB / 1024;
    const std::uint64_t availableKiB = (100 - usedGiB) * kGiB / 1024;
    const QString text = QStringLiteral(
                             "MemTotal:       %1 kB\nMemFree:        %2 kB\nMemAvailable:   %2 "
                             "kB\nBuffers:        0 kB\nCached:         0 kB\nShmem:          0 "
                             "kB\nSwapTotal:      0 kB\nSwapFree:       0 kB\n")
                             .arg(totalKiB)
                             .arg(availableKiB);
    QFile f(path + QStringLiteral(".tmp"));
    ASSERT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text.toLatin1());
    f.close();
    QFile::remove(path);
    ASSERT_TRUE(QFile::rename(path + QStringLiteral(".tmp"), path));
}

/// The run's phase events and node samples as the history holds them now.
struct Stored {
    std::vector<std::string> phases;
    std::int64_t hostSamples = 0;
};

Stored stored(const QString& historyPath, const std::string& runId, const std::string& node) {
    Stored s;
    auto h = db::History::open(historyPath.toStdString());
    if (!h) {
        return s;
    }
    db::EventFilter ef;
    ef.runId = RunId{runId};
    if (auto events = (*h)->listEvents(ef)) {
        for (const db::EventRecord& e : *events) {
            if (e.kind == "phase") {
                s.phases.push_back(db::attrText(e.attrs, "phase"));
            }
        }
    }
    db::SeriesFilter sf;
    sf.nodeId = NodeId{node};
    sf.runId = RunId();
    sf.name = telemetry::series::kHostMemUsed;
    if (auto series = (*h)->listSeries(sf); series && !series->empty()) {
        s.hostSamples = series->front().count;
    }
    return s;
}

}  // namespace

TEST(PhaseRestart, ThePeakAfterADaemonRestartIsInThePhaseTheRunWasInThen) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString meminfo = dir.filePath(QStringLiteral("meminfo"));
    const QString go = dir.filePath(QStringLiteral("go"));
    const QString end = dir.filePath(QStringLiteral("end"));
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    writeMeminfo(meminfo, 40);

    runplane::testing::Daemon daemon(dir.filePath(QStringLiteral("state")).toStdString(),
                                     "restart-node", 5);
    daemon.setExtraArgs({"--meminfo", meminfo.toStdString()});
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();

    control::ControllerOptions options;
    options.historyPath = history.toStdString();
    options.sampleHz = 5;
    auto controller = std::make_unique<control::Controller>(options);
    ASSERT_TRUE(controller->addNode(daemon.address()));
    control::SubmitSpec spec;
    spec.address = daemon.address();
    spec.name = "restart (gui test)";
    spec.run.runId = RunId{"gui-restart"};
    spec.run.argv = {"/bin/bash", "-c",
                     QStringLiteral("echo '[runplane-phase] rollout'\n"
                                    "while [ ! -e '%1' ]; do sleep 0.05; done\n"
                                    "echo '[runplane-phase] train'\n"
                                    "while [ ! -e '%2' ]; do sleep 0.05; done\n")
                         .arg(go, end)
                         .toStdString()};
    auto submitted = controller->submitRun(spec);
    ASSERT_TRUE(submitted) << submitted.error();

    // In "rollout" at 40 GiB, stored.
    ASSERT_TRUE(waitUntil(
        [&] {
            const Stored s = stored(history, "gui-restart", "restart-node");
            return s.phases.size() == 1 && s.hostSamples >= 5;
        },
        30000));
    // The daemon stops; meanwhile the run enters "train" and memory rises to 70 GiB.
    daemon.stop();
    const std::int64_t before = stored(history, "gui-restart", "restart-node").hostSamples;
    writeMeminfo(meminfo, 70);
    QFile(go).open(QIODevice::WriteOnly);
    test::pump(1500);
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    // Back: the run re-attached, "train" and the new samples stored; then the run ends.
    ASSERT_TRUE(waitUntil(
        [&] {
            const Stored s = stored(history, "gui-restart", "restart-node");
            return s.phases.size() == 2 && s.hostSamples >= before + 5;
        },
        60000))
        << "phases " << stored(history, "gui-restart", "restart-node").phases.size();
    EXPECT_EQ(stored(history, "gui-restart", "restart-node").phases.back(), "train");
    QFile(end).open(QIODevice::WriteOnly);

    RunsPage page(history);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil(
        [&] {
            page.refreshRuns();
            test::pump(100);
            return page.runsModel()->rowCount() == 1;
        },
        20000));
    ASSERT_TRUE(page.selectRun(QStringLiteral("gui-restart")));
    PeaksModel* peaks = page.runView()->peaksModel();
    ASSERT_TRUE(waitUntil([&] { return peaks->rowCount() == 1; }, 20000));
    const auto cell = [&](int column) {
        return peaks->data(peaks->index(0, column), Qt::DisplayRole).toString();
    };
    // 70 GiB = 75.2 GB, measured first by the restarted daemon, while the run was in "train".
    EXPECT_TRUE(cell(PeaksModel::PeakColumn).startsWith(QStringLiteral("75.")))
        << cell(PeaksModel::PeakColumn).toStdString();
    EXPECT_EQ(cell(PeaksModel::PhaseColumn), QStringLiteral("train"))
        << "peak " << cell(PeaksModel::PeakColumn).toStdString() << " when "
        << cell(PeaksModel::WhenColumn).toStdString();
    controller.reset();
}
