// The chunk codec on its own: every sample comes back bit-exact, whatever the values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "db/history/chunk_codec.h"

namespace runplane::db {
namespace {

void expectSameBits(double a, double b, const char* what, std::size_t i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b))
        << what << " of sample " << i;
}

std::vector<ChunkSample> roundTrip(const std::vector<ChunkSample>& in) {
    ChunkEncoder encoder;
    for (const ChunkSample& s : in) {
        encoder.append(s);
    }
    EXPECT_EQ(encoder.count(), static_cast<std::int64_t>(in.size()));
    std::vector<ChunkSample> out;
    Status s = decodeChunk(encoder.bytes(), encoder.count(), out);
    EXPECT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < std::min(in.size(), out.size()); ++i) {
        EXPECT_EQ(out[i].tNs, in[i].tNs) << i;
        EXPECT_EQ(out[i].seq, in[i].seq) << i;
        EXPECT_EQ(out[i].step, in[i].step) << i;
        expectSameBits(out[i].value, in[i].value, "value", i);
        expectSameBits(out[i].min, in[i].min, "min", i);
        expectSameBits(out[i].max, in[i].max, "max", i);
    }
    return out;
}

TEST(ChunkCodec, EdgeValuesComeBackBitExact) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double payloadNan = 0;
    const std::uint64_t nanBits = 0x7ff4000000000123ull;  // a NaN with a payload
    std::memcpy(&payloadNan, &nanBits, sizeof payloadNan);
    const double values[] = {0.0,
                             -0.0,
                             nan,
                             -nan,
                             payloadNan,
                             inf,
                             -inf,
                             std::numeric_limits<double>::denorm_min(),
                             -std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::min() / 3,
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::lowest(),
                             1.0,
                             1.0,
                             0.1,
                             6.0e11};
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const std::int64_t small = std::numeric_limits<std::int64_t>::min();
    // Times with huge, negative and zero deltas; seqs and steps that jump both ways.
    const std::int64_t times[] = {0,     big, small, small, -1, 1, 1'700'000'000'000'000'000,
                                  5,     big, big,   0,     -7, 3, 2,
                                  small, 100};
    std::vector<ChunkSample> samples;
    for (std::size_t i = 0; i < std::size(values); ++i) {
        const double v = values[i];
        samples.push_back(ChunkSample{
            times[i],
            i % 3 == 0 ? small + static_cast<std::int64_t>(i) : big - static_cast<std::int64_t>(i),
            v, values[(i + 5) % std::size(values)],
            i % 2 ? v : -values[(i + 3) % std::size(values)],
            i % 4 == 0 ? -1 : static_cast<std::int64_t>(i) * 1'000'003});
    }
    roundTrip(samples);
}

TEST(ChunkCodec, RandomSamplesRoundTrip) {
    std::mt19937_64 rng(21);
    for (int round = 0; round < 50; ++round) {
        std::vector<ChunkSample> samples;
        std::int64_t t = static_cast<std::int64_t>(rng());
        std::int64_t seq = static_cast<std::int64_t>(rng() % 1000);
        double v = 0;
        const int n = 1 + static_cast<int>(rng() % 1500);
        for (int i = 0; i < n; ++i) {
            // Mix regular steps, jitter, big jumps and arbitrary bit patterns.
            switch (rng() % 4) {
                case 0:
                    t += 100'000'000;
                    break;
                case 1:
                    t += static_cast<std::int64_t>(rng() % 2'000'000) - 1'000'000;
                    break;
                case 2:
                    t = static_cast<std::int64_t>(rng());
                    break;
                default:
                    break;
            }
            seq += rng() % 8 == 0 ? static_cast<std::int64_t>(rng()) : 32;
            const std::uint64_t bits = rng();
            switch (rng() % 3) {
                case 0:
                    std::memcpy(&v, &bits, sizeof v);
                    break;
                case 1:
                    v += 1.0;
                    break;
                default:
                    break;
            }
            const double mn = rng() % 2 ? v : v - static_cast<double>(rng() % 1000);
            samples.push_back(ChunkSample{t, seq, v, mn, v, static_cast<std::int64_t>(rng() % 3)});
        }
        roundTrip(samples);
    }
}

TEST(ChunkCodec, RegularTelemetryIsSmall) {
    // 10 Hz, integer-valued gauge with min = max = value: a few bits per sample.
    ChunkEncoder encoder;
    double v = 6.0e11;
    for (int i = 0; i < 1000; ++i) {
        v += (i % 10 == 0) ? 4096.0 : 0.0;
        encoder.append(
            ChunkSample{1'700'000'000'000'000'000 + i * 100'000'000LL, i * 32, v, v, v, -1});
    }
    EXPECT_LT(encoder.bytes().size(), 1000u);  // < 1 byte per sample
}

TEST(ChunkCodec, DamagedChunksAreErrorsNotCrashes) {
    ChunkEncoder encoder;
    for (int i = 0; i < 100; ++i) {
        encoder.append(ChunkSample{i * 7'919LL, i, i * 0.37, i * 0.37, i * 0.37, i});
    }
    std::vector<std::uint8_t> bytes = encoder.bytes();
    std::vector<ChunkSample> out;
    // Fewer bytes than the samples need.
    Status cut = decodeChunk(std::span(bytes).first(bytes.size() / 2), 100, out);
    EXPECT_FALSE(cut.ok());
    // More samples claimed than the bytes can hold.
    out.clear();
    EXPECT_FALSE(decodeChunk(bytes, 1'000'000, out).ok());
    EXPECT_TRUE(out.empty());
    // Random garbage never reads out of bounds (run under ASan in CI's sanitizer job).
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<std::uint8_t> junk(rng() % 64);
        for (auto& b : junk) {
            b = static_cast<std::uint8_t>(rng());
        }
        out.clear();
        (void)decodeChunk(junk, static_cast<std::int64_t>(rng() % 100), out);
    }
}

TEST(ChunkCodec, TimesInTheChunksCoarsestUnitRoundTripAndShrink) {
    // Microsecond stamps with 0.1 ms jitter: stored in us, a few bits fewer each than in ns.
    std::mt19937_64 rng(3);
    std::vector<ChunkSample> us;
    std::vector<ChunkSample> ns;
    for (int i = 0; i < 1000; ++i) {
        const std::int64_t t = 1'700'000'000'000'000'000 + i * 100'000'000LL +
                               static_cast<std::int64_t>(rng() % 100) * 1000;
        us.push_back(ChunkSample{t, i, 1.0, 1.0, 1.0, -1});
        ns.push_back(
            ChunkSample{t + 1 + static_cast<std::int64_t>(rng() % 999), i, 1.0, 1.0, 1.0, -1});
    }
    roundTrip(us);
    roundTrip(ns);
    ChunkEncoder inUs;
    ChunkEncoder inNs;
    for (std::size_t i = 0; i < us.size(); ++i) {
        inUs.append(us[i]);
        inNs.append(ns[i]);
    }
    EXPECT_EQ(inUs.bytes()[0], 3);  // header: unit 10^3 ns
    EXPECT_EQ(inNs.bytes()[0], 0);
    EXPECT_LT(inUs.bytes().size() * 3, inNs.bytes().size() * 2);  // 16 vs 30 bits a sample
    // A finer time late in a chunk re-encodes it with the finer unit; nothing changes value.
    std::vector<ChunkSample> mixed;
    for (int i = 0; i < 500; ++i) {
        mixed.push_back(ChunkSample{i * 1'000'000'000LL, i, i * 0.5, i * 0.5, i * 0.5, i});
    }
    mixed.push_back(ChunkSample{500'000'000'123, 500, 1.0, 0.0, 2.0, 500});
    mixed.push_back(ChunkSample{-7, 501, 1.0, 0.0, 2.0, 501});  // before the epoch, odd ns
    roundTrip(mixed);
}

// An encoder fed from a decode's callback, as a new connection resumes a stored head chunk:
// the first time has more trailing zeros than the next, so the new encoder re-encodes (a decode
// of its own) while the outer decode is still reading. The two decodes once shared one scratch
// buffer, and the outer one read the inner one's bytes: seqs came back wrong (a kill -9 of the
// controller mid-chunk, FaultTest.ControllerKill9MidStream, failed about once in 25 runs).
TEST(ChunkCodec, AnEncoderFedFromADecodeGetsEverySampleBack) {
    std::vector<ChunkSample> in;
    for (int i = 0; i < 40; ++i) {
        // 10 us stamps first (unit 10^4 ns), then whole microseconds (unit 10^3 ns).
        const std::int64_t t = 1'796'360'781'655'970'000 + i * 100'036'000LL + (i > 0 ? 1000 : 0);
        in.push_back(
            ChunkSample{t, 1 + 7 * i + (i > 3 ? 4 : 0), 2.5e10 + i, 2.5e10 + i, 2.5e10 + i, -1});
    }
    ChunkEncoder stored;
    for (const ChunkSample& s : in) {
        stored.append(s);
    }
    ChunkEncoder resumed;
    Status status = forEachChunkSample(kChunkCodec, stored.bytes(), stored.count(),
                                       [&](const ChunkSample& s) { resumed.append(s); });
    ASSERT_TRUE(status.ok()) << status.error();
    std::vector<ChunkSample> out;
    status = decodeChunk(resumed.bytes(), resumed.count(), out);
    ASSERT_TRUE(status.ok()) << status.error();
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(out[i].tNs, in[i].tNs) << i;
        EXPECT_EQ(out[i].seq, in[i].seq) << i;
        expectSameBits(out[i].value, in[i].value, "value", i);
    }
}

TEST(ChunkCodec, Version6LayoutStillDecodes) {
    std::vector<ChunkSample> in;
    for (int i = 0; i < 300; ++i) {
        in.push_back(ChunkSample{1'000 + i * 100'000'000LL, i, i * 1.5, i * 1.0, i * 2.0, -1});
    }
    ChunkEncoder v6(kChunkCodecV6);
    for (const ChunkSample& s : in) {
        v6.append(s);
    }
    std::vector<ChunkSample> out;
    ASSERT_TRUE(decodeChunk(kChunkCodecV6, v6.bytes(), v6.count(), out).ok());
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(out[i].tNs, in[i].tNs);
        expectSameBits(out[i].max, in[i].max, "max", i);
    }
    // The same bytes read as the current codec are refused (their first byte is no time unit)
    // or come back different, never out of bounds; an unknown codec is an error.
    out.clear();
    EXPECT_FALSE(decodeChunk(7, v6.bytes(), v6.count(), out).ok());
}

TEST(ChunkCodec, DamagedHeaderIsAnError) {
    ChunkEncoder encoder;
    for (int i = 0; i < 10; ++i) {
        encoder.append(ChunkSample{i * 1000LL, i, 1.0, 1.0, 1.0, -1});
    }
    std::vector<std::uint8_t> bytes = encoder.bytes();
    bytes[0] = 200;  // no such time unit
    std::vector<ChunkSample> out;
    Status s = decodeChunk(bytes, encoder.count(), out);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().find("time unit"), std::string::npos) << s.error();
}

}  // namespace
}  // namespace runplane::db
