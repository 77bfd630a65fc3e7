// issue 2: the Cluster page against a REAL runplaned on loopback: the node table fills from
// GetNode, telemetry is ingested into a real SQLite history by the controller, and the live plot
// gets its points back from that history. Saves screenshot cluster.png.
#include <gtest/gtest.h>

#include <QDir>
#include <QPixmap>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

TEST(ClusterPage, RealDaemonFillsTheTableAndTheLivePlot) {
    test::DaemonProcess daemon(QStringLiteral("gui-test-node"), 10);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    const QString historyPath = dir.filePath(QStringLiteral("history.sqlite"));

    ClusterPage page(historyPath);
    page.resize(1280, 760);
    page.show();
    page.setFollowWindow(120);
    NodeTableModel* model = page.model();

    // Bad input first: malformed and duplicate addresses are refused with a message.
    QString lastMessage;
    QObject::connect(&page, &Page::statusMessage, [&](const QString& m) { lastMessage = m; });
    EXPECT_FALSE(page.addAddress(QStringLiteral("not an address")));
    EXPECT_TRUE(lastMessage.contains(QStringLiteral("host:port")));

    ASSERT_TRUE(page.addAddress(daemon.address()));
    EXPECT_FALSE(page.addAddress(daemon.address()));
    ASSERT_EQ(model->rowCount(), 1);

    // The table fills from GetNode and the ingestor streams.
    ASSERT_TRUE(waitUntil(
        [&] {
            return model->row(0).state == QStringLiteral("streaming") &&
                   !model->row(0).hostname.isEmpty();
        },
        20000))
        << "state: " << model->row(0).state.toStdString() << " "
        << model->row(0).error.toStdString();
    EXPECT_EQ(model->row(0).nodeId, QStringLiteral("gui-test-node"));
    EXPECT_GT(model->row(0).ramBytes, 0);
    EXPECT_GT(model->row(0).cpuCores, 0);
    EXPECT_FALSE(model->row(0).gpuText.isEmpty());  // GPUs, or why there are none

    // The plot gets its points from the history (several queries, growing).
    ASSERT_TRUE(waitUntil([&] { return page.memoryPlot()->drawnPointCount() >= 3 * 20; }, 20000))
        << "points: " << page.memoryPlot()->drawnPointCount();
    EXPECT_GE(page.appliedQueries(), 1);
    EXPECT_EQ(page.memoryPlot()->seriesCount(), 1);
    EXPECT_EQ(page.memoryPlot()->alarmLineCount(), 1);  // RAM only: no run, no plan, no alarm
    ASSERT_TRUE(waitUntil([&] { return model->row(0).usedBytes > 0; }, 5000));

    // What the plot shows is what the controller stored in the SQLite file.
    {
        auto history = db::History::open(historyPath.toStdString());
        ASSERT_TRUE(history) << history.error();
        auto id = (*history)->findSeries(NodeId{"gui-test-node"}, RunId(), "host.mem.used_bytes");
        ASSERT_TRUE(id);
        ASSERT_TRUE(id->has_value());
        db::SeriesFilter f;
        f.nodeId = NodeId{"gui-test-node"};
        f.name = "host.mem.used_bytes";
        auto series = (*history)->listSeries(f);
        ASSERT_TRUE(series);
        ASSERT_EQ(series->size(), 1u);
        EXPECT_GE(series->front().count, 20);
    }

    // An unreachable daemon shows its error in the table, without disturbing the other row.
    ASSERT_TRUE(page.addAddress(QStringLiteral("127.0.0.1:1")));
    ASSERT_TRUE(waitUntil([&] { return !model->row(1).error.isEmpty(); }, 20000));
    EXPECT_TRUE(model->row(1).error.contains(QStringLiteral("127.0.0.1:1")))
        << model->row(1).error.toStdString();
    EXPECT_EQ(model->row(0).state, QStringLiteral("streaming"));

    // Let a few more seconds of samples arrive, then take the screenshot.
    test::pump(2500);
    const QPixmap shot = page.grab();
    ASSERT_FALSE(shot.isNull());
    EXPECT_TRUE(shot.save(test::screenshotPath(QStringLiteral("cluster.png"))));

    // Removing an address removes its row; the other keeps streaming.
    page.removeAddress(QStringLiteral("127.0.0.1:1"));
    EXPECT_EQ(model->rowCount(), 1);
    test::pump(300);
    EXPECT_EQ(model->rowCount(), 1);
}
