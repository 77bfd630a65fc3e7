#include "gui/widgets/topology_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

#include "gui/widgets/palette.h"
#include "gui/widgets/stable_colors.h"

namespace runplane::gui {

namespace {
constexpr int kHeaderWidth = 92;
constexpr int kTopMargin = 22;
constexpr int kGap = 3;
constexpr int kMinCell = 26;
constexpr int kMaxCell = 86;

QColor cellColor(int key) {
    if (key < 0) {
        return QColor(225, 225, 225);
    }
    QColor c = seriesColor(key % seriesPaletteSize());
    if ((key / seriesPaletteSize()) % 2 == 1) {
        c = c.lighter(145);
    }
    return c;
}

// By luminance, not HSL lightness: a bright yellow has lightness 0.36 and took white text.
QColor textOn(const QColor& bg) {
    return textColorOn(bg);
}
}  // namespace

TopologyView::TopologyView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TopologyView::setData(TopologyData data) {
    m_data = std::move(data);
    updateGeometry();
    update();
}

int TopologyView::cellWidth() const {
    if (m_data.gpusPerNode <= 0) {
        return kMinCell;
    }
    const int avail = width() - kHeaderWidth - 8;
    return std::clamp(avail / m_data.gpusPerNode - kGap, kMinCell, kMaxCell);
}

int TopologyView::cellHeight() const {
    if (m_data.nodes <= 0) {
        return kMinCell;
    }
    const int avail = height() - kTopMargin - 36;
    return std::clamp(avail / m_data.nodes - kGap, kMinCell, kMaxCell / 2 + 10);
}

QRect TopologyView::cellRect(int node, int gpu) const {
    const int w = cellWidth();
    const int h = cellHeight();
    return {kHeaderWidth + gpu * (w + kGap), kTopMargin + node * (h + kGap), w, h};
}

QPoint TopologyView::cellCenter(int node, int gpu) const {
    return cellRect(node, gpu).center();
}

QSize TopologyView::sizeHint() const {
    return {kHeaderWidth + std::max(1, m_data.gpusPerNode) * (60 + kGap) + 8,
            kTopMargin + std::max(1, m_data.nodes) * (40 + kGap) + 36};
}

QSize TopologyView::minimumSizeHint() const {
    return {kHeaderWidth + std::max(1, m_data.gpusPerNode) * (kMinCell + kGap) + 8,
            kTopMargin + std::max(1, m_data.nodes) * (kMinCell + kGap) + 36};
}

const TopologyCell* TopologyView::cellAt(const QPoint& pos) const {
    for (const TopologyCell& c : m_data.cells) {
        if (cellRect(c.node, c.gpu).contains(pos)) {
            return &c;
        }
    }
    return nullptr;
}

bool TopologyView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        if (const TopologyCell* c = cellAt(help->pos())) {
            QToolTip::showText(help->globalPos(), c->tooltip, this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(e);
}

void TopologyView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.fillRect(rect(), palette().base());
    if (!m_data.invalidReason.isEmpty()) {
        p.setPen(QColor(0x8a, 0x10, 0x10));
        p.drawText(rect().adjusted(12, 12, -12, -12),
                   Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_data.invalidReason);
        return;
    }
    if (m_data.nodes <= 0 || m_data.gpusPerNode <= 0) {
        p.setPen(QColor(110, 110, 110));
        p.drawText(rect(), Qt::AlignCenter, tr("no topology (fix the errors first)"));
        return;
    }
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
    p.setFont(small);
    p.setPen(palette().text().color());
    for (int g = 0; g < m_data.gpusPerNode; ++g) {
        const QRect r = cellRect(0, g);
        p.drawText(QRect(r.left(), 2, r.width(), kTopMargin - 4), Qt::AlignCenter,
                   QStringLiteral("GPU %1").arg(g));
    }
    for (int n = 0; n < m_data.nodes; ++n) {
        const QRect first = cellRect(n, 0);
        const bool mixed = static_cast<size_t>(n) < m_data.mixedNodes.size() &&
                           m_data.mixedNodes[static_cast<size_t>(n)];
        QString label = QStringLiteral("node %1").arg(n);
        if (mixed) {
            label += QStringLiteral("  T+E");
        }
        p.setPen(mixed ? warningColor().darker(120) : palette().text().color());
        p.drawText(QRect(2, first.top(), kHeaderWidth - 6, first.height()),
                   Qt::AlignVCenter | Qt::AlignLeft, label);
        if (mixed) {
            const QRect last = cellRect(n, m_data.gpusPerNode - 1);
            p.setPen(QPen(warningColor(), 2.5));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(QRect(first.topLeft(), last.bottomRight()).adjusted(-2, -2, 2, 2), 4,
                              4);
        }
    }
    for (const TopologyCell& c : m_data.cells) {
        const QRect r = cellRect(c.node, c.gpu);
        const QColor bg = cellColor(c.colorKey);
        p.setPen(QPen(bg.darker(140), 1));
        p.setBrush(bg);
        p.drawRoundedRect(r, 3, 3);
        if (c.engine >= 0) {
            const int stripe = std::max(4, r.height() / 5);
            const QRect s(r.left() + 1, r.bottom() - stripe, r.width() - 1, stripe);
            p.setPen(Qt::NoPen);
            p.setBrush(QColor::fromHsv((c.engine * 67 + 280) % 360, 160, 120));
            p.drawRect(s);
        }
        p.setPen(textOn(bg));
        p.drawText(r.adjusted(1, 1, -1, -std::max(4, r.height() / 5)), Qt::AlignCenter, c.text);
    }
    if (!m_data.legend.isEmpty()) {
        const QRect last = cellRect(m_data.nodes - 1, 0);
        p.setPen(palette().text().color());
        p.drawText(QRect(kHeaderWidth, last.bottom() + 8, width() - kHeaderWidth - 8, 20),
                   Qt::AlignLeft | Qt::AlignVCenter, m_data.legend);
    }
}

}  // namespace runplane::gui
