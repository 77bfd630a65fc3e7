#pragma once
// Where a sampled series has no data (issue 46): a stopped daemon leaves a hole in the samples,
// and a line drawn straight across it, or a hover value read off that line, shows values never
// measured. The rule (docs/gui.md "Gaps, stale values, unreachable daemons"):
//   - the series' sample interval is the median of its consecutive x differences (at least two
//     differences; fewer points have no interval and no gap by spacing);
//   - two neighbouring points further apart than kGapIntervals x that interval bound a gap;
//   - an explicit break (the history's `gap` event at time b) makes the two points around it,
//     t[i] < b <= t[i+1], bound a gap whatever their spacing.
// Plain data: no Qt widgets, no QCustomPlot.

#include <utility>
#include <vector>

namespace runplane::gui {

/// A gap is more than this many sample intervals without a sample.
inline constexpr double kGapIntervals = 3.0;

/// The open x-intervals (t[i], t[i+1]) without data in ascending `t`, by the rule above.
std::vector<std::pair<double, double>> findGaps(const std::vector<double>& t,
                                                const std::vector<double>& breaks = {},
                                                double intervals = kGapIntervals);

/// The median spacing of `t` (0 when it has fewer than three points).
double sampleInterval(const std::vector<double>& t);

}  // namespace runplane::gui
