// History: read-side queries (series with min/max-preserving decimation, events, summaries).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include <sys/mman.h>

#include "db/history/chunks.h"
#include "db/history/decimate.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"
#include "db/history/retention.h"
#include "db/history/rollup.h"
#include "db/history/staged.h"

namespace runplane::db {

namespace {

template <typename Fn>
Status forEachRow(sqlite::Statement& stmt, Fn&& fn) {
    while (true) {
        auto row = stmt.step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            return {};
        }
        fn(stmt);
    }
}

SeriesInfo readSeries(const sqlite::Statement& stmt) {
    SeriesInfo info;
    info.id = stmt.columnInt(0);
    info.nodeId = NodeId{stmt.columnText(1)};
    info.runId = RunId{stmt.columnText(2)};
    info.name = stmt.columnText(3);
    info.unit = stmt.columnText(4);
    return info;
}

// A fresh multi-MB result is faulted in 4 KiB page by page (~10,000 faults per 1 M points,
// ~20 ms); asking for transparent huge pages on its 2 MiB-aligned interior makes that ~20
// faults. Only a hint: no effect where THP is off, and none on reused capacity already faulted.
void adviseHugePages(void* data, std::size_t bytes) {
    constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
    if (bytes < 2 * kHuge) {
        return;
    }
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
    if (end > begin) {
        (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
}

// Decimated results are small (<= 4 points a bucket): no capacity worth keeping.
Status finishInto(Decimator&& decimator, SeriesPoints& out) {
    out = std::move(decimator).finish();
    return {};
}

// A cell's representatives in time order (distinct samples), its count on the first.
void addCell(Decimator& decimator, const RollupCell& cell) {
    std::array<const SeqPoint*, 4> picks = {&cell.first, &cell.minSample, &cell.maxSample,
                                            &cell.last};
    std::sort(picks.begin(), picks.end(), [](const SeqPoint* a, const SeqPoint* b) {
        return a->point.tNs < b->point.tNs || (a->point.tNs == b->point.tNs && a->seq < b->seq);
    });
    const SeqPoint* previous = nullptr;
    for (const SeqPoint* p : picks) {
        if (previous && previous->seq == p->seq && previous->point.tNs == p->point.tNs) {
            continue;
        }
        decimator.add(p->point, previous ? 0 : cell.count);
        previous = p;
    }
}

// Like addCell, for a cell that may reach outside [from, to]: only its representatives inside
// the range are added; the first of them carries the cell's count.
void addCellClipped(Decimator& decimator, const RollupCell& cell, std::int64_t from,
                    std::int64_t to) {
    std::array<const SeqPoint*, 4> picks = {&cell.first, &cell.minSample, &cell.maxSample,
                                            &cell.last};
    std::sort(picks.begin(), picks.end(), [](const SeqPoint* a, const SeqPoint* b) {
        return a->point.tNs < b->point.tNs || (a->point.tNs == b->point.tNs && a->seq < b->seq);
    });
    const SeqPoint* previous = nullptr;
    for (const SeqPoint* p : picks) {
        if (p->point.tNs < from || p->point.tNs > to) {
            continue;
        }
        if (previous && previous->seq == p->seq && previous->point.tNs == p->point.tNs) {
            continue;
        }
        decimator.add(p->point, previous ? 0 : cell.count);
        previous = p;
    }
}

bool lowerIsBetter(const std::string& name) {
    return name.find("loss") != std::string::npos;
}

}  // namespace

Result<std::vector<SeriesInfo>> History::listSeries(const SeriesFilter& filter) {
    std::lock_guard lock(m_mutex);
    ReadSnapshot snapshot(*m_impl->db);  // chunks and staged rows of one snapshot
    std::string sql = "SELECT id, node_id, run_id, name, unit FROM series WHERE 1";
    if (!filter.nodeId.empty()) {
        sql += " AND node_id = ?1";
    }
    if (filter.runId) {
        sql += " AND run_id = ?2";
    }
    const bool prefix = !filter.name.empty() && filter.name.back() == '*';
    const std::string name = prefix ? filter.name.substr(0, filter.name.size() - 1) : filter.name;
    if (prefix) {
        sql += " AND substr(name, 1, length(?3)) = ?3";
    } else if (!name.empty()) {
        sql += " AND name = ?3";
    }
    sql += " ORDER BY node_id, run_id, name;";
    auto stmt = m_impl->db->prepare(sql);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    if (!filter.nodeId.empty()) {
        stmt->bind(1, filter.nodeId.value());
    }
    if (filter.runId) {
        stmt->bind(2, filter.runId->value());
    }
    if (!name.empty()) {
        stmt->bind(3, name);
    }
    std::vector<SeriesInfo> series;
    if (Status s = forEachRow(*stmt, [&](auto& row) { series.push_back(readSeries(row)); });
        !s.ok()) {
        return Error{s.error()};
    }
    // Count and extent from the chunk rows alone (t_min/t_max are exact per chunk).
    auto count = m_impl->db->prepare(
        "SELECT coalesce(sum(count), 0), min(t_min), max(t_max) FROM chunks WHERE series_id = ?1;");
    if (!count.ok()) {
        return Error{count.error()};
    }
    for (SeriesInfo& info : series) {
        count->bind(1, info.id);
        auto row = count->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        info.count = count->columnInt(0);
        info.firstNs = count->columnInt(1);
        info.lastNs = count->columnInt(2);
        count->reset();
    }
    // And the staged samples (staged.h), read once per node (the list is ordered by node).
    struct Staged {
        std::int64_t count = 0;
        std::int64_t first = 0;
        std::int64_t last = 0;
    };
    std::unordered_map<std::int64_t, Staged> staged;
    for (std::size_t i = 0; i < series.size(); ++i) {
        SeriesInfo& info = series[i];
        if (i == 0 || series[i - 1].nodeId != info.nodeId) {
            staged.clear();
            if (Status s = forEachNodeStagedSample(
                    *m_impl->db, info.nodeId.value(),
                    [&](std::int64_t id, std::int64_t, const ChunkSample& p) {
                        Staged& st = staged[id];
                        st.first = st.count == 0 ? p.tNs : std::min(st.first, p.tNs);
                        st.last = st.count == 0 ? p.tNs : std::max(st.last, p.tNs);
                        ++st.count;
                    });
                !s.ok()) {
                return Error{s.error()};
            }
        }
        if (auto it = staged.find(info.id); it != staged.end()) {
            const Staged& st = it->second;
            info.firstNs = info.count == 0 ? st.first : std::min(info.firstNs, st.first);
            info.lastNs = info.count == 0 ? st.last : std::max(info.lastNs, st.last);
            info.count += st.count;
        }
    }
    return series;
}

Result<std::optional<std::int64_t>> History::findSeries(const NodeId& nodeId, const RunId& runId,
                                                        const std::string& name) {
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(
        "SELECT id FROM series WHERE node_id = ?1 AND run_id = ?2 AND name = ?3;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, nodeId.value()).bind(2, runId.value()).bind(3, name);
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    if (!*row) {
        return std::optional<std::int64_t>();
    }
    return std::optional<std::int64_t>(stmt->columnInt(0));
}

Result<SeriesPoints> History::querySeries(const SeriesQuery& query) {
    SeriesPoints out;
    if (Status s = querySeries(query, out); !s.ok()) {
        return Error{s.error()};
    }
    return out;
}

Status History::querySeries(const SeriesQuery& query, SeriesPoints& out) {
    std::lock_guard lock(m_mutex);
    ReadSnapshot snapshot(*m_impl->db);  // chunks and staged rows of one snapshot
    std::vector<SeriesPoint> reuse = std::move(out.points);
    reuse.clear();
    out = SeriesPoints{};
    out.points = std::move(reuse);
    if (query.t1Ns < query.t0Ns) {
        return {};
    }
    auto horizon = readHorizon(*m_impl->db, query.seriesId);
    if (!horizon.ok()) {
        return Error{horizon.error()};
    }
    // A range reaching into the pruned era of a series (retention) reads it from what is left.
    const bool pruned = *horizon && query.t0Ns < (*horizon)->rawBeforeNs;
    // Tighten the window to the data actually present, so the buckets are spread over the
    // samples and not over empty time.
    auto extent = chunkExtent(*m_impl->db, query.seriesId, query.t0Ns, query.t1Ns);
    if (!extent.ok()) {
        return Error{extent.error()};
    }
    bool any = extent->any;
    std::int64_t lo = extent->lo;
    std::int64_t hi = extent->hi;
    // The pruned era's cells: [rollupBefore, rawBefore) at the first retained level.
    std::int64_t oldFrom = 0;
    std::int64_t oldTo = 0;  // inclusive
    if (pruned) {
        oldFrom = std::max(query.t0Ns, (*horizon)->rollupBeforeNs);
        oldTo = std::min(query.t1Ns, (*horizon)->rawBeforeNs - 1);
        if (oldFrom <= oldTo) {
            const std::int64_t w = rollupWidth(kRetainedRollupLevel);
            auto cells = m_impl->db->prepare(
                "SELECT min(f_t), max(l_t) FROM sample_rollup WHERE series_id = ?1 "
                "AND level = ?2 AND cell >= ?3 AND cell <= ?4;");
            if (!cells.ok()) {
                return Error{cells.error()};
            }
            cells->bind(1, query.seriesId)
                .bind(2, static_cast<std::int64_t>(kRetainedRollupLevel))
                .bind(3, bucketIndex(oldFrom, w))
                .bind(4, bucketIndex(oldTo, w));
            auto cellRow = cells->step();
            if (!cellRow.ok()) {
                return Error{cellRow.error()};
            }
            if (!cells->columnIsNull(0)) {
                const std::int64_t cLo = std::max(cells->columnInt(0), oldFrom);
                const std::int64_t cHi = std::min(cells->columnInt(1), oldTo);
                if (cLo <= cHi) {
                    lo = any ? std::min(lo, cLo) : cLo;
                    hi = any ? std::max(hi, cHi) : cHi;
                    any = true;
                }
            }
        }
    }
    if (!any) {
        return {};  // no sample in range
    }

    const std::int64_t rawLimit = 4 * static_cast<std::int64_t>(std::max(2, query.maxBuckets));
    const bool fixedGrid = query.bucketWidthNs > 0;  // always bucketed, on the caller's grid
    auto makeDecimator = [&](bool allowRaw) {
        return fixedGrid ? Decimator::withWidth(query.bucketWidthNs)
                         : Decimator(lo, hi, query.maxBuckets, allowRaw);
    };
    if (!fixedGrid && !pruned && extent->bound <= rawLimit) {
        // Few enough to return them all: straight from the decoder into the result.
        out.points.reserve(static_cast<std::size_t>(extent->bound));
        adviseHugePages(out.points.data(), out.points.capacity() * sizeof(SeriesPoint));
        if (Status s = streamSamples(
                *m_impl->db, query.seriesId, lo, hi, extent->disjoint,
                [&](const ChunkSample& p) {
                    out.points.push_back(SeriesPoint{p.tNs, p.value, p.min, p.max, p.step});
                });
            !s.ok()) {
            return Error{s.error()};
        }
        out.sourceCount = static_cast<std::int64_t>(out.points.size());
        return {};
    }
    auto scan = [&](Decimator& decimator, std::int64_t from, std::int64_t to) -> Status {
        if (from > to) {
            return {};
        }
        return streamSamples(*m_impl->db, query.seriesId, from, to, extent->disjoint,
                             [&](const ChunkSample& p) {
                                 decimator.add(SeriesPoint{p.tNs, p.value, p.min, p.max, p.step});
                             });
    };
    // One level's cells in [first, last], with the samples not merged into cells yet.
    auto cellsOf =
        [&](int cellLevel, std::int64_t first,
            std::int64_t last) -> Result<std::vector<std::pair<std::int64_t, RollupCell>>> {
        auto cells = readCells(*m_impl->db, query.seriesId, cellLevel, first, last);
        if (!cells.ok()) {
            return cells;
        }
        if (Status s =
                addUnrolledSamples(*m_impl->db, query.seriesId, cellLevel, first, last, *cells);
            !s.ok()) {
            return Error{s.error()};
        }
        return cells;
    };

    // Wide ranges read the rollup pyramid: the coarsest level whose cells are no wider than a
    // decimation bucket. The two edge cells, which may reach outside [lo, hi], are read raw.
    const std::int64_t width =
        fixedGrid ? query.bucketWidthNs : bucketWidth(lo, hi, query.maxBuckets);
    int level = -1;
    while (level + 1 < kRollupLevels && rollupWidth(level + 1) <= width) {
        ++level;
    }
    // On a fixed grid only cells that tile the buckets, so that no cell straddles two of them
    // and a read from any bucket boundary on gives those buckets as a read of everything does.
    while (fixedGrid && level >= 0 && width % rollupWidth(level) != 0) {
        --level;
    }
    if (level < kRetainedRollupLevel) {
        level = -1;  // 1 s / 8 s cells are not stored since v6: decoding chunks is faster
    }
    // [from, to] from raw edges and interior cells of `level` (raw only when too narrow).
    auto feed = [&](Decimator& decimator, std::int64_t from, std::int64_t to) -> Status {
        if (from > to) {
            return {};
        }
        if (level >= 0) {
            const std::int64_t cellWidth = rollupWidth(level);
            const std::int64_t firstCell = bucketIndex(from, cellWidth);
            const std::int64_t lastCell = bucketIndex(to, cellWidth);
            if (lastCell - firstCell >= 2) {
                auto cells = cellsOf(level, firstCell + 1, lastCell - 1);
                if (!cells.ok()) {
                    return Error{cells.error()};
                }
                if (Status s = scan(decimator, from, (firstCell + 1) * cellWidth - 1); !s.ok()) {
                    return s;
                }
                for (const auto& [index, cell] : *cells) {
                    addCell(decimator, cell);
                }
                return scan(decimator, lastCell * cellWidth, to);
            }
        }
        return scan(decimator, from, to);
    };

    if (pruned) {
        // Three eras, in time order: before the rollup cutoff only what pinned runs kept (raw);
        // then the retained cells (their real representative samples, clipped to the range);
        // then everything. The result is always bucketed: it stands for more than it returns.
        Decimator decimator = makeDecimator(/*allowRaw=*/false);
        if (Status s = scan(decimator, lo, std::min(hi, (*horizon)->rollupBeforeNs - 1)); !s.ok()) {
            return Error{s.error()};
        }
        if (oldFrom <= oldTo) {
            const int oldLevel = std::max(level, kRetainedRollupLevel);
            const std::int64_t w = rollupWidth(oldLevel);
            auto cells = cellsOf(oldLevel, bucketIndex(oldFrom, w), bucketIndex(oldTo, w));
            if (!cells.ok()) {
                return Error{cells.error()};
            }
            for (const auto& [index, cell] : *cells) {
                addCellClipped(decimator, cell, oldFrom, oldTo);
            }
        }
        if (Status s = feed(decimator, std::max(lo, (*horizon)->rawBeforeNs), hi); !s.ok()) {
            return Error{s.error()};
        }
        return finishInto(std::move(decimator), out);
    }

    if (level >= 0) {
        const std::int64_t cellWidth = rollupWidth(level);
        const std::int64_t firstCell = bucketIndex(lo, cellWidth);
        const std::int64_t lastCell = bucketIndex(hi, cellWidth);
        if (lastCell - firstCell >= 2) {
            auto cells = cellsOf(level, firstCell + 1, lastCell - 1);
            if (!cells.ok()) {
                return Error{cells.error()};
            }
            std::int64_t interior = 0;
            for (const auto& [index, cell] : *cells) {
                interior += cell.count;
            }
            if (interior > rawLimit) {
                Decimator decimator = makeDecimator(/*allowRaw=*/false);
                if (Status s = feed(decimator, lo, hi); !s.ok()) {
                    return Error{s.error()};
                }
                return finishInto(std::move(decimator), out);
            }
        }
    }
    Decimator decimator = makeDecimator(/*allowRaw=*/true);
    if (Status s = scan(decimator, lo, hi); !s.ok()) {
        return Error{s.error()};
    }
    return finishInto(std::move(decimator), out);
}

Result<std::vector<EventRecord>> History::listEvents(const EventFilter& filter) {
    std::lock_guard lock(m_mutex);
    std::string sql =
        "SELECT node_id, seq, t_ns, run_id, kind, message, attrs_json FROM events "
        "WHERE t_ns >= ?1 AND t_ns <= ?2";
    if (!filter.nodeId.empty()) {
        sql += " AND node_id = ?3";
    }
    if (filter.runId) {
        sql += " AND run_id = ?4";
    }
    if (!filter.kind.empty()) {
        sql += " AND kind = ?5";
    }
    sql += " ORDER BY t_ns, id LIMIT ?6;";
    auto stmt = m_impl->db->prepare(sql);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, filter.t0Ns).bind(2, filter.t1Ns);
    if (!filter.nodeId.empty()) {
        stmt->bind(3, filter.nodeId.value());
    }
    if (filter.runId) {
        stmt->bind(4, filter.runId->value());
    }
    if (!filter.kind.empty()) {
        stmt->bind(5, filter.kind);
    }
    stmt->bind(6, static_cast<std::int64_t>(filter.limit > 0 ? filter.limit : 10000));
    std::vector<EventRecord> events;
    Status s = forEachRow(*stmt, [&](const sqlite::Statement& r) {
        EventRecord event;
        event.nodeId = NodeId{r.columnText(0)};
        if (!r.columnIsNull(1)) {
            event.seq = static_cast<std::uint64_t>(r.columnInt(1));
        }
        event.tNs = r.columnInt(2);
        event.runId = RunId{r.columnText(3)};
        event.kind = r.columnText(4);
        event.message = r.columnText(5);
        event.attrs = decodeEventAttrs(r.columnText(6));
        events.push_back(std::move(event));
    });
    if (!s.ok()) {
        return Error{s.error()};
    }
    return events;
}

Result<std::vector<MetricSummary>> History::runMetrics(const RunId& runId,
                                                       const std::string& prefix) {
    std::lock_guard lock(m_mutex);
    ReadSnapshot snapshot(*m_impl->db);  // chunks and staged rows of one snapshot
    auto list = m_impl->db->prepare(
        "SELECT id, node_id, name FROM series WHERE run_id = ?1 "
        "AND substr(name, 1, length(?2)) = ?2 ORDER BY name, node_id;");
    if (!list.ok()) {
        return Error{list.error()};
    }
    list->bind(1, runId.value()).bind(2, prefix);
    struct Item {
        std::int64_t id;
        std::string node;
        std::string name;
    };
    std::vector<Item> items;
    if (Status s =
            forEachRow(*list,
                       [&](const sqlite::Statement& r) {
                           items.push_back({r.columnInt(0), r.columnText(1), r.columnText(2)});
                       });
        !s.ok()) {
        return Error{s.error()};
    }
    std::vector<MetricSummary> out;
    std::vector<ChunkSample> samples;
    for (const Item& item : items) {
        samples.clear();
        if (Status s = loadSamples(*m_impl->db, item.id, std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max(), samples);
            !s.ok()) {
            return Error{s.error()};
        }
        if (samples.empty()) {
            continue;
        }
        MetricSummary summary;
        summary.nodeId = NodeId{item.node};
        summary.series = item.name;
        const ChunkSample& last = samples.back();
        summary.last = last.value;
        summary.lastStep = last.step;
        summary.lastNs = last.tNs;
        // Best: the earliest sample holding the extreme value; NaN never wins.
        const bool lower = lowerIsBetter(item.name);
        const ChunkSample* best = nullptr;
        for (const ChunkSample& p : samples) {
            if (std::isnan(p.value)) {
                continue;
            }
            if (!best || (lower ? p.value < best->value : p.value > best->value)) {
                best = &p;
            }
        }
        if (!best) {
            best = &samples.front();
        }
        summary.best = best->value;
        summary.bestStep = best->step;
        summary.bestNs = best->tNs;
        out.push_back(std::move(summary));
    }
    return out;
}

namespace {

Result<std::vector<NodePeak>> peaksLocked(sqlite::Database& db, const std::string& series,
                                          std::int64_t t0Ns, std::int64_t t1Ns,
                                          const std::vector<std::string>* nodes) {
    auto stmt = db.prepare(
        "SELECT s.id, s.node_id, n.address FROM series s LEFT JOIN nodes n "
        "ON n.node_id = s.node_id WHERE s.name = ?1 AND s.run_id = '' ORDER BY s.node_id;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, series);
    struct Item {
        std::int64_t id;
        std::string node;
        std::string address;
    };
    std::vector<Item> items;
    if (Status s =
            forEachRow(*stmt,
                       [&](const sqlite::Statement& r) {
                           items.push_back({r.columnInt(0), r.columnText(1), r.columnText(2)});
                       });
        !s.ok()) {
        return Error{s.error()};
    }
    std::vector<NodePeak> peaks;
    std::vector<ChunkSample> samples;
    for (const Item& item : items) {
        if (nodes && std::find(nodes->begin(), nodes->end(), item.node) == nodes->end() &&
            (item.address.empty() ||
             std::find(nodes->begin(), nodes->end(), item.address) == nodes->end())) {
            continue;
        }
        samples.clear();
        if (Status s = loadSamples(db, item.id, t0Ns, t1Ns, samples); !s.ok()) {
            return Error{s.error()};
        }
        // The highest max (NaN never wins), at its earliest time.
        const ChunkSample* peak = nullptr;
        for (const ChunkSample& p : samples) {
            if (!std::isnan(p.max) && (!peak || p.max > peak->max)) {
                peak = &p;
            }
        }
        if (peak) {
            peaks.push_back(NodePeak{NodeId{item.node}, series, peak->max, peak->tNs});
        }
    }
    return peaks;
}

}  // namespace

Result<std::vector<NodePeak>> History::nodePeaks(const std::string& series, std::int64_t t0Ns,
                                                 std::int64_t t1Ns) {
    std::lock_guard lock(m_mutex);
    ReadSnapshot snapshot(*m_impl->db);  // chunks and staged rows of one snapshot
    return peaksLocked(*m_impl->db, series, t0Ns, t1Ns, nullptr);
}

Result<std::vector<NodePeak>> History::runPeaks(const RunId& runId, const std::string& series) {
    auto found = run(runId);
    if (!found.ok()) {
        return Error{found.error()};
    }
    if (!*found) {
        return Error{m_path + ": no run with id '" + runId.value() + "'"};
    }
    const RunRecord& record = **found;
    const std::int64_t end =
        record.endedNs > 0 ? record.endedNs : std::numeric_limits<std::int64_t>::max();
    std::lock_guard lock(m_mutex);
    ReadSnapshot snapshot(*m_impl->db);
    return peaksLocked(*m_impl->db, series, record.startedNs, end, &record.nodes);
}

}  // namespace runplane::db
