// issue 46: layouts that do not break. The topology grid of a 16- or 32-node recipe scrolls
// inside its tab instead of making the Design page taller than a 1280x720 screen; the findings
// table keeps at least four rows and sits behind a splitter handle that can be seen.
// Real DesignPage under the offscreen platform, the real 16-node recipe.
#include <gtest/gtest.h>

#include <QApplication>
#include <QHeaderView>
#include <QImage>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>

#include <set>

#include "gui/pages/design_page.h"
#include "gui/widgets/topology_view.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

// The Design page's share of a 1280x720 window: the main window's menu, toolbar, page tabs and
// status bar take the rest.
constexpr int kPageHeightAt720 = 600;

void openRecipe(DesignPage& page, const char* name) {
    ASSERT_TRUE(waitUntil([&] { return page.catalogReady(); }, 15000));
    QString error = QStringLiteral("(not loaded)");
    const QMetaObject::Connection c =
        QObject::connect(&page, &DesignPage::fileLoaded, &page,
                         [&](const QString&, const QString& e) { error = e; });
    page.openFile(test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/recipes/") +
                  QString::fromLatin1(name));
    const bool loaded = waitUntil([&] { return error != QStringLiteral("(not loaded)"); }, 10000);
    QObject::disconnect(c);
    ASSERT_TRUE(loaded);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
}

}  // namespace

TEST(DesignLayout, ASixteenAndAThirtyTwoNodeGridScrollInsteadOfGrowingTheWindow) {
    DesignPage page;
    page.resize(1280, kPageHeightAt720);
    page.show();
    ASSERT_NO_FATAL_FAILURE(openRecipe(page, "qwen3.8-2.4T-A95B-full.yaml"));
    ASSERT_TRUE(waitUntil([&] { return page.topologyView()->data().nodes == 16; }, 10000));
    test::pump(50);
    EXPECT_LE(page.minimumSizeHint().height(), kPageHeightAt720);
    // The grid is inside a scroll area that scrolls it.
    QWidget* p = page.topologyView()->parentWidget();
    auto* scroll = p != nullptr ? qobject_cast<QScrollArea*>(p->parentWidget()) : nullptr;
    ASSERT_NE(scroll, nullptr);

    // 32 nodes x 4 GPUs: still no taller than the window, the grid scrolls.
    TopologyData big = page.topologyView()->data();
    big.nodes = 32;
    big.cells.clear();
    for (int n = 0; n < 32; ++n) {
        for (int g = 0; g < big.gpusPerNode; ++g) {
            big.cells.push_back(TopologyCell{n, g, n % 8, QStringLiteral("PP%1").arg(n), -1, {}});
        }
    }
    big.mixedNodes.assign(32, false);
    page.topologyView()->setData(big);
    test::pump(50);
    EXPECT_LE(page.minimumSizeHint().height(), kPageHeightAt720);
    EXPECT_GT(page.topologyView()->minimumSizeHint().height(), kPageHeightAt720);
    EXPECT_GT(scroll->verticalScrollBar()->maximum(), 0) << "the 32-node grid scrolls";
}

TEST(DesignLayout, TheFindingsTableShowsFourRowsBehindAVisibleHandle) {
    DesignPage page;
    page.resize(1280, kPageHeightAt720);
    page.show();
    ASSERT_NO_FATAL_FAILURE(openRecipe(page, "vime-qwen3-30B-A3B-2x8.yaml"));
    test::pump(50);
    QTableView* findings = page.findingsView();
    const int row = findings->verticalHeader()->defaultSectionSize();
    EXPECT_GE(findings->viewport()->height(), 4 * row)
        << "viewport " << findings->viewport()->height() << " px, rows of " << row << " px";
    // The splitter between the findings and the charts: a handle of at least 6 px that draws.
    QSplitter* splitter = nullptr;
    for (QWidget* w = findings->parentWidget(); w != nullptr && splitter == nullptr;
         w = w->parentWidget()) {
        auto* s = qobject_cast<QSplitter*>(w);
        if (s != nullptr && s->orientation() == Qt::Vertical) {
            splitter = s;
        }
    }
    ASSERT_NE(splitter, nullptr);
    QSplitterHandle* handle = splitter->handle(1);
    ASSERT_NE(handle, nullptr);
    EXPECT_GE(handle->height(), 6);
    const QImage img = handle->grab().toImage();
    std::set<QRgb> colours;
    for (int y = 0; y < img.height(); ++y) {
        for (int x = 0; x < img.width(); ++x) {
            colours.insert(img.pixel(x, y));
        }
    }
    EXPECT_GE(colours.size(), 2U) << "the handle draws a grip, not one flat colour";
}
