#pragma once

#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace runplane::gui {

/// Paints plain-text cells from a cache of laid-out text. Qt's styled delegate lays out each
/// cell's text on every paint (once to size it, once to decide on eliding, then to draw): text
/// shaping was most of a 256-node Runs page paint (docs/performance.md). Here a cell's text is
/// elided and shaped once per distinct (text, font, width, elide mode) and then drawn as a
/// QStaticText, at the pixels the styled delegate paints. Drawn as QStyledItemDelegate draws
/// them (the style's CE_ItemViewItem): cells with an icon or a check box, multi-line text, text
/// too wide for its cell in a view that wraps (a table wraps by default) or does not elide.
class CachedTextDelegate : public QStyledItemDelegate {
  public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;

    /// Laid-out texts held (bounded: the cache is emptied when it reaches kMaxEntries).
    qsizetype cachedTexts() const { return m_cache.size(); }
    static constexpr qsizetype kMaxEntries = 4096;

  private:
    struct Key {
        QString text;
        QFont font;
        int width = 0;
        Qt::TextElideMode elide = Qt::ElideRight;
        bool operator==(const Key& other) const {
            return width == other.width && elide == other.elide && text == other.text &&
                   font == other.font;
        }
        friend size_t qHash(const Key& key, size_t seed = 0) {
            return qHashMulti(seed, key.text, key.font, key.width, static_cast<int>(key.elide));
        }
    };
    struct LaidOut {
        QStaticText text;   // the cell's text, elided where it does not fit
        bool fits = false;  // the whole text fits the width on one line
    };
    const LaidOut& laidOut(Key key) const;

    mutable QHash<Key, LaidOut> m_cache;
};

/// Puts every table view under `root` back on Qt's QStyledItemDelegate: the reference side of the
/// benches' delegate A/B (`--styled-delegates`, BM_RunViewPaint256ReferenceStyledDelegate).
void useStyledDelegates(QWidget* root);

}  // namespace runplane::gui
