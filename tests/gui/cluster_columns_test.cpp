// issue 46: the Cluster page at 1280×720 with a daemon that cannot be reached (a long gRPC error)
// and a real daemon on this machine (no GPU: the loader's error as its reason). Every column
// stays on screen, every cell but the State column's error shows its whole text (QFontMetrics
// against the section's width), the State column shows at least the state, and the GPUs cell
// gives the short reason with the daemon's whole one in its tooltip. Real runplaned, real
// ClusterPage (offscreen).
#include <gtest/gtest.h>

#include <QApplication>
#include <QFontMetrics>
#include <QHeaderView>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>

#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

QTableView* nodeTable(ClusterPage& page) {
    for (QTableView* t : page.findChildren<QTableView*>()) {
        if (t->model() == page.model()) {
            return t;
        }
    }
    return nullptr;
}

// Width the text needs in a cell of `view` (the delegate's margins on both sides).
int neededWidth(const QTableView& view, const QString& text) {
    const int margin = view.style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, &view) + 1;
    return QFontMetrics(view.font()).horizontalAdvance(text) + 2 * margin;
}

}  // namespace

TEST(ClusterColumns, EveryColumnFitsAt1280x720WithALongErrorAndALoaderError) {
    test::DaemonProcess daemon(QStringLiteral("columns-node"), 5);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 720);
    page.show();
    // Nothing listens on port 1: the connection is refused and the row goes into back-off with
    // gRPC's whole message.
    ASSERT_TRUE(page.addAddress(QStringLiteral("127.0.0.1:1")));
    // A name that resolves nowhere (RFC 6761): the resolver's message.
    ASSERT_TRUE(page.addAddress(QStringLiteral("runplane-gpu-node-17.invalid:7070")));
    ASSERT_TRUE(page.addAddress(daemon.address()));
    NodeTableModel* model = page.model();
    ASSERT_TRUE(waitUntil(
        [&] {
            if (model->rowCount() != 3) {
                return false;
            }
            for (const QString& unreachable :
                 {QStringLiteral("127.0.0.1:1"),
                  QStringLiteral("runplane-gpu-node-17.invalid:7070")}) {
                if (model->row(model->indexOf(unreachable)).error.isEmpty()) {
                    return false;
                }
            }
            const int up = model->indexOf(daemon.address());
            return model->row(up).state == QStringLiteral("streaming") &&
                   !model->row(up).hostname.isEmpty();
        },
        30000));
    test::pump(1500);  // the table's relayout timer
    QTableView* view = nodeTable(page);
    ASSERT_NE(view, nullptr);
    const int up = model->indexOf(daemon.address());

    const int viewportWidth = view->viewport()->width();
    QHeaderView* header = view->horizontalHeader();
    const QFontMetrics headerMetrics(header->font());
    for (int c = 0; c < model->columnCount(); ++c) {
        SCOPED_TRACE(model->headerData(c, Qt::Horizontal).toString().toStdString());
        // On screen: the section ends inside the viewport.
        EXPECT_LE(view->columnViewportPosition(c) + view->columnWidth(c), viewportWidth);
        EXPECT_GE(view->columnViewportPosition(c), 0);
        // The header's title is readable.
        EXPECT_LE(headerMetrics.horizontalAdvance(model->headerData(c, Qt::Horizontal).toString()),
                  view->columnWidth(c));
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString text = model->index(r, c).data().toString();
            if (c == NodeTableModel::StateColumn) {
                // The state itself is always readable; the rest of the error may elide.
                const QString state = text.section(QLatin1Char(':'), 0, 0);
                EXPECT_LE(neededWidth(*view, state + QStringLiteral(": …")), view->columnWidth(c))
                    << text.toStdString();
                EXPECT_TRUE(model->index(r, c)
                                .data(Qt::ToolTipRole)
                                .toString()
                                .contains(model->row(r).error))
                    << "the whole error is in the tooltip";
                continue;
            }
            EXPECT_LE(neededWidth(*view, text), view->columnWidth(c))
                << "row " << r << ": '" << text.toStdString() << "' in " << view->columnWidth(c)
                << " px";
        }
    }
    // The GPUs cell of the real daemon: a short reason, never a raw loader message, and the
    // daemon's whole reason in the tooltip.
    const QString gpus = model->index(up, NodeTableModel::GpuColumn).data().toString();
    const QString gpuTip =
        model->index(up, NodeTableModel::GpuColumn).data(Qt::ToolTipRole).toString();
    if (model->row(up).gpuCount == 0) {
        EXPECT_TRUE(gpus.startsWith(QStringLiteral("none"))) << gpus.toStdString();
        EXPECT_FALSE(gpus.contains(QStringLiteral(".so"))) << gpus.toStdString();
        EXPECT_FALSE(gpus.contains(QStringLiteral("cannot open shared object")))
            << gpus.toStdString();
        EXPECT_LE(gpus.size(), 32) << gpus.toStdString();
        EXPECT_GT(gpuTip.size(), gpus.size()) << gpuTip.toStdString();
    }
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("cluster-1280x720.png"))));
}
