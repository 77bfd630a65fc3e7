#include "gui/widgets/hover_plot_widget.h"

#include <QMouseEvent>
#include <QTimer>
#include <QToolTip>

#include <qcustomplot.h>

namespace runplane::gui {

HoverPlotWidget::HoverPlotWidget(QWidget* parent) : QWidget(parent) {}

void HoverPlotWidget::attachPlot(QCustomPlot* plot, QTimer* timer) {
    m_hoverPlot = plot;
    m_redrawTimer = timer;
    plot->installEventFilter(this);
    connect(timer, &QTimer::timeout, this, [this] {
        // A hidden plot (another tab) is drawn when shown (showEvent), as TimeSeriesPlot does.
        if (!isVisible()) {
            m_hiddenChange = true;
            return;
        }
        redraw();
    });
}

void HoverPlotWidget::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (m_hiddenChange && m_redrawTimer != nullptr) {
        m_hiddenChange = false;
        m_redrawTimer->start();
    }
}

bool HoverPlotWidget::eventFilter(QObject* watched, QEvent* event) {
    if (m_hoverPlot != nullptr && watched == m_hoverPlot && event->type() == QEvent::MouseMove) {
        const auto* me = static_cast<QMouseEvent*>(event);
        const QString text = hoverTextAt(m_hoverPlot->mapTo(this, me->position().toPoint()));
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(me->globalPosition().toPoint(), text, m_hoverPlot);
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace runplane::gui
