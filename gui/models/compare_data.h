#pragma once
// Data of the Compare page: 2–10 runs with their metric series and recipe snapshots, the recipe
// diff (only fields that differ), metric curves by step / relative step / wall time, EMA
// smoothing and CSV export. loadCompare() reads the history (worker thread); the rest is pure
// and cheap (GUI thread). Formulas in docs/gui.md.

#include <QString>
#include <QStringList>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/result.h"
#include "gui/models/compare_lineage.h"
#include "gui/models/run_data.h"
#include "gui/models/series_data.h"
#include "gui/models/step_axis.h"

namespace runplane::db {
class History;
}

namespace runplane::gui {

inline constexpr int kMinCompareRuns = 2;
inline constexpr int kMaxCompareRuns = 10;

/// One run of a comparison.
struct CompareRun {
    RunRow run;
    QString recipeYaml;
    std::vector<std::pair<QString, QString>>
        recipeFields;     // flattened, canonical (see flattenRecipe)
    QString recipeError;  // why the snapshot did not parse
    /// The items of each list of scalars in recipeFields ("launcher.argv" -> its words).
    std::map<QString, QStringList> recipeLists;
    /// The paths the snapshot writes as given (before normalisation): a field it writes at its
    /// default value ("alpha: 16") is shown as that value, one it leaves out as "16 (default)".
    std::set<QString> writtenPaths;
    std::vector<PointSeries> metrics;  // every metric series, whole
    StepMapping steps;                 // optimizer steps per rollout (from the snapshot)
    /// Where the run branched off its ancestors, nearest first (compare_lineage.h); its metrics
    /// already continue the ancestors' curves.
    std::vector<LineageMark> lineage;
};

struct CompareData {
    std::vector<CompareRun> runs;
    QStringList metricNames;  // union over the runs, eval/* first
};

/// Loads the runs (in the given order). Errors name the missing run.
Result<CompareData> loadCompare(db::History& history, const QStringList& runIds);

/// The recipe as "field.path" -> value pairs, normalised through the planner's parser and writer
/// (so formatting, key order and spelled-out defaults do not show up as differences). A recipe
/// the planner cannot parse is flattened as written, and `error` says why.
/// `lists` (optional) gets the items of each list of scalars.
std::vector<std::pair<QString, QString>> flattenRecipe(
    const QString& yaml, QString* error = nullptr, std::map<QString, QStringList>* lists = nullptr);

/// A field whose effective value is not the same in every run. A field a run leaves out has
/// the schema's default ("16 (default)", plan::recipeFields); "(default)" only for a field
/// outside the schema table. A long value (more than kDiffWholeWords words: launcher.argv, a
/// description) shows the words that differ, each group after the word before it ("… --lora-rank
/// 4 --lora-alpha 8 …"), so the difference is not behind the cell's "…"; `full` has it whole.
struct DiffRow {
    QString field;
    QStringList values;  // one per run, as shown ("16 (default)", "… --lora-rank 4 …")
    QStringList full;    // one per run, the whole value (tooltip; equality is decided on these)
};
inline constexpr int kDiffWholeWords = 6;
std::vector<DiffRow> recipeDiff(const std::vector<CompareRun>& runs);
std::vector<DiffRow> recipeDiff(const std::vector<CompareRun>& runs);

/// Step: the metric's own step (optimizer steps for train/*, rollout ids for eval/* ...);
/// Rollout: rollouts for every metric, train/* converted by each run's steps per rollout so runs
/// with different batch shapes line up (a run whose mapping is unknown is left out and named).
enum class CompareAxis { Step, RelativeStep, WallTime, Rollout };

/// The x-axis label of `metric` on `axis`, naming the step domain ("optimizer step (train/*)")
/// and, for Rollout, the runs left out because their steps per rollout is unknown.
QString compareXLabel(const CompareData& data, const QString& metric, CompareAxis axis);

struct CurveXY {
    std::vector<double> x;
    std::vector<double> y;
};

/// The metric of one run as x/y, sorted by x: x = step, step - first step, seconds since the
/// run started, or rollouts (step_axis.h; empty when the run's mapping is needed and unknown).
/// Points without a step fall back to wall time (dropped on the Rollout axis).
CurveXY metricCurve(const CompareRun& run, const QString& metric, CompareAxis axis);

/// TensorBoard's debiased exponential moving average (docs/gui.md): a_0 = 0,
/// a_n = w * a_{n-1} + (1 - w) * y_n, s_n = a_n / (1 - w^n) over the finite points (n counts
/// them from 1); a non-finite y passes through unsmoothed, a constant series is returned as is,
/// w = 0 returns y, w is capped at 0.999.
std::vector<double> emaSmooth(const std::vector<double>& y, double weight);
/// The same, spacing-aware for uneven x: point n uses w_n = w^(dx_n / d), dx_n = x_n - x_{n-1},
/// d = the median spacing (lower median) of the finite points, and debiases by 1 - prod(w_k).
/// With even spacing w_n = w and this is exactly the TensorBoard formula above.
std::vector<double> emaSmooth(const std::vector<double>& x, const std::vector<double>& y,
                              double weight);

/// CSV: run_id,run_name,metric,x,value,smoothed (x named step, relative_step, rollout or
/// seconds by the axis; one line per point, header first; smoothed by
/// the spacing-aware EMA).
QString compareCsv(const CompareData& data, const QString& metric, CompareAxis axis, double weight);

}  // namespace runplane::gui
