#pragma once
// Baseline deltas of the Compare page (issue 49): one run is the baseline; every other run shows
// its metric's last, best and at-a-step values minus the baseline's, and optionally a difference
// curve (run − baseline, the baseline interpolated linearly at the run's x). Pure and cheap
// (GUI thread, headless report). Formulas in docs/gui.md ("Compare").

#include <QString>

#include <optional>
#include <vector>

#include "gui/models/compare_data.h"

namespace runplane::gui {

/// The metric's value at exactly `step` (the last point recorded at that step), if any.
std::optional<double> valueAtStep(const CompareRun& run, const QString& metric, double step);

/// One run's deltas against the baseline (run − baseline); empty where either side has no value.
struct MetricDelta {
    std::optional<double> last;
    std::optional<double> best;    // bests by the metric's direction; none for Direction::None
    std::optional<double> atStep;  // only when a step was asked
};

/// Per run of `data` (in order), its deltas against run `baseline`; the baseline's own entry is
/// all zeros where it has values. `baseline` out of range gives an empty vector.
std::vector<MetricDelta> baselineDeltas(const CompareData& data, const QString& metric,
                                        int baseline, std::optional<double> step);

/// run − baseline at each x of the run inside the baseline's x range (the baseline linearly
/// interpolated between its two neighbouring points; an exact x takes that point's value).
CurveXY differenceCurve(const CompareRun& run, const CompareRun& baseline, const QString& metric,
                        CompareAxis axis);

/// "+0.0250", "−0.1000", "0.0000" (4 decimals, explicit sign), "–" for none.
QString formatDelta(std::optional<double> delta);

/// The index of run `runId` in `data`, or -1.
int runIndex(const CompareData& data, const QString& runId);

}  // namespace runplane::gui
