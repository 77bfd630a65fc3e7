#include "backend/analysis/run_metrics.h"

#include <limits>
#include <map>
#include <utility>

namespace runplane::metrics {

plan::Analysis analysisOf(const std::string& recipeYaml) {
    if (recipeYaml.find_first_not_of(" \t\r\n") == std::string::npos) {
        return {};
    }
    auto recipe = plan::parseRecipe(recipeYaml, "recipe snapshot");
    return recipe ? recipe->analysis : plan::Analysis{};
}

Result<std::vector<RunMetric>> runMetricsByKind(db::History& history, const RunId& runId,
                                                const std::string& prefix,
                                                const std::vector<KindOverride>& overrides) {
    auto summaries = history.runMetrics(runId, prefix);
    if (!summaries) {
        return Error{summaries.error()};
    }
    db::SeriesFilter filter;
    filter.runId = runId;
    filter.name = prefix.empty() ? std::string() : prefix + "*";  // "*" alone matches nothing
    auto series = history.listSeries(filter);
    if (!series) {
        return Error{series.error()};
    }
    std::map<std::pair<NodeId, std::string>, const db::SeriesInfo*> byKey;
    for (const db::SeriesInfo& s : *series) {
        byKey[{s.nodeId, s.name}] = &s;
    }
    std::vector<RunMetric> out;
    for (db::MetricSummary& m : *summaries) {
        RunMetric r;
        const auto it = byKey.find({m.nodeId, m.series});
        r.unit = it == byKey.end() ? std::string() : it->second->unit;
        r.info = classify(m.series, r.unit, overrides);
        m.best = std::numeric_limits<double>::quiet_NaN();
        m.bestStep = -1;
        m.bestNs = 0;
        if (r.info.direction != Direction::None && it != byKey.end()) {
            // Every sample (no decimation below 4 Mi samples): the extreme of the stored values,
            // the earliest one on a tie.
            db::SeriesQuery q;
            q.seriesId = it->second->id;
            q.maxBuckets = 1 << 20;
            auto points = history.querySeries(q);
            if (!points) {
                return Error{points.error()};
            }
            for (const db::SeriesPoint& p : points->points) {
                if (better(r.info.direction, p.value, m.best)) {
                    m.best = p.value;
                    m.bestStep = p.step;
                    m.bestNs = p.tNs;
                }
            }
        }
        r.summary = std::move(m);
        out.push_back(std::move(r));
    }
    return out;
}

const RunMetric* primaryMetric(const std::vector<RunMetric>& metrics, const std::string& preferred,
                               const std::vector<KindOverride>& overrides) {
    std::vector<std::string> names;
    for (const RunMetric& m : metrics) {
        names.push_back(m.summary.series);
    }
    const std::string primary = primaryEval(std::move(names), preferred, overrides);
    for (const RunMetric& m : metrics) {
        if (!primary.empty() && m.summary.series == primary) {
            return &m;
        }
    }
    return nullptr;
}

}  // namespace runplane::metrics
