// issue 46: colours that stay. A memory component's colour follows its name (not its position
// in the chart), and text on a topology cell is dark on a bright cell (no white on yellow).
// Real MemoryBudgetChart / TopologyView under the offscreen platform, colours read from pixels.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>

#include <cmath>

#include "gui/widgets/memory_budget_chart.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/stable_colors.h"
#include "gui/widgets/topology_view.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane::gui;

namespace {

BudgetChartData chartOf(const std::vector<QString>& names) {
    BudgetChartData d;
    d.yLabel = QStringLiteral("GB");
    BudgetBar bar;
    bar.label = QStringLiteral("train");
    for (const QString& n : names) {
        bar.components.push_back(BudgetComponent{n, 100, n});
    }
    d.groups.push_back(BudgetGroup{QStringLiteral("node 0"), {bar}});
    return d;
}

QColor segmentColor(MemoryBudgetChart& chart, int component) {
    const QImage img = chart.grab().toImage();
    return img.pixelColor(chart.segmentCenter(0, 0, component));
}

}  // namespace

TEST(StableColors, AMemoryComponentKeepsItsColourWhereverItStands) {
    MemoryBudgetChart chart;
    chart.resize(700, 500);
    chart.show();
    chart.setData(chartOf({QStringLiteral("trainer_backup"), QStringLiteral("page_cache"),
                           QStringLiteral("ray_object_store")}));
    runplane::gui::test::pump(50);
    const QColor first = segmentColor(chart, 0);
    // After an edit the backup comes third (two components before it).
    chart.setData(chartOf({QStringLiteral("process_runtime"), QStringLiteral("page_cache"),
                           QStringLiteral("trainer_backup")}));
    runplane::gui::test::pump(50);
    const QColor third = segmentColor(chart, 2);
    EXPECT_EQ(first.rgb(), third.rgb())
        << first.name().toStdString() << " vs " << third.name().toStdString();
    // And the page cache, second both times, kept its colour too.
    EXPECT_NE(first.rgb(), segmentColor(chart, 1).rgb());
}

TEST(StableColors, TextOnABrightYellowCellIsDark) {
    const QColor yellow = seriesColor(7);  // the palette's dark yellow, B8A000
    ASSERT_EQ(yellow.rgb() & 0xFFFFFF, 0xB8A000U);
    TopologyView view;
    view.resize(500, 300);
    TopologyData data;
    data.nodes = 1;
    data.gpusPerNode = 1;
    data.cells.push_back(TopologyCell{0, 0, 7, QStringLiteral("TP0 PP0"), -1, QString()});
    data.mixedNodes = {false};
    view.setData(data);
    view.show();
    runplane::gui::test::pump(50);
    const QImage img = view.grab().toImage();
    // The cell: the bounding box of the pixels of its colour.
    QRect cell;
    for (int y = 0; y < img.height(); ++y) {
        for (int x = 0; x < img.width(); ++x) {
            if ((img.pixel(x, y) & 0xFFFFFF) == 0xB8A000U) {
                cell = cell.united(QRect(x, y, 1, 1));
            }
        }
    }
    ASSERT_FALSE(cell.isEmpty());
    int white = 0;
    int dark = 0;
    for (int y = cell.top(); y <= cell.bottom(); ++y) {
        for (int x = cell.left(); x <= cell.right(); ++x) {
            const QColor c = img.pixelColor(x, y);
            white += (c.red() > 225 && c.green() > 225 && c.blue() > 225) ? 1 : 0;
            dark += (c.red() < 80 && c.green() < 80 && c.blue() < 80) ? 1 : 0;
        }
    }
    EXPECT_EQ(white, 0) << "white text on yellow";
    EXPECT_GT(dark, 10) << "the label is drawn dark";
    // The rule, over the whole palette and its tints: the text colour of higher contrast.
    for (int slot = 0; slot < 2 * seriesPaletteSize(); ++slot) {
        const QColor bg = slotColor(slot);
        const QColor text = textColorOn(bg);
        const double lb = relativeLuminance(bg);
        const double lt = relativeLuminance(text);
        const double ratio = (std::max(lb, lt) + 0.05) / (std::min(lb, lt) + 0.05);
        EXPECT_GE(ratio, 4.0) << bg.name().toStdString();  // the better of the two is >= 4.3
    }
}

TEST(StableColors, ColoursDependOnTheSetOfKeysNeverTheirOrder) {
    const QStringList a{QStringLiteral("run-a"), QStringLiteral("run-b"), QStringLiteral("run-c")};
    const QStringList b{QStringLiteral("run-c"), QStringLiteral("run-a"), QStringLiteral("run-b")};
    const auto ca = stableColors(a);
    const auto cb = stableColors(b);
    EXPECT_EQ(ca[0], cb[1]);
    EXPECT_EQ(ca[1], cb[2]);
    EXPECT_EQ(ca[2], cb[0]);
    EXPECT_NE(ca[0], ca[1]);
    EXPECT_NE(ca[1], ca[2]);
    EXPECT_NE(ca[0], ca[2]);
}
