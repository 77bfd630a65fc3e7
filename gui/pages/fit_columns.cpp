#include "gui/pages/fit_columns.h"

#include <QAbstractItemModel>
#include <QFontMetrics>
#include <QHeaderView>
#include <QStyle>
#include <QTableView>

#include <algorithm>

namespace runplane::gui {

int headerTitleWidth(const QTableView* view, int column) {
    const QHeaderView* header = view->horizontalHeader();
    const int margin = view->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    return QFontMetrics(header->font())
               .horizontalAdvance(view->model()->headerData(column, Qt::Horizontal).toString()) +
           2 * margin;
}

void fitColumnsToViewport(QTableView* view, const std::vector<std::pair<int, int>>& elastic) {
    view->resizeColumnsToContents();
    QHeaderView* header = view->horizontalHeader();
    const int columns = header->count();
    std::vector<int> width(static_cast<size_t>(columns), 0);
    std::vector<int> floor(static_cast<size_t>(columns), 0);
    int total = 0;
    for (int c = 0; c < columns; ++c) {
        if (header->isSectionHidden(c)) {
            continue;
        }
        width[static_cast<size_t>(c)] = view->columnWidth(c);
        floor[static_cast<size_t>(c)] =
            std::min(width[static_cast<size_t>(c)], headerTitleWidth(view, c));
        total += width[static_cast<size_t>(c)];
    }
    int excess = total - view->viewport()->width();
    for (const auto& [c, minimum] : elastic) {
        if (excess <= 0 || c < 0 || c >= columns) {
            break;
        }
        int& w = width[static_cast<size_t>(c)];
        const int take = std::clamp(w - minimum, 0, excess);
        w -= take;
        excess -= take;
        // Given up what it could: the water-fill below narrows only the others.
        floor[static_cast<size_t>(c)] = w;
    }
    if (excess > 0) {
        // Water-fill: the largest cap L such that every column at min(width, max(L, floor))
        // fits; binary search over L.
        auto sumAt = [&](int cap) {
            int sum = 0;
            for (size_t c = 0; c < width.size(); ++c) {
                sum += std::min(width[c], std::max(cap, floor[c]));
            }
            return sum;
        };
        const int target = view->viewport()->width();
        int lo = 0;
        int hi = *std::max_element(width.begin(), width.end());
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (sumAt(mid) <= target) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        for (size_t c = 0; c < width.size(); ++c) {
            width[c] = std::min(width[c], std::max(lo, floor[c]));
        }
    }
    for (int c = 0; c < columns; ++c) {
        if (!header->isSectionHidden(c)) {
            view->setColumnWidth(c, width[static_cast<size_t>(c)]);
        }
    }
}

}  // namespace runplane::gui
