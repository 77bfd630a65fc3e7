#include "gui/widgets/flat_style.h"

#include <QApplication>
#include <QCommonStyle>
#include <QPainter>
#include <QStyleFactory>
#include <QStyleOptionHeader>
#include <QStyleOptionSlider>
#include <QStyleOptionTab>
#include <QTabBar>

#include <algorithm>

namespace runplane::gui {

namespace {

// A one-pixel outline as four opaque rectangles (QPainter::drawRect with a pen is span-blended).
void fillOutline(QPainter* painter, const QRect& r, const QColor& color) {
    if (r.width() < 2 || r.height() < 2) {
        painter->fillRect(r, color);
        return;
    }
    painter->fillRect(QRect(r.left(), r.top(), r.width(), 1), color);
    painter->fillRect(QRect(r.left(), r.bottom(), r.width(), 1), color);
    painter->fillRect(QRect(r.left(), r.top() + 1, 1, r.height() - 2), color);
    painter->fillRect(QRect(r.right(), r.top() + 1, 1, r.height() - 2), color);
}

QColor opaque(QColor color) {
    color.setAlpha(255);
    return color;
}

// The style's colours, each from the palette once: fills of buttons, handles and sections; the
// one-pixel outline around them and the tab frame.
QColor buttonFill(const QPalette& palette) {
    return opaque(palette.color(QPalette::Button));
}
QColor outlineColor(const QPalette& palette) {
    return opaque(palette.color(QPalette::Window).darker(140));
}
QColor focusOutline(const QPalette& palette) {
    return opaque(palette.color(QPalette::Highlight).darker(125));
}

bool active(const QStyleOptionSlider& bar, QStyle::SubControl part) {
    return (bar.activeSubControls & part) != 0;
}

}  // namespace

FlatStyle::FlatStyle(const QString& baseStyleKey)
    : QProxyStyle(baseStyleKey.isEmpty() ? nullptr : QStyleFactory::create(baseStyleKey)) {}

void FlatStyle::drawComplexControl(ComplexControl control, const QStyleOptionComplex* option,
                                   QPainter* painter, const QWidget* widget) const {
    const auto* bar = qstyleoption_cast<const QStyleOptionSlider*>(option);
    if (control != CC_ScrollBar || bar == nullptr) {
        QProxyStyle::drawComplexControl(control, option, painter, widget);
        return;
    }
    const QPalette& palette = bar->palette;
    const bool horizontal = bar->orientation == Qt::Horizontal;
    const bool sunken = (bar->state & State_Sunken) != 0;
    painter->fillRect(bar->rect, opaque(palette.color(QPalette::Window).darker(106)));

    const QColor button = buttonFill(palette);
    const QColor outline = outlineColor(palette);
    for (const SubControl part : {SC_ScrollBarSubLine, SC_ScrollBarAddLine}) {
        const QRect r = proxy()->subControlRect(CC_ScrollBar, bar, part, widget);
        if (r.isEmpty()) {
            continue;
        }
        painter->fillRect(r, sunken && active(*bar, part) ? button.darker(120) : button);
        fillOutline(painter, r, outline);
        QStyleOption arrow = *bar;
        arrow.rect = r.adjusted(3, 3, -3, -3);
        const bool sub = part == SC_ScrollBarSubLine;
        const PrimitiveElement element =
            horizontal ? (sub ? PE_IndicatorArrowLeft : PE_IndicatorArrowRight)
                       : (sub ? PE_IndicatorArrowUp : PE_IndicatorArrowDown);
        proxy()->drawPrimitive(element, &arrow, painter, widget);
    }
    const QRect handle = proxy()->subControlRect(CC_ScrollBar, bar, SC_ScrollBarSlider, widget);
    if (!handle.isEmpty() && bar->maximum > bar->minimum) {
        QColor fill = button;
        if (sunken && active(*bar, SC_ScrollBarSlider)) {
            fill = fill.darker(120);
        } else if ((bar->state & State_MouseOver) != 0 && active(*bar, SC_ScrollBarSlider)) {
            fill = fill.lighter(104);
        }
        painter->fillRect(handle, fill);
        fillOutline(painter, handle, outline);
    }
}

void FlatStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option,
                              QPainter* painter, const QWidget* widget) const {
    const QPalette& palette = option->palette;
    switch (element) {
        case PE_FrameTabWidget:
            fillOutline(painter, option->rect, outlineColor(palette));
            fillOutline(painter, option->rect.adjusted(1, 1, -1, -1),
                        opaque(palette.color(QPalette::Window).lighter(110)));
            return;
        case PE_PanelLineEdit: {  // Fusion: an antialiased rounded rectangle, stroked
            painter->fillRect(option->rect, palette.base());
            const auto* frame = qstyleoption_cast<const QStyleOptionFrame*>(option);
            if (frame != nullptr && frame->lineWidth > 0) {
                proxy()->drawPrimitive(PE_FrameLineEdit, option, painter, widget);
            }
            return;
        }
        case PE_FrameLineEdit: {
            const bool focus =
                (option->state & State_HasFocus) != 0 && (option->state & State_Enabled) != 0;
            fillOutline(painter, option->rect,
                        focus ? focusOutline(palette) : outlineColor(palette));
            return;
        }
        case PE_PanelItemViewItem:
        case PE_PanelItemViewRow:
            // Fusion derives three colours (each through HSV) on every drawPrimitive call before
            // it looks at the element, then leaves these two to QCommonStyle: called directly,
            // as for every cell and row of a table that is 10 % of its paint.
            if (auto* common = dynamic_cast<QCommonStyle*>(baseStyle());
                common != nullptr && baseStyle()->name() == QLatin1String("fusion")) {
                common->QCommonStyle::drawPrimitive(element, option, painter, widget);
                return;
            }
            QProxyStyle::drawPrimitive(element, option, painter, widget);
            return;
        default:
            QProxyStyle::drawPrimitive(element, option, painter, widget);
    }
}

// A tab above its pane (QTabWidget's default): the selected one in the window's colour, open
// towards the pane; the others in the button colour, two pixels lower, as Fusion places them.
// (Fusion strokes antialiased rounded corners and fills gradients: half a tab bar's paint.)
bool FlatStyle::drawTabShape(const QStyleOption* option, QPainter* painter) const {
    const auto* tab = qstyleoption_cast<const QStyleOptionTab*>(option);
    if (tab == nullptr ||
        (tab->shape != QTabBar::RoundedNorth && tab->shape != QTabBar::TriangularNorth)) {
        return false;
    }
    const QPalette& palette = tab->palette;
    const QColor outline = outlineColor(palette);
    const bool selected = (tab->state & State_Selected) != 0;
    QRect r = tab->rect;
    if (selected) {
        painter->fillRect(r, opaque(palette.color(QPalette::Window)));
        painter->fillRect(QRect(r.left(), r.top(), r.width(), 1), outline);
        painter->fillRect(QRect(r.left(), r.top() + 1, 1, r.height() - 1), outline);
        painter->fillRect(QRect(r.right(), r.top() + 1, 1, r.height() - 1), outline);
        return true;
    }
    r.adjust(0, 2, 0, 0);
    QColor fill = buttonFill(palette).darker(104);
    if ((tab->state & State_MouseOver) != 0 && (tab->state & State_Enabled) != 0) {
        fill = buttonFill(palette);
    }
    painter->fillRect(r, fill);
    // One line between neighbours: a tab draws its left edge unless the selected one (which draws
    // both) is to its left, and its right edge only at the end of the row.
    painter->fillRect(QRect(r.left(), r.top(), r.width(), 1), outline);
    painter->fillRect(QRect(r.left(), r.bottom(), r.width(), 1), outline);
    if (tab->selectedPosition != QStyleOptionTab::PreviousIsSelected) {
        painter->fillRect(QRect(r.left(), r.top(), 1, r.height()), outline);
    }
    if (tab->position == QStyleOptionTab::End || tab->position == QStyleOptionTab::OnlyOneTab) {
        painter->fillRect(QRect(r.right(), r.top(), 1, r.height()), outline);
    }
    return true;
}

void FlatStyle::drawControl(ControlElement element, const QStyleOption* option, QPainter* painter,
                            const QWidget* widget) const {
    if (element == CE_TabBarTabShape && drawTabShape(option, painter)) {
        return;
    }
    const auto* header = qstyleoption_cast<const QStyleOptionHeader*>(option);
    if (element != CE_HeaderSection || header == nullptr) {
        QProxyStyle::drawControl(element, option, painter, widget);
        return;
    }
    const QPalette& palette = header->palette;
    const QRect& r = header->rect;
    const QColor button = buttonFill(palette);
    painter->fillRect(r, (header->state & State_Sunken) != 0 ? button.darker(110) : button);
    const QColor outline = outlineColor(palette);
    const QColor separator = opaque(palette.color(QPalette::Window).darker(115));
    const bool last = header->position == QStyleOptionHeader::End ||
                      header->position == QStyleOptionHeader::OnlyOneSection;
    if (header->orientation == Qt::Horizontal) {
        painter->fillRect(QRect(r.left(), r.bottom(), r.width(), 1), outline);
        if (!last) {
            painter->fillRect(QRect(r.right(), r.top() + 2, 1, std::max(0, r.height() - 4)),
                              separator);
        }
    } else {
        painter->fillRect(QRect(r.right(), r.top(), 1, r.height()), outline);
        if (!last) {
            painter->fillRect(QRect(r.left() + 2, r.bottom(), std::max(0, r.width() - 4), 1),
                              separator);
        }
    }
}

void installFlatStyle() {
    const QStyle* current = QApplication::style();
    if (dynamic_cast<const FlatStyle*>(current) != nullptr) {
        return;  // a proxy's name is empty: a second one would lose the base (QT_STYLE_OVERRIDE)
    }
    QApplication::setStyle(new FlatStyle(current->name()));
}

}  // namespace runplane::gui
