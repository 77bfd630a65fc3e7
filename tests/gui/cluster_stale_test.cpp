// issue 46: a daemon that stops answering. Its Cluster row goes into back-off and its last
// memory value is shown as stale (greyed, with its age), and the status bar says the connection
// failed instead of staying on "connecting …". Real runplaned, real ClusterPage (offscreen).
#include <gtest/gtest.h>

#include <QBrush>
#include <QTemporaryDir>

#include <memory>

#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

TEST(ClusterStale, ADaemonThatStopsLeavesAStaleGreyedValueAndAStatusThatSaysSo) {
    auto daemon = std::make_unique<test::DaemonProcess>(QStringLiteral("stale-node"), 10);
    ASSERT_TRUE(daemon->ok()) << daemon->error().toStdString();
    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 720);
    page.show();
    QString lastMessage;
    QObject::connect(&page, &Page::statusMessage, [&](const QString& m) { lastMessage = m; });
    ASSERT_TRUE(page.addAddress(daemon->address()));
    NodeTableModel* model = page.model();
    const QModelIndex used = model->index(0, NodeTableModel::MemUsedColumn);
    ASSERT_TRUE(waitUntil(
        [&] {
            return model->row(0).state == QStringLiteral("streaming") &&
                   model->row(0).usedBytes >= 0;
        },
        20000))
        << model->row(0).state.toStdString() << " " << model->row(0).error.toStdString();
    // Streaming: the value, in the normal colour, and the status bar left "connecting".
    EXPECT_FALSE(used.data().toString().contains(QStringLiteral("stale")));
    EXPECT_FALSE(used.data(Qt::ForegroundRole).isValid());
    EXPECT_FALSE(lastMessage.contains(QStringLiteral("connecting"))) << lastMessage.toStdString();

    const QString address = daemon->address();
    daemon.reset();  // the daemon stops
    ASSERT_TRUE(waitUntil(
        [&] {
            const QString s = model->row(0).state;
            return s == QStringLiteral("backoff") || s == QStringLiteral("failed");
        },
        30000))
        << model->row(0).state.toStdString();
    const QString text = used.data().toString();
    EXPECT_TRUE(text.contains(QStringLiteral(" GB (stale, "))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral(" ago)"))) << text.toStdString();
    const QVariant fg = used.data(Qt::ForegroundRole);
    ASSERT_TRUE(fg.isValid());
    EXPECT_EQ(fg.value<QBrush>().color(), QColor(140, 140, 140));
    EXPECT_TRUE(used.data(Qt::ToolTipRole).toString().contains(QStringLiteral("not current")));
    // The status bar says what happened to the connection.
    EXPECT_TRUE(lastMessage.startsWith(address)) << lastMessage.toStdString();
    EXPECT_FALSE(lastMessage.contains(QStringLiteral("connecting"))) << lastMessage.toStdString();
}
