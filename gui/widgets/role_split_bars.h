#pragma once
// RoleSplitBars (issue 43): horizontal bars, one per row (a node's host memory, a GPU's memory),
// each split into coloured segments (who holds the memory), all on one scale (the largest
// capacity or total shown) so that rows compare; a row's note (e.g. "12.3 of 956 GB used")
// at its right. The hover text names the row, the segment, its bytes and share. Painted with
// QPainter (no plot library); GUI thread only.

#include <QColor>
#include <QString>
#include <QWidget>

#include <cmath>
#include <limits>
#include <vector>

namespace runplane::gui {

struct SplitSegment {
    QString label;
    QColor color;
    double value = 0;
    /// The plan's value beside the measured one (NaN: none). Drawn as a marker across the bar at
    /// the segment's start + planned; a segment above its plan gets a red outline over the part
    /// beyond the marker.
    double planned = std::numeric_limits<double>::quiet_NaN();
    bool overPlan() const { return !std::isnan(planned) && value > planned; }
};

struct SplitBar {
    QString label;
    std::vector<SplitSegment> segments;  // left to right
    double capacity = -1;                // the bar's full length; -1: its segments' sum
    QString note;
};

class RoleSplitBars : public QWidget {
    Q_OBJECT
  public:
    explicit RoleSplitBars(QWidget* parent = nullptr);
    void setTitle(const QString& title);
    QString title() const { return m_title; }
    /// Values in bytes (the hover text writes GB).
    void setBars(std::vector<SplitBar> bars);
    void setPlaceholder(const QString& message);
    QString placeholder() const { return m_placeholder; }
    int barCount() const { return static_cast<int>(m_bars.size()); }
    const SplitBar& bar(int i) const { return m_bars[static_cast<std::size_t>(i)]; }
    /// The rectangle segment `segment` of bar `bar` is painted in (empty when not drawn).
    QRect segmentRect(int bar, int segment) const;
    /// The x pixel of segment `segment`'s plan marker (its start + planned on the bars' scale);
    /// -1 when it has no plan or is not drawn.
    int plannedMarkerX(int bar, int segment) const;
    /// The part of an over-plan segment beyond its marker (outlined red); empty otherwise.
    QRect overPlanRect(int bar, int segment) const;
    /// "node-a — trainer: 12.3 GB (41 % of 30.0 GB)" at a pixel, with ", plan 10.0 GB: 2.3 GB
    /// over" where the segment has a plan; "" over nothing.
    QString hoverTextAt(QPoint pixel) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

  private:
    double scale() const;
    QRect barArea(int bar) const;
    QString m_title;
    QString m_placeholder;
    std::vector<SplitBar> m_bars;
};

}  // namespace runplane::gui
