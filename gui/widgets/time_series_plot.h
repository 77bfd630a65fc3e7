#pragma once
// TimeSeriesPlot: a live time-series plot (QCustomPlot inside, never exposed).
//
// Draws PlotSeries as lines with their min–max band, horizontal alarm lines, phase spans in a
// lane of their own under the data, vertical event markers, and the legend in a row above the
// data (never over it). Updates only mark the plot dirty; a 40 ms single-shot timer
// coalesces them into at most one replot per tick (≤ 25 fps), never one per sample; while the
// plot is hidden (another tab) nothing is drawn until it is shown again.
// Follow mode keeps the newest data in view; a user zoom or pan freezes it until setFollowing(true)
// (or the Follow button). visibleRangeChanged() tells the owner which x-range and how many pixels
// to fetch (through the history's decimated queries) after the user zoomed or panned.
//
// Ownership: a QWidget; owns its QCustomPlot. Thread-safety: GUI thread only.

#include <QWidget>

#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "gui/widgets/plot_types.h"

class QCPAxisRect;
class QCPItemStraightLine;
class QCPItemText;
class QCPMarginGroup;
class QCustomPlot;
class QTimer;
class QToolButton;
class QLabel;
class QMouseEvent;

namespace runplane::gui {

class TimeSeriesPlot : public QWidget {
    Q_OBJECT
  public:
    explicit TimeSeriesPlot(QWidget* parent = nullptr);
    ~TimeSeriesPlot() override;

    void setTitle(const QString& title);
    void setAxisLabels(const QString& xLabel, const QString& yLabel);
    void setXAxisKind(XAxisKind kind);
    /// Keep 0 inside the y-range (memory plots); off for accuracy-like metrics.
    void setYIncludesZero(bool include);
    /// Fixed y-range (e.g. 0..1 for accuracy); autoscale when lo >= hi.
    void setFixedYRange(double lo, double hi);
    void setShowToolbar(bool show);
    /// Hide the y axis (e.g. an event timeline, where y carries no value).
    void setYAxisVisible(bool visible);
    void setLegendVisible(bool visible);

    /// Replace the curves / lines / spans / markers. Cheap: the redraw happens on the timer.
    void setSeries(std::vector<PlotSeries> series);
    void setAlarmLines(std::vector<AlarmLine> lines);
    void setPhases(std::vector<PhaseSpan> phases);
    void setEvents(std::vector<EventMarker> events);
    /// Removes everything drawn and shows `message` in the middle (e.g. "no samples yet").
    void setPlaceholder(const QString& message);
    /// The message shown instead of data ("" when data is drawn).
    QString placeholder() const { return m_placeholder; }
    /// The placeholder as drawn: wrapped to the data area's width, centred, its lines elided
    /// ("…") only when more than the area's height holds (wrapped_text.h; after a flush).
    QString shownPlaceholder() const;
    /// Where the placeholder's text is drawn, in the coordinates of dataRect() (empty when none).
    QRect placeholderRect() const;

    /// Follow mode: the x-range tracks the newest point, showing `windowSeconds` (0 = all data).
    void setFollowWindow(double windowSeconds);
    void setFollowing(bool following);
    bool isFollowing() const { return m_following; }
    /// Programmatic zoom: freezes follow mode like a user zoom, but does not emit
    /// visibleRangeChanged (the caller already knows the range; e.g. syncing plots).
    void setVisibleRange(double lo, double hi);
    std::pair<double, double> visibleRange() const;
    /// Current y-axis range (autoscaled over the visible data, bands and lines).
    std::pair<double, double> yRange() const;

    /// Draws pending changes now (export, tests). Normal updates go through the timer.
    void flush();
    bool savePng(const QString& path, int width, int height);
    /// SVG through QSvgGenerator; false (with a reason in lastError()) when Qt Svg is missing.
    bool saveSvg(const QString& path, int width, int height);
    QString lastError() const { return m_lastError; }

    /// A vertical cursor line at x (synchronised hover across plots); NaN hides it.
    void setCursorX(double x);
    double cursorX() const { return m_cursorX; }

    /// What hovering at x shows (plot_hover.h): x, then each series' nearest value (smoothed and
    /// raw for an EMA line).
    QString hoverText(double x) const;

    // Introspection for tests and status text.
    int replotCount() const { return m_replotCount; }
    int drawnPointCount() const;
    int seriesCount() const { return static_cast<int>(m_series.size()); }
    const std::vector<PlotSeries>& series() const { return m_series; }
    QString xAxisLabel() const;
    /// Pixel rectangles (after a flush) of the data area, the phase lane under it (empty when
    /// no phases) and the legend above it (empty when hidden).
    QRect dataRect() const;
    QRect phaseLaneRect() const;
    QRect legendRect() const;
    QString yAxisLabel() const;
    /// The axis titles as drawn: elided ("…") to the data area's height (y) or width (x) when
    /// longer; the whole titles are yAxisLabel() / xAxisLabel().
    QString shownAxisLabel(Qt::Orientation orientation) const;
    /// Elides the drawn axis titles to the data area (after each layout pass).
    void fitAxisLabels();
    /// Wraps the drawn placeholder to the data area (after each layout pass).
    void fitPlaceholder();
    QFont axisLabelFont() const;
    int alarmLineCount() const { return static_cast<int>(m_alarms.size()); }
    int phaseCount() const { return static_cast<int>(m_phases.size()); }
    int eventCount() const { return static_cast<int>(m_events.size()); }

  signals:
    void followingChanged(bool following);
    /// After a user zoom/pan settled: the owner should re-query [lo, hi] at ~`pixels` buckets.
    void visibleRangeChanged(double lo, double hi, int pixels);
    /// The mouse hovers the data at x (NaN when it left the plot).
    void hovered(double x);

  protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void scheduleReplot();
    void rebuild();
    void applyFollowRange();
    void autoscaleY();
    void updatePhaseLane();
    /// Phase spans, reference lines with their labels, event markers and the placeholder, as
    /// items over the curves (time_series_plot_overlays.cpp).
    void addOverlayItems();
    QCPItemText* lineLabel(const QString& text, const QColor& color, int smaller);
    static QColor phaseFill(const QString& phase);  // a phase's lane span and legend swatch
    void placeLegend(bool shown);
    void fitLegendColumns(int plotWidth, int widest);
    int widestLegendEntry() const;
    void onUserRangeChange();
    void showHoverTip(QMouseEvent* event);
    void placeCursor();
    bool hasData() const;  // curves, phases or events to draw
    std::pair<double, double> dataExtent() const;

    static constexpr int kLegendColumns = 4;  // at most, entries per row above the plot

    QCustomPlot* m_plot = nullptr;
    QCPAxisRect* m_lane = nullptr;  // the phase lane (only while there are phases)
    QCPMarginGroup* m_marginGroup = nullptr;
    QTimer* m_replotTimer = nullptr;
    QTimer* m_rangeTimer = nullptr;
    QToolButton* m_followButton = nullptr;
    QToolButton* m_resetButton = nullptr;
    QWidget* m_toolbar = nullptr;
    QLabel* m_titleLabel = nullptr;

    std::vector<PlotSeries> m_series;
    std::vector<AlarmLine> m_alarms;
    std::vector<PhaseSpan> m_phases;
    std::vector<EventMarker> m_events;
    QString m_placeholder;
    QString m_xLabel;  // the axis titles whole (drawn elided to the data area)
    QString m_yLabel;
    XAxisKind m_xKind = XAxisKind::WallClock;
    bool m_yIncludesZero = true;
    double m_fixedYLo = 0;
    double m_fixedYHi = 0;
    bool m_legendVisible = true;
    bool m_yAxisVisible = true;

    bool m_dirty = false;
    bool m_replotPending = false;
    std::vector<QString> m_graphLayout;  // the shape the graphs were built for (rebuild)
    int m_graphCount = 0;                // a replot was due while hidden: done on show
    bool m_following = true;
    bool m_settingRange = false;  // true while we move the x-range ourselves
    double m_followWindow = 0;
    int m_replotCount = 0;
    QString m_lastError;
    double m_cursorX = std::numeric_limits<double>::quiet_NaN();
    QCPItemStraightLine* m_cursor = nullptr;   // re-made after each rebuild's clearItems
    QCPItemText* m_placeholderItem = nullptr;  // likewise (addOverlayItems)
};

}  // namespace runplane::gui
