#pragma once
// Lossless compression of one series' samples into a chunk (issue #21): delta-of-delta for the
// time, seq and step integers, Gorilla XOR for the values, and min/max as XOR against the value
// (one bit when equal). Codec 1 (schema 7) stores the times in the chunk's coarsest exact unit
// (10^k ns). Bit layout and formulas: docs/history.md, "Chunk encoding". Plain C++, no SQLite:
// the codec is tested on its own (tests/db/chunk_codec_test.cpp).

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace runplane::db {

/// One stored sample as a chunk holds it (value/min/max may be NaN, inf, -0.0: kept bit-exact).
struct ChunkSample {
    std::int64_t tNs = 0;
    std::int64_t seq = 0;
    double value = 0;
    double min = 0;
    double max = 0;
    std::int64_t step = -1;
};

/// Chunk layouts (the `codec` column of `chunks`): 0 = schema 6 (times in ns, no header),
/// 1 = schema 7 (a header byte with the time unit exponent k, times in units of 10^k ns).
inline constexpr int kChunkCodecV6 = 0;
inline constexpr int kChunkCodec = 1;

/// Appends samples to a growing bit stream; bytes() is a valid chunk after every append.
class ChunkEncoder {
  public:
    ChunkEncoder() = default;
    explicit ChunkEncoder(int codec) : m_codec(codec) {}
    void append(const ChunkSample& s);
    std::int64_t count() const { return m_count; }
    int codec() const { return m_codec; }
    /// The encoded chunk so far (the last byte zero-padded).
    const std::vector<std::uint8_t>& bytes() const { return m_bytes; }

  private:
    struct XorState {
        int leading = -1;  // window of the last written XOR (-1: none yet)
        int trailing = 0;
    };
    void appendEncoded(const ChunkSample& s);
    void putBits(std::uint64_t value, int bits);
    void putDod(std::int64_t& prev, std::int64_t& prevDelta, std::int64_t value);
    void putXor(XorState& state, std::uint64_t x);

    int m_codec = kChunkCodec;
    int m_unitExp = 0;  // codec 1: times stored in units of 10^m_unitExp ns
    std::vector<std::uint8_t> m_bytes;
    int m_bitPos = 0;  // bits used in the last byte (0: start a new byte)
    std::int64_t m_count = 0;
    std::int64_t m_t = 0, m_dt = 0, m_seq = 0, m_dseq = 0, m_step = 0, m_dstep = 0;
    std::uint64_t m_value = 0;
    XorState m_valueXor, m_minXor, m_maxXor;
};

/// Decodes `count` samples of a chunk of the given codec, calling fn(const ChunkSample&) for
/// each in stored order. An error (naming what is wrong) when the bytes end early or the header
/// is not valid: a damaged blob never reads out of bounds.
template <typename Fn>
Status forEachChunkSample(int codec, std::span<const std::uint8_t> bytes, std::int64_t count,
                          Fn&& fn);

/// Decodes `count` samples of a chunk, appending them to out (codec: see kChunkCodec).
Status decodeChunk(int codec, std::span<const std::uint8_t> bytes, std::int64_t count,
                   std::vector<ChunkSample>& out);
/// The same for the current codec (what ChunkEncoder{} writes).
inline Status decodeChunk(std::span<const std::uint8_t> bytes, std::int64_t count,
                          std::vector<ChunkSample>& out) {
    return decodeChunk(kChunkCodec, bytes, count, out);
}

}  // namespace runplane::db

#include "db/history/chunk_decode.inl"
