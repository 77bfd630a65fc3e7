// Min/max-preserving decimation: the formula's bounds and spike survival (issue 10).
#include "db/history/decimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "db/history/history.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

TEST(Decimate, BucketWidthBoundsTheBucketCount) {
    for (int n : {2, 3, 10, 1000, 2000}) {
        for (std::int64_t lo : {-7'000LL, 0LL, 1'700'000'000'000'000'000LL}) {
            for (std::int64_t span : {1LL, 5LL, 999LL, 1'000'000LL, 86'400'000'000'000LL}) {
                const std::int64_t hi = lo + span - 1;
                const std::int64_t w = bucketWidth(lo, hi, n);
                ASSERT_GE(w, 1);
                const std::int64_t cells = bucketIndex(hi, w) - bucketIndex(lo, w) + 1;
                EXPECT_LE(cells, n) << "n=" << n << " lo=" << lo << " span=" << span;
            }
        }
    }
    EXPECT_EQ(bucketIndex(-1, 10), -1);
    EXPECT_EQ(bucketIndex(-10, 10), -1);
    EXPECT_EQ(bucketIndex(-11, 10), -2);
    EXPECT_EQ(bucketIndex(19, 10), 1);
}

TEST(Decimate, SmallRangesAreReturnedRaw) {
    Decimator d(0, 99, 25);  // 4 x 25 = 100 samples fit
    for (int i = 0; i < 100; ++i) {
        d.add(SeriesPoint{i, double(i), double(i), double(i), -1});
    }
    SeriesPoints out = std::move(d).finish();
    EXPECT_FALSE(out.decimated);
    EXPECT_EQ(out.points.size(), 100u);
    EXPECT_TRUE(out.buckets.empty());
    EXPECT_EQ(out.sourceCount, 100);
}

TEST(Decimate, BucketsKeepFirstMinMaxLast) {
    const int n = 10;
    Decimator d(0, 9999, n);
    double trueMin = 1e300;
    double trueMax = -1e300;
    for (int i = 0; i < 10000; ++i) {
        const double v = std::sin(i * 0.01) * 100;
        trueMin = std::min(trueMin, v - 1);
        trueMax = std::max(trueMax, v + 1);
        d.add(SeriesPoint{i, v, v - 1, v + 1, -1});
    }
    SeriesPoints out = std::move(d).finish();
    ASSERT_TRUE(out.decimated);
    EXPECT_LE(out.buckets.size(), static_cast<std::size_t>(n));
    EXPECT_LE(out.points.size(), 4u * n);
    EXPECT_EQ(out.points.front().tNs, 0);
    EXPECT_EQ(out.points.back().tNs, 9999);
    EXPECT_TRUE(std::is_sorted(out.points.begin(), out.points.end(),
                               [](const auto& a, const auto& b) { return a.tNs < b.tNs; }));
    double seenMin = 1e300;
    double seenMax = -1e300;
    std::int64_t counted = 0;
    for (const auto& b : out.buckets) {
        seenMin = std::min(seenMin, b.min);
        seenMax = std::max(seenMax, b.max);
        counted += b.count;
        EXPECT_GE(b.first.tNs, b.t0Ns);
        EXPECT_LE(b.last.tNs, b.t1Ns);
    }
    EXPECT_EQ(counted, 10000);
    EXPECT_DOUBLE_EQ(seenMin, trueMin);
    EXPECT_DOUBLE_EQ(seenMax, trueMax);
}

TEST(Decimate, NanNeverHidesAnExtreme) {
    Decimator d(0, 999, 2);
    const double nan = std::nan("");
    d.add(SeriesPoint{0, nan, nan, nan, -1});
    for (int i = 1; i < 1000; ++i) {
        d.add(SeriesPoint{i, 1, 1, i == 500 ? 99.0 : 1.0, -1});
    }
    SeriesPoints out = std::move(d).finish();
    ASSERT_TRUE(out.decimated);
    double seenMax = -1;
    for (const auto& b : out.buckets) {
        if (!std::isnan(b.max)) {
            seenMax = std::max(seenMax, b.max);
        }
    }
    EXPECT_EQ(seenMax, 99.0);
}

// issue 10: a one-sample spike in a 1,000,000-point series stored in SQLite is in the
// decimated result at every zoom level.
TEST(Decimate, OneSampleSpikeSurvivesInMillionPointSeries) {
    runplane::testing::ScratchDir dir;
    auto opened = History::open(dir.file("million.sqlite"));
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& history = **opened;
    constexpr std::uint64_t kCount = 1'000'000;
    constexpr std::uint64_t kSpikeSeq = 612'345;
    constexpr double kSpike = 9.5e11;
    const std::int64_t t0 = 1'700'000'000'000'000'000;
    const std::int64_t dt = 100'000'000;  // 10 Hz
    for (std::uint64_t first = 1; first <= kCount; first += 50'000) {
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (std::uint64_t seq = first; seq < first + 50'000; ++seq) {
            const double v = 6.0e11 + 1.0e9 * std::sin(static_cast<double>(seq) * 1e-3);
            IngestSample s{seq,     t0 + static_cast<std::int64_t>(seq) * dt,
                           RunId{}, "host.mem.used_bytes",
                           "bytes", v,
                           v,       v,
                           -1};
            if (seq == kSpikeSeq) {
                s.value = s.max = kSpike;
            }
            batch.samples.push_back(std::move(s));
        }
        batch.throughSeq = first + 49'999;
        ASSERT_TRUE(history.ingest(batch).ok());
    }
    auto id = history.findSeries(NodeId{"n1"}, RunId(), "host.mem.used_bytes");
    ASSERT_TRUE(id.ok() && id->has_value());
    const std::int64_t spikeT = t0 + static_cast<std::int64_t>(kSpikeSeq) * dt;
    struct Zoom {
        std::int64_t from;
        std::int64_t to;
        int buckets;
    };
    const Zoom zooms[] = {
        {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 1000},
        {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 2},
        {spikeT - 3'600'000'000'000, spikeT + 7'200'000'000'000, 500},
        {spikeT - 1'000'000'000, spikeT + 1'000'000'000, 3},
    };
    for (const Zoom& zoom : zooms) {
        auto result = history.querySeries(SeriesQuery{**id, zoom.from, zoom.to, zoom.buckets});
        ASSERT_TRUE(result.ok()) << result.error();
        const auto& points = result->points;
        const bool found = std::any_of(points.begin(), points.end(), [&](const SeriesPoint& p) {
            return p.tNs == spikeT && p.value == kSpike && p.max == kSpike;
        });
        EXPECT_TRUE(found) << "spike lost at " << zoom.buckets << " buckets";
        if (result->decimated) {
            EXPECT_LE(result->buckets.size(), static_cast<std::size_t>(zoom.buckets));
            EXPECT_LE(points.size(), 4u * static_cast<std::size_t>(zoom.buckets));
            const bool inBucket =
                std::any_of(result->buckets.begin(), result->buckets.end(),
                            [&](const SeriesBucket& b) { return b.max == kSpike; });
            EXPECT_TRUE(inBucket);
        }
    }
    auto all = history.querySeries(SeriesQuery{**id});
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->sourceCount, static_cast<std::int64_t>(kCount));
}

}  // namespace
}  // namespace runplane::db

namespace runplane::db {
namespace {

// Wide queries read the rollup pyramid; its result must keep every spike, the exact extremes
// and count, and contain only real samples.
TEST(Decimate, RollupReadKeepsSpikesExtremesAndCounts) {
    runplane::testing::ScratchDir dir;
    auto opened = History::open(dir.file("rollup.sqlite"));
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& history = **opened;
    constexpr std::uint64_t kCount = 200'000;
    const std::int64_t t0 = 1'700'000'000'000'000'000;
    const std::int64_t dt = 100'000'000;
    std::map<std::int64_t, double> truth;  // t -> value
    std::vector<std::uint64_t> spikes;
    for (std::uint64_t k = 0; k < 25; ++k) {
        spikes.push_back(1 + (k * 7919 * 13) % kCount);
    }
    double trueMin = 1e300, trueMax = -1e300;
    for (std::uint64_t first = 1; first <= kCount; first += 997) {  // odd batch size
        IngestBatch batch;
        batch.nodeId = NodeId{"n1"};
        for (std::uint64_t seq = first; seq < std::min(first + 997, kCount + 1); ++seq) {
            double v = 100.0 + 10.0 * std::sin(static_cast<double>(seq) * 1e-2);
            if (std::find(spikes.begin(), spikes.end(), seq) != spikes.end()) {
                v = (seq % 2) ? 1e6 + static_cast<double>(seq) : -1e6 - static_cast<double>(seq);
            }
            const std::int64_t t = t0 + static_cast<std::int64_t>(seq) * dt;
            truth[t] = v;
            trueMin = std::min(trueMin, v);
            trueMax = std::max(trueMax, v);
            batch.samples.push_back(IngestSample{seq, t, RunId{}, "x", "", v, v, v, -1});
        }
        batch.throughSeq = batch.samples.back().seq;
        ASSERT_TRUE(history.ingest(batch).ok());
    }
    auto id = history.findSeries(NodeId{"n1"}, RunId(), "x");
    ASSERT_TRUE(id.ok() && id->has_value());
    for (int buckets : {50, 300, 2000}) {
        auto result =
            history.querySeries(SeriesQuery{**id, std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max(), buckets});
        ASSERT_TRUE(result.ok()) << result.error();
        ASSERT_TRUE(result->decimated);
        EXPECT_EQ(result->sourceCount, static_cast<std::int64_t>(kCount));
        EXPECT_LE(result->buckets.size(), static_cast<std::size_t>(buckets));
        std::int64_t counted = 0;
        double seenMin = 1e300, seenMax = -1e300;
        for (const auto& b : result->buckets) {
            counted += b.count;
            seenMin = std::min(seenMin, b.min);
            seenMax = std::max(seenMax, b.max);
        }
        EXPECT_EQ(counted, static_cast<std::int64_t>(kCount));
        EXPECT_EQ(seenMin, trueMin);
        EXPECT_EQ(seenMax, trueMax);
        for (const auto& p : result->points) {
            auto it = truth.find(p.tNs);
            ASSERT_NE(it, truth.end()) << "invented point at " << p.tNs;
            EXPECT_EQ(it->second, p.value);
        }
        for (std::uint64_t seq : spikes) {
            const std::int64_t t = t0 + static_cast<std::int64_t>(seq) * dt;
            const bool found = std::any_of(result->points.begin(), result->points.end(),
                                           [&](const SeriesPoint& p) { return p.tNs == t; });
            EXPECT_TRUE(found) << "spike at seq " << seq << " lost at " << buckets << " buckets";
        }
        EXPECT_TRUE(std::is_sorted(result->points.begin(), result->points.end(),
                                   [](const auto& a, const auto& b) { return a.tNs < b.tNs; }));
    }
    // A window whose edges cut rollup cells: the edge samples outside it never leak in.
    const std::int64_t from = t0 + 12'345 * dt + 1;
    const std::int64_t to = t0 + 150'000 * dt - 1;
    auto window = history.querySeries(SeriesQuery{**id, from, to, 100});
    ASSERT_TRUE(window.ok());
    EXPECT_EQ(window->sourceCount, 150'000 - 12'346);
    for (const auto& p : window->points) {
        EXPECT_GE(p.tNs, from);
        EXPECT_LE(p.tNs, to);
    }
}

}  // namespace
}  // namespace runplane::db
