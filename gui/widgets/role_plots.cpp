#include "gui/widgets/role_plots.h"

#include <QDateTime>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

#include "gui/widgets/palette.h"

namespace runplane::gui {

namespace {

constexpr int kRedrawMs = 40;
constexpr int kMarkerChars = 48;

QCustomPlot* makePlot(QWidget* owner, QLabel*& title, QTimer*& timer) {
    auto* layout = new QVBoxLayout(owner);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    title = new QLabel(owner);
    QFont f = title->font();
    f.setBold(true);
    title->setFont(f);
    layout->addWidget(title);
    auto* plot = new QCustomPlot(owner);
    plot->setMinimumSize(200, 120);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmLogical);
    plot->addLayer(QStringLiteral("phases"), plot->layer(QStringLiteral("grid")),
                   QCustomPlot::limBelow);
    plot->setMouseTracking(true);
    QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
    ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
    ticker->setDateTimeSpec(Qt::LocalTime);
    plot->xAxis->setTicker(ticker);
    layout->addWidget(plot, 1);
    timer = new QTimer(owner);
    timer->setSingleShot(true);
    timer->setInterval(kRedrawMs);
    return plot;
}

void placeholderText(QCustomPlot* plot, const QString& message) {
    auto* text = new QCPItemText(plot);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.5, 0.5);
    text->setText(message);
    text->setColor(QColor(0x70, 0x70, 0x70));
}

// Red vertical lines with their text, rotated along the line from its top.
void addMarkers(QCustomPlot* plot, const std::vector<EventMarker>& markers) {
    for (const EventMarker& m : markers) {
        auto* line = new QCPItemStraightLine(plot);
        line->point1->setTypeX(QCPItemPosition::ptPlotCoords);
        line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point2->setTypeX(QCPItemPosition::ptPlotCoords);
        line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point1->setCoords(m.t, 0);
        line->point2->setCoords(m.t, 1);
        line->setPen(QPen(m.color, 2));
        if (m.label.isEmpty()) {
            continue;
        }
        auto* label = new QCPItemText(plot);
        QString text = m.label;
        if (text.size() > kMarkerChars) {
            text = text.left(kMarkerChars - 1) + QChar(0x2026);
        }
        label->setText(text);
        label->setColor(m.color);
        label->setBrush(QColor(255, 255, 255, 215));
        QFont f = plot->font();
        f.setPointSizeF(std::max(6.0, f.pointSizeF() - 1));
        label->setFont(f);
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(m.t, 0.01);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        label->setRotation(-90);
    }
}

QString clock(double t) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t * 1000))
        .toString(QStringLiteral("HH:mm:ss"));
}

}  // namespace

// ---- StackedAreaPlot ----------------------------------------------------------------------

StackedAreaPlot::StackedAreaPlot(QWidget* parent) : HoverPlotWidget(parent) {
    m_plot = makePlot(this, m_title, m_timer);
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignTop);
    m_plot->legend->setBrush(QColor(255, 255, 255, 210));
    attachPlot(m_plot, m_timer);
}

void StackedAreaPlot::redraw() {
    rebuild();
    m_plot->replot();
}

void StackedAreaPlot::setTitle(const QString& title) {
    m_title->setText(title);
}

void StackedAreaPlot::setYLabel(const QString& label) {
    m_yLabel = label;
    m_timer->start();
}

void StackedAreaPlot::setData(std::vector<double> t, std::vector<StackedLayer> layers,
                              std::vector<PhaseSpan> phases, std::vector<EventMarker> markers) {
    m_t = std::move(t);
    m_layers = std::move(layers);
    m_phases = std::move(phases);
    m_markers = std::move(markers);
    m_placeholder.clear();
    m_timer->start();
}

void StackedAreaPlot::setPlaceholder(const QString& message) {
    m_t.clear();
    m_layers.clear();
    m_phases.clear();
    m_markers.clear();
    m_placeholder = message;
    m_timer->start();
}

int StackedAreaPlot::budgetLineCount() const {
    int n = 0;
    for (const StackedLayer& l : m_layers) {
        n += std::any_of(l.budgetTop.begin(), l.budgetTop.end(),
                         [](double v) { return !std::isnan(v); })
                 ? 1
                 : 0;
    }
    return n;
}

double StackedAreaPlot::yMax() const {
    return m_plot->yAxis->range().upper;
}

void StackedAreaPlot::rebuild() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->legend->setVisible(!m_layers.empty());
    m_plot->yAxis->setLabel(m_yLabel);
    if (m_t.empty() || m_layers.empty()) {
        placeholderText(m_plot, m_placeholder);
        return;
    }
    QVector<double> keys(m_t.begin(), m_t.end());
    QVector<double> below(keys.size(), 0.0);
    QCPGraph* previous = nullptr;
    double top = 0;
    for (const StackedLayer& l : m_layers) {
        QVector<double> values(keys.size());
        for (qsizetype i = 0; i < keys.size(); ++i) {
            const auto u = static_cast<std::size_t>(i);
            const double v = u < l.value.size() && !std::isnan(l.value[u]) ? l.value[u] : 0;
            values[i] = below[i] + v;
            top = std::max(top, values[i]);
        }
        QCPGraph* g = m_plot->addGraph();
        g->setName(l.label);
        g->setData(keys, values, true);
        g->setPen(QPen(l.color.darker(130), 1));
        QColor fill = l.color;
        fill.setAlpha(190);
        g->setBrush(fill);
        if (previous != nullptr) {
            g->setChannelFillGraph(previous);
        }
        previous = g;
        below = values;
    }
    for (const StackedLayer& l : m_layers) {
        if (l.budgetTop.size() != m_t.size()) {
            continue;
        }
        if (std::none_of(l.budgetTop.begin(), l.budgetTop.end(),
                         [](double v) { return !std::isnan(v); })) {
            continue;
        }
        QCPGraph* g = m_plot->addGraph();
        g->setName(l.label + tr(" plan"));
        g->setData(keys, QVector<double>(l.budgetTop.begin(), l.budgetTop.end()), true);
        g->setPen(QPen(l.color.darker(160), 2, Qt::DashLine));
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->removeFromLegend();
        for (double v : l.budgetTop) {
            top = std::isnan(v) ? top : std::max(top, v);
        }
    }
    for (const PhaseSpan& p : m_phases) {
        auto* rect = new QCPItemRect(m_plot);
        rect->setLayer(QStringLiteral("phases"));
        rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->topLeft->setCoords(p.t0, 0);
        rect->bottomRight->setCoords(p.t1, 1);
        rect->setPen(Qt::NoPen);
        rect->setBrush(phaseColor(p.phase));
        auto* name = new QCPItemText(m_plot);
        name->setLayer(QStringLiteral("phases"));
        name->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        name->position->setCoords(0.5 * (p.t0 + p.t1), 0.99);
        name->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        name->setText(p.phase);
        name->setColor(QColor(0x60, 0x60, 0x60));
    }
    addMarkers(m_plot, m_markers);
    m_plot->xAxis->setRange(m_t.front(), std::max(m_t.back(), m_t.front() + 1));
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.08 : 1);
}

void StackedAreaPlot::flush() {
    m_timer->stop();
    rebuild();
    m_plot->replot();
}

bool StackedAreaPlot::savePng(const QString& path, int width, int height) {
    flush();
    return m_plot->savePng(path, width, height);
}

QPoint StackedAreaPlot::pixelOf(double x, double y) const {
    const QPoint inPlot(static_cast<int>(std::lround(m_plot->xAxis->coordToPixel(x))),
                        static_cast<int>(std::lround(m_plot->yAxis->coordToPixel(y))));
    return m_plot->mapTo(this, inPlot);
}

QString StackedAreaPlot::hoverTextAt(QPoint pixel) const {
    if (!m_hover || m_t.empty()) {
        return {};
    }
    const QPoint p = m_plot->mapFrom(this, pixel);
    return m_hover(m_plot->xAxis->pixelToCoord(p.x()), m_plot->yAxis->pixelToCoord(p.y()));
}

// ---- PhaseLanesPlot -----------------------------------------------------------------------

PhaseLanesPlot::PhaseLanesPlot(QWidget* parent) : HoverPlotWidget(parent) {
    m_plot = makePlot(this, m_title, m_timer);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    m_plot->yAxis->setRangeReversed(true);
    attachPlot(m_plot, m_timer);
}

void PhaseLanesPlot::redraw() {
    rebuild();
    m_plot->replot();
}

void PhaseLanesPlot::setTitle(const QString& title) {
    m_title->setText(title);
}

void PhaseLanesPlot::setLanes(std::vector<LaneRow> lanes, std::vector<EventMarker> markers) {
    m_lanes = std::move(lanes);
    m_markers = std::move(markers);
    m_placeholder.clear();
    m_timer->start();
}

void PhaseLanesPlot::setPlaceholder(const QString& message) {
    m_lanes.clear();
    m_markers.clear();
    m_placeholder = message;
    m_timer->start();
}

void PhaseLanesPlot::rebuild() {
    m_plot->clearItems();
    if (m_lanes.empty()) {
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        placeholderText(m_plot, m_placeholder);
        return;
    }
    QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
    double lo = 0;
    double hi = 0;
    bool any = false;
    for (std::size_t i = 0; i < m_lanes.size(); ++i) {
        const LaneRow& lane = m_lanes[i];
        const auto y = static_cast<double>(i);
        names->addTick(y, lane.label);
        for (const LaneBar& b : lane.bars) {
            auto* rect = new QCPItemRect(m_plot);
            rect->topLeft->setCoords(b.t0, y - 0.38);
            rect->bottomRight->setCoords(b.t1, y + 0.38);
            QColor fill = phaseColor(b.phase);
            fill.setAlpha(210);
            rect->setBrush(fill);
            rect->setPen(QPen(fill.darker(150), 1));
            lo = any ? std::min(lo, b.t0) : b.t0;
            hi = any ? std::max(hi, b.t1) : b.t1;
            any = true;
            auto* text = new QCPItemText(m_plot);
            text->setClipToAxisRect(true);
            text->position->setCoords(0.5 * (b.t0 + b.t1), y);
            text->setText(b.phase);
            text->setColor(QColor(0x30, 0x30, 0x30));
        }
        if (lane.highlight) {
            auto* frame = new QCPItemRect(m_plot);
            frame->topLeft->setTypeX(QCPItemPosition::ptAxisRectRatio);
            frame->bottomRight->setTypeX(QCPItemPosition::ptAxisRectRatio);
            frame->topLeft->setCoords(0, y - 0.48);
            frame->bottomRight->setCoords(1, y + 0.48);
            frame->setPen(QPen(errorColor(), 2));
            frame->setBrush(Qt::NoBrush);
            auto* note = new QCPItemText(m_plot);
            note->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
            note->position->setCoords(0.995, y);
            note->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
            note->setText(lane.note);
            note->setColor(errorColor());
            note->setBrush(QColor(255, 255, 255, 225));
            QFont f = note->font();
            f.setBold(true);
            note->setFont(f);
        }
    }
    m_plot->yAxis->setTicker(names);
    m_plot->yAxis->setRange(-0.6, static_cast<double>(m_lanes.size()) - 0.4);
    addMarkers(m_plot, m_markers);
    for (const EventMarker& m : m_markers) {
        lo = any ? std::min(lo, m.t) : m.t;
        hi = any ? std::max(hi, m.t) : m.t;
        any = true;
    }
    const double pad = std::max(1.0, 0.02 * (hi - lo));
    m_plot->xAxis->setRange(lo - pad, hi + pad);
}

void PhaseLanesPlot::flush() {
    m_timer->stop();
    rebuild();
    m_plot->replot();
}

bool PhaseLanesPlot::savePng(const QString& path, int width, int height) {
    flush();
    return m_plot->savePng(path, width, height);
}

QString PhaseLanesPlot::hoverText(double x, int lane) const {
    if (lane < 0 || lane >= laneCount()) {
        return {};
    }
    const LaneRow& row = m_lanes[static_cast<std::size_t>(lane)];
    for (const LaneBar& b : row.bars) {
        if (x >= b.t0 && x <= b.t1) {
            QString text = QStringLiteral("%1: %2 %3–%4 (%5 s)")
                               .arg(row.label, b.phase, clock(b.t0), clock(b.t1))
                               .arg(b.t1 - b.t0, 0, 'f', 1);
            if (row.highlight && !row.note.isEmpty()) {
                text += QStringLiteral("; ") + row.note;
            }
            return text;
        }
    }
    return {};
}

QPoint PhaseLanesPlot::pixelOf(double x, int lane) const {
    const QPoint inPlot(
        static_cast<int>(std::lround(m_plot->xAxis->coordToPixel(x))),
        static_cast<int>(std::lround(m_plot->yAxis->coordToPixel(static_cast<double>(lane)))));
    return m_plot->mapTo(this, inPlot);
}

QString PhaseLanesPlot::hoverTextAt(QPoint pixel) const {
    const QPoint p = m_plot->mapFrom(this, pixel);
    const double y = m_plot->yAxis->pixelToCoord(p.y());
    return hoverText(m_plot->xAxis->pixelToCoord(p.x()), static_cast<int>(std::lround(y)));
}

}  // namespace runplane::gui
