#pragma once
// Presentation mapping shared by the pages and the headless report: turns history values
// (PointSeries, phases, events, alarm lines) into what TimeSeriesPlot draws. One place, so the
// report's PNGs are drawn exactly as the pages draw them.

#include <QString>

#include <functional>
#include <vector>

#include "gui/models/run_data.h"
#include "gui/models/series_data.h"
#include "gui/widgets/plot_types.h"

namespace runplane::gui {

class TimeSeriesPlot;

/// Decimal gigabytes (the unit the alarm lines are stated in: 600–650 / 750 / 956 GB).
inline constexpr double kBytesPerGB = 1e9;

/// "612.4 GB", "3.21 GB", "512 MB".
QString formatBytes(double bytes);
/// "1 h 05 min", "3 min 20 s", "12 s".
QString formatDuration(double seconds);

/// Host memory per node: a line and min–max band per node (GB), the RAM, healthy-band and alarm
/// lines, phases shaded behind, memory-alarm events marked. `colorIndex` maps node -> colour.
/// With more than kHostMemoryBandedNodes nodes: 1 px lines only, none in the legend.
inline constexpr std::size_t kHostMemoryBandedNodes = 8;
void showHostMemory(TimeSeriesPlot& plot, const std::vector<PointSeries>& nodes,
                    const MemoryLines& lines, const std::vector<PhaseInterval>& phases,
                    const std::vector<EventRow>& events,
                    const std::function<QString(const PointSeries&)>& label = {});

/// Any series in its own unit (bytes shown as GB), with bands; phases optional.
void showSeries(TimeSeriesPlot& plot, const std::vector<PointSeries>& series,
                const std::vector<PhaseInterval>& phases, const QString& yLabel);

/// A metric by step (x = step) when every point has a step, else by wall time.
PlotSeries metricByStep(const PointSeries& series, const QString& label, const QColor& color);

/// Alarm lines (GB) for a MemoryLines value.
std::vector<AlarmLine> alarmLinesGB(const MemoryLines& lines);

/// Legend label for a series of a node: "node-a" or "node-a gpu0".
QString seriesLabel(const PointSeries& series);

}  // namespace runplane::gui
