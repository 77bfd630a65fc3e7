// issue 46: a run whose daemon cannot be reached is not shown as plainly "running", and the Runs
// header never keeps a state the run list no longer has. Real RunView / RunsPage (offscreen),
// real SQLite history written by the synthetic run writer.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDateTime>
#include <QLabel>
#include <QTemporaryDir>

#include <memory>

#include "db/history/history.h"
#include "gui/models/run_data.h"
#include "gui/models/run_models.h"
#include "gui/pages/run_liveness.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

// The run header: the one label that states the NCCL gate.
QString headerOf(const QWidget& view) {
    for (const QLabel* l : view.findChildren<QLabel*>()) {
        if (l->text().contains(QStringLiteral("NCCL gate"))) {
            return l->text();
        }
    }
    return QString();
}

// A running run whose node sampled host memory at 1 Hz from `start` to `last`.
std::shared_ptr<RunSnapshot> runningSnapshot(double start, double last, double now) {
    auto s = std::make_shared<RunSnapshot>();
    s->run.id = QStringLiteral("live-1");
    s->run.state = telemetry::RunState::Running;
    s->run.nodes = QStringList{QStringLiteral("node-a")};
    s->run.startT = start;
    s->t0 = start;
    s->t1 = now;
    PointSeries p;
    p.nodeId = QStringLiteral("node-a");
    p.name = QStringLiteral("host.mem.used_bytes");
    p.unit = QStringLiteral("bytes");
    for (double t = start; t <= last; t += 1) {
        p.t.push_back(t);
        p.value.push_back(600e9);
        p.step.push_back(-1);
    }
    s->hostMemory.push_back(std::move(p));
    return s;
}

}  // namespace

TEST(RunLiveness, ARunWhoseTelemetryStoppedSaysItsDaemonIsUnreachable) {
    const double now = nowSeconds();
    RunView view;
    view.resize(1200, 800);
    // Samples up to 2 s ago: plainly running.
    view.setSnapshot(runningSnapshot(now - 300, now - 2, now));
    QString header = headerOf(view);
    EXPECT_TRUE(header.contains(QStringLiteral("running"))) << header.toStdString();
    EXPECT_FALSE(header.contains(QStringLiteral("unreachable"))) << header.toStdString();
    // The last sample 4 minutes ago (the daemon stopped): said, with the time it went silent.
    const double last = now - 240;
    view.setSnapshot(runningSnapshot(now - 300, last, now));
    header = headerOf(view);
    const QString at = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(last * 1000))
                           .toString(QStringLiteral("HH:mm"));
    EXPECT_TRUE(header.contains(QStringLiteral("running · daemon unreachable since ") + at))
        << header.toStdString();
    // The rule: silent for more than 3 sample intervals, at least 10 s.
    EXPECT_FALSE(telemetrySilentSince(*runningSnapshot(now - 300, now - 9, now), now));
    EXPECT_TRUE(telemetrySilentSince(*runningSnapshot(now - 300, now - 11, now), now));
    // A finished run is finished, whatever its samples.
    auto done = runningSnapshot(now - 300, last, now);
    done->run.state = telemetry::RunState::Finished;
    EXPECT_EQ(liveStateText(*done, now), QStringLiteral("finished"));
}

TEST(RunLiveness, TheRunsHeaderFollowsTheListWhenTheRunFinishes) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("h.sqlite")).toStdString();
    {
        auto h = db::History::open(path);
        ASSERT_TRUE(h) << h.error();
        test::SyntheticRunSpec spec;
        spec.runId = "live-2";
        spec.name = "live run";
        spec.finished = false;
        spec.seconds = 60;
        spec.startNs = (QDateTime::currentMSecsSinceEpoch() - 60'000) * 1'000'000LL;
        ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
    }
    RunsPage page(QString::fromStdString(path));
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(test::waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(page.selectRun(QStringLiteral("live-2")));
    ASSERT_TRUE(
        test::waitUntil([&] { return headerOf(page).contains(QStringLiteral("running")); }, 10000))
        << headerOf(page).toStdString();
    // The user zoomed into the plot: follow mode is off, so no live refresh reloads the run.
    page.runView()->hostMemoryPlot()->setFollowing(false);
    {
        auto h = db::History::open(path);
        ASSERT_TRUE(h) << h.error();
        ASSERT_TRUE((*h)->updateRunState(db::RunId{"live-2"}, telemetry::RunState::Finished,
                                         QDateTime::currentMSecsSinceEpoch() * 1'000'000LL, "")
                        .ok());
    }
    // The list refreshes every 3 s; the header must then say finished too.
    ASSERT_TRUE(test::waitUntil(
        [&] {
            const RunRow* row = page.runsModel()->run(QStringLiteral("live-2"));
            return row != nullptr && row->state == telemetry::RunState::Finished;
        },
        10000));
    EXPECT_TRUE(
        test::waitUntil([&] { return headerOf(page).contains(QStringLiteral("finished")); }, 5000))
        << headerOf(page).toStdString();
}
