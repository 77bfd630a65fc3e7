#pragma once
// Step axes (issue 19): slime and miles count train/* metrics in optimizer steps (`step N:`
// lines, N = rollout_id x num_steps_per_rollout + step_id) and rollout/*, perf/*, eval/*,
// multi_turn/*, passrate/* in rollout ids (`rollout N:`, `eval N:` ...); the history stores
// that N as the sample's step (backend/agent/log_metrics.cpp). A plot never puts the two on one
// x axis as if they were the same number: it converts by the run's steps per rollout (from the
// recipe snapshot, slime's compute_rollout_step convention: rollout k <-> optimizer step k x S)
// or, when S is unknown, keeps each series in its own domain and says so. Formulas in
// docs/gui.md "Step axes". Pure functions.

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "gui/models/series_data.h"

namespace runplane::gui {

enum class StepDomain {
    Optimizer,  // train/* (one sample per optimizer step)
    Rollout,    // rollout/*, perf/*, eval/*, multi_turn/*, passrate/*, memory/* (rollout id)
    Unknown,    // any other series with steps: its own numbering
};
StepDomain stepDomain(const QString& seriesName);
QString stepDomainName(StepDomain domain);  // "optimizer step", "rollout", "step"

/// Optimizer steps per rollout S of a run: batch.num_steps_per_rollout, else
/// rollout_batch_size x n_samples_per_prompt / global_batch_size when that divides; 0 = unknown
/// (no recipe, a recipe the planner cannot parse, or no global_batch_size).
struct StepMapping {
    int stepsPerRollout = 0;
    QString source;  // in words: "recipe: batch.num_steps_per_rollout = 4", "no recipe snapshot"
    bool known() const { return stepsPerRollout > 0; }
};
StepMapping stepMappingFromRecipe(const QString& recipeYaml);

/// The x axis a step plot asks for.
enum class StepAxis { Rollout, Optimizer };

/// x of `step` (a sample of `domain`) on `axis`: rollout -> optimizer k x S, optimizer ->
/// rollout s / S; the same domain is returned unchanged; nullopt when the conversion needs S and
/// it is unknown, or the domain is Unknown (its numbering is nobody's).
std::optional<double> stepOnAxis(double step, StepDomain domain, StepAxis axis,
                                 const StepMapping& mapping);

/// Where a set of series lands on one step plot.
struct StepPlan {
    QString xLabel;             // "rollout (train/*: optimizer step ÷ 4)", "optimizer step"
    QStringList leftOut;        // series that cannot share this axis (named, with why)
    std::vector<bool> include;  // parallel to the input
    StepAxis axis = StepAxis::Rollout;
    bool ownDomain = false;  // the plot shows the series' own domain, not the asked axis
};
/// Decides the axis for `names` asked to be drawn on `axis`: every series converts -> that axis;
/// one domain that cannot convert -> its own domain (label says why); mixed domains that cannot
/// convert -> only the series already in the asked domain, the others named in leftOut.
StepPlan planStepAxis(const QStringList& names, StepAxis axis, const StepMapping& mapping);

/// The series' points on the plan's axis (points without a step are dropped): x, y.
void seriesOnAxis(const PointSeries& series, const StepPlan& plan, const StepMapping& mapping,
                  std::vector<double>& x, std::vector<double>& y);

}  // namespace runplane::gui
