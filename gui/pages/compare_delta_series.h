#pragma once
// The Compare overlay as difference curves against a baseline run (issue 49): per run other than
// the baseline, run − baseline (compare_baseline.h differenceCurve) in the run's colour, EMA
// smoothed like compareSeries, plus a zero line for the baseline. Shared by the Compare page and
// the headless comparison. GUI thread only.

#include <QString>

#include <vector>

#include "gui/models/compare_data.h"
#include "gui/widgets/plot_types.h"

namespace runplane::gui {

/// `colors` receives each run's colour (the same as compareSeries gives, so the table matches).
std::vector<PlotSeries> differenceSeries(const CompareData& data, const QString& metric,
                                         CompareAxis axis, int baseline, double weight,
                                         std::vector<QColor>* colors = nullptr);

}  // namespace runplane::gui
