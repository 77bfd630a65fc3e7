#include "db/history/chunk_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

namespace runplane::db {

namespace {

std::uint64_t bitsOf(double v) {
    return std::bit_cast<std::uint64_t>(v);
}

// Delta-of-delta buckets: prefix, payload width (docs/history.md). The last one is the escape.
struct Bucket {
    std::uint64_t prefix;
    int prefixBits;
    int payloadBits;
};
constexpr Bucket kBuckets[] = {
    {0b10, 2, 8}, {0b110, 3, 16}, {0b1110, 4, 24}, {0b11110, 5, 32}, {0b11111, 5, 64}};

bool fits(std::int64_t v, int bits) {
    if (bits >= 64) {
        return true;
    }
    const std::int64_t lo = -(std::int64_t{1} << (bits - 1));
    const std::int64_t hi = (std::int64_t{1} << (bits - 1)) - 1;
    return v >= lo && v <= hi;
}

// Wrapping arithmetic: deltas of arbitrary int64 values (huge or negative) stay exact.
std::int64_t wrapSub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

}  // namespace

void ChunkEncoder::putBits(std::uint64_t value, int bits) {
    while (bits > 0) {
        if (m_bitPos == 0) {
            m_bytes.push_back(0);
        }
        const int room = 8 - m_bitPos;
        const int take = room < bits ? room : bits;
        const auto chunk = static_cast<std::uint8_t>((value >> (bits - take)) & ((1u << take) - 1));
        m_bytes.back() = static_cast<std::uint8_t>(m_bytes.back() | (chunk << (room - take)));
        m_bitPos = (m_bitPos + take) & 7;
        bits -= take;
    }
}

void ChunkEncoder::putDod(std::int64_t& prev, std::int64_t& prevDelta, std::int64_t value) {
    const std::int64_t delta = wrapSub(value, prev);
    const std::int64_t dod = wrapSub(delta, prevDelta);
    prev = value;
    prevDelta = delta;
    if (dod == 0) {
        putBits(0, 1);
        return;
    }
    for (const Bucket& b : kBuckets) {
        if (fits(dod, b.payloadBits)) {
            putBits(b.prefix, b.prefixBits);
            const std::uint64_t mask =
                b.payloadBits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b.payloadBits) - 1;
            putBits(static_cast<std::uint64_t>(dod) & mask, b.payloadBits);
            return;
        }
    }
}

void ChunkEncoder::putXor(XorState& state, std::uint64_t x) {
    if (x == 0) {
        putBits(0, 1);
        return;
    }
    int leading = std::countl_zero(x);
    if (leading > 31) {
        leading = 31;  // 5 bits
    }
    const int trailing = std::countr_zero(x);
    if (state.leading >= 0 && leading >= state.leading && trailing >= state.trailing) {
        putBits(0b10, 2);
        putBits(x >> state.trailing, 64 - state.leading - state.trailing);
        return;
    }
    const int significant = 64 - leading - trailing;
    putBits(0b11, 2);
    putBits(static_cast<std::uint64_t>(leading), 5);
    putBits(static_cast<std::uint64_t>(significant - 1), 6);
    putBits(x >> trailing, significant);
    state.leading = leading;
    state.trailing = trailing;
}

namespace {

// The largest k <= 9 with t a multiple of 10^k.
int unitExponent(std::int64_t t) {
    int k = 0;
    while (k < 9 && t % static_cast<std::int64_t>(chunk_detail::pow10(k + 1)) == 0) {
        ++k;
    }
    return k;
}

}  // namespace

void ChunkEncoder::append(const ChunkSample& s) {
    if (m_codec == kChunkCodec) {
        if (m_count == 0) {
            m_unitExp = unitExponent(s.tNs);
            putBits(static_cast<std::uint64_t>(m_unitExp), 8);
        } else if (s.tNs % static_cast<std::int64_t>(chunk_detail::pow10(m_unitExp)) != 0) {
            // A finer time than the unit chosen so far: re-encode what is here with the finer
            // unit (at most 9 times a chunk; the unit only ever shrinks).
            std::vector<ChunkSample> stored;
            (void)decodeChunk(m_codec, m_bytes, m_count, stored);
            const int unitExp = std::min(m_unitExp, unitExponent(s.tNs));
            *this = ChunkEncoder{m_codec};
            m_unitExp = unitExp;
            putBits(static_cast<std::uint64_t>(m_unitExp), 8);
            for (const ChunkSample& old : stored) {
                appendEncoded(old);
            }
        }
    }
    appendEncoded(s);
}

void ChunkEncoder::appendEncoded(const ChunkSample& s) {
    const std::uint64_t value = bitsOf(s.value);
    const std::int64_t t = s.tNs / static_cast<std::int64_t>(chunk_detail::pow10(m_unitExp));
    if (m_count == 0) {
        putBits(static_cast<std::uint64_t>(t), 64);
        putBits(static_cast<std::uint64_t>(s.seq), 64);
        putBits(static_cast<std::uint64_t>(s.step), 64);
        putBits(value, 64);
        m_t = t;
        m_seq = s.seq;
        m_step = s.step;
    } else {
        putDod(m_t, m_dt, t);
        putDod(m_seq, m_dseq, s.seq);
        putDod(m_step, m_dstep, s.step);
        putXor(m_valueXor, value ^ m_value);
    }
    m_value = value;
    putXor(m_minXor, bitsOf(s.min) ^ value);
    putXor(m_maxXor, bitsOf(s.max) ^ value);
    ++m_count;
}

namespace chunk_detail {

std::uint64_t pow10(int k) {
    static constexpr std::uint64_t kPowers[] = {
        1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};
    return kPowers[k];
}

}  // namespace chunk_detail

Status decodeChunk(int codec, std::span<const std::uint8_t> bytes, std::int64_t count,
                   std::vector<ChunkSample>& out) {
    if (count > 0 && static_cast<std::uint64_t>(count) <= bytes.size() * 8 / 6 + 1 &&
        out.capacity() < out.size() + static_cast<std::size_t>(count)) {
        // Grow geometrically: callers append chunk after chunk (an exact reserve is quadratic).
        out.reserve(std::max(out.size() + static_cast<std::size_t>(count), 2 * out.capacity()));
    }
    return forEachChunkSample(codec, bytes, count, [&](const ChunkSample& s) { out.push_back(s); });
}

}  // namespace runplane::db
