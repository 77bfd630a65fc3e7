#include "gui/widgets/cached_text_delegate.h"

#include <QApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QTableView>

namespace runplane::gui {

namespace {

QPalette::ColorGroup colorGroup(const QStyleOptionViewItem& opt) {
    if (!opt.state.testFlag(QStyle::State_Enabled)) {
        return QPalette::Disabled;
    }
    return opt.state.testFlag(QStyle::State_Active) ? QPalette::Active : QPalette::Inactive;
}

}  // namespace

const CachedTextDelegate::LaidOut& CachedTextDelegate::laidOut(Key key) const {
    auto found = m_cache.constFind(key);
    if (found != m_cache.constEnd()) {
        return *found;
    }
    if (m_cache.size() >= kMaxEntries) {
        m_cache.clear();  // values of a live table drift; starting over bounds the memory
    }
    const QFontMetrics metrics(key.font);
    LaidOut laid;
    laid.fits = metrics.horizontalAdvance(key.text) <= key.width;
    laid.text.setText(laid.fits || key.elide == Qt::ElideNone
                          ? key.text
                          : metrics.elidedText(key.text, key.elide, key.width));
    laid.text.setTextFormat(Qt::PlainText);
    laid.text.prepare(QTransform(), key.font);
    return *m_cache.insert(std::move(key), std::move(laid));
}

void CachedTextDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                               const QModelIndex& index) const {
    QStyleOptionViewItem opt(option);
    initStyleOption(&opt, index);
    const bool plainText = opt.features.testFlag(QStyleOptionViewItem::HasDisplay) &&
                           !opt.features.testFlag(QStyleOptionViewItem::HasDecoration) &&
                           !opt.features.testFlag(QStyleOptionViewItem::HasCheckIndicator) &&
                           !opt.text.contains(QLatin1Char('\n'));
    const QWidget* widget = opt.widget;
    QStyle* style = widget != nullptr ? widget->style() : QApplication::style();
    // The text rectangle as QCommonStyle lays out a text-only item: the focus frame's margin
    // plus one pixel on each side.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect textRect = opt.rect.adjusted(margin, 0, -margin, 0);
    const LaidOut* laid =
        plainText && textRect.width() > 0
            ? &laidOut(Key{opt.text, opt.font, textRect.width(), opt.textElideMode})
            : nullptr;
    // Too wide: elided on one line as the style does, unless the view wraps (lines broken at
    // words, the last one elided) or does not elide: then the style's own layout.
    const bool cutAsTheStyleDoes = laid != nullptr && !laid->fits &&
                                   !opt.features.testFlag(QStyleOptionViewItem::WrapText) &&
                                   opt.textElideMode != Qt::ElideNone;
    if (laid == nullptr || !(laid->fits || cutAsTheStyleDoes)) {
        // What QStyledItemDelegate::paint does, with the option already initialised here.
        style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
        return;
    }
    // Background, selection and hover, as the style draws them for an item.
    style->drawPrimitive(QStyle::PE_PanelItemViewItem, &opt, painter, widget);
    const QPalette::ColorRole role =
        opt.state.testFlag(QStyle::State_Selected) ? QPalette::HighlightedText : QPalette::Text;
    // Vertically as QStyle::alignedRect places the line's whole-pixel height; horizontally at
    // the fraction of a pixel the style's text layout reaches for right and centred text.
    const QSizeF size = laid->text.size();
    const QRect line =
        QStyle::alignedRect(opt.direction, opt.displayAlignment, size.toSize(), textRect);
    const Qt::Alignment horizontal =
        QStyle::visualAlignment(opt.direction, opt.displayAlignment) & Qt::AlignHorizontal_Mask;
    qreal x = textRect.left();
    if (horizontal.testFlag(Qt::AlignRight)) {
        x += textRect.width() - size.width();
    } else if (horizontal.testFlag(Qt::AlignHCenter)) {
        x += (textRect.width() - size.width()) / 2;
    }
    painter->save();
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(colorGroup(opt), role));
    painter->drawStaticText(QPointF(x, line.top()), laid->text);
    painter->restore();
    if (opt.state.testFlag(QStyle::State_HasFocus)) {
        QStyleOptionFocusRect focus;
        focus.QStyleOption::operator=(opt);
        focus.rect = style->subElementRect(QStyle::SE_ItemViewItemFocusRect, &opt, widget);
        focus.state |= QStyle::State_KeyboardFocusChange | QStyle::State_Item;
        focus.backgroundColor = opt.palette.color(
            colorGroup(opt),
            opt.state.testFlag(QStyle::State_Selected) ? QPalette::Highlight : QPalette::Window);
        style->drawPrimitive(QStyle::PE_FrameFocusRect, &focus, painter, widget);
    }
}

void useStyledDelegates(QWidget* root) {
    for (QTableView* table : root->findChildren<QTableView*>()) {
        table->setItemDelegate(new QStyledItemDelegate(table));
    }
}

}  // namespace runplane::gui
