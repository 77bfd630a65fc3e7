#pragma once
// Time-axis ticks whose labels never meet (issue 46: `19:32:1019:32:15` on the Runs page).
// QCustomPlot picks a "nice" step near range / tickCount whatever the axis' width; a fitted
// ticker lowers the count until one step spans, in pixels, the widest label plus two digits.
// qcustomplot.h stays in the .cpp (gui/widgets/CMakeLists.txt). GUI thread only.

#include <QSharedPointer>

#include "gui/widgets/plot_types.h"

class QCPAxis;
class QCPAxisTicker;

namespace runplane::gui {

/// The ticker of an x axis of this kind (wall clock `HH:mm:ss` at least a second apart, elapsed
/// `%h:%m:%s`, or numbers), fitted to `axis`' width and tick font.
QSharedPointer<QCPAxisTicker> makeFittedTicker(XAxisKind kind, QCPAxis* axis);

/// True when the axis rect came out of the layout another width than the fitted ticker stepped
/// for (the ticks are chosen before the layout of a replot): the owner asks for them again
/// (QCPAxisRect::update(upPreparation)) before the plot is drawn.
bool fittedTickerStale(QCPAxis* axis);

}  // namespace runplane::gui
