#pragma once
// The hover text of a TimeSeriesPlot at one x, built from the drawn series alone (testable
// without a mouse): the x (as "<x label> <x>"), then per visible series the nearest point's x and
// value, its min–max band, and for a smoothed series (PlotSeries::raw) "smoothed …, raw …";
// inside one of a series' gaps (PlotSeries::gaps) "<name>: no data".

#include <QString>

#include <vector>

#include "gui/widgets/plot_types.h"

namespace runplane::gui {

QString plotHoverText(const std::vector<PlotSeries>& series, XAxisKind kind, const QString& xLabel,
                      double key, int maxLines = 12);

}  // namespace runplane::gui
