// The only place with time_series_plot_overlays.cpp that touches QCustomPlot for time plots:
// here the curves and bands, the phase lane, follow/zoom, hover and export; there what is drawn
// over them (phase spans, reference lines, event markers, the placeholder) and the legend row.
#include "gui/widgets/time_series_plot.h"

#include <qcustomplot.h>

#include <QDateTime>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#ifdef RUNPLANE_HAVE_QTSVG
#include <QSvgGenerator>
#endif

#include "gui/widgets/fitted_ticker.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/plot_hover.h"

namespace runplane::gui {

namespace {

constexpr int kReplotIntervalMs = 40;  // ≤ 25 fps
constexpr int kRangeSettleMs = 150;    // zoom/pan settles before the owner re-queries
constexpr int kPhaseLaneHeight = 14;   // px: the phase lane under the data

QVector<double> toQVector(const std::vector<double>& v) {
    return QVector<double>(v.begin(), v.end());
}

// `v` along `t`, with a NaN point in the middle of each gap: QCustomPlot breaks a line (and a
// band) at a NaN, so a gap is drawn as no line rather than a straight segment across it.
QVector<double> withBreaks(const std::vector<double>& t, const std::vector<double>& v,
                           const std::vector<std::pair<double, double>>& gaps, bool keys) {
    if (gaps.empty()) {
        return toQVector(keys ? t : v);
    }
    QVector<double> out;
    out.reserve(static_cast<qsizetype>(t.size() + gaps.size()));
    auto g = gaps.begin();
    for (size_t i = 0; i < t.size(); ++i) {
        while (g != gaps.end() && g->second <= t[i]) {
            if (g->first < t[i] && (i == 0 || g->first >= t[i - 1])) {
                out.push_back(keys ? 0.5 * (g->first + g->second)
                                   : std::numeric_limits<double>::quiet_NaN());
            }
            ++g;
        }
        out.push_back(keys ? t[i] : v[i]);
    }
    return out;
}

QColor withAlpha(QColor c, int alpha) {
    c.setAlpha(alpha);
    return c;
}

}  // namespace

TimeSeriesPlot::TimeSeriesPlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    m_toolbar = new QWidget(this);
    auto* bar = new QHBoxLayout(m_toolbar);
    bar->setContentsMargins(4, 0, 4, 0);
    m_titleLabel = new QLabel(m_toolbar);
    QFont titleFont = m_titleLabel->font();
    titleFont.setBold(true);
    m_titleLabel->setFont(titleFont);
    bar->addWidget(m_titleLabel);
    bar->addStretch(1);
    m_followButton = new QToolButton(m_toolbar);
    m_followButton->setText(tr("Follow"));
    m_followButton->setCheckable(true);
    m_followButton->setChecked(true);
    m_followButton->setToolTip(tr("Keep the newest data in view. Zooming or panning pauses it."));
    m_resetButton = new QToolButton(m_toolbar);
    m_resetButton->setText(tr("Show all"));
    m_resetButton->setToolTip(tr("Zoom out to all data (pauses follow mode)"));
    bar->addWidget(m_followButton);
    bar->addWidget(m_resetButton);
    layout->addWidget(m_toolbar);

    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(200, 120);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setPlottingHint(QCP::phCacheLabels, true);
    connect(m_plot, &QCustomPlot::afterLayout, this, &TimeSeriesPlot::fitAxisLabels);
    connect(m_plot, &QCustomPlot::afterLayout, this, &TimeSeriesPlot::fitPlaceholder);
    // The ticks are chosen before the layout: a data area of another width than they assumed
    // (first layout, wider y labels) gets them again before drawing (fitted_ticker.h).
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        if (fittedTickerStale(m_plot->xAxis)) {
            m_plot->axisRect()->update(QCPLayoutElement::upPreparation);
        }
    });
    m_plot->addLayer(QStringLiteral("phases"), m_plot->layer(QStringLiteral("grid")),
                     QCustomPlot::limBelow);
    // QCustomPlot keeps its "overlay" layer (for a rubber band, which these plots do not use) in
    // a buffer of its own, blended over the plot on every paint although empty: one buffer.
    m_plot->layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmLogical);
    m_plot->legend->setVisible(true);
    // Graphs join the legend only when asked (rebuild): adding every graph and removing most
    // again re-lays the wrapped legend grid each time, quadratic in the graphs (256 nodes).
    m_plot->setAutoAddPlottableToLegend(false);
    QFont legendFont = font();
    legendFont.setPointSizeF(std::max(6.0, legendFont.pointSizeF() - 1));
    m_plot->legend->setFont(legendFont);
    m_plot->legend->setBrush(QColor(255, 255, 255, 210));
    // The legend sits in its own row above the axis rect, wrapped into columns: never over data.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->plotLayout()->setRowSpacing(0);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(kLegendColumns);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setMargins(QMargins(4, 0, 4, 0));
    m_marginGroup = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msLeft | QCP::msRight, m_marginGroup);
    layout->addWidget(m_plot, 1);
    m_plot->installEventFilter(this);  // legend columns fitted to each new width

    m_replotTimer = new QTimer(this);
    m_replotTimer->setSingleShot(true);
    m_replotTimer->setInterval(kReplotIntervalMs);
    connect(m_replotTimer, &QTimer::timeout, this, [this] {
        // A hidden plot (another tab, a closed page) is not drawn: its changes wait for
        // showEvent, so a live page redraws only what can be seen (docs/gui.md).
        if (!isVisible()) {
            m_replotPending = true;
            return;
        }
        if (m_dirty) {
            rebuild();
        }
        m_plot->replot();
        ++m_replotCount;
    });
    m_rangeTimer = new QTimer(this);
    m_rangeTimer->setSingleShot(true);
    m_rangeTimer->setInterval(kRangeSettleMs);
    connect(m_rangeTimer, &QTimer::timeout, this, [this] {
        const auto [lo, hi] = visibleRange();
        emit visibleRangeChanged(lo, hi, m_plot->axisRect()->width());
    });

    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange&) {
                if (!m_settingRange) {
                    onUserRangeChange();
                }
            });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        if (e->buttons() == Qt::NoButton) {
            showHoverTip(e);
        }
    });
    connect(m_followButton, &QToolButton::toggled, this, [this](bool on) { setFollowing(on); });
    connect(m_resetButton, &QToolButton::clicked, this, [this] {
        const auto [lo, hi] = dataExtent();
        if (lo < hi) {
            setVisibleRange(lo, hi);
        }
    });
    setXAxisKind(XAxisKind::WallClock);
}

TimeSeriesPlot::~TimeSeriesPlot() = default;

void TimeSeriesPlot::setTitle(const QString& title) {
    m_titleLabel->setText(title);
}

void TimeSeriesPlot::setAxisLabels(const QString& xLabel, const QString& yLabel) {
    m_xLabel = xLabel;
    m_yLabel = yLabel;
    m_plot->xAxis->setLabel(xLabel);
    m_plot->yAxis->setLabel(yLabel);
    // Fitted to the data area of the last layout now, not at the next replot: until then a longer
    // title (a live view adding "alarm …") was the axis's label, unfitted, for a timer's wait.
    fitAxisLabels();
    scheduleReplot();
}

// A title longer than its axis would be drawn past the data area, over the legend or the plot
// above (issue 46: "host memory used (GB); above: RAM …, alarm …" at 1280×720). The axis rect
// is known once QCustomPlot has laid out; the title's length does not change the layout (only
// its font's height does), so eliding it here is stable.
void TimeSeriesPlot::fitAxisLabels() {
    const QFontMetrics fm(m_plot->yAxis->labelFont());
    const QRect area = m_plot->axisRect()->rect();
    const QString y = fm.elidedText(m_yLabel, Qt::ElideRight, std::max(0, area.height()));
    const QString x = QFontMetrics(m_plot->xAxis->labelFont())
                          .elidedText(m_xLabel, Qt::ElideRight, std::max(0, area.width()));
    if (y != m_plot->yAxis->label()) {
        m_plot->yAxis->setLabel(y);
    }
    if (x != m_plot->xAxis->label()) {
        m_plot->xAxis->setLabel(x);
    }
}

void TimeSeriesPlot::updatePhaseLane() {
    QCPLayoutGrid* grid = m_plot->plotLayout();
    if (m_phases.empty()) {
        if (m_lane != nullptr) {
            grid->remove(m_lane);  // deletes it
            grid->simplify();
            m_lane = nullptr;
        }
        return;
    }
    if (m_lane != nullptr) {
        return;
    }
    m_lane = new QCPAxisRect(m_plot);
    m_lane->setMinimumSize(0, kPhaseLaneHeight);
    m_lane->setMaximumSize(QWIDGETSIZE_MAX, kPhaseLaneHeight);
    m_lane->setMinimumMargins(QMargins(0, 0, 0, 0));
    m_lane->setAutoMargins(QCP::msLeft | QCP::msRight);
    m_lane->setMargins(QMargins(0, 2, 0, 2));
    for (QCPAxis* axis : m_lane->axes()) {
        axis->setVisible(false);
    }
    m_lane->axis(QCPAxis::atLeft)->setRange(0, 1);
    m_lane->axis(QCPAxis::atBottom)->setRange(m_plot->xAxis->range());
    m_lane->setRangeDrag(Qt::Orientations());
    m_lane->setRangeZoom(Qt::Orientations());
    m_lane->setMarginGroup(QCP::msLeft | QCP::msRight, m_marginGroup);
    grid->addElement(grid->rowCount(), 0, m_lane);
    grid->setRowStretchFactor(grid->rowCount() - 1, 0.001);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), m_lane,
            [lane = m_lane](const QCPRange& r) { lane->axis(QCPAxis::atBottom)->setRange(r); });
}

QRect TimeSeriesPlot::dataRect() const {
    return m_plot->axisRect()->rect();
}

QRect TimeSeriesPlot::phaseLaneRect() const {
    return m_lane != nullptr ? m_lane->rect() : QRect();
}

QRect TimeSeriesPlot::legendRect() const {
    return m_plot->legend->visible() ? m_plot->legend->outerRect() : QRect();
}

QString TimeSeriesPlot::xAxisLabel() const {
    return m_xLabel;
}

QString TimeSeriesPlot::yAxisLabel() const {
    return m_yLabel;
}

QString TimeSeriesPlot::shownAxisLabel(Qt::Orientation orientation) const {
    return orientation == Qt::Vertical ? m_plot->yAxis->label() : m_plot->xAxis->label();
}

QFont TimeSeriesPlot::axisLabelFont() const {
    return m_plot->yAxis->labelFont();
}

void TimeSeriesPlot::setXAxisKind(XAxisKind kind) {
    m_xKind = kind;
    m_plot->xAxis->setTicker(makeFittedTicker(kind, m_plot->xAxis));  // labels never meet
    scheduleReplot();
}

void TimeSeriesPlot::setYIncludesZero(bool include) {
    m_yIncludesZero = include;
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setFixedYRange(double lo, double hi) {
    m_fixedYLo = lo;
    m_fixedYHi = hi;
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setShowToolbar(bool show) {
    m_toolbar->setVisible(show);
}

void TimeSeriesPlot::setYAxisVisible(bool visible) {
    m_yAxisVisible = visible;  // ticks, labels and grid: rebuild(), which also asks for data
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setLegendVisible(bool visible) {
    m_legendVisible = visible;
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setSeries(std::vector<PlotSeries> series) {
    m_series = std::move(series);
    m_placeholder.clear();
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setAlarmLines(std::vector<AlarmLine> lines) {
    m_alarms = std::move(lines);
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setPhases(std::vector<PhaseSpan> phases) {
    m_phases = std::move(phases);
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setEvents(std::vector<EventMarker> events) {
    m_events = std::move(events);
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setPlaceholder(const QString& message) {
    m_series.clear();
    m_phases.clear();
    m_events.clear();
    m_placeholder = message;
    m_dirty = true;
    scheduleReplot();
}

void TimeSeriesPlot::setFollowWindow(double windowSeconds) {
    m_followWindow = std::max(0.0, windowSeconds);
    if (m_following) {
        m_dirty = true;
        scheduleReplot();
    }
}

void TimeSeriesPlot::setFollowing(bool following) {
    if (following == m_following) {
        return;
    }
    m_following = following;
    {
        const QSignalBlocker block(m_followButton);
        m_followButton->setChecked(following);
    }
    if (following) {
        applyFollowRange();
        autoscaleY();
        scheduleReplot();
    }
    emit followingChanged(following);
    if (following) {
        m_rangeTimer->start();
    }
}

void TimeSeriesPlot::setVisibleRange(double lo, double hi) {
    if (!(lo < hi)) {
        return;
    }
    m_settingRange = true;
    m_plot->xAxis->setRange(lo, hi);
    m_settingRange = false;
    if (m_following) {
        setFollowing(false);
    }
    autoscaleY();
    scheduleReplot();
}

std::pair<double, double> TimeSeriesPlot::visibleRange() const {
    const QCPRange r = m_plot->xAxis->range();
    return {r.lower, r.upper};
}

std::pair<double, double> TimeSeriesPlot::yRange() const {
    const QCPRange r = m_plot->yAxis->range();
    return {r.lower, r.upper};
}

void TimeSeriesPlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (m_replotPending) {
        m_replotPending = false;
        scheduleReplot();
    }
}

void TimeSeriesPlot::flush() {
    m_replotPending = false;
    m_replotTimer->stop();
    if (m_dirty) {
        rebuild();
    }
    m_plot->replot();
    ++m_replotCount;
}

bool TimeSeriesPlot::savePng(const QString& path, int width, int height) {
    flush();
    fitLegendColumns(width, widestLegendEntry());
    const bool saved = m_plot->savePng(path, width, height);
    fitLegendColumns(m_plot->width(), widestLegendEntry());
    if (!saved) {
        m_lastError = tr("could not write PNG %1").arg(path);
    }
    return saved;
}

bool TimeSeriesPlot::saveSvg(const QString& path, int width, int height) {
#ifdef RUNPLANE_HAVE_QTSVG
    flush();
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(QSize(width, height));
    generator.setViewBox(QRect(0, 0, width, height));
    generator.setTitle(m_titleLabel->text());
    QCPPainter painter;
    if (!painter.begin(&generator)) {
        m_lastError = tr("could not write SVG %1").arg(path);
        return false;
    }
    fitLegendColumns(width, widestLegendEntry());
    m_plot->toPainter(&painter, width, height);
    fitLegendColumns(m_plot->width(), widestLegendEntry());
    painter.end();
    return true;
#else
    Q_UNUSED(path);
    Q_UNUSED(width);
    Q_UNUSED(height);
    m_lastError = tr("SVG export unavailable: built without Qt Svg");
    return false;
#endif
}

int TimeSeriesPlot::drawnPointCount() const {
    int n = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i) {
        n += m_plot->graph(i)->dataCount();
    }
    return n;
}

void TimeSeriesPlot::scheduleReplot() {
    if (!m_replotTimer->isActive()) {
        m_replotTimer->start();
    }
}

void TimeSeriesPlot::rebuild() {
    m_dirty = false;
    m_plot->clearItems();
    m_cursor = nullptr;
    m_placeholderItem = nullptr;

    // The graphs are reused when the curves keep their shape (count, band, style, legend
    // entry) and the phase names are the same: a live refresh only replaces their data, without
    // deleting and re-adding hundreds of graphs and legend entries.
    std::vector<QString> layout;
    layout.reserve(m_series.size() + 4);
    for (const PlotSeries& s : m_series) {
        layout.push_back(QStringLiteral("%1%2%3|")
                             .arg(s.hasBand() ? 'b' : '-')
                             .arg(static_cast<int>(s.style))
                             .arg(s.inLegend && !s.name.isEmpty() ? s.name : QString()));
    }
    std::set<QString> phaseNames;
    for (const PhaseSpan& p : m_phases) {
        phaseNames.insert(p.phase);
    }
    for (const QString& name : phaseNames) {
        layout.push_back(QStringLiteral("phase|") + name);
    }
    const bool reuse = layout == m_graphLayout && m_plot->graphCount() == m_graphCount;
    if (!reuse) {
        m_plot->clearGraphs();
    }
    int next = 0;  // the next graph to reuse, in the order they were added
    auto graph = [&]() -> QCPGraph* { return reuse ? m_plot->graph(next++) : m_plot->addGraph(); };

    for (const PlotSeries& s : m_series) {
        const QVector<double> keys = withBreaks(s.t, s.t, s.gaps, true);
        if (s.hasBand()) {
            QCPGraph* upper = graph();
            QCPGraph* lower = graph();
            upper->setData(keys, withBreaks(s.t, s.max, s.gaps, false), true);
            lower->setData(keys, withBreaks(s.t, s.min, s.gaps, false), true);
            const QPen edge(withAlpha(s.color, 70), 0.8);
            upper->setPen(edge);
            lower->setPen(edge);
            upper->setBrush(withAlpha(s.color, s.faint ? 25 : 55));
            upper->setChannelFillGraph(lower);
            if (s.style == PlotSeries::Style::StepLine) {
                upper->setLineStyle(QCPGraph::lsStepLeft);
                lower->setLineStyle(QCPGraph::lsStepLeft);
            }
        }
        QCPGraph* line = graph();
        line->setName(s.name);
        line->setData(keys, withBreaks(s.t, s.value, s.gaps, false), true);
        const QColor c = s.faint ? withAlpha(s.color, 110) : s.color;
        line->setAntialiased(s.antialiased);
        switch (s.style) {
            case PlotSeries::Style::Line:
                line->setPen(QPen(c, s.lineWidth));
                break;
            case PlotSeries::Style::StepLine:
                line->setPen(QPen(c, s.lineWidth));
                line->setLineStyle(QCPGraph::lsStepLeft);
                break;
            case PlotSeries::Style::Points:
                line->setPen(QPen(c, 1));
                line->setLineStyle(QCPGraph::lsNone);
                line->setScatterStyle(
                    QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, s.faint ? 6 : 5));
                break;
        }
        if (!reuse && s.inLegend && !s.name.isEmpty()) {
            line->addToLegend();
        }
    }

    // Phases: drawn in their own lane under the data (an axis rect of its own, x linked to the
    // plot's), one legend swatch per distinct phase. They never shade the data area.
    updatePhaseLane();
    for (const QString& name : phaseNames) {
        QCPGraph* swatch = graph();
        if (!reuse) {
            swatch->addToLegend();
        }
        swatch->setName(tr("phase: %1").arg(name));
        swatch->setPen(Qt::NoPen);
        swatch->setBrush(phaseFill(name));
    }

    addOverlayItems();
    placeCursor();

    const int widestEntry = widestLegendEntry();
    placeLegend(m_legendVisible && widestEntry > 0);
    fitLegendColumns(m_plot->width(), widestEntry);

    // Axes without data (a placeholder) carry no numbers, ticks or grid: QCustomPlot's default
    // range would label them 0-5 s and -0.5-0.5 and run its zero line through the placeholder.
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        const bool scaled = hasData() && (axis == m_plot->xAxis || m_yAxisVisible);
        axis->setTickLabels(scaled);
        axis->setTicks(scaled);
        axis->setSubTicks(scaled);
        axis->grid()->setVisible(scaled);
    }

    m_graphLayout = std::move(layout);
    m_graphCount = m_plot->graphCount();

    if (m_following) {
        applyFollowRange();
    }
    autoscaleY();
}

bool TimeSeriesPlot::hasData() const {
    return !m_series.empty() || !m_phases.empty() || !m_events.empty();
}

std::pair<double, double> TimeSeriesPlot::dataExtent() const {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    for (const PlotSeries& s : m_series) {
        if (!s.t.empty()) {
            lo = std::min(lo, s.t.front());
            hi = std::max(hi, s.t.back());
        }
    }
    for (const PhaseSpan& p : m_phases) {
        lo = std::min(lo, p.t0);
        hi = std::max(hi, p.t1);
    }
    for (const EventMarker& e : m_events) {
        lo = std::min(lo, e.t);
        hi = std::max(hi, e.t);
    }
    if (!(lo <= hi)) {
        return {0, 0};
    }
    return {lo, hi};
}

void TimeSeriesPlot::applyFollowRange() {
    auto [lo, hi] = dataExtent();
    if (!(lo < hi)) {
        if (lo == hi && lo != 0) {
            lo -= 1;
            hi += 1;
        } else {
            return;
        }
    }
    if (m_followWindow > 0) {
        lo = std::max(lo, hi - m_followWindow);
    }
    const double pad = (hi - lo) * 0.02;
    m_settingRange = true;
    m_plot->xAxis->setRange(lo, hi + pad);
    m_settingRange = false;
}

void TimeSeriesPlot::autoscaleY() {
    if (m_fixedYLo < m_fixedYHi) {
        m_plot->yAxis->setRange(m_fixedYLo, m_fixedYHi);
        return;
    }
    const QCPRange x = m_plot->xAxis->range();
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    auto take = [&](double v) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    };
    for (const PlotSeries& s : m_series) {
        const auto first = std::lower_bound(s.t.begin(), s.t.end(), x.lower);
        const auto last = std::upper_bound(s.t.begin(), s.t.end(), x.upper);
        for (auto it = first; it != last; ++it) {
            const auto i = static_cast<size_t>(it - s.t.begin());
            take(s.value[i]);
            if (s.hasBand()) {
                take(s.min[i]);
                take(s.max[i]);
            }
        }
    }
    for (const AlarmLine& a : m_alarms) {
        if (a.scalesAxis) {
            take(a.y);
        }
    }
    if (m_yIncludesZero) {
        take(0);
    }
    if (!(lo <= hi)) {
        lo = 0;
        hi = 1;
    }
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = (hi - lo) * 0.06;
    m_plot->yAxis->setRange(m_yIncludesZero && lo >= 0 ? 0 : lo - pad, hi + pad);
}

void TimeSeriesPlot::onUserRangeChange() {
    if (m_following) {
        setFollowing(false);
    }
    autoscaleY();
    scheduleReplot();
    m_rangeTimer->start();
}

QString TimeSeriesPlot::hoverText(double x) const {
    return plotHoverText(m_series, m_xKind, m_plot->xAxis->label(), x);
}

void TimeSeriesPlot::showHoverTip(QMouseEvent* event) {
    if (m_series.empty()) {
        return;
    }
    const double key = m_plot->xAxis->pixelToCoord(event->position().x());
    const QCPRange x = m_plot->xAxis->range();
    if (key < x.lower || key > x.upper) {
        QToolTip::hideText();
        emit hovered(std::numeric_limits<double>::quiet_NaN());
        return;
    }
    emit hovered(key);
    const QString text = hoverText(key);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

}  // namespace runplane::gui

namespace runplane::gui {

void TimeSeriesPlot::setCursorX(double x) {
    if (std::isnan(x) && std::isnan(m_cursorX)) {
        return;
    }
    m_cursorX = x;
    placeCursor();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TimeSeriesPlot::placeCursor() {
    if (std::isnan(m_cursorX)) {
        if (m_cursor != nullptr) {
            m_plot->removeItem(m_cursor);
            m_cursor = nullptr;
        }
        return;
    }
    if (m_cursor == nullptr) {
        m_cursor = new QCPItemStraightLine(m_plot);
        m_cursor->setPen(QPen(QColor(90, 90, 90, 160), 1, Qt::DashLine));
        m_cursor->setSelectable(false);
    }
    m_cursor->point1->setCoords(m_cursorX, 0);
    m_cursor->point2->setCoords(m_cursorX, 1);
}

}  // namespace runplane::gui
