#pragma once
// HoverPlotWidget: what the run view's QCustomPlot widgets (StackedAreaPlot, PhaseLanesPlot in
// role_plots.h) share: a redraw deferred to a single-shot timer and skipped while hidden (drawn
// when shown, as TimeSeriesPlot does), and the hover tooltip, whose text each plot computes
// itself (hoverTextAt). GUI thread only.

#include <QString>
#include <QWidget>

class QCustomPlot;
class QTimer;

namespace runplane::gui {

class HoverPlotWidget : public QWidget {
    Q_OBJECT
  public:
    explicit HoverPlotWidget(QWidget* parent = nullptr);
    /// The tooltip at a pixel of the widget (tests; the mouse uses the same); "" = none.
    virtual QString hoverTextAt(QPoint pixel) const = 0;

  protected:
    /// Called once by the derived constructor: `plot` gets the hover tooltip; `timer` (single
    /// shot) redraws through redraw() when it fires while the widget is visible, else on show.
    void attachPlot(QCustomPlot* plot, QTimer* timer);
    /// Rebuilds the plot's items from the data and replots (only while visible).
    virtual void redraw() = 0;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void showEvent(QShowEvent* event) override;

  private:
    QCustomPlot* m_hoverPlot = nullptr;
    QTimer* m_redrawTimer = nullptr;
    bool m_hiddenChange = false;  // a change while hidden: drawn on show
};

}  // namespace runplane::gui
