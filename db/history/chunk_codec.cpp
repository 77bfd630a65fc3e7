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
std::int64_t wrapAdd(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
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

void ChunkEncoder::append(const ChunkSample& s) {
    const std::uint64_t value = bitsOf(s.value);
    if (m_count == 0) {
        putBits(static_cast<std::uint64_t>(s.tNs), 64);
        putBits(static_cast<std::uint64_t>(s.seq), 64);
        putBits(static_cast<std::uint64_t>(s.step), 64);
        putBits(value, 64);
        m_t = s.tNs;
        m_seq = s.seq;
        m_step = s.step;
    } else {
        putDod(m_t, m_dt, s.tNs);
        putDod(m_seq, m_dseq, s.seq);
        putDod(m_step, m_dstep, s.step);
        putXor(m_valueXor, value ^ m_value);
    }
    m_value = value;
    putXor(m_minXor, bitsOf(s.min) ^ value);
    putXor(m_maxXor, bitsOf(s.max) ^ value);
    ++m_count;
}

namespace {

// Reads MSB-first from a copy padded with 16 zero bytes, so a 64-bit window load never leaves
// the buffer; every read is checked against the real length.
class BitReader {
  public:
    explicit BitReader(std::span<const std::uint8_t> bytes)
        : m_buf(bytes.size() + 16, 0), m_totalBits(bytes.size() * 8) {
        if (!bytes.empty()) {
            std::memcpy(m_buf.data(), bytes.data(), bytes.size());
        }
    }
    bool failed() const { return m_failed; }

    std::uint64_t bits(int n) {
        if (m_pos + static_cast<std::size_t>(n) > m_totalBits) {
            m_failed = true;
            m_pos = m_totalBits;
            return 0;
        }
        const std::uint64_t w = window();
        m_pos += static_cast<std::size_t>(n);
        return n == 64 ? w : w >> (64 - n);
    }
    bool bit() { return bits(1) != 0; }

  private:
    std::uint64_t window() const {
        const std::size_t byte = m_pos >> 3;
        const int shift = static_cast<int>(m_pos & 7);
        std::uint64_t w = 0;
        std::memcpy(&w, m_buf.data() + byte, 8);
        if constexpr (std::endian::native == std::endian::little) {
            w = __builtin_bswap64(w);
        }
        if (shift != 0) {
            w = (w << shift) | (m_buf[byte + 8] >> (8 - shift));
        }
        return w;
    }

    std::vector<std::uint8_t> m_buf;
    std::size_t m_totalBits;
    std::size_t m_pos = 0;
    bool m_failed = false;
};

std::int64_t readDod(BitReader& in) {
    if (!in.bit()) {
        return 0;
    }
    int width = 0;
    if (!in.bit()) {
        width = 8;
    } else if (!in.bit()) {
        width = 16;
    } else if (!in.bit()) {
        width = 24;
    } else {
        width = in.bit() ? 64 : 32;
    }
    const std::uint64_t raw = in.bits(width);
    if (width == 64) {
        return static_cast<std::int64_t>(raw);
    }
    // Sign-extend the payload.
    const int shift = 64 - width;
    return static_cast<std::int64_t>(raw << shift) >> shift;
}

struct XorReadState {
    int leading = 0;
    int trailing = 0;
};

std::uint64_t readXor(BitReader& in, XorReadState& state) {
    if (!in.bit()) {
        return 0;
    }
    if (in.bit()) {
        state.leading = static_cast<int>(in.bits(5));
        const int significant = static_cast<int>(in.bits(6)) + 1;
        state.trailing = 64 - state.leading - significant;
        if (state.trailing < 0) {
            state.trailing = 0;  // damaged: caught as an error by the caller's check
        }
    }
    const int n = 64 - state.leading - state.trailing;
    if (n <= 0) {
        return 0;
    }
    return in.bits(n) << state.trailing;
}

}  // namespace

Status decodeChunk(std::span<const std::uint8_t> bytes, std::int64_t count,
                   std::vector<ChunkSample>& out) {
    if (count <= 0) {
        return {};
    }
    // Every sample takes at least 6 bits after the 256-bit first one: bounds the reservation.
    if (static_cast<std::uint64_t>(count) > bytes.size() * 8 / 6 + 1) {
        return Error{"chunk of " + std::to_string(bytes.size()) + " bytes cannot hold " +
                     std::to_string(count) + " samples"};
    }
    BitReader in(bytes);
    // Grow geometrically: callers append chunk after chunk (an exact reserve here is quadratic).
    if (out.capacity() < out.size() + static_cast<std::size_t>(count)) {
        out.reserve(std::max(out.size() + static_cast<std::size_t>(count), 2 * out.capacity()));
    }
    std::int64_t t = 0, dt = 0, seq = 0, dseq = 0, step = 0, dstep = 0;
    std::uint64_t value = 0;
    XorReadState valueXor, minXor, maxXor;
    for (std::int64_t i = 0; i < count; ++i) {
        if (i == 0) {
            t = static_cast<std::int64_t>(in.bits(64));
            seq = static_cast<std::int64_t>(in.bits(64));
            step = static_cast<std::int64_t>(in.bits(64));
            value = in.bits(64);
        } else {
            dt = wrapAdd(dt, readDod(in));
            t = wrapAdd(t, dt);
            dseq = wrapAdd(dseq, readDod(in));
            seq = wrapAdd(seq, dseq);
            dstep = wrapAdd(dstep, readDod(in));
            step = wrapAdd(step, dstep);
            value ^= readXor(in, valueXor);
        }
        const std::uint64_t mn = value ^ readXor(in, minXor);
        const std::uint64_t mx = value ^ readXor(in, maxXor);
        if (in.failed()) {
            return Error{"chunk ends after " + std::to_string(i) + " of " + std::to_string(count) +
                         " samples (" + std::to_string(bytes.size()) + " bytes)"};
        }
        out.push_back(ChunkSample{t, seq, std::bit_cast<double>(value), std::bit_cast<double>(mn),
                                  std::bit_cast<double>(mx), step});
    }
    return {};
}

}  // namespace runplane::db
