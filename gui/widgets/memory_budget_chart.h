#pragma once
// MemoryBudgetChart: stacked bars of named memory components per phase, grouped (per node or
// per GPU class), against horizontal lines (host RAM, alarm line, HBM). Hovering a segment shows
// the component's bytes and formula. QCustomPlot inside, never exposed. GUI thread only.

#include <QString>
#include <QWidget>

#include "gui/widgets/budget_types.h"

class QCustomPlot;
class QMouseEvent;

namespace runplane::gui {

class InvalidBanner;

class MemoryBudgetChart : public QWidget {
    Q_OBJECT
  public:
    explicit MemoryBudgetChart(QWidget* parent = nullptr);
    ~MemoryBudgetChart() override;

    /// Replaces what is drawn (redrawn at once: design edits are user-paced, not a stream).
    void setData(BudgetChartData data);
    void setPlaceholder(const QString& message);
    /// Marks what is drawn as the budget of an invalid design (issue 46): a banner with the
    /// reason above the bars, the bars washed out and every hover text prefixed with it. ""
    /// clears the mark.
    void setInvalid(const QString& reason);
    QString invalidReason() const;
    /// The hover text at a widget position ("" when over nothing): for tooltips and tests.
    QString tooltipAt(const QPoint& pos) const;
    /// Widget position of the middle of segment `component` of bar `bar` in group `group`.
    QPoint segmentCenter(int group, int bar, int component) const;
    int barCount() const;
    const BudgetChartData& data() const { return m_data; }
    bool savePng(const QString& path, int width, int height);

  private:
    void rebuild();
    QString barTooltipAt(const QPoint& pos) const;
    double keyOf(int group, int bar) const;

    QCustomPlot* m_plot = nullptr;
    BudgetChartData m_data;
    QString m_placeholder;
    InvalidBanner* m_banner = nullptr;
};

}  // namespace runplane::gui
