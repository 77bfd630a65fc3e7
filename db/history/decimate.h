#pragma once
// Decimator: streaming min/max-preserving decimation of time-ordered samples into at most N
// buckets on a fixed time grid (formula in docs/history.md). History::querySeries uses it over
// an index range; it is public so that live in-memory views can decimate the same way.

#include <cmath>
#include <cstdint>
#include <vector>

#include "db/history/history.h"

namespace runplane::db {

/// Bucket width w for the data extent [lo, hi] and at most maxBuckets buckets:
/// w = max(1, ceil((hi - lo + 1) / (N - 1))) with N = max(2, maxBuckets). Buckets are the grid
/// cells [k*w, (k+1)*w); at most N of them overlap [lo, hi].
std::int64_t bucketWidth(std::int64_t lo, std::int64_t hi, int maxBuckets);

/// Grid cell of t for width w: floor(t / w).
std::int64_t bucketIndex(std::int64_t t, std::int64_t width);

/// The bucket width of a whole-series read that follows a growing series over [lo, hi]: the
/// least width of the form 2^k ns, or 2^k rollup cells of the retained level once that wide,
/// that needs at most maxBuckets buckets (so between about maxBuckets / 2 and maxBuckets). It
/// stays the same while the series grows until its span doubles, and cells never straddle its
/// buckets, so reads on it from any bucket boundary on agree with a read of everything
/// (SeriesQuery::bucketWidthNs).
std::int64_t followBucketWidth(std::int64_t lo, std::int64_t hi, int maxBuckets);

/// Feed samples in time order with add(), then finish(). Keeps every sample while there are at
/// most 4 x N of them; beyond that returns, per bucket, the distinct samples among
/// {first, min (smallest sample min), max (largest sample max), last}, in time order.
/// Not thread-safe (one per query).
class Decimator {
  public:
    /// allowRaw = false: always bucket (used when the input is rollup cells, not raw samples).
    Decimator(std::int64_t lo, std::int64_t hi, int maxBuckets, bool allowRaw = true);
    /// Always bucketed, on the grid of this width.
    static Decimator withWidth(std::int64_t width);
    /// weight: how many samples this point stands for (a rollup cell's first sample carries
    /// the cell's count, its other representatives 0).
    void add(const SeriesPoint& point, std::int64_t weight = 1);
    SeriesPoints finish() &&;

  private:
    struct Open {
        SeriesBucket bucket;
        SeriesPoint minPoint;
        SeriesPoint maxPoint;
        std::int64_t firstOrdinal = 0;
        std::int64_t minOrdinal = 0;
        std::int64_t maxOrdinal = 0;
        std::int64_t lastOrdinal = 0;
    };
    void close();

    std::int64_t m_width;
    std::size_t m_rawLimit;
    std::int64_t m_count = 0;    // samples represented (sum of weights)
    std::int64_t m_ordinal = 0;  // points added
    bool m_hasOpen = false;
    std::int64_t m_openIndex = 0;
    Open m_open;
    std::vector<SeriesPoint> m_raw;
    bool m_keepRaw = true;
    SeriesPoints m_out;
};

namespace decimate_detail {
// a < b where NaN (a NULL value) ranks after every number, so it never hides a real extreme.
inline bool below(double a, double b) {
    if (std::isnan(a)) {
        return false;
    }
    return std::isnan(b) || a < b;
}
// a > b with the same NaN rule.
inline bool above(double a, double b) {
    if (std::isnan(a)) {
        return false;
    }
    return std::isnan(b) || a > b;
}
}  // namespace decimate_detail

// Inline: called per decoded sample, and an out-of-line call made the caller's sample go
// through the stack into wider loads here (a store-forwarding stall, half of add's time).
inline void Decimator::add(const SeriesPoint& point, std::int64_t weight) {
    using decimate_detail::above;
    using decimate_detail::below;
    const std::int64_t ordinal = m_ordinal++;
    m_count += weight;
    if (m_keepRaw) {
        if (m_raw.size() < m_rawLimit) {
            m_raw.push_back(point);
        } else {
            m_keepRaw = false;
            m_raw.clear();
            m_raw.shrink_to_fit();
        }
    }
    // Inside the open bucket's span: no division (the hot case of a time-ordered scan).
    const bool inOpen =
        m_hasOpen && point.tNs >= m_open.bucket.t0Ns && point.tNs <= m_open.bucket.t1Ns;
    const std::int64_t index = inOpen ? m_openIndex : bucketIndex(point.tNs, m_width);
    if (m_hasOpen && index == m_openIndex) {
        Open& o = m_open;
        SeriesBucket& b = o.bucket;
        b.count += weight;
        b.last = point;
        o.lastOrdinal = ordinal;
        if (below(point.min, b.min)) {
            b.min = point.min;
            b.minTNs = point.tNs;
            o.minPoint = point;
            o.minOrdinal = ordinal;
        }
        if (above(point.max, b.max)) {
            b.max = point.max;
            b.maxTNs = point.tNs;
            o.maxPoint = point;
            o.maxOrdinal = ordinal;
        }
        return;
    }
    close();
    m_hasOpen = true;
    m_openIndex = index;
    Open& o = m_open;
    o.bucket = SeriesBucket{index * m_width, index * m_width + (m_width - 1),
                            point,           point,
                            point.min,       point.tNs,
                            point.max,       point.tNs,
                            weight};
    o.minPoint = o.maxPoint = point;
    o.firstOrdinal = o.minOrdinal = o.maxOrdinal = o.lastOrdinal = ordinal;
}

}  // namespace runplane::db
