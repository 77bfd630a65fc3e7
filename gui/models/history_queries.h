#pragma once
// Read-side queries of the run history for the GUI. Every function here blocks on SQLite, so it
// runs on a worker thread (SerialWorker) and returns plain values for the GUI thread.
// Formulas (decimation to plot points, time above the alarm line, phases) are written down in
// docs/gui.md.

#include <QString>
#include <QStringList>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/ids.h"
#include "common/metrics/metric_kind.h"
#include "common/result.h"
#include "db/history/history.h"
#include "gui/models/run_data.h"
#include "gui/models/run_derivations.h"  // loadRunSnapshot fills a RunSnapshot with them
#include "gui/models/series_data.h"

namespace runplane::db {
class History;
struct SeriesInfo;
struct SeriesPoints;
struct EventRecord;
}  // namespace runplane::db

namespace runplane::plan {
class ModelCatalog;
}

namespace runplane::gui {

std::int64_t secondsToNs(double seconds);

/// Converts a history answer into plot points (see PointSeries for decimated results).
PointSeries toPointSeries(const db::SeriesInfo& info, const db::SeriesPoints& points);

/// One series over [t0, t1] seconds (t0 >= t1: everything), at most ~maxBuckets points.
Result<PointSeries> loadSeries(db::History& history, const db::SeriesInfo& info, double t0,
                               double t1, int maxBuckets);

/// What a live view read before, so that its next refresh reads only what changed
/// (docs/gui.md, "Incremental refresh"). Kept by a page for its reader and only ever touched on
/// that reader's worker thread. A series is
/// - not read again when its stored count and first/last sample times are unchanged and it is
///   asked for the same range (or, both times, a range holding all of it);
/// - read only after its last sample, and appended, when it was read whole and undecimated
///   before and is still whole and small enough to stay undecimated (at most 4 x maxBuckets
///   samples), its first sample unchanged and its count grown by exactly what that tail read
///   returns;
/// - when it is read whole but has more samples than that: bucketed on a grid kept fixed while
///   the series grows (db::followBucketWidth: room for the span to double within maxBuckets),
///   and then read again only from the start of its last bucket (that bucket replaced, newer
///   ones appended), on the same conditions; past maxBuckets buckets, a new grid (full read);
/// - otherwise read in full. The answer is always what loadSeries returns at that moment, or,
/// for a whole series past the raw limit, what querySeries returns for all of it on the
/// cache's grid (followWidthNs), provided the caller reads inside one snapshot
/// (History::beginRead) so that listSeries' counts and the samples agree.
class SeriesCache {
  public:
    Result<PointSeries> load(db::History& history, const db::SeriesInfo& info, double t0, double t1,
                             int maxBuckets);
    /// Last and best (by `direction`) of a whole series, as metrics::runMetricsByKind computes
    /// them (nullopt: no sample): read whole once, then only the samples after the last one
    /// read while the series only grows (same conditions as load's tail reads), and folded in.
    Result<std::optional<db::MetricSummary>> metricSummary(db::History& history,
                                                           const db::SeriesInfo& info,
                                                           metrics::Direction direction);
    void clear() {
        m_entries.clear();
        m_metrics.clear();
    }
    /// Reads since construction: full, tail-only, and answers taken as they were (tests).
    struct Counts {
        std::int64_t full = 0;
        std::int64_t tail = 0;
        std::int64_t reused = 0;
    };
    const Counts& counts() const { return m_counts; }
    /// The fixed grid a whole series past the raw limit is read on (0: none) (tests).
    std::int64_t followWidthNs(std::int64_t seriesId) const {
        const auto it = m_entries.find(seriesId);
        return it == m_entries.end() ? 0 : it->second.widthNs;
    }

  private:
    struct Entry {
        std::int64_t count = 0;
        std::int64_t firstNs = 0;
        std::int64_t lastNs = 0;
        double t0 = 0;
        double t1 = 0;
        int maxBuckets = 0;
        bool whole = false;                // the range held every sample of the series
        std::int64_t widthNs = 0;          // > 0: bucketed on this fixed grid (whole series)
        std::int64_t lastBucketCount = 0;  // samples in the last bucket (widthNs > 0)
        PointSeries points;
    };
    std::map<std::int64_t, Entry> m_entries;  // by series id
    struct MetricEntry {
        std::int64_t count = 0;
        std::int64_t firstNs = 0;
        std::int64_t lastNs = 0;
        metrics::Direction direction = metrics::Direction::None;
        db::MetricSummary summary;
    };
    std::map<std::int64_t, MetricEntry> m_metrics;  // by series id
    Counts m_counts;
};

/// Cluster page: node-level host memory used of each node in [t0, t1]; nodes without samples
/// yet are left out. Also returns each node's RAM (last host.mem.total_bytes), 0 if unknown.
struct NodeMemoryResult {
    std::vector<PointSeries> series;
    std::vector<double> ramBytes;  // parallel to series
    QString error;
};
/// maxBuckets is per node, capped so that all nodes together come to at most about
/// kHostMemoryPointBudget points (never fewer than kHostMemoryMinBuckets buckets each).
inline constexpr int kHostMemoryPointBudget = 65536;
inline constexpr int kHostMemoryMinBuckets = 32;
/// One listSeries for every node; with a cache, unchanged series are not read again.
NodeMemoryResult loadNodeHostMemory(db::History& history, const QStringList& nodeIds, double t0,
                                    double t1, int maxBuckets, SeriesCache* cache = nullptr);

/// Runs page: the run's own series (GPU memory, process RSS, metrics) share a budget of points
/// per refresh: each is read at runSeriesBuckets(width, count) buckets, i.e. at most
/// kRunPointBudget points together (a series holds at most 4 points per bucket: raw below
/// that, else one per bucket), never fewer than kHostMemoryMinBuckets buckets each. This bounds
/// what a live view's SeriesCache, its snapshot and its plots hold (docs/performance.md, "Load").
inline constexpr int kRunPointBudget = 1 << 20;
int runSeriesBuckets(int maxBuckets, std::size_t seriesCount);

/// Last and best (by direction) of every series of the run starting with `prefix` ("" = all),
/// kinds after the recipe's overrides (analysis.metric_kinds). With a cache (a live view's
/// refresh, inside one read snapshot), each series comes through SeriesCache::metricSummary:
/// the same values, reading only the samples that are new since the last refresh.
Result<std::vector<MetricValue>> loadMetricValues(
    db::History& history, const RunId& runId, const std::string& prefix = "eval/",
    const std::vector<metrics::KindOverride>& overrides = {}, SeriesCache* cache = nullptr);

/// The history list: every run, newest first, with peaks and last/best eval metrics.
Result<std::vector<RunRow>> loadRunList(db::History& history);

/// Everything the live view shows for one run over [t0, t1] (t0 >= t1: the whole run).
/// RAM comes from host.mem.total_bytes; the lines from memoryLinesFromRecipe (catalog may be
/// null: then no planned peak). With a cache (a live view's refresh), everything is read in one
/// snapshot (History::beginRead) and series come through the cache: the same answer, reading
/// only what changed since the last refresh.
Result<RunSnapshot> loadRunSnapshot(db::History& history, const QString& runId, double t0,
                                    double t1, int maxBuckets,
                                    const plan::ModelCatalog* catalog = nullptr,
                                    SeriesCache* cache = nullptr);

}  // namespace runplane::gui
