// CachedTextDelegate: the same pixels as Qt's styled delegate for text that fits, the styled
// delegate's own drawing for text that does not, and a bounded cache.
#include <gtest/gtest.h>

#include <QApplication>
#include <QBrush>
#include <QHeaderView>
#include <QImage>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTableView>

#include "gui/widgets/cached_text_delegate.h"

using runplane::gui::CachedTextDelegate;

namespace {

// A peaks-like table: node names, right-aligned sizes, a red foreground, a tinted background,
// one selected row, and (optionally) two columns too narrow for their text.
struct Table {
    QStandardItemModel model{40, 4};
    QTableView view;
    explicit Table(bool narrowColumns = false, bool wordWrap = true) {
        for (int row = 0; row < model.rowCount(); ++row) {
            model.setItem(row, 0, new QStandardItem(QStringLiteral("node-%1.cluster").arg(row)));
            auto* peak = new QStandardItem(QStringLiteral("%1.%2 GB").arg(row * 37).arg(row % 10));
            peak->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (row % 7 == 0) {
                peak->setForeground(QBrush(QColor(0xC6, 0x28, 0x28)));
            }
            model.setItem(row, 1, peak);
            auto* phase = new QStandardItem(row % 3 == 0 ? QStringLiteral("rollout")
                                                         : QStringLiteral("weight_sync"));
            if (row % 5 == 0) {
                phase->setBackground(QBrush(QColor(0xFF, 0xF3, 0xC4)));
            }
            model.setItem(row, 2, phase);
            model.setItem(row, 3, new QStandardItem(QStringLiteral("+%1m 05s").arg(row)));
        }
        view.setModel(&model);
        view.setWordWrap(wordWrap);
        view.horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        view.resize(520, 600);
        view.show();
        view.selectRow(3);
        if (narrowColumns) {
            for (int column : {1, 3}) {
                view.horizontalHeader()->setSectionResizeMode(column, QHeaderView::Fixed);
                view.horizontalHeader()->resizeSection(column, 40);
            }
        }
    }
    QImage render() {
        QApplication::processEvents();
        QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        view.render(&image);
        return image;
    }
};

int differingPixels(const QImage& a, const QImage& b) {
    if (a.size() != b.size()) {
        return -1;
    }
    int n = 0;
    for (int y = 0; y < a.height(); ++y) {
        for (int x = 0; x < a.width(); ++x) {
            n += a.pixel(x, y) != b.pixel(x, y) ? 1 : 0;
        }
    }
    return n;
}

}  // namespace

TEST(CachedTextDelegate, PaintsTheStyledDelegatesPixelsForTextThatFits) {
    Table styled;
    styled.view.setItemDelegate(new QStyledItemDelegate(&styled.view));
    Table cached;
    auto* delegate = new CachedTextDelegate(&cached.view);
    cached.view.setItemDelegate(delegate);
    const QImage expected = styled.render();
    const QImage got = cached.render();
    EXPECT_EQ(differingPixels(expected, got), 0);
    EXPECT_GT(delegate->cachedTexts(), 40);  // it drew the cells itself
    // A second paint draws from the cache: the same pixels, no new entries.
    const qsizetype entries = delegate->cachedTexts();
    EXPECT_EQ(differingPixels(expected, cached.render()), 0);
    EXPECT_EQ(delegate->cachedTexts(), entries);
}

TEST(CachedTextDelegate, LeavesTextThatDoesNotFitToTheStyledDelegate) {
    Table styled(true);
    styled.view.setItemDelegate(new QStyledItemDelegate(&styled.view));
    Table cached(true);
    cached.view.setItemDelegate(new CachedTextDelegate(&cached.view));
    // The narrow column wraps or elides as Qt does; the rest is the same too.
    EXPECT_EQ(differingPixels(styled.render(), cached.render()), 0);
}

TEST(CachedTextDelegate, ElidesTextThatDoesNotFitAsTheStyleDoesWhereTheViewDoesNotWrap) {
    Table styled(true, false);
    styled.view.setItemDelegate(new QStyledItemDelegate(&styled.view));
    Table cached(true, false);
    cached.view.setItemDelegate(new CachedTextDelegate(&cached.view));
    // The narrow columns do cut their text.
    ASSERT_GT(cached.view.fontMetrics().horizontalAdvance(QStringLiteral("+10m 05s")),
              cached.view.columnWidth(3));
    EXPECT_EQ(differingPixels(styled.render(), cached.render()), 0);
    // Middle and left eliding too.
    for (Qt::TextElideMode mode : {Qt::ElideMiddle, Qt::ElideLeft}) {
        styled.view.setTextElideMode(mode);
        cached.view.setTextElideMode(mode);
        EXPECT_EQ(differingPixels(styled.render(), cached.render()), 0) << mode;
    }
}

TEST(CachedTextDelegate, ItsCacheStaysBounded) {
    Table table;
    auto* delegate = new CachedTextDelegate(&table.view);
    table.view.setItemDelegate(delegate);
    // A live table's values drift: paint more distinct texts than the cache holds.
    for (int round = 0; round < CachedTextDelegate::kMaxEntries / 40 + 10; ++round) {
        for (int row = 0; row < table.model.rowCount(); ++row) {
            table.model.item(row, 3)->setText(QStringLiteral("+%1s").arg(round * 1000 + row));
        }
        table.render();
        ASSERT_LE(delegate->cachedTexts(), CachedTextDelegate::kMaxEntries);
    }
}
