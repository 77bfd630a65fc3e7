#pragma once
// MemoryBudgetChart: stacked bars of named memory components per phase, grouped (per node or
// per GPU class), against horizontal lines (host RAM, alarm line, HBM). Hovering a segment shows
// the component's bytes and formula. QCustomPlot inside, never exposed. GUI thread only.

#include <QRect>
#include <QString>
#include <QWidget>

#include <vector>

#include "gui/widgets/budget_types.h"

class QCPItemText;
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

    /// A text the chart draws and its rectangle in widget coordinates, as laid out now.
    struct DrawnText {
        QString text;
        QRect rect;
    };
    /// Every text drawn: the bars' phase labels under the axis, the group titles, the lines'
    /// labels, the placeholder (memory_budget_text.cpp). Tests check that no two overlap.
    std::vector<DrawnText> drawnTexts() const;

  private:
    void rebuild();
    /// After each layout: titles and labels made to fit (memory_budget_text.cpp).
    void fitTexts();
    QString barTooltipAt(const QPoint& pos) const;
    double keyOf(int group, int bar) const;

    QCustomPlot* m_plot = nullptr;
    BudgetChartData m_data;
    QString m_placeholder;
    InvalidBanner* m_banner = nullptr;
    std::vector<QCPItemText*> m_titles;      // group titles, in group order (owned by m_plot)
    std::vector<QCPItemText*> m_lineLabels;  // the lines' labels (owned by m_plot)
    double m_valueUpper = 1;                 // the value axis' top before room for labels
};

}  // namespace runplane::gui
