// Every history read the GUI makes (runs, series, events, plans, compare data) in one place, so
// each SQL shape is written once and the models stay Qt-only; what is derived from the values
// read, without reading, is in run_derivations.
#include "gui/models/history_queries.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "backend/analysis/run_metrics.h"
#include "backend/plan/recipe.h"
#include "backend/plan/topology.h"
#include "db/history/decimate.h"
#include "db/history/history.h"
#include "db/history/run_cause.h"
#include "gui/models/metric_views.h"
#include "gui/models/qt_text.h"
#include "gui/models/role_memory.h"
#include "gui/models/run_silence.h"

namespace runplane::gui {

using telemetry::EventKind;
namespace series = telemetry::series;

namespace {

QString attr(const db::EventAttrs& attrs, const char* key) {
    return qs(db::attrText(attrs, key));
}

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

EventRow toEventRow(const db::EventRecord& e) {
    return EventRow{nsToSeconds(e.tNs), qs(e.nodeId), qs(e.runId), qs(e.kind), qs(e.message)};
}

// The run's newest stored diagnosis (issue 44): its headline is the run's status line, as the
// DIAGNOSIS column of `runplanectl runs`. A read error leaves it empty.
void loadDiagnosisHeadline(db::History& history, const RunId& runId, RunRow& row) {
    auto diagnoses = history.listDiagnoses(runId, false);
    if (diagnoses.ok() && !diagnoses->empty()) {
        const db::DiagnosisRecord& d = diagnoses->front();  // newest first
        row.diagnosis = qs(d.headline);
        row.diagnosisTrigger = qs(d.trigger);
        row.diagnosisT = nsToSeconds(d.tNs);
    }
}

}  // namespace

std::int64_t secondsToNs(double seconds) {
    const double ns = seconds * 1e9;
    if (ns >= static_cast<double>(std::numeric_limits<std::int64_t>::max())) {
        return std::numeric_limits<std::int64_t>::max();
    }
    if (ns <= static_cast<double>(std::numeric_limits<std::int64_t>::min())) {
        return std::numeric_limits<std::int64_t>::min();
    }
    return static_cast<std::int64_t>(std::llround(ns));
}

namespace {

// Appends MORE's points after P's (a tail read of the same series).
void appendPoints(PointSeries& p, const PointSeries& more) {
    p.t.insert(p.t.end(), more.t.begin(), more.t.end());
    p.value.insert(p.value.end(), more.value.begin(), more.value.end());
    p.min.insert(p.min.end(), more.min.begin(), more.min.end());
    p.max.insert(p.max.end(), more.max.begin(), more.max.end());
    p.step.insert(p.step.end(), more.step.begin(), more.step.end());
}

}  // namespace

PointSeries toPointSeries(const db::SeriesInfo& info, const db::SeriesPoints& points) {
    PointSeries s;
    s.nodeId = qs(info.nodeId);
    s.runId = qs(info.runId);
    s.name = qs(info.name);
    s.unit = qs(info.unit);
    s.decimated = points.decimated;
    s.sourceCount = points.sourceCount;
    if (points.decimated) {
        const size_t n = points.buckets.size();
        s.t.reserve(n);
        s.value.reserve(n);
        s.min.reserve(n);
        s.max.reserve(n);
        s.step.reserve(n);
        for (const db::SeriesBucket& b : points.buckets) {
            if (b.count == 0) {
                continue;
            }
            s.t.push_back(nsToSeconds(b.t0Ns / 2 + b.t1Ns / 2));
            s.value.push_back(b.last.value);
            s.min.push_back(b.min);
            s.max.push_back(b.max);
            s.step.push_back(static_cast<double>(b.last.step));
        }
    } else {
        const size_t n = points.points.size();
        s.t.reserve(n);
        s.value.reserve(n);
        s.min.reserve(n);
        s.max.reserve(n);
        s.step.reserve(n);
        for (const db::SeriesPoint& p : points.points) {
            s.t.push_back(nsToSeconds(p.tNs));
            s.value.push_back(p.value);
            s.min.push_back(std::min(p.min, p.value));
            s.max.push_back(std::max(p.max, p.value));
            s.step.push_back(static_cast<double>(p.step));
        }
    }
    return s;
}

namespace {
bool holdsAll(const db::SeriesInfo& info, double t0, double t1) {
    return !(t0 < t1) || (secondsToNs(t0) <= info.firstNs && secondsToNs(t1) >= info.lastNs);
}
}  // namespace

namespace {

// loadSeries' history read: a whole series past the raw limit is read on the grid a follower
// keeps while it grows (db::followBucketWidth), so SeriesCache can take its last bucket from it.
Result<db::SeriesPoints> querySeriesPoints(db::History& history, const db::SeriesInfo& info,
                                           double t0, double t1, int maxBuckets) {
    db::SeriesQuery q;
    q.seriesId = info.id;
    if (t0 < t1) {
        q.t0Ns = secondsToNs(t0);
        q.t1Ns = secondsToNs(t1);
    }
    q.maxBuckets = std::max(16, maxBuckets);
    if (holdsAll(info, t0, t1) && info.count > 4 * static_cast<std::int64_t>(q.maxBuckets)) {
        q.bucketWidthNs = db::followBucketWidth(info.firstNs, info.lastNs, q.maxBuckets);
    }
    return history.querySeries(q);
}

}  // namespace

Result<PointSeries> loadSeries(db::History& history, const db::SeriesInfo& info, double t0,
                               double t1, int maxBuckets) {
    auto points = querySeriesPoints(history, info, t0, t1, maxBuckets);
    if (!points) {
        return Error{points.error()};
    }
    return toPointSeries(info, *points);
}

Result<PointSeries> SeriesCache::load(db::History& history, const db::SeriesInfo& info, double t0,
                                      double t1, int maxBuckets) {
    const bool whole = holdsAll(info, t0, t1);
    auto found = m_entries.find(info.id);
    if (found != m_entries.end()) {
        Entry& e = found->second;
        const bool sameQuery = e.maxBuckets == maxBuckets &&
                               (whole ? e.whole : (!e.whole && e.t0 == t0 && e.t1 == t1));
        if (sameQuery && e.count == info.count && e.firstNs == info.firstNs &&
            e.lastNs == info.lastNs) {
            ++m_counts.reused;
            return e.points;
        }
        // The same limit as History::querySeries (loadSeries asks for at least 16 buckets).
        const std::int64_t rawLimit = 4 * static_cast<std::int64_t>(std::max(16, maxBuckets));
        if (sameQuery && whole && !e.points.decimated && e.firstNs == info.firstNs &&
            info.lastNs > e.lastNs && info.count > e.count && info.count <= rawLimit) {
            db::SeriesQuery q;
            q.seriesId = info.id;
            q.t0Ns = e.lastNs + 1;
            q.maxBuckets = std::max(16, maxBuckets);
            auto tail = history.querySeries(q);
            if (!tail) {
                return Error{tail.error()};
            }
            // Every sample after the last one read, and nothing inserted at or before it.
            if (!tail->decimated && e.count + tail->sourceCount == info.count) {
                const PointSeries more = toPointSeries(info, *tail);
                PointSeries& p = e.points;
                appendPoints(p, more);
                p.sourceCount = info.count;
                e.count = info.count;
                e.lastNs = info.lastNs;
                ++m_counts.tail;
                return e.points;
            }
        }
    }
    // A whole series past the raw limit (loadSeries reads it on db::followBucketWidth's grid):
    // while that grid stays, read again only from the start of the last bucket read.
    const int buckets = std::max(16, maxBuckets);
    const std::int64_t w = db::followBucketWidth(info.firstNs, info.lastNs, buckets);
    if (whole && info.count > 4 * static_cast<std::int64_t>(buckets) && found != m_entries.end()) {
        Entry& e = found->second;
        if (e.maxBuckets == maxBuckets && e.whole && e.widthNs == w && e.firstNs == info.firstNs &&
            info.lastNs > e.lastNs && info.count > e.count && !e.points.t.empty()) {
            db::SeriesQuery q;
            q.seriesId = info.id;
            q.t0Ns = db::bucketIndex(e.lastNs, w) * w;
            q.bucketWidthNs = w;
            auto tail = history.querySeries(q);
            if (!tail) {
                return Error{tail.error()};
            }
            // Nothing stored before that bucket changed: the counts add up.
            if (tail->decimated && !tail->buckets.empty() &&
                e.count - e.lastBucketCount + tail->sourceCount == info.count) {
                const PointSeries more = toPointSeries(info, *tail);
                PointSeries& p = e.points;
                for (std::vector<double>* v : {&p.t, &p.value, &p.min, &p.max, &p.step}) {
                    v->pop_back();  // the last bucket, read again as the tail's first
                }
                appendPoints(p, more);
                p.sourceCount = info.count;
                e.count = info.count;
                e.lastNs = info.lastNs;
                e.lastBucketCount = tail->buckets.back().count;
                ++m_counts.tail;
                return e.points;
            }
        }
    }
    auto read = querySeriesPoints(history, info, t0, t1, maxBuckets);
    if (!read) {
        m_entries.erase(info.id);
        return Error{read.error()};
    }
    PointSeries points = toPointSeries(info, *read);
    ++m_counts.full;
    Entry entry{info.count, info.firstNs, info.lastNs, t0, t1, maxBuckets, whole, 0, 0, points};
    // On w's grid (querySeriesPoints): the bucket holding the last sample, whose count the next
    // tail read replaces (a read from its start gives it as this read does).
    if (whole && read->decimated && read->sourceCount == info.count && !points.t.empty()) {
        const std::int64_t lastStart = db::bucketIndex(info.lastNs, w) * w;
        for (auto b = read->buckets.rbegin(); b != read->buckets.rend(); ++b) {
            if (b->count > 0) {
                if (b->t0Ns == lastStart) {
                    entry.widthNs = w;
                    entry.lastBucketCount = b->count;
                }
                break;
            }
        }
    }
    m_entries[info.id] = std::move(entry);
    return points;
}

namespace {
// What runMetricsByKind asks for: every sample (raw below 4 Mi samples).
constexpr int kMetricSummaryBuckets = 1 << 20;

// Folds samples in time order into last and best (the earliest sample on a tie).
void foldSummary(db::MetricSummary& m, const std::vector<db::SeriesPoint>& points,
                 metrics::Direction direction) {
    for (const db::SeriesPoint& p : points) {
        m.last = p.value;
        m.lastStep = p.step;
        m.lastNs = p.tNs;
        if (direction != metrics::Direction::None && metrics::better(direction, p.value, m.best)) {
            m.best = p.value;
            m.bestStep = p.step;
            m.bestNs = p.tNs;
        }
    }
}
}  // namespace

Result<std::optional<db::MetricSummary>> SeriesCache::metricSummary(db::History& history,
                                                                    const db::SeriesInfo& info,
                                                                    metrics::Direction direction) {
    auto found = m_metrics.find(info.id);
    if (found != m_metrics.end() && found->second.direction == direction) {
        MetricEntry& e = found->second;
        if (e.count == info.count && e.firstNs == info.firstNs && e.lastNs == info.lastNs) {
            ++m_counts.reused;
            return std::optional<db::MetricSummary>(e.summary);
        }
        if (e.firstNs == info.firstNs && info.lastNs > e.lastNs && info.count > e.count) {
            db::SeriesQuery q;
            q.seriesId = info.id;
            q.t0Ns = e.lastNs + 1;
            q.maxBuckets = kMetricSummaryBuckets;
            auto tail = history.querySeries(q);
            if (!tail) {
                return Error{tail.error()};
            }
            if (!tail->decimated && e.count + tail->sourceCount == info.count) {
                foldSummary(e.summary, tail->points, direction);
                e.count = info.count;
                e.lastNs = info.lastNs;
                ++m_counts.tail;
                return std::optional<db::MetricSummary>(e.summary);
            }
        }
    }
    m_metrics.erase(info.id);
    db::SeriesQuery q;
    q.seriesId = info.id;
    q.maxBuckets = kMetricSummaryBuckets;
    auto points = history.querySeries(q);
    if (!points) {
        return Error{points.error()};
    }
    ++m_counts.full;
    if (points->points.empty()) {
        return std::optional<db::MetricSummary>();
    }
    db::MetricSummary m;
    m.nodeId = info.nodeId;
    m.series = info.name;
    m.best = std::numeric_limits<double>::quiet_NaN();
    m.bestStep = -1;
    m.bestNs = 0;
    foldSummary(m, points->points, direction);
    if (!points->decimated) {  // a decimated answer cannot be extended by a tail
        m_metrics[info.id] = MetricEntry{info.count, info.firstNs, info.lastNs, direction, m};
    }
    return std::optional<db::MetricSummary>(std::move(m));
}

int runSeriesBuckets(int maxBuckets, std::size_t seriesCount) {
    const std::size_t perSeries =
        static_cast<std::size_t>(kRunPointBudget) / (4 * std::max<std::size_t>(1, seriesCount));
    const int floor = std::min(maxBuckets, kHostMemoryMinBuckets);
    return std::max(floor, static_cast<int>(std::min<std::size_t>(
                               perSeries, static_cast<std::size_t>(std::max(0, maxBuckets)))));
}

NodeMemoryResult loadNodeHostMemory(db::History& history, const QStringList& nodeIds, double t0,
                                    double t1, int maxBuckets, SeriesCache* cache) {
    NodeMemoryResult result;
    // Many nodes share one plot: a budget of points for all of them (a decimated series has at
    // most 4 per bucket), so 256 nodes read and draw ~64 k points per refresh rather than
    // 256 x 4 x the plot's width (docs/performance.md "Load").
    const int perNode = kHostMemoryPointBudget / (4 * std::max<int>(1, nodeIds.size()));
    maxBuckets = std::min(maxBuckets, std::max(kHostMemoryMinBuckets, perNode));
    // One listing for all nodes (not one per node: 256 statements per refresh under load).
    db::SeriesFilter filter;
    filter.runId = RunId();  // node-level series
    filter.name = series::kHostMemPattern;
    auto listed = history.listSeries(filter);
    if (!listed) {
        result.error = qs(listed.error());
        return result;
    }
    std::map<NodeId, std::pair<const db::SeriesInfo*, const db::SeriesInfo*>> byNode;
    for (const db::SeriesInfo& info : *listed) {
        if (info.name == series::kHostMemUsed) {
            byNode[info.nodeId].first = &info;
        } else if (info.name == series::kHostMemTotal) {
            byNode[info.nodeId].second = &info;
        }
    }
    for (const QString& node : nodeIds) {
        const auto it = byNode.find(NodeId{node.toStdString()});
        if (it == byNode.end() || it->second.first == nullptr) {
            continue;
        }
        const db::SeriesInfo* used = it->second.first;
        const db::SeriesInfo* total = it->second.second;
        auto points = cache != nullptr ? cache->load(history, *used, t0, t1, maxBuckets)
                                       : loadSeries(history, *used, t0, t1, maxBuckets);
        if (!points) {
            result.error = qs(points.error());
            return result;
        }
        double ram = 0;
        if (total != nullptr) {
            db::SeriesQuery q;
            q.seriesId = total->id;
            q.t0Ns = total->lastNs;
            auto last = history.querySeries(q);
            if (last && !last->points.empty()) {
                ram = last->points.back().value;
            }
        }
        result.series.push_back(std::move(*points));
        result.ramBytes.push_back(ram);
    }
    return result;
}

Result<std::vector<MetricValue>> loadMetricValues(
    db::History& history, const RunId& runId, const std::string& prefix,
    const std::vector<metrics::KindOverride>& overrides, SeriesCache* cache) {
    if (cache != nullptr) {
        // The series runMetricsByKind summarises (History::runMetrics: name starting with
        // prefix, in name then node order), each through the cache.
        db::SeriesFilter filter;
        filter.runId = runId;
        filter.name = prefix.empty() ? std::string() : prefix + "*";
        auto listed = history.listSeries(filter);
        if (!listed) {
            return Error{listed.error()};
        }
        std::vector<const db::SeriesInfo*> series;
        for (const db::SeriesInfo& info : *listed) {
            if (info.name.compare(0, prefix.size(), prefix) == 0) {
                series.push_back(&info);
            }
        }
        std::sort(series.begin(), series.end(), [](const auto* a, const auto* b) {
            return std::tie(a->name, a->nodeId) < std::tie(b->name, b->nodeId);
        });
        std::vector<MetricValue> out;
        for (const db::SeriesInfo* info : series) {
            const metrics::MetricInfo kind = metrics::classify(info->name, info->unit, overrides);
            auto summary = cache->metricSummary(history, *info, kind.direction);
            if (!summary) {
                return Error{summary.error()};
            }
            if (!summary->has_value()) {
                continue;  // no sample yet
            }
            const db::MetricSummary& m = **summary;
            out.push_back(MetricValue{QString::fromStdString(m.series), m.last, m.lastStep, m.best,
                                      m.bestStep, kind});
        }
        return out;
    }
    auto rows = metrics::runMetricsByKind(history, runId, prefix, overrides);
    if (!rows) {
        return Error{rows.error()};
    }
    std::vector<MetricValue> out;
    for (const metrics::RunMetric& r : *rows) {
        const db::MetricSummary& m = r.summary;
        out.push_back(MetricValue{QString::fromStdString(m.series), m.last, m.lastStep, m.best,
                                  m.bestStep, r.info});
    }
    return out;
}

namespace {
// A primary metric outside eval/ (e.g. train/reward) is not among the eval/* values: read it.
void appendPrimaryMetric(db::History& history, const RunId& runId, const plan::Analysis& analysis,
                         std::vector<MetricValue>& values, SeriesCache* cache = nullptr) {
    const std::string& preferred = analysis.primaryMetric;
    if (preferred.empty() || preferred.rfind("eval/", 0) == 0) {
        return;
    }
    if (auto extra = loadMetricValues(history, runId, preferred, analysis.metricKinds, cache)) {
        for (MetricValue& m : *extra) {
            if (m.name == qs(preferred)) {
                values.push_back(std::move(m));
            }
        }
    }
}
}  // namespace

Result<std::vector<RunRow>> loadRunList(db::History& history) {
    auto runs = history.listRuns();
    if (!runs) {
        return Error{runs.error()};
    }
    std::vector<RunRow> rows;
    rows.reserve(runs->size());
    std::map<std::string, db::History::RunAnnotation> notes;
    if (auto a = history.runAnnotations()) {
        for (auto& [id, annotation] : *a) {
            notes.emplace(id, std::move(annotation));
        }
    }
    for (const db::RunRecord& r : *runs) {
        RunRow row;
        row.id = qs(r.id);
        if (const auto it = notes.find(r.id.value()); it != notes.end()) {
            for (const std::string& t : it->second.tags) {
                row.tags << qs(t);
            }
            row.note = qs(it->second.note);
        }
        row.name = qs(r.name);
        row.state = r.state;
        row.recipe = recipeLabel(qs(r.recipeYaml));
        for (const std::string& n : r.nodes) {
            row.nodes.push_back(qs(n));
        }
        row.startT = nsToSeconds(r.startedNs);
        row.endT = r.endedNs > 0 ? nsToSeconds(r.endedNs) : 0;
        row.message = qs(r.message);
        if (auto peaks = history.runPeaks(r.id)) {
            for (const db::NodePeak& p : *peaks) {
                row.peaks.push_back(
                    NodePeakRow{qs(p.nodeId), p.peak, nsToSeconds(p.peakNs), QString(), 0});
            }
        }
        const plan::Analysis analysis = metrics::analysisOf(r.recipeYaml);
        row.primaryMetric = qs(analysis.primaryMetric);
        if (auto metrics = loadMetricValues(history, r.id, "eval/", analysis.metricKinds)) {
            row.metrics = std::move(*metrics);
        }
        appendPrimaryMetric(history, r.id, analysis, row.metrics);
        if (auto cause = db::runCause(history, r.id); cause.ok() && *cause) {
            row.cause = qs((*cause)->summary);
            row.causeKind = qs((*cause)->kind);
        }
        loadDiagnosisHeadline(history, r.id, row);
        rows.push_back(std::move(row));
    }
    fillTelemetryClocks(history, rows);  // issue 46: "unreachable" in the list too
    return rows;
}

Result<RunSnapshot> loadRunSnapshot(db::History& history, const QString& runId, double t0,
                                    double t1, int maxBuckets, const plan::ModelCatalog* catalog,
                                    SeriesCache* cache) {
    // With a cache every read below sees one snapshot of the file (the cache's counts must agree
    // with the samples it reads); released on every return.
    struct ReadScope {
        db::History* history = nullptr;
        ~ReadScope() {
            if (history != nullptr) {
                (void)history->endRead();
            }
        }
    } scope;
    if (cache != nullptr) {
        if (Status s = history.beginRead(); !s.ok()) {
            return Error{s.error()};
        }
        scope.history = &history;
    }
    auto load = [&](const db::SeriesInfo& info, double from, double to, int buckets) {
        return cache != nullptr ? cache->load(history, info, from, to, buckets)
                                : loadSeries(history, info, from, to, buckets);
    };
    auto record = history.run(RunId{runId.toStdString()});
    if (!record) {
        return Error{record.error()};
    }
    if (!record->has_value()) {
        return Error{"run '" + runId.toStdString() + "' is not in " + history.path()};
    }
    const db::RunRecord& r = **record;
    RunSnapshot snap;
    snap.recipeYaml = qs(r.recipeYaml);
    const plan::Analysis analysis = metrics::analysisOf(r.recipeYaml);
    snap.run.primaryMetric = qs(analysis.primaryMetric);
    snap.run.id = qs(r.id);
    snap.run.name = qs(r.name);
    snap.run.state = r.state;
    snap.run.recipe = recipeLabel(snap.recipeYaml);
    for (const std::string& n : r.nodes) {
        snap.run.nodes.push_back(qs(n));
    }
    snap.run.startT = nsToSeconds(r.startedNs);
    snap.run.endT = r.endedNs > 0 ? nsToSeconds(r.endedNs) : 0;
    snap.run.message = qs(r.message);
    loadDiagnosisHeadline(history, r.id, snap.run);
    const double runEnd = snap.run.endT > 0 ? snap.run.endT : nowSeconds();
    if (!(t0 < t1)) {
        t0 = snap.run.startT;
        t1 = runEnd;
    }
    snap.t0 = t0;
    snap.t1 = t1;

    // Node-level host memory of the run's nodes over the range.
    const NodeMemoryResult host =
        loadNodeHostMemory(history, snap.run.nodes, t0, t1, maxBuckets, cache);
    if (!host.error.isEmpty()) {
        return Error{host.error.toStdString()};
    }
    snap.hostMemory = host.series;
    double ram = 0;
    for (double v : host.ramBytes) {
        if (v > 0 && (ram == 0 || v < ram)) {
            ram = v;
        }
    }

    // GPU memory: "gpu.*" memory series of the run's nodes (one listing for all nodes), in the
    // order of the run's nodes.
    std::vector<const db::SeriesInfo*> gpuSeries;
    db::SeriesFilter gpuFilter;
    gpuFilter.name = series::kGpuPattern;
    auto gpus = history.listSeries(gpuFilter);
    if (!gpus) {
        snap.warnings << qs(gpus.error());
    } else {
        std::map<NodeId, std::vector<const db::SeriesInfo*>> gpuByNode;
        for (const db::SeriesInfo& info : *gpus) {
            if (info.name.find("mem.used") == std::string::npos) {
                continue;
            }
            if (!info.runId.empty() && info.runId != r.id) {
                continue;
            }
            gpuByNode[info.nodeId].push_back(&info);
        }
        for (const QString& node : snap.run.nodes) {
            const auto it = gpuByNode.find(NodeId{node.toStdString()});
            if (it != gpuByNode.end()) {
                gpuSeries.insert(gpuSeries.end(), it->second.begin(), it->second.end());
            }
        }
    }

    // The run's own series: process-tree RSS and metrics.
    db::SeriesFilter runFilter;
    runFilter.runId = r.id;
    auto runSeries = history.listSeries(runFilter);
    if (!runSeries) {
        return Error{runSeries.error()};
    }
    std::vector<const db::SeriesInfo*> ownSeries;
    for (const db::SeriesInfo& info : *runSeries) {
        if (info.name.rfind(series::kGpuPrefix, 0) != 0) {  // GPU series are taken above
            ownSeries.push_back(&info);
        }
    }
    // All of them share one budget of points (what a refresh reads, and what the cache and the
    // plots hold): a run of 256 nodes x 4 series reads 256 buckets per series, not the width.
    const int buckets = runSeriesBuckets(maxBuckets, gpuSeries.size() + ownSeries.size());
    for (const db::SeriesInfo* info : gpuSeries) {
        if (auto s = load(*info, t0, t1, buckets)) {
            snap.gpuMemory.push_back(std::move(*s));
        }
    }
    for (const db::SeriesInfo* info : ownSeries) {
        const bool isRss = info->name.find("rss") != std::string::npos;
        // Metrics are step-indexed: load them whole so the step axis is complete.
        const bool isMetric = !isRss && info->name.find('/') != std::string::npos;
        auto s = isMetric ? load(*info, 0, 0, buckets) : load(*info, t0, t1, buckets);
        if (!s) {
            snap.warnings << qs(s.error());
            continue;
        }
        if (isRss) {
            snap.processRss.push_back(std::move(*s));
        } else {
            snap.metrics.push_back(std::move(*s));
        }
    }

    // Events of the run (phases over the whole run so a span that began earlier is shaded).
    db::EventFilter ef;
    ef.runId = r.id;
    auto events = history.listEvents(ef);
    if (!events) {
        return Error{events.error()};
    }
    snap.phases = phasesFromEvents(*events, runEnd);
    // The daemon states its alarm threshold on every memory_alarm event it raises.
    double daemonAlarm = 0;
    for (const db::EventRecord& e : *events) {
        if (e.kind == toString(EventKind::MemoryAlarm)) {
            daemonAlarm =
                std::max(daemonAlarm, attr(e.attrs, telemetry::attr::kThresholdBytes).toDouble());
        }
    }
    snap.lines = memoryLinesFromRecipe(snap.recipeYaml, ram, catalog, daemonAlarm);
    {
        RoleQuery rq{snap.run.nodes, snap.recipeYaml, t0, t1, runEnd, maxBuckets, snap.phases};
        snap.roles = loadRunRoleData(history, rq, *events, catalog, cache);
        snap.warnings << snap.roles->warnings;
    }
    applyKindOverrides(snap.metrics, analysis.metricKinds);
    for (const db::EventRecord& e : *events) {
        const double t = nsToSeconds(e.tNs);
        EventRow row = toEventRow(e);
        if (e.kind == toString(EventKind::NcclWarning) ||
            e.kind == toString(EventKind::NcclError) || e.kind == toString(EventKind::Stall)) {
            snap.nccl.events.push_back(row);
        }
        if (e.kind == toString(EventKind::Info) && !attr(e.attrs, "busbw_gbps").isEmpty()) {
            NcclHealth::Probe probe;
            probe.nodeId = qs(e.nodeId);
            probe.collective = attr(e.attrs, "collective");
            probe.bytes = attr(e.attrs, "bytes").toDouble();
            probe.busbwGbps = attr(e.attrs, "busbw_gbps").toDouble();
            probe.expectedGbps = attr(e.attrs, "expected_busbw_gbps").toDouble();
            snap.nccl.probes.push_back(probe);
        }
        if (t >= t0 && t <= t1 && e.kind != toString(EventKind::Phase)) {
            snap.events.push_back(std::move(row));
        }
    }

    // Peaks per node (exact, over the samples' max) and time above the alarm line.
    if (auto peaks = history.runPeaks(r.id)) {
        for (const db::NodePeak& p : *peaks) {
            NodePeakRow row{qs(p.nodeId), p.peak, nsToSeconds(p.peakNs), QString(), 0};
            row.phase = phaseAt(snap.phases, row.peakT);
            for (const PointSeries& s : snap.hostMemory) {
                if (s.nodeId == row.nodeId) {
                    row.secondsAboveAlarm = secondsAbove(s, snap.lines.alarmBytes);
                }
            }
            snap.peaks.push_back(row);
        }
        snap.run.peaks = snap.peaks;
    } else {
        snap.warnings << qs(peaks.error());
    }
    if (auto metrics = loadMetricValues(history, r.id, "eval/", analysis.metricKinds, cache)) {
        snap.run.metrics = std::move(*metrics);
        appendPrimaryMetric(history, r.id, analysis, snap.run.metrics, cache);
    } else {
        snap.warnings << qs(metrics.error());
    }

    // NCCL libraries from the nodes' inventory snapshots; node addresses for the log tail.
    for (qsizetype i = 0; i < snap.run.nodes.size(); ++i) {
        snap.nodeAddresses << QString();
    }
    if (auto nodes = history.listNodes()) {
        for (const db::NodeRecord& n : *nodes) {
            const qsizetype at = snap.run.nodes.indexOf(qs(n.nodeId));
            if (at >= 0) {
                snap.nodeAddresses[at] = qs(n.address);
            }
            if (!snap.run.nodes.contains(qs(n.nodeId))) {
                continue;
            }
            const QJsonObject info =
                QJsonDocument::fromJson(QByteArray::fromStdString(n.infoJson)).object();
            const QJsonValue libs = info.value(QLatin1String("nccl_libraries"));
            for (const QJsonValue& lib : libs.toArray()) {
                const QJsonObject o = lib.toObject();
                if (!o.value(QLatin1String("selected")).toBool()) {
                    continue;
                }
                const QString version = o.value(QLatin1String("version")).toString();
                int code = o.value(QLatin1String("version_code")).toInt();
                if (code == 0) {
                    code = ncclVersionCode(version);
                }
                snap.nccl.libraries.push_back(NcclHealth::NodeLibrary{
                    qs(n.nodeId), o.value(QLatin1String("path")).toString(), version, code});
            }
        }
    }
    // Whether the gate applies is the planner's call on the run's recipe snapshot: only rollout
    // engines that span nodes with CUDA graphs need NCCL >= 2.30.7.
    std::optional<plan::Recipe> recipe;
    if (!snap.recipeYaml.trimmed().isEmpty()) {
        if (auto parsed = plan::parseRecipe(snap.recipeYaml.toStdString(), "recipe snapshot")) {
            recipe = std::move(*parsed);
        }
    }
    if (recipe) {
        snap.nccl.gateVersionCode =
            plan::requiredNcclVersionCode(*recipe, plan::computeLayout(*recipe));
    }
    int lowest = std::numeric_limits<int>::max();
    for (const auto& lib : snap.nccl.libraries) {
        if (lib.versionCode > 0) {
            lowest = std::min(lowest, lib.versionCode);
        }
    }
    if (recipe && snap.nccl.gateVersionCode == 0) {
        snap.nccl.verdict = QStringLiteral("not required");
        snap.nccl.verdictText = QStringLiteral(
            "no rollout engine spans nodes with CUDA graphs: the >= 2.30.7 gate does not apply");
    } else if (snap.nccl.libraries.empty()) {
        snap.nccl.verdict = QStringLiteral("unknown");
        snap.nccl.verdictText = QStringLiteral("no NCCL library recorded for the run's nodes");
    } else if (lowest == std::numeric_limits<int>::max()) {
        snap.nccl.verdict = QStringLiteral("unknown");
        snap.nccl.verdictText = QStringLiteral("the NCCL version of the run's nodes is unknown");
    } else {
        const bool pass = lowest >= snap.nccl.gateVersionCode;
        const QString applies = recipe ? QString()
                                       : QStringLiteral(
                                             " (no recipe snapshot: gate assumed to "
                                             "apply)");
        snap.nccl.verdict = pass ? QStringLiteral("pass") : QStringLiteral("fail");
        snap.nccl.verdictText =
            (pass ? QStringLiteral("every node loads NCCL >= 2.30.7")
                  : QStringLiteral("a node loads NCCL %1.%2.%3 < 2.30.7: cross-node CUDA-graph "
                                   "rollout may deadlock")
                        .arg(lowest / 10000)
                        .arg((lowest / 100) % 100)
                        .arg(lowest % 100)) +
            applies;
    }
    return snap;
}

}  // namespace runplane::gui
