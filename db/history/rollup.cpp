#include "db/history/rollup.h"

#include <cmath>
#include <limits>
#include <string>

#include "db/history/decimate.h"

namespace runplane::db {

std::int64_t rollupWidth(int level) {
    std::int64_t width = kRollupBaseNs;
    for (int i = 0; i < level; ++i) {
        width *= kRollupFactor;
    }
    return width;
}

namespace {

bool earlier(const SeqPoint& a, const SeqPoint& b) {
    return a.point.tNs < b.point.tNs || (a.point.tNs == b.point.tNs && a.seq < b.seq);
}

// a beats b for the minimum: a smaller number; NaN never wins; ties keep the earlier sample.
bool lowerMin(const SeqPoint& a, const SeqPoint& b) {
    if (std::isnan(a.point.min)) {
        return false;
    }
    if (std::isnan(b.point.min)) {
        return true;
    }
    return a.point.min < b.point.min || (a.point.min == b.point.min && earlier(a, b));
}

bool higherMax(const SeqPoint& a, const SeqPoint& b) {
    if (std::isnan(a.point.max)) {
        return false;
    }
    if (std::isnan(b.point.max)) {
        return true;
    }
    return a.point.max > b.point.max || (a.point.max == b.point.max && earlier(a, b));
}

void bindReal(sqlite::Statement& stmt, int index, double value) {
    if (std::isnan(value)) {
        stmt.bindNull(index);
    } else {
        stmt.bind(index, value);
    }
}

double realOrNan(const sqlite::Statement& stmt, int column) {
    return stmt.columnIsNull(column) ? std::nan("") : stmt.columnDouble(column);
}

// Column groups: f_ (first), l_ (last), n_ (min sample), x_ (max sample), each with
// t, seq, v, mn, mx, step.
constexpr const char* kGroups[] = {"f", "l", "n", "x"};
constexpr const char* kFields[] = {"t", "seq", "v", "mn", "mx", "step"};

void bindPoint(sqlite::Statement& stmt, int first, const SeqPoint& p) {
    stmt.bind(first, p.point.tNs).bind(first + 1, p.seq).bind(first + 5, p.point.step);
    bindReal(stmt, first + 2, p.point.value);
    bindReal(stmt, first + 3, p.point.min);
    bindReal(stmt, first + 4, p.point.max);
}

SeqPoint readPoint(const sqlite::Statement& stmt, int first) {
    SeqPoint p;
    p.point.tNs = stmt.columnInt(first);
    p.seq = stmt.columnInt(first + 1);
    p.point.value = realOrNan(stmt, first + 2);
    p.point.min = realOrNan(stmt, first + 3);
    p.point.max = realOrNan(stmt, first + 4);
    p.point.step = stmt.columnInt(first + 5);
    return p;
}

std::string buildUpsert() {
    std::string columns = "series_id, level, cell, count";
    std::string values = "?1, ?2, ?3, ?4";
    int index = 5;
    for (const char* g : kGroups) {
        for (const char* f : kFields) {
            columns += std::string(", ") + g + "_" + f;
            values += ", ?" + std::to_string(index++);
        }
    }
    // Which side wins each group, evaluated on the old row (SQLite evaluates every SET
    // expression against the row before the update).
    const std::string firstWins =
        "(excluded.f_t < f_t OR (excluded.f_t = f_t AND excluded.f_seq < f_seq))";
    const std::string lastWins =
        "(excluded.l_t > l_t OR (excluded.l_t = l_t AND excluded.l_seq > l_seq))";
    const std::string minWins =
        "(excluded.n_mn IS NOT NULL AND (n_mn IS NULL OR excluded.n_mn < n_mn OR "
        "(excluded.n_mn = n_mn AND excluded.n_t < n_t)))";
    const std::string maxWins =
        "(excluded.x_mx IS NOT NULL AND (x_mx IS NULL OR excluded.x_mx > x_mx OR "
        "(excluded.x_mx = x_mx AND excluded.x_t < x_t)))";
    const std::string wins[] = {firstWins, lastWins, minWins, maxWins};
    std::string update = "count = count + excluded.count";
    for (int g = 0; g < 4; ++g) {
        for (const char* f : kFields) {
            const std::string col = std::string(kGroups[g]) + "_" + f;
            update += ", " + col + " = CASE WHEN " + wins[g] + " THEN excluded." + col + " ELSE " +
                      col + " END";
        }
    }
    return "INSERT INTO sample_rollup(" + columns + ") VALUES (" + values +
           ") ON CONFLICT(series_id, level, cell) DO UPDATE SET " + update + ";";
}

}  // namespace

void addToCell(RollupCell& cell, const SeqPoint& sample) {
    if (cell.count == 0) {
        cell.first = cell.last = cell.minSample = cell.maxSample = sample;
        cell.count = 1;
        return;
    }
    ++cell.count;
    if (earlier(sample, cell.first)) {
        cell.first = sample;
    }
    if (earlier(cell.last, sample)) {
        cell.last = sample;
    }
    if (lowerMin(sample, cell.minSample)) {
        cell.minSample = sample;
    }
    if (higherMax(sample, cell.maxSample)) {
        cell.maxSample = sample;
    }
}

void mergeCell(RollupCell& into, const RollupCell& from) {
    if (from.count == 0) {
        return;
    }
    if (into.count == 0) {
        into = from;
        return;
    }
    into.count += from.count;
    if (earlier(from.first, into.first)) {
        into.first = from.first;
    }
    if (earlier(into.last, from.last)) {
        into.last = from.last;
    }
    if (lowerMin(from.minSample, into.minSample)) {
        into.minSample = from.minSample;
    }
    if (higherMax(from.maxSample, into.maxSample)) {
        into.maxSample = from.maxSample;
    }
}

void addToDelta(RollupDelta& delta, std::int64_t seriesId, const SeqPoint& sample) {
    for (int level = 0; level < kRollupLevels; ++level) {
        const std::int64_t cell = bucketIndex(sample.point.tNs, rollupWidth(level));
        addToCell(delta[{seriesId, level, cell}], sample);
    }
}

const char* rollupUpsertSql() {
    static const std::string sql = buildUpsert();
    return sql.c_str();
}

Status writeCell(sqlite::Statement& upsert, std::int64_t seriesId, int level, std::int64_t cell,
                 const RollupCell& summary) {
    upsert.bind(1, seriesId)
        .bind(2, static_cast<std::int64_t>(level))
        .bind(3, cell)
        .bind(4, summary.count);
    bindPoint(upsert, 5, summary.first);
    bindPoint(upsert, 11, summary.last);
    bindPoint(upsert, 17, summary.minSample);
    bindPoint(upsert, 23, summary.maxSample);
    return upsert.run();
}

Status rollSamples(sqlite::Statement& upsert, std::int64_t seriesId,
                   std::span<const ChunkSample> samples, int firstLevel) {
    RollupDelta delta;
    std::int64_t widths[kRollupLevels];
    for (int level = 0; level < kRollupLevels; ++level) {
        widths[level] = rollupWidth(level);
    }
    // Cells nest (each level's width is a multiple of the one below, on one grid), so samples go
    // into the open level-0 cell only; a cell that is left is merged into its parent's open cell
    // and into the delta, level by level upwards.
    std::int64_t openIndex[kRollupLevels] = {};
    bool isOpen[kRollupLevels] = {};
    RollupCell open[kRollupLevels];  // the open cell's samples not in an open child cell
    std::int64_t cellLo = 0;
    std::int64_t cellHi = 0;  // [cellLo, cellHi): the open level-0 cell's time span
    auto close = [&](int level) {
        if (open[level].count > 0) {
            if (level + 1 < kRollupLevels) {
                mergeCell(open[level + 1], open[level]);
            }
            if (level >= firstLevel) {
                mergeCell(delta[{seriesId, level, openIndex[level]}], open[level]);
            }
        }
        open[level] = RollupCell{};
    };
    for (const ChunkSample& s : samples) {
        if (!isOpen[0] || s.tNs < cellLo || s.tNs >= cellHi) {
            for (int level = 0; level < kRollupLevels; ++level) {
                const std::int64_t cell = bucketIndex(s.tNs, widths[level]);
                if (isOpen[level] && cell == openIndex[level]) {
                    break;  // this cell and every coarser one stay open
                }
                if (isOpen[level]) {
                    close(level);
                }
                openIndex[level] = cell;
                isOpen[level] = true;
            }
            if (__builtin_mul_overflow(openIndex[0], widths[0], &cellLo)) {
                cellLo = std::numeric_limits<std::int64_t>::min();
            }
            cellHi = cellLo > std::numeric_limits<std::int64_t>::max() - widths[0]
                         ? std::numeric_limits<std::int64_t>::max()
                         : cellLo + widths[0];
        }
        addToCell(open[0], SeqPoint{SeriesPoint{s.tNs, s.value, s.min, s.max, s.step}, s.seq});
    }
    for (int level = 0; level < kRollupLevels; ++level) {
        close(level);
    }
    for (const auto& [key, cell] : delta) {
        const auto& [series, level, index] = key;
        if (Status s = writeCell(upsert, series, level, index, cell); !s.ok()) {
            return s;
        }
    }
    return {};
}

Result<std::vector<std::pair<std::int64_t, RollupCell>>> readCells(sqlite::Database& db,
                                                                   std::int64_t seriesId, int level,
                                                                   std::int64_t firstCell,
                                                                   std::int64_t lastCell) {
    std::string sql = "SELECT cell, count";
    for (const char* g : kGroups) {
        for (const char* f : kFields) {
            sql += std::string(", ") + g + "_" + f;
        }
    }
    sql +=
        " FROM sample_rollup WHERE series_id = ?1 AND level = ?2 AND cell >= ?3 AND "
        "cell <= ?4 ORDER BY cell;";
    auto stmt = db.prepare(sql);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, seriesId)
        .bind(2, static_cast<std::int64_t>(level))
        .bind(3, firstCell)
        .bind(4, lastCell);
    std::vector<std::pair<std::int64_t, RollupCell>> cells;
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        RollupCell cell;
        cell.count = stmt->columnInt(1);
        cell.first = readPoint(*stmt, 2);
        cell.last = readPoint(*stmt, 8);
        cell.minSample = readPoint(*stmt, 14);
        cell.maxSample = readPoint(*stmt, 20);
        cells.emplace_back(stmt->columnInt(0), cell);
    }
    return cells;
}

Status backfillRollups(sqlite::Database& db) {
    auto scan = db.prepare(
        "SELECT series_id, t_ns, seq, value, min, max, step FROM samples "
        "ORDER BY series_id, t_ns, seq;");
    auto upsert = db.prepare(rollupUpsertSql());
    if (!scan.ok() || !upsert.ok()) {
        return Error{db.lastError()};
    }
    // Samples arrive in (series, time) order, so one open cell per level suffices.
    std::int64_t series = -1;
    std::int64_t openCell[kRollupLevels] = {};
    RollupCell cells[kRollupLevels];
    auto flush = [&](int level) -> Status {
        if (cells[level].count == 0) {
            return {};
        }
        Status s = writeCell(*upsert, series, level, openCell[level], cells[level]);
        cells[level] = RollupCell{};
        return s;
    };
    while (true) {
        auto row = scan->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        const bool done = !*row;
        const std::int64_t rowSeries = done ? -2 : scan->columnInt(0);
        if (rowSeries != series) {
            for (int level = 0; level < kRollupLevels; ++level) {
                if (Status s = flush(level); !s.ok()) {
                    return s;
                }
            }
            series = rowSeries;
        }
        if (done) {
            return {};
        }
        SeqPoint p;
        p.point.tNs = scan->columnInt(1);
        p.seq = scan->columnInt(2);
        p.point.value = realOrNan(*scan, 3);
        p.point.min = realOrNan(*scan, 4);
        p.point.max = realOrNan(*scan, 5);
        p.point.step = scan->columnInt(6);
        for (int level = 0; level < kRollupLevels; ++level) {
            const std::int64_t cell = bucketIndex(p.point.tNs, rollupWidth(level));
            if (cells[level].count > 0 && cell != openCell[level]) {
                if (Status s = flush(level); !s.ok()) {
                    return s;
                }
            }
            openCell[level] = cell;
            addToCell(cells[level], p);
        }
    }
}

}  // namespace runplane::db
