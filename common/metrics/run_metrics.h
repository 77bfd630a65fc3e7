#pragma once
// Last and best value of a run's metric series with "best" by each metric's direction
// (metric_kind.h): the maximum of a score, the minimum of a loss or a time, none for a count or
// a token length. db::History::runMetrics alone takes the maximum unless the name contains
// "loss", which makes the slowest eval/…/time the "best".

#include <string>
#include <vector>

#include "backend/common/result.h"
#include "common/metrics/metric_kind.h"
#include "db/history/history.h"

namespace runplane::metrics {

struct RunMetric {
    db::MetricSummary summary;  // best/bestStep by direction; NaN / -1 when direction is None
    MetricInfo info;
    std::string unit;
};

/// Every series of the run whose name starts with `prefix` ("" = all), in name order.
Result<std::vector<RunMetric>> runMetricsByKind(db::History& history, const std::string& runId,
                                                const std::string& prefix = "eval/");

/// The primary eval metric of a run (primaryEval over the names), or nullptr.
const RunMetric* primaryMetric(const std::vector<RunMetric>& metrics);

}  // namespace runplane::metrics
