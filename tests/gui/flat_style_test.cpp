// FlatStyle: scroll bars, tab frames and headers painted without Qt's thread pool, where they
// should be.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QScrollBar>
#include <QStyleFactory>
#include <QStyleOptionHeader>
#include <QStyleOptionSlider>
#include <QStyleOptionTab>
#include <QStyleOptionViewItem>
#include <QTabWidget>
#include <QTableWidget>

#include <memory>

#include "gui/widgets/flat_style.h"
#include "tests/gui/held_pool.h"

using runplane::gui::FlatStyle;
using runplane::gui::test::renderWhileThePoolIsHeld;

namespace {

// A tab widget holding a 300-row table: a tab frame, a scroll bar and header sections longer
// than the 96 spans above which Qt 6.4's raster engine splits a fill over its global pool.
struct TallTabs {
    QTabWidget tabs;
    QTableWidget* table = new QTableWidget(300, 4);
    TallTabs() {
        tabs.addTab(table, QStringLiteral("peaks"));
        tabs.resize(640, 480);
        tabs.show();
    }
};

class AppStyle : public ::testing::Test {
  protected:
    // Back to qt_test_main's style for the binary's other tests.
    void TearDown() override { QApplication::setStyle(new FlatStyle(QStringLiteral("Fusion"))); }
};

// What `draw` paints on an image of `size` filled with magenta (which shows what it left).
template <class Draw>
QImage paintedOverMagenta(QSize size, Draw draw) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::magenta);
    QPainter painter(&image);
    draw(&painter);
    painter.end();
    return image;
}

}  // namespace

TEST_F(AppStyle, FlatStylePaintsScrollBarsTabFramesAndHeadersWithoutWaitingOnThePool) {
    QApplication::setStyle(new FlatStyle(QStringLiteral("Fusion")));
    TallTabs view;
    const qint64 ms = renderWhileThePoolIsHeld(&view.tabs, 3000);
    EXPECT_LT(ms, 1500) << "a paint waited for the held thread pool";
}

// The control: the same widgets under Fusion alone do wait for the pool on Debian 12's Qt, so the
// check above can fail.
TEST_F(AppStyle, FusionAloneWaitsOnThePoolForTheSamePaint) {
    if (QT_VERSION < QT_VERSION_CHECK(6, 4, 0) || QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)) {
        GTEST_SKIP() << "measured on Qt 6.4 (Debian 12) only";
    }
    QApplication::setStyle(QStringLiteral("Fusion"));
    TallTabs view;
    EXPECT_GE(renderWhileThePoolIsHeld(&view.tabs, 3000), 2500);
}

TEST(FlatStyle, DrawsTheHandleInTheButtonColourOverAFlatGroove) {
    FlatStyle style(QStringLiteral("Fusion"));
    QScrollBar bar(Qt::Vertical);
    bar.setStyle(&style);
    bar.setRange(0, 100);
    bar.setPageStep(20);
    bar.setValue(0);
    bar.resize(16, 300);

    QStyleOptionSlider option;
    option.initFrom(&bar);
    option.orientation = Qt::Vertical;
    option.minimum = bar.minimum();
    option.maximum = bar.maximum();
    option.sliderPosition = bar.sliderPosition();
    option.sliderValue = bar.value();
    option.singleStep = bar.singleStep();
    option.pageStep = bar.pageStep();
    option.subControls = QStyle::SC_All;
    const QRect handle =
        style.subControlRect(QStyle::CC_ScrollBar, &option, QStyle::SC_ScrollBarSlider, &bar);
    const QRect addLine =
        style.subControlRect(QStyle::CC_ScrollBar, &option, QStyle::SC_ScrollBarAddLine, &bar);
    ASSERT_FALSE(handle.isEmpty());
    ASSERT_LT(handle.bottom() + 4, addLine.top());

    QImage image(bar.size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::magenta);
    bar.render(&image);
    const QPalette palette = bar.palette();
    EXPECT_EQ(image.pixel(handle.center()), palette.color(QPalette::Button).rgb());
    const QPoint groove(handle.center().x(), (handle.bottom() + addLine.top()) / 2);
    EXPECT_EQ(image.pixel(groove), palette.color(QPalette::Window).darker(106).rgb());
    // The handle's outline is darker than its fill and than the groove.
    const QColor outline = image.pixelColor(handle.left(), handle.center().y());
    EXPECT_LT(outline.lightness(), palette.color(QPalette::Button).lightness());
}

TEST(FlatStyle, DrawsTheTabWidgetFrameAsAnOutline) {
    FlatStyle style(QStringLiteral("Fusion"));
    QStyleOptionTabWidgetFrame frame;
    frame.rect = QRect(0, 0, 200, 150);
    frame.palette = QApplication::palette();
    const QImage image = paintedOverMagenta(frame.rect.size(), [&](QPainter* painter) {
        style.drawPrimitive(QStyle::PE_FrameTabWidget, &frame, painter);
    });
    const QRgb outer = frame.palette.color(QPalette::Window).darker(140).rgb();
    EXPECT_EQ(image.pixel(0, 75), outer);
    EXPECT_EQ(image.pixel(199, 75), outer);
    EXPECT_EQ(image.pixel(100, 0), outer);
    EXPECT_EQ(image.pixel(100, 149), outer);
    EXPECT_EQ(image.pixel(1, 75), frame.palette.color(QPalette::Window).lighter(110).rgb());
    EXPECT_EQ(image.pixel(100, 75), QColor(Qt::magenta).rgb()) << "the frame leaves the inside";
}

TEST(FlatStyle, DrawsAHeaderSectionFlatWithASeparatorAndAnOutline) {
    FlatStyle style(QStringLiteral("Fusion"));
    QStyleOptionHeader section;
    section.rect = QRect(0, 0, 120, 24);
    section.palette = QApplication::palette();
    section.orientation = Qt::Horizontal;
    section.position = QStyleOptionHeader::Beginning;
    const QImage image = paintedOverMagenta(section.rect.size(), [&](QPainter* painter) {
        style.drawControl(QStyle::CE_HeaderSection, &section, painter);
    });
    const QPalette& palette = section.palette;
    EXPECT_EQ(image.pixel(60, 10), palette.color(QPalette::Button).rgb());
    EXPECT_EQ(image.pixel(60, 23), palette.color(QPalette::Window).darker(140).rgb());
    EXPECT_EQ(image.pixel(119, 10), palette.color(QPalette::Window).darker(115).rgb());
}

TEST(FlatStyle, DrawsALineEditAsABaseFillWithAnOutlineThatShowsFocus) {
    FlatStyle style(QStringLiteral("Fusion"));
    QStyleOptionFrame frame;
    frame.rect = QRect(0, 0, 200, 22);
    frame.palette = QApplication::palette();
    frame.lineWidth = 1;
    frame.state = QStyle::State_Enabled;
    auto draw = [&] {
        return paintedOverMagenta(frame.rect.size(), [&](QPainter* painter) {
            style.drawPrimitive(QStyle::PE_PanelLineEdit, &frame, painter);
        });
    };
    const QPalette& palette = frame.palette;
    const QImage plain = draw();
    EXPECT_EQ(plain.pixel(100, 11), palette.color(QPalette::Base).rgb());
    EXPECT_EQ(plain.pixel(1, 11), palette.color(QPalette::Base).rgb());
    for (const QPoint& edge : {QPoint(0, 11), QPoint(199, 11), QPoint(100, 0), QPoint(100, 21)}) {
        EXPECT_EQ(plain.pixel(edge), palette.color(QPalette::Window).darker(140).rgb());
    }
    frame.state |= QStyle::State_HasFocus;
    EXPECT_EQ(draw().pixel(0, 11), palette.color(QPalette::Highlight).darker(125).rgb());
}

// Tabs above their pane: the selected one open towards the pane in the window's colour, the
// others two pixels lower in the button colour, one line between neighbours.
TEST(FlatStyle, DrawsTabsFlatWithOneLineBetweenNeighbours) {
    FlatStyle style(QStringLiteral("Fusion"));
    QStyleOptionTab tab;
    tab.rect = QRect(0, 0, 80, 26);
    tab.palette = QApplication::palette();
    tab.shape = QTabBar::RoundedNorth;
    tab.state = QStyle::State_Enabled;
    auto draw = [&] {
        return paintedOverMagenta(tab.rect.size(), [&](QPainter* painter) {
            style.drawControl(QStyle::CE_TabBarTabShape, &tab, painter);
        });
    };
    const QPalette& palette = tab.palette;
    const QRgb outline = palette.color(QPalette::Window).darker(140).rgb();
    const QRgb magenta = QColor(Qt::magenta).rgb();

    tab.state |= QStyle::State_Selected;
    tab.position = QStyleOptionTab::Middle;
    const QImage selected = draw();
    EXPECT_EQ(selected.pixel(40, 0), outline);
    EXPECT_EQ(selected.pixel(0, 13), outline);
    EXPECT_EQ(selected.pixel(79, 13), outline);
    EXPECT_EQ(selected.pixel(40, 25), palette.color(QPalette::Window).rgb()) << "open below";

    tab.state &= ~QStyle::State_Selected;
    tab.selectedPosition = QStyleOptionTab::PreviousIsSelected;
    const QImage afterSelected = draw();
    EXPECT_EQ(afterSelected.pixel(40, 1), magenta) << "two pixels lower";
    EXPECT_EQ(afterSelected.pixel(40, 2), outline);
    EXPECT_EQ(afterSelected.pixel(40, 25), outline);
    EXPECT_EQ(afterSelected.pixel(40, 13), palette.color(QPalette::Button).darker(104).rgb());
    EXPECT_NE(afterSelected.pixel(0, 13), outline) << "the selected tab draws that edge";
    EXPECT_NE(afterSelected.pixel(79, 13), outline) << "the next tab draws that edge";

    tab.selectedPosition = QStyleOptionTab::NotAdjacent;
    tab.position = QStyleOptionTab::End;
    const QImage last = draw();
    EXPECT_EQ(last.pixel(0, 13), outline);
    EXPECT_EQ(last.pixel(79, 13), outline);

    tab.shape = QTabBar::RoundedWest;  // beside the pane: the base style's
    EXPECT_NE(draw().pixel(40, 13), palette.color(QPalette::Button).darker(104).rgb());
}

// An item view's cell and row panels skip Fusion's per-call colour work and go to QCommonStyle,
// which Fusion hands them to: the same pixels as Fusion's, in every state a table paints.
TEST(FlatStyle, PaintsItemViewPanelsWithFusionsPixels) {
    FlatStyle flat(QStringLiteral("Fusion"));
    std::unique_ptr<QStyle> fusion(QStyleFactory::create(QStringLiteral("Fusion")));
    QTableWidget table(4, 2);  // the widget the options come from (enabled, with a palette)
    table.show();
    const QStyle::State states[] = {
        QStyle::State_Enabled,
        QStyle::State_Enabled | QStyle::State_Active,
        QStyle::State_Enabled | QStyle::State_Selected,
        QStyle::State_Enabled | QStyle::State_Selected | QStyle::State_Active,
        QStyle::State_Enabled | QStyle::State_MouseOver | QStyle::State_Active,
        QStyle::State_None,
    };
    int compared = 0;
    int painted = 0;  // renders that drew over the cell's middle (a fill, a selection)
    for (const QStyle::PrimitiveElement element :
         {QStyle::PE_PanelItemViewItem, QStyle::PE_PanelItemViewRow}) {
        for (const QStyle::State state : states) {
            for (const bool alternate : {false, true}) {
                for (const bool tinted : {false, true}) {
                    QStyleOptionViewItem item;
                    item.initFrom(&table);
                    item.rect = QRect(0, 0, 120, 22);
                    item.state = state;
                    item.features =
                        alternate ? QStyleOptionViewItem::Alternate : QStyleOptionViewItem::None;
                    item.backgroundBrush = tinted ? QBrush(QColor(255, 230, 200)) : QBrush();
                    item.text = QStringLiteral("612.1 GB");
                    item.features |= QStyleOptionViewItem::HasDisplay;
                    auto draw = [&](const QStyle& style) {
                        return paintedOverMagenta(item.rect.size(), [&](QPainter* painter) {
                            style.drawPrimitive(element, &item, painter, &table);
                        });
                    };
                    const QImage image = draw(flat);
                    EXPECT_TRUE(image == draw(*fusion))
                        << "element " << element << " state " << int(state) << " alternate "
                        << alternate << " tinted " << tinted;
                    ++compared;
                    painted += image.pixel(60, 11) != QColor(Qt::magenta).rgb() ? 1 : 0;
                }
            }
        }
    }
    EXPECT_EQ(compared, 48);
    EXPECT_GE(painted, 24);
}

TEST_F(AppStyle, InstallingTwiceKeepsTheBaseStyle) {
    QApplication::setStyle(QStringLiteral("Windows"));
    runplane::gui::installFlatStyle();
    runplane::gui::installFlatStyle();
    const auto* flat = dynamic_cast<const FlatStyle*>(QApplication::style());
    ASSERT_NE(flat, nullptr);
    EXPECT_EQ(flat->baseStyle()->name(), QStringLiteral("windows"));
}
