#pragma once
// Last and best value of a run's metric series with "best" by each metric's direction
// (metric_kind.h): the maximum of a score, the minimum of a loss or a time, none for a count or
// a token length. db::History::runMetrics alone takes the maximum unless the name contains
// "loss", which makes the slowest eval/…/time the "best".

#include <string>
#include <vector>

#include "backend/plan/recipe.h"
#include "common/metrics/metric_kind.h"
#include "common/result.h"
#include "db/history/history.h"

namespace runplane::metrics {

struct RunMetric {
    db::MetricSummary summary;  // best/bestStep by direction; NaN / -1 when direction is None
    MetricInfo info;
    std::string unit;
};

/// The analysis settings of a run's recipe snapshot (db::RunRecord::recipeYaml): its
/// `analysis` section, or the defaults when the snapshot is empty or does not parse.
plan::Analysis analysisOf(const std::string& recipeYaml);

/// Every series of the run whose name starts with `prefix` ("" = all), in name order, each
/// classified with the recipe's overrides (analysis.metric_kinds).
Result<std::vector<RunMetric>> runMetricsByKind(db::History& history, const RunId& runId,
                                                const std::string& prefix = "eval/",
                                                const std::vector<KindOverride>& overrides = {});

/// The primary eval metric of a run (primaryEval over the names: `preferred`, the recipe's
/// analysis.primary_metric, when the run has it), or nullptr.
const RunMetric* primaryMetric(const std::vector<RunMetric>& metrics,
                               const std::string& preferred = {},
                               const std::vector<KindOverride>& overrides = {});

}  // namespace runplane::metrics
