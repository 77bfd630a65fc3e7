#include "db/imports/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace runplane::imports {
namespace {

using Table = std::array<std::array<std::uint32_t, 256>, 8>;

Table makeTable() {
    Table t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        }
        t[0][i] = c;
    }
    for (std::uint32_t i = 0; i < 256; ++i) {
        for (std::size_t s = 1; s < 8; ++s) {
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffu];
        }
    }
    return t;
}

std::uint32_t crcTable(const unsigned char* p, std::size_t n) {
    static const Table t = makeTable();
    std::uint32_t c = 0xffffffffu;
    while (n >= 8) {  // slicing by 8
        std::uint32_t lo = 0;
        std::uint32_t hi = 0;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        lo ^= c;
        c = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^
            t[3][hi & 0xffu] ^ t[2][(hi >> 8) & 0xffu] ^ t[1][(hi >> 16) & 0xffu] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        c = (c >> 8) ^ t[0][(c ^ *p++) & 0xffu];
    }
    return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crcSse42(const unsigned char* p, std::size_t n) {
    std::uint64_t c = 0xffffffffu;
    while (n >= 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<std::uint32_t>(c);
    while (n-- > 0) {
        c32 = _mm_crc32_u8(c32, *p++);
    }
    return ~c32;
}
#endif

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
    static const bool sse42 = __builtin_cpu_supports("sse4.2");
    if (sse42) {
        return crcSse42(p, size);
    }
#endif
    return crcTable(p, size);
}

}  // namespace runplane::imports
