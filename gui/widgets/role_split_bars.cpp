#include "gui/widgets/role_split_bars.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPen>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace runplane::gui {

namespace {

constexpr int kTitleH = 22;
constexpr int kBarH = 18;
constexpr int kGap = 6;
constexpr int kLabelW = 150;
constexpr int kNoteW = 150;
constexpr int kMargin = 4;

QString gb(double bytes) {
    return QString::number(bytes / 1e9, 'f', bytes >= 100e9 ? 0 : (bytes >= 1e9 ? 1 : 3)) +
           QStringLiteral(" GB");
}

double total(const SplitBar& b) {
    double s = 0;
    for (const SplitSegment& seg : b.segments) {
        s += std::max(0.0, seg.value);
    }
    return s;
}

}  // namespace

RoleSplitBars::RoleSplitBars(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void RoleSplitBars::setTitle(const QString& title) {
    m_title = title;
    update();
}

void RoleSplitBars::setBars(std::vector<SplitBar> bars) {
    m_bars = std::move(bars);
    m_placeholder.clear();
    updateGeometry();
    update();
}

void RoleSplitBars::setPlaceholder(const QString& message) {
    m_bars.clear();
    m_placeholder = message;
    updateGeometry();
    update();
}

double RoleSplitBars::scale() const {
    double s = 0;
    for (const SplitBar& b : m_bars) {
        s = std::max({s, b.capacity, total(b)});
    }
    return s;
}

QRect RoleSplitBars::barArea(int bar) const {
    const int y = kTitleH + kMargin + bar * (kBarH + kGap);
    const int w = std::max(10, width() - kLabelW - kNoteW - 2 * kMargin);
    return {kMargin + kLabelW, y, w, kBarH};
}

QRect RoleSplitBars::segmentRect(int bar, int segment) const {
    if (bar < 0 || bar >= barCount()) {
        return {};
    }
    const SplitBar& b = m_bars[static_cast<std::size_t>(bar)];
    const double s = scale();
    if (segment < 0 || segment >= static_cast<int>(b.segments.size()) || s <= 0) {
        return {};
    }
    const QRect area = barArea(bar);
    double before = 0;
    for (int i = 0; i < segment; ++i) {
        before += std::max(0.0, b.segments[static_cast<std::size_t>(i)].value);
    }
    const double v = std::max(0.0, b.segments[static_cast<std::size_t>(segment)].value);
    const int x0 = area.left() + static_cast<int>(std::lround(area.width() * before / s));
    const int x1 = area.left() + static_cast<int>(std::lround(area.width() * (before + v) / s));
    if (x1 <= x0) {
        return {};
    }
    return {x0, area.top(), x1 - x0, area.height()};
}

int RoleSplitBars::plannedMarkerX(int bar, int segment) const {
    const QRect r = segmentRect(bar, segment);
    if (r.isEmpty()) {
        return -1;
    }
    const SplitSegment& seg =
        m_bars[static_cast<std::size_t>(bar)].segments[static_cast<std::size_t>(segment)];
    if (std::isnan(seg.planned)) {
        return -1;
    }
    const QRect area = barArea(bar);
    const double px = area.width() * std::max(0.0, seg.planned) / scale();
    return std::min(area.right(), r.left() + static_cast<int>(std::lround(px)));
}

QRect RoleSplitBars::overPlanRect(int bar, int segment) const {
    const int x = plannedMarkerX(bar, segment);
    if (x < 0 || !m_bars[static_cast<std::size_t>(bar)]
                      .segments[static_cast<std::size_t>(segment)]
                      .overPlan()) {
        return {};
    }
    const QRect r = segmentRect(bar, segment);
    return x >= r.right() ? QRect() : QRect(QPoint(x, r.top()), r.bottomRight());
}

QString RoleSplitBars::hoverTextAt(QPoint pixel) const {
    for (int i = 0; i < barCount(); ++i) {
        const SplitBar& b = m_bars[static_cast<std::size_t>(i)];
        for (int k = 0; k < static_cast<int>(b.segments.size()); ++k) {
            if (!segmentRect(i, k).contains(pixel)) {
                continue;
            }
            const SplitSegment& seg = b.segments[static_cast<std::size_t>(k)];
            const double whole = b.capacity > 0 ? b.capacity : total(b);
            QString text = QStringLiteral("%1 — %2: %3").arg(b.label, seg.label, gb(seg.value));
            if (whole > 0) {
                text += QStringLiteral(" (%1 % of %2)")
                            .arg(100.0 * seg.value / whole, 0, 'f', 1)
                            .arg(gb(whole));
            }
            if (!std::isnan(seg.planned)) {
                text += QStringLiteral(", plan %1").arg(gb(seg.planned));
                if (seg.overPlan()) {
                    text += QStringLiteral(": %1 over").arg(gb(seg.value - seg.planned));
                }
            }
            return text;
        }
    }
    return {};
}

QSize RoleSplitBars::sizeHint() const {
    const int rows = std::max(1, barCount());
    return {kLabelW + kNoteW + 400, kTitleH + 2 * kMargin + rows * (kBarH + kGap)};
}

QSize RoleSplitBars::minimumSizeHint() const {
    return {kLabelW + kNoteW + 100, kTitleH + 2 * kMargin + kBarH};
}

bool RoleSplitBars::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const QString text = hoverTextAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    return QWidget::event(event);
}

void RoleSplitBars::paintEvent(QPaintEvent* /*event*/) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin, 0, width() - 2 * kMargin, kTitleH), Qt::AlignVCenter | Qt::AlignLeft,
               m_title);
    p.setFont(font());
    if (m_bars.empty()) {
        p.setPen(QColor(0x70, 0x70, 0x70));
        p.drawText(rect().adjusted(kMargin, kTitleH, -kMargin, -kMargin), Qt::AlignCenter,
                   m_placeholder);
        return;
    }
    const QFontMetrics fm(font());
    for (int i = 0; i < barCount(); ++i) {
        const SplitBar& b = m_bars[static_cast<std::size_t>(i)];
        const QRect area = barArea(i);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(kMargin, area.top(), kLabelW - kMargin, area.height()),
                   Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(b.label, Qt::ElideMiddle, kLabelW - kMargin));
        p.fillRect(area, QColor(0xee, 0xee, 0xee));
        for (int k = 0; k < static_cast<int>(b.segments.size()); ++k) {
            const QRect r = segmentRect(i, k);
            if (!r.isEmpty()) {
                p.fillRect(r, b.segments[static_cast<std::size_t>(k)].color);
            }
        }
        p.setPen(QColor(0x80, 0x80, 0x80));
        p.drawRect(area.adjusted(0, 0, -1, -1));
        // The plan beside the measured: a dark marker per planned segment, a red outline over
        // what a segment holds beyond its plan.
        for (int k = 0; k < static_cast<int>(b.segments.size()); ++k) {
            const QRect over = overPlanRect(i, k);
            if (!over.isEmpty()) {
                p.setPen(QPen(QColor(0xC0, 0x00, 0x00), 2));
                p.drawRect(over.adjusted(1, 1, -1, -1));
            }
            const int x = plannedMarkerX(i, k);
            if (x >= 0) {
                p.setPen(QPen(palette().color(QPalette::Text), 2));
                p.drawLine(x, area.top() - 3, x, area.bottom() + 3);
            }
        }
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(area.right() + kMargin, area.top(), kNoteW, area.height()),
                   Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(b.note, Qt::ElideRight, kNoteW - kMargin));
    }
}

}  // namespace runplane::gui
