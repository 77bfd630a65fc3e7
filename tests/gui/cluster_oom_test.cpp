// issue 42: an OOM of any kind is alert-level on the Cluster page. A REAL runplaned runs a real
// run that prints two real pastes (a slime run's CUDA OOM, THUDM/slime#1951, and Ray's raylet
// killing workers, ray-project/ray#34695; tests/agent/fixtures/logs); the Cluster page, connected
// to the daemon, stores the events in its real SQLite history and shows both under the node
// table in the error colour, newest first, with the node's name and the events' summaries.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "backend/control/controller.h"
#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/node_oom_alerts.h"
#include "gui/widgets/palette.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

QString fixture(const char* name) {
    return test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/tests/agent/fixtures/logs/") +
           QLatin1String(name);
}

}  // namespace

TEST(ClusterOomAlerts, ARunsOomEventsAreAlertLinesOfItsNode) {
    test::DaemonProcess daemon(QStringLiteral("oom-node"), 5);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 760);
    page.show();
    ASSERT_TRUE(page.addAddress(daemon.address()));
    ASSERT_TRUE(waitUntil([&] { return page.model()->row(0).state == QStringLiteral("streaming"); },
                          20000));
    // Nothing happened yet: no alert line.
    test::pump(1500);
    EXPECT_EQ(page.oomAlerts()->alertCount(), 0);
    EXPECT_FALSE(page.oomAlerts()->isVisible());

    // The run, submitted by a controller of its own (its history is another file).
    control::ControllerOptions options;
    options.historyPath = dir.filePath(QStringLiteral("submitter.sqlite")).toStdString();
    control::Controller submitter(options);
    control::SubmitSpec spec;
    spec.address = daemon.address().toStdString();
    spec.name = "oom (gui test)";
    spec.run.runId = RunId{"gui-oom"};
    const QString script =
        QStringLiteral("grep -v '^#' '%1'\nsleep 1\ngrep -v '^#' '%2' >&2\nexit 1\n")
            .arg(fixture("cuda_oom_slime_1951.log"), fixture("ray_oom_raylet_34695.log"));
    spec.run.argv = {"/bin/bash", "-c", script.toStdString()};
    auto submitted = submitter.submitRun(spec);
    ASSERT_TRUE(submitted) << submitted.error();

    NodeOomPanel* panel = page.oomAlerts();
    ASSERT_TRUE(waitUntil([&] { return panel->alertCount() >= 2; }, 30000))
        << "alerts: " << panel->alertCount();
    EXPECT_EQ(panel->alertCount(), 2);
    EXPECT_TRUE(panel->isVisible());
    ASSERT_EQ(panel->lines().size(), 2);
    // Newest first: the raylet's kill was printed a second after the CUDA OOM.
    EXPECT_TRUE(panel->lines()[0].contains(
        QStringLiteral("Ray OOM: 13 workers killed for memory pressure on 10.0.10.135")))
        << panel->lines()[0].toStdString();
    EXPECT_TRUE(panel->lines()[1].contains(
        QStringLiteral("CUDA OOM on GPU 0: tried 58.15 GiB, 47.69 GiB free")))
        << panel->lines()[1].toStdString();
    const QString name = page.model()->displayName(QStringLiteral("oom-node"));
    for (const QString& line : panel->lines()) {
        EXPECT_TRUE(line.startsWith(QStringLiteral("⚠ ") + name + QLatin1Char(' ')))
            << line.toStdString();
    }
    EXPECT_TRUE(panel->styleSheet().contains(errorColor().name()));
}
