// issue 46: on the Cluster page at 1280x720 the node table showed ~2 rows, the Ray membership and
// preflight boxes taking the room under it. The real main window at 1280x720 on the Cluster page
// with seven daemons that refuse (loopback ports nothing listens on): the node table shows at
// least six whole rows, the membership and preflight boxes are still one click away, and the
// window fits the screen. Saves cluster-nodes-1280x720.png.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/preflight_panel.h"
#include "gui/pages/ray_membership_panel.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::waitUntil;

namespace {

/// Makes `w` visible by choosing the tab it is in (if it is in one); true when it is visible.
bool reveal(QWidget* w) {
    for (QWidget* p = w->parentWidget(); p != nullptr; p = p->parentWidget()) {
        if (auto* tabs = qobject_cast<QTabWidget*>(p)) {
            for (int i = 0; i < tabs->count(); ++i) {
                if (tabs->widget(i) == w || tabs->widget(i)->isAncestorOf(w)) {
                    tabs->setCurrentIndex(i);
                }
            }
        }
    }
    test::pump(50);
    return w->isVisible();
}

}  // namespace

TEST(ClusterFit, TheNodeTableShowsSixRowsAt1280x720) {
    QTemporaryDir dir;
    std::unique_ptr<MainWindow> window = openWindow(dir, kScreens[1], QStringLiteral("Cluster"));
    ClusterPage* cluster = page<ClusterPage>(*window);
    ASSERT_NE(cluster, nullptr);
    constexpr int kNodes = 7;
    for (int i = 0; i < kNodes; ++i) {
        ASSERT_TRUE(cluster->addAddress(QStringLiteral("127.0.0.1:%1").arg(i + 1)));
    }
    ASSERT_TRUE(waitUntil([&] { return cluster->model()->rowCount() == kNodes; }, 10000));
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Cluster: seven daemons"));
    }
    window->resize(kScreens[1]);
    test::pump(1200);  // the table's relayout timer
    QTableView* table = cluster->nodeTable();
    ASSERT_NE(table, nullptr);
    ASSERT_TRUE(table->isVisible());
    int whole = 0;
    for (int r = 0; r < kNodes; ++r) {
        const QRect row = table->visualRect(table->model()->index(r, 0));
        whole += table->viewport()->rect().contains(row) ? 1 : 0;
    }
    EXPECT_GE(whole, 6) << "viewport " << table->viewport()->height() << " px, rows of "
                        << table->verticalHeader()->defaultSectionSize() << " px";
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("cluster-nodes-1280x720.png"))));
    // The boxes that were under it are still there, a click away, and the table keeps its rows.
    for (QWidget* box : {static_cast<QWidget*>(cluster->membershipPanel()),
                         static_cast<QWidget*>(cluster->preflightPanel())}) {
        EXPECT_TRUE(reveal(box)) << box->metaObject()->className();
        EXPECT_GE(box->height(), 100) << box->metaObject()->className();
        EXPECT_GE(table->viewport()->height(), 6 * table->verticalHeader()->defaultSectionSize());
    }
    AppSettings::setFileOverride(QString());
}
