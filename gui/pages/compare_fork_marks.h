#pragma once
// Fork marks on the Compare plots (issue 49, docs/gui.md "Lineage"): a run forked off another
// run is drawn as one line through its ancestors (compare_lineage.h); where it leaves its parent
// the plot gets a vertical marker at the fork, labelled with the child run. Resumes join without a
// mark. Shared by the Compare page's Overlay and grid panels. GUI thread only.

#include <QString>

#include <vector>

#include "gui/models/compare_data.h"
#include "gui/widgets/plot_types.h"

namespace runplane::gui {

/// One marker per fork (LineageMark kind "fork" with a known step) found in the lineage of a run
/// of `data` that has `metric`, once per (child, step): at x = the fork step on `axis` (Step: the
/// step; RelativeStep: minus the run's first step of `metric`; Rollout: the step mapped as the
/// metric's points are; WallTime: the time of the last point of the drawn curve at or before
/// the fork step), labelled "fork: CHILD" (the child's name when it is among the compared runs,
/// else its id) in the colour of the compared run whose lineage holds it. Forks with an unknown
/// step (-1), or not placeable on the axis, get no marker.
std::vector<EventMarker> forkMarkers(const CompareData& data, const QString& metric,
                                     CompareAxis axis);

}  // namespace runplane::gui
