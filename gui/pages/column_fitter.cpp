#include "gui/pages/column_fitter.h"

#include <QAbstractItemModel>
#include <QEvent>
#include <QHeaderView>
#include <QSplitter>
#include <QTableView>
#include <QTimer>

#include <algorithm>

#include "gui/pages/fit_columns.h"

namespace runplane::gui {

ColumnFitter::ColumnFitter(QTableView* view,
                           std::function<std::vector<std::pair<int, int>>()> elastic, int minWidth,
                           QObject* parent)
    : QObject(parent), m_view(view), m_elastic(std::move(elastic)), m_minWidth(minWidth) {
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(0);
    connect(m_timer, &QTimer::timeout, this, &ColumnFitter::fit);
    QHeaderView* header = m_view->horizontalHeader();
    connect(header, &QHeaderView::sectionResized, this,
            [this] { m_userSized = m_userSized || (m_headerPressed && !m_fitting); });
    // A column shown or hidden (the header's menu) is fitted with the others.
    connect(header, &QHeaderView::sectionCountChanged, this, &ColumnFitter::fitSoon);
    m_view->viewport()->installEventFilter(this);
    header->viewport()->installEventFilter(this);
}

void ColumnFitter::fitSoon() {
    m_timer->start();
}

void ColumnFitter::fit() {
    if (m_fitting || m_userSized || m_view->model() == nullptr ||
        m_view->model()->rowCount() == 0 || !m_view->isVisible() ||
        m_view->viewport()->width() < m_minWidth) {
        return;
    }
    m_fitting = true;
    const std::vector<std::pair<int, int>> elastic = m_elastic();
    if (m_splitter != nullptr && m_splitter->count() == 2) {
        m_view->resizeColumnsToContents();
        int narrowest = 0;
        for (int c = 0; c < m_view->model()->columnCount(); ++c) {
            if (m_view->isColumnHidden(c)) {
                continue;
            }
            int w = m_view->columnWidth(c);
            for (const auto& [column, floor] : elastic) {
                w = column == c ? std::min(w, floor) : w;
            }
            narrowest += w;
        }
        const int missing = narrowest - m_view->viewport()->width();
        QList<int> sizes = m_splitter->sizes();
        const int other = 1 - m_pane;
        const int grow = std::min(missing, sizes[other] - m_otherMinWidth);
        if (grow > 0) {
            sizes[m_pane] += grow;
            sizes[other] -= grow;
            m_splitter->setSizes(sizes);
        }
    }
    fitColumnsToViewport(m_view, elastic);
    m_fitting = false;
}

void ColumnFitter::growInto(QSplitter* splitter, int pane, int otherMinWidth) {
    m_splitter = splitter;
    m_pane = std::clamp(pane, 0, 1);
    m_otherMinWidth = otherMinWidth;
}

bool ColumnFitter::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_view->viewport() && event->type() == QEvent::Resize) {
        fitSoon();  // the page shown, the window or splitter resized, the scroll bar came
    } else if (watched == m_view->horizontalHeader()->viewport()) {
        if (event->type() == QEvent::MouseButtonPress ||
            event->type() == QEvent::MouseButtonDblClick) {
            m_headerPressed = true;
        } else if (event->type() == QEvent::MouseButtonRelease) {
            m_headerPressed = false;
        }
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace runplane::gui
