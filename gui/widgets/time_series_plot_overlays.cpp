// What a time plot draws over its curves — phase spans in the lane, reference lines, event
// markers, the placeholder — and its legend row: TimeSeriesPlot's decorations, apart from the
// curves, ranges and export in time_series_plot.cpp.
#include <qcustomplot.h>

#include <QResizeEvent>

#include <algorithm>

#include "gui/widgets/palette.h"
#include "gui/widgets/time_series_plot.h"
#include "gui/widgets/wrapped_text.h"

namespace runplane::gui {

namespace {

constexpr int kMaxEventLabels = 40;    // beyond this, markers only (labels would overlap)
constexpr int kEventLabelChars = 28;   // longer marker labels are elided (the log has them whole)
constexpr int kPlaceholderMargin = 8;  // px between a wrapped placeholder and the data area's sides

// A cut label must not read as another value ("... for 60" of "... for 600 s"): elide it.
QString elided(const QString& text, int chars) {
    return text.size() <= chars ? text : text.left(chars - 1) + QChar(0x2026);
}

}  // namespace

QColor TimeSeriesPlot::phaseFill(const QString& phase) {
    QColor c = phaseColor(phase);
    c.setAlpha(std::min(255, c.alpha() * 3));
    return c;
}

// A line's or marker's label, `smaller` points under the plot's font. Labels lie over the data:
// a backing of the plot's white, a little translucent, keeps their text readable where a curve
// runs under it.
QCPItemText* TimeSeriesPlot::lineLabel(const QString& text, const QColor& color, int smaller) {
    auto* label = new QCPItemText(m_plot);
    label->setText(text);
    label->setColor(color);
    label->setBrush(QColor(255, 255, 255, 215));
    label->setPadding(QMargins(2, 0, 2, 0));
    QFont f = font();
    f.setPointSizeF(std::max(6.0, f.pointSizeF() - smaller));
    label->setFont(f);
    return label;
}

void TimeSeriesPlot::addOverlayItems() {
    for (const PhaseSpan& p : m_phases) {
        auto* rect = new QCPItemRect(m_plot);
        rect->setLayer(QStringLiteral("phases"));
        rect->setClipAxisRect(m_lane);
        for (QCPItemPosition* pos : {rect->topLeft, rect->bottomRight}) {
            pos->setAxes(m_lane->axis(QCPAxis::atBottom), m_lane->axis(QCPAxis::atLeft));
            pos->setAxisRect(m_lane);
            pos->setTypeX(QCPItemPosition::ptPlotCoords);
            pos->setTypeY(QCPItemPosition::ptAxisRectRatio);
        }
        rect->topLeft->setCoords(p.t0, 0);
        rect->bottomRight->setCoords(std::max(p.t1, p.t0), 1);
        rect->setPen(Qt::NoPen);
        rect->setBrush(phaseFill(p.phase));
    }

    for (const AlarmLine& a : m_alarms) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->point1->setCoords(0, a.y);
        line->point2->setCoords(1, a.y);
        QPen pen(a.color, 1.4);
        pen.setStyle(a.dashed ? Qt::DashLine : Qt::SolidLine);
        line->setPen(pen);
        auto* label = lineLabel(a.label, a.color, 1);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(a.labelLeft ? 0.005 : 0.995, a.y);
        label->setPositionAlignment((a.labelLeft ? Qt::AlignLeft : Qt::AlignRight) |
                                    Qt::AlignBottom);
    }

    const bool labelEvents = static_cast<int>(m_events.size()) <= kMaxEventLabels;
    for (const EventMarker& e : m_events) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point1->setCoords(e.t, 0);
        line->point2->setCoords(e.t, 1);
        QPen pen(e.color, 1.2);
        pen.setStyle(Qt::DotLine);
        line->setPen(pen);
        if (labelEvents && !e.label.isEmpty()) {
            auto* label = lineLabel(elided(e.label, kEventLabelChars), e.color, 2);
            label->position->setTypeX(QCPItemPosition::ptPlotCoords);
            label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            label->position->setCoords(e.t, 0.01);
            label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
            label->setRotation(-90);
        }
    }

    if (!m_placeholder.isEmpty()) {
        m_placeholderItem = new QCPItemText(m_plot);
        m_placeholderItem->position->setType(QCPItemPosition::ptAxisRectRatio);
        m_placeholderItem->position->setCoords(0.5, 0.5);
        m_placeholderItem->setTextAlignment(Qt::AlignTop | Qt::AlignHCenter);
        m_placeholderItem->setText(m_placeholder);
        m_placeholderItem->setColor(QColor(110, 110, 110));
        fitPlaceholder();
    }
}

// issue 46: one line of "Cannot reach A: …; B: …" ran past both sides of the Cluster page's
// plot at 1280×720 (clipped at the data area). Wrapped to the data area less a margin on each
// side, centred; lines beyond its height are cut with "…" (placeholder() keeps the whole).
void TimeSeriesPlot::fitPlaceholder() {
    if (m_placeholderItem == nullptr) {
        return;
    }
    const QRect area = m_plot->axisRect()->rect();
    const QFontMetrics metrics(m_placeholderItem->font());
    const int lines = std::max(1, (area.height() - 2 * kPlaceholderMargin) / metrics.lineSpacing());
    const QString shown =
        wrapToWidth(m_placeholder, metrics, area.width() - 2 * kPlaceholderMargin, lines);
    if (shown != m_placeholderItem->text()) {
        m_placeholderItem->setText(shown);
    }
}

QString TimeSeriesPlot::shownPlaceholder() const {
    return m_placeholderItem != nullptr ? m_placeholderItem->text() : QString();
}

QRect TimeSeriesPlot::placeholderRect() const {
    if (m_placeholderItem == nullptr) {
        return {};
    }
    // As QCPItemText::draw places it: its text's bounding box centred on its position.
    QRect r = QFontMetrics(m_placeholderItem->font())
                  .boundingRect(0, 0, 0, 0, Qt::TextDontClip | m_placeholderItem->textAlignment(),
                                m_placeholderItem->text());
    r.moveCenter(m_placeholderItem->position->pixelPosition().toPoint());
    return r;
}

// The legend's row holds it only while it has entries to show: QCPLayoutGrid gives a column
// the smallest maximum width of its elements, and an empty legend's is its few pixels of
// margin, which squeezed an empty plot's axis rect to 50 of 390 px (a run without GPUs).
void TimeSeriesPlot::placeLegend(bool shown) {
    QCPLayoutGrid* grid = m_plot->plotLayout();
    // hasElement first: element() of an empty cell logs a warning (on every rebuild of a plot
    // without legend entries).
    const bool placed = grid->hasElement(0, 0) && grid->element(0, 0) == m_plot->legend;
    if (shown && !placed) {
        grid->addElement(0, 0, m_plot->legend);
    } else if (!shown && placed) {
        grid->take(m_plot->legend);  // row 0 stays, empty: no size constraint
    }
    m_plot->legend->setVisible(shown);
}

// As many legend columns (at most kLegendColumns) as the widest entry leaves room for: four
// fixed columns ran wide entries ("node-a run.tree.rss_bytes") past the plot's right edge,
// where they were cut off. An export fits them to its own width, then back to the widget's (a
// report's plot is never shown: fitted to the hidden widget, it had one column).
// `widest`: widestLegendEntry().
void TimeSeriesPlot::fitLegendColumns(int plotWidth, int widest) {
    if (widest <= 0) {
        return;
    }
    QCPLegend* legend = m_plot->legend;
    const int usable = plotWidth - legend->margins().left() - legend->margins().right();
    const int columns = std::clamp(
        (usable + legend->columnSpacing()) / std::max(1, widest + legend->columnSpacing()), 1,
        kLegendColumns);
    if (columns != legend->wrap()) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true);  // re-lays the entries
    }
}

// The widest legend entry's width; 0 when the legend has none.
int TimeSeriesPlot::widestLegendEntry() const {
    const QCPLegend* legend = m_plot->legend;
    int widest = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {  // cells of the grid, some empty
        if (const QCPAbstractLegendItem* entry = legend->item(i)) {
            widest = std::max(widest, entry->minimumOuterSizeHint().width());
        }
    }
    return widest;
}

bool TimeSeriesPlot::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Resize) {
        // Before QCustomPlot's own resize handling, which lays out and replots at the new size.
        fitLegendColumns(static_cast<QResizeEvent*>(event)->size().width(), widestLegendEntry());
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace runplane::gui
