#pragma once
// Lineage on the Compare page (issue 49, docs/gui.md "Lineage"): a run that resumed from, or
// forked off, another run continues its parent's curves. applyLineage prepends to each of the
// run's metric series the points its ancestors logged before the run branched off, and lists the
// branch points (where the page and the report draw a mark).

#include <QString>

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "gui/models/series_data.h"

namespace runplane::db {
class History;
}

namespace runplane::gui {

struct CompareRun;

/// Where a run branched off its parent: the first of the run's own points follows it.
struct LineageMark {
    QString runId;           // the child
    QString parentId;        // the run it continues
    QString kind;            // "resume" or "fork"
    std::int64_t step = -1;  // the parent's step it branched at (-1: the parent's end)
};

/// The rule, per metric series S of `run` (steps >= 0 only): walking the ancestors nearest first
/// (db::lineageChain), the ancestor contributes its points of S with step < cutoff, where cutoff
/// = min(first step of the curve so far, branch step + 1 when known); they are prepended. Points
/// without a step are left alone. Fills run.lineage (nearest first); a run without a parent is
/// unchanged. Errors name the history problem.
Status applyLineage(db::History& history, CompareRun& run);

/// The stitched part of one series: `parent`'s points with step < cutoff, prepended to `child`.
/// Returns the number of points prepended.
std::size_t prependBefore(PointSeries& child, const PointSeries& parent, std::int64_t cutoff);

}  // namespace runplane::gui
