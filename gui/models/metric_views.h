#pragma once
// The GUI side of the metric table (common/metrics/metric_kind.h): last/best values by each
// metric's direction, the eval plot's score-only series, and W&B-style automatic panels (one per
// prefix group and kind, so one y axis carries one unit). Pure: the history read behind the
// values (loadMetricValues) is in history_queries.

#include <QString>
#include <QStringList>

#include <map>
#include <vector>

#include "common/metrics/metric_kind.h"
#include "gui/models/run_data.h"
#include "gui/models/series_data.h"

namespace runplane::gui {

/// Sets PointSeries::info of every series an override matches.
void applyKindOverrides(std::vector<PointSeries>& series,
                        const std::vector<metrics::KindOverride>& overrides);

metrics::MetricInfo metricInfo(const PointSeries& series);
/// An eval/* series of score kind (what the eval plot shows).
bool isEvalScore(const QString& name, const QString& unit = {});

/// "0.7500 @ step 40", or "– (tokens: no better direction)" when the metric has none. For the
/// Runs page, Compare and the headless reports' metric tables.
QString bestText(const MetricValue& m, int precision = 4);

/// The run's primary eval metric: `preferred` (the recipe's analysis.primary_metric) when the run
/// has it, else the first score-kind eval/* by name (kinds as classified in MetricValue::info),
/// or nullptr.
const MetricValue* primaryMetric(const std::vector<MetricValue>& metrics,
                                 const QString& preferred = {});

/// Score-kind eval/* series of a snapshot, in name order (the eval plot).
std::vector<const PointSeries*> evalScoreSeries(const std::vector<PointSeries>& series);

/// Names ordered for pickers: score-kind eval/* first, then the rest by name. `scoreKind` says,
/// per name, whether the series is an eval score after the recipes' overrides (names it does not
/// list are judged by the naming table); `primary` (when among the names) goes first.
QStringList orderMetricNames(QStringList names, const std::map<QString, bool>& scoreKind = {},
                             const QString& primary = {});

/// One automatic panel: the series of one prefix group with one kind.
struct MetricPanel {
    QString title;  // "eval · score", "eval · tokens", "perf · time"
    QString group;  // "eval"
    metrics::Kind kind = metrics::Kind::Other;
    QStringList names;  // series names, sorted, distinct
};
/// Panels over every series (distinct names), "eval · score" first, then by group and kind.
std::vector<MetricPanel> metricPanels(const std::vector<PointSeries>& series);

}  // namespace runplane::gui
