#include "db/history/decimate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "db/history/retention.h"
#include "db/history/rollup.h"

namespace runplane::db {

std::int64_t bucketWidth(std::int64_t lo, std::int64_t hi, int maxBuckets) {
    const std::int64_t n = std::max(2, maxBuckets);
    if (hi < lo) {
        return 1;
    }
    // hi - lo + 1 cannot overflow for real timestamps; the unsigned form keeps it defined.
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    const std::uint64_t cells = static_cast<std::uint64_t>(n - 1);
    const std::uint64_t width = (span + cells - 1) / cells;
    return static_cast<std::int64_t>(std::max<std::uint64_t>(1, width));
}

std::int64_t bucketIndex(std::int64_t t, std::int64_t width) {
    std::int64_t q = t / width;
    if ((t % width != 0) && (t < 0)) {
        --q;  // floor division for times before the epoch
    }
    return q;
}

std::int64_t followBucketWidth(std::int64_t lo, std::int64_t hi, int maxBuckets) {
    const std::int64_t needed = bucketWidth(lo, hi, maxBuckets);
    const std::int64_t cell = rollupWidth(kRetainedRollupLevel);
    // The base doubles: cells below one rollup cell, else whole rollup cells.
    std::int64_t width = needed >= cell ? cell : 1;
    while (width < needed && width <= std::numeric_limits<std::int64_t>::max() / 2) {
        width *= 2;
    }
    return width;
}

Decimator Decimator::withWidth(std::int64_t width) {
    Decimator d(0, 0, 2, /*allowRaw=*/false);
    d.m_width = std::max<std::int64_t>(1, width);
    return d;
}

Decimator::Decimator(std::int64_t lo, std::int64_t hi, int maxBuckets, bool allowRaw)
    : m_width(bucketWidth(lo, hi, maxBuckets)),
      m_rawLimit(static_cast<std::size_t>(std::max(2, maxBuckets)) * 4),
      m_keepRaw(allowRaw) {}

void Decimator::close() {
    if (!m_hasOpen) {
        return;
    }
    const Open& o = m_open;
    std::array<std::pair<std::int64_t, const SeriesPoint*>, 4> picks = {{
        {o.firstOrdinal, &o.bucket.first},
        {o.minOrdinal, &o.minPoint},
        {o.maxOrdinal, &o.maxPoint},
        {o.lastOrdinal, &o.bucket.last},
    }};
    std::sort(picks.begin(), picks.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::int64_t previous = -1;
    for (const auto& [ordinal, point] : picks) {
        if (ordinal != previous) {
            m_out.points.push_back(*point);
            previous = ordinal;
        }
    }
    m_out.buckets.push_back(o.bucket);
    m_hasOpen = false;
}

SeriesPoints Decimator::finish() && {
    close();
    m_out.sourceCount = m_count;
    if (m_keepRaw) {
        m_out.points = std::move(m_raw);
        m_out.buckets.clear();
        m_out.decimated = false;
    } else {
        m_out.decimated = true;
    }
    return std::move(m_out);
}

}  // namespace runplane::db
