// The chunk decoder (included by chunk_codec.h): a template so that reads can decimate or copy
// samples straight out of the bit stream, without an intermediate vector. Layout:
// docs/history.md, "Chunk encoding".
#pragma once

#include <array>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

namespace runplane::db::chunk_detail {

/// Bits one sample can take at most (first: 4 x 64 + 2 x 77; later: 3 x 69 + 3 x 77).
inline constexpr std::size_t kMaxSampleBits = 438;
/// Zero bytes after a chunk's copy: a sample that starts inside the chunk never reads past them.
inline constexpr std::size_t kPadBytes = kMaxSampleBits / 8 + 24;

/// A chunk copied with kPadBytes zero bytes after it, owned by one decode (on the stack for
/// chunks up to a page). Not a shared scratch buffer: decodes nest — an encoder fed from a
/// decode's callback re-encodes by decoding its own bytes — and a shared buffer was overwritten
/// under the outer reader (samples resumed from a stored chunk read back with wrong seqs).
class PaddedChunk {
  public:
    explicit PaddedChunk(std::span<const std::uint8_t> bytes) {
        std::uint8_t* out = m_inline.data();
        if (bytes.size() + kPadBytes > m_inline.size()) {
            m_heap.resize(bytes.size() + kPadBytes);
            out = m_heap.data();
        }
        if (!bytes.empty()) {
            std::memcpy(out, bytes.data(), bytes.size());
        }
        std::memset(out + bytes.size(), 0, kPadBytes);
        m_data = out;
    }
    PaddedChunk(const PaddedChunk&) = delete;
    PaddedChunk& operator=(const PaddedChunk&) = delete;
    const std::uint8_t* data() const { return m_data; }

  private:
    std::array<std::uint8_t, 4096> m_inline;
    std::vector<std::uint8_t> m_heap;
    const std::uint8_t* m_data = nullptr;
};

/// 10^k for k in 0..9.
std::uint64_t pow10(int k);

/// MSB-first reader over a padded copy. No check per read: the caller checks the position once
/// per sample, and a sample that started inside the chunk stays inside the padding.
class BitReader {
  public:
    BitReader(const std::uint8_t* data, std::size_t bytes) : m_data(data), m_totalBits(bytes * 8) {}
    bool overrun() const { return m_pos > m_totalBits; }
    [[gnu::always_inline]] std::uint64_t peek() const {
        const std::size_t byte = m_pos >> 3;
        const int shift = static_cast<int>(m_pos & 7);
        std::uint64_t w = 0;
        std::memcpy(&w, m_data + byte, 8);
        if constexpr (std::endian::native == std::endian::little) {
            w = __builtin_bswap64(w);
        }
        // Branch-free: for shift 0 the byte's contribution is shifted out (>> 8 of a byte is 0).
        return (w << shift) | static_cast<std::uint64_t>(m_data[byte + 8] >> (8 - shift));
    }
    [[gnu::always_inline]] void skip(int n) { m_pos += static_cast<std::size_t>(n); }
    /// n in 0..64.
    [[gnu::always_inline]] std::uint64_t take(int n) {
        if (n <= 0) {
            return 0;
        }
        const std::uint64_t w = peek();
        m_pos += static_cast<std::size_t>(n);
        return n >= 64 ? w : w >> (64 - n);
    }

    [[gnu::always_inline]] std::int64_t dod() {
        const std::uint64_t w = peek();
        if ((w >> 63) == 0) {
            m_pos += 1;
            return 0;
        }
        // Prefix 10, 110, 1110, 11110, 11111 -> payload 8, 16, 24, 32, 64 bits.
        const int ones = std::countl_one(w);
        if (ones >= 5) {
            m_pos += 5;
            return static_cast<std::int64_t>(take(64));
        }
        m_pos += static_cast<std::size_t>(ones + 1);
        const int width = 8 * ones;
        const int shift = 64 - width;
        return static_cast<std::int64_t>(take(width) << shift) >> shift;  // sign-extend
    }

    struct XorWindow {
        int leading = 0;
        int trailing = 0;
    };
    [[gnu::always_inline]] std::uint64_t xorValue(XorWindow& state) {
        const std::uint64_t w = peek();
        if ((w >> 63) == 0) {
            m_pos += 1;
            return 0;
        }
        if (((w >> 62) & 1) != 0) {
            // 11 + 5-bit leading + 6-bit (significant - 1)
            state.leading = static_cast<int>((w >> 57) & 31);
            const int significant = static_cast<int>((w >> 51) & 63) + 1;
            state.trailing = 64 - state.leading - significant;
            if (state.trailing < 0) {
                state.trailing = 0;  // damaged: the value is garbage, the bounds still hold
            }
            m_pos += 13;
        } else {
            m_pos += 2;
        }
        return take(64 - state.leading - state.trailing) << state.trailing;
    }

  private:
    const std::uint8_t* m_data;
    std::size_t m_totalBits;
    std::size_t m_pos = 0;
};

inline std::int64_t wrapAdd(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace runplane::db::chunk_detail

namespace runplane::db {

template <typename Fn>
Status forEachChunkSample(int codec, std::span<const std::uint8_t> bytes, std::int64_t count,
                          Fn&& fn) {
    using namespace chunk_detail;
    if (count <= 0) {
        return {};
    }
    if (codec != kChunkCodecV6 && codec != kChunkCodec) {
        return Error{"unknown chunk codec " + std::to_string(codec)};
    }
    // Every sample takes at least 6 bits after the 256-bit first one.
    if (static_cast<std::uint64_t>(count) > bytes.size() * 8 / 6 + 1) {
        return Error{"chunk of " + std::to_string(bytes.size()) + " bytes cannot hold " +
                     std::to_string(count) + " samples"};
    }
    const PaddedChunk padded(bytes);
    BitReader in(padded.data(), bytes.size());
    std::uint64_t unit = 1;
    if (codec == kChunkCodec) {
        const auto header = static_cast<int>(in.take(8));
        if (header > 9) {
            return Error{"chunk header " + std::to_string(header) + " is not a time unit"};
        }
        unit = pow10(header);
    }
    std::int64_t t = 0, dt = 0, seq = 0, dseq = 0, step = 0, dstep = 0;
    std::uint64_t value = 0;
    BitReader::XorWindow valueXor, minXor, maxXor;
    for (std::int64_t i = 0; i < count; ++i) {
        if (i == 0) {
            t = static_cast<std::int64_t>(in.take(64));
            seq = static_cast<std::int64_t>(in.take(64));
            step = static_cast<std::int64_t>(in.take(64));
            value = in.take(64);
        } else if ((in.peek() >> 61) == 0) {
            // Regular stream: three zero delta-of-deltas (one 0 bit each) read as one.
            in.skip(3);
            t = wrapAdd(t, dt);
            seq = wrapAdd(seq, dseq);
            step = wrapAdd(step, dstep);
            value ^= in.xorValue(valueXor);
        } else {
            dt = wrapAdd(dt, in.dod());
            t = wrapAdd(t, dt);
            dseq = wrapAdd(dseq, in.dod());
            seq = wrapAdd(seq, dseq);
            dstep = wrapAdd(dstep, in.dod());
            step = wrapAdd(step, dstep);
            value ^= in.xorValue(valueXor);
        }
        std::uint64_t mn = value;
        std::uint64_t mx = value;
        if ((in.peek() >> 62) == 0) {
            in.skip(2);  // raw points: min = max = value (two 0 bits), read as one
        } else {
            mn ^= in.xorValue(minXor);
            mx ^= in.xorValue(maxXor);
        }
        if (in.overrun()) {
            return Error{"chunk ends after " + std::to_string(i) + " of " + std::to_string(count) +
                         " samples (" + std::to_string(bytes.size()) + " bytes)"};
        }
        fn(ChunkSample{static_cast<std::int64_t>(static_cast<std::uint64_t>(t) * unit), seq,
                       std::bit_cast<double>(value), std::bit_cast<double>(mn),
                       std::bit_cast<double>(mx), step});
    }
    return {};
}

}  // namespace runplane::db
