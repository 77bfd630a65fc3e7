#pragma once
// Two time plots of the run view's per-process views (issues 42 and 43), QCustomPlot inside:
// - StackedAreaPlot: layers stacked over time (memory by role), each with an optional dashed
//   budget line in its colour, phases shaded behind, event markers (red lines with their text);
//   the hover text comes from the owner (it knows what a layer means).
// - PhaseLanesPlot: one lane per process, its phases as coloured bars over time, a highlighted
//   lane outlined in red with a note, the same event markers.
// Both redraw only on flush() or a 40 ms timer after a change (deferred while hidden, the hover
// tooltip: HoverPlotWidget). GUI thread only.

#include <QString>
#include <QWidget>

#include <functional>
#include <vector>

#include "gui/widgets/hover_plot_widget.h"
#include "gui/widgets/plot_types.h"

class QCustomPlot;
class QLabel;
class QTimer;

namespace runplane::gui {

struct StackedLayer {
    QString label;
    QColor color;
    std::vector<double> value;      // the layer's own value per x (not stacked), NaN = 0
    std::vector<double> budgetTop;  // empty, or per x the budget line's height; NaN = no line
};

class StackedAreaPlot : public HoverPlotWidget {
    Q_OBJECT
  public:
    explicit StackedAreaPlot(QWidget* parent = nullptr);
    void setTitle(const QString& title);
    void setYLabel(const QString& label);
    /// x in seconds since the epoch, shared by every layer; layers bottom to top.
    void setData(std::vector<double> t, std::vector<StackedLayer> layers,
                 std::vector<PhaseSpan> phases, std::vector<EventMarker> markers);
    void setPlaceholder(const QString& message);
    QString placeholder() const { return m_placeholder; }
    /// What the tooltip says at plot coordinates (x, y); "" = no tooltip.
    void setHoverText(std::function<QString(double, double)> text) { m_hover = std::move(text); }
    /// The tooltip at a pixel of the widget (tests; the mouse uses the same).
    QString hoverTextAt(QPoint pixel) const override;
    /// The pixel of plot coordinates (x, y) in the widget (after a flush).
    QPoint pixelOf(double x, double y) const;
    void flush();
    bool savePng(const QString& path, int width, int height);
    int layerCount() const { return static_cast<int>(m_layers.size()); }
    int budgetLineCount() const;
    int markerCount() const { return static_cast<int>(m_markers.size()); }
    int phaseCount() const { return static_cast<int>(m_phases.size()); }
    double yMax() const;

  protected:
    void redraw() override;

  private:
    void rebuild();
    QCustomPlot* m_plot = nullptr;
    QLabel* m_title = nullptr;
    QTimer* m_timer = nullptr;
    std::vector<double> m_t;
    std::vector<StackedLayer> m_layers;
    std::vector<PhaseSpan> m_phases;
    std::vector<EventMarker> m_markers;
    QString m_placeholder;
    QString m_yLabel;
    std::function<QString(double, double)> m_hover;
};

struct LaneBar {
    QString phase;
    double t0 = 0;
    double t1 = 0;
};

struct LaneRow {
    QString label;
    std::vector<LaneBar> bars;
    bool highlight = false;  // drawn outlined in red, with `note` at its right end
    QString note;
};

class PhaseLanesPlot : public HoverPlotWidget {
    Q_OBJECT
  public:
    explicit PhaseLanesPlot(QWidget* parent = nullptr);
    void setTitle(const QString& title);
    /// Lanes top to bottom.
    void setLanes(std::vector<LaneRow> lanes, std::vector<EventMarker> markers);
    void setPlaceholder(const QString& message);
    QString placeholder() const { return m_placeholder; }
    /// "node-a rank 3: rollout 12:00:01–12:00:09 (8 s)" for the bar at (x, lane); "" if none.
    QString hoverText(double x, int lane) const;
    QString hoverTextAt(QPoint pixel) const override;
    /// The pixel of time x in the middle of lane `lane` (after a flush).
    QPoint pixelOf(double x, int lane) const;
    void flush();
    bool savePng(const QString& path, int width, int height);
    int laneCount() const { return static_cast<int>(m_lanes.size()); }
    int markerCount() const { return static_cast<int>(m_markers.size()); }

  protected:
    void redraw() override;

  private:
    void rebuild();
    QCustomPlot* m_plot = nullptr;
    QLabel* m_title = nullptr;
    QTimer* m_timer = nullptr;
    std::vector<LaneRow> m_lanes;
    std::vector<EventMarker> m_markers;
    QString m_placeholder;
};

}  // namespace runplane::gui
