// The literal pre-filter in front of the trigger set (log_trigger_filter.h). It reads the small
// part of RE2's syntax the triggers use; anything else switches the filter off, never on.
#include "backend/agent/log_trigger_filter.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace runplane::agent {
namespace {

// One alternative of a trigger: anchored (`^...`) with its literal start, or the literal runs
// every match of it contains.
struct Alternative {
    bool anchored = false;
    std::string start;              // the literal start of an anchored alternative ("" = none)
    std::vector<std::string> runs;  // literal runs (each one is in every match)
    bool pure = true;               // the alternative is one literal: found = matched
};

// Splits at the `|` outside a `[...]` class (the triggers have no groups: checked by the caller).
std::vector<std::string_view> alternatives(std::string_view re) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    bool inClass = false;
    for (std::size_t i = 0; i < re.size(); ++i) {
        const char c = re[i];
        if (c == '\\') {
            ++i;
        } else if (inClass) {
            inClass = c != ']';
        } else if (c == '[') {
            inClass = true;
        } else if (c == '|') {
            out.push_back(re.substr(start, i - start));
            start = i + 1;
        }
    }
    out.push_back(re.substr(start));
    return out;
}

bool isAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Reads one alternative; false when it uses syntax this reader does not know.
bool readAlternative(std::string_view a, Alternative& alt) {
    std::size_t i = 0;
    if (a.starts_with("^")) {
        alt.anchored = true;
        i = 1;
    }
    std::string run;
    bool atStart = alt.anchored;  // still inside the anchored alternative's literal start
    auto endRun = [&] {
        if (atStart) {
            alt.start = run;
            atStart = false;
        }
        if (!run.empty()) {
            alt.runs.push_back(run);
        }
        run.clear();
    };
    for (; i < a.size(); ++i) {
        const char c = a[i];
        if (c == '\\') {
            if (i + 1 >= a.size()) {
                return false;
            }
            const char e = a[++i];
            if (isAlnum(e)) {
                // \d \D \s \S \w \W \b \B: a class or an assertion; other letters (\x41, \pN,
                // \Q...\E, \C) are not read.
                if (std::string_view("dDsSwWbB").find(e) == std::string_view::npos) {
                    return false;
                }
                alt.pure = false;
                endRun();
                continue;
            }
            run += e;  // escaped punctuation is itself
            continue;
        }
        switch (c) {
            case '[': {
                alt.pure = false;
                endRun();
                std::size_t j = i + 1;
                if (j < a.size() && a[j] == '^') {
                    ++j;
                }
                if (j < a.size() && a[j] == ']') {
                    ++j;
                }
                while (j < a.size() && a[j] != ']') {
                    j += a[j] == '\\' ? 2 : 1;
                }
                if (j >= a.size()) {
                    return false;
                }
                i = j;
                break;
            }
            case '+':  // the atom before is there at least once: kept, the run ends
                alt.pure = false;
                endRun();
                break;
            case '*':
            case '?':  // the atom before may be absent
                alt.pure = false;
                if (!run.empty()) {
                    run.pop_back();
                }
                endRun();
                break;
            case '.':
                alt.pure = false;
                endRun();
                break;
            case '(':
            case ')':
            case '{':
            case '}':
            case '^':
            case '$':
            case '|':
                return false;
            default:
                run += c;
        }
    }
    endRun();
    alt.pure = alt.pure && alt.runs.size() == 1;
    return true;
}

// How rarely a byte occurs in ordinary text (higher: rarer), to pick a run's best piece.
int rarity(unsigned char c) {
    if (c == ' ') {
        return 0;
    }
    if (c >= 'a' && c <= 'z') {
        if (std::string_view("etaoinshr").find(static_cast<char>(c)) != std::string_view::npos) {
            return 1;
        }
        return std::string_view("dlcumwfgypb").find(static_cast<char>(c)) != std::string_view::npos
                   ? 2
                   : 3;
    }
    return 4;
}

std::uint32_t pieceValue(const unsigned char* p) {
    return (std::uint32_t(p[0]) << 16) | (std::uint32_t(p[1]) << 8) | std::uint32_t(p[2]);
}

std::uint32_t pieceHash(std::uint32_t value) {
    return (value * 2654435761u) >> 16;  // 16 bits
}

}  // namespace

TriggerFilter::TriggerFilter(const std::vector<std::string_view>& triggers) {
    if (triggers.size() > 64) {
        m_usable = false;  // rows are bits of a 64-bit mask
        return;
    }
    for (std::size_t row = 0; row < triggers.size(); ++row) {
        const std::string_view trigger = triggers[row];
        for (std::string_view a : alternatives(trigger)) {
            Alternative alt;
            if (!readAlternative(a, alt)) {
                m_usable = false;
                return;
            }
            if (alt.anchored && !alt.start.empty()) {
                m_anchored.push_back(alt.start);
                m_anchoredRow.push_back(row);
                m_anchoredPure.push_back(alt.pure && alt.start == alt.runs.front());
                m_anchoredFirst[static_cast<unsigned char>(alt.start[0])] = true;
                continue;
            }
            std::string best;
            std::string bestRun;
            std::size_t bestOffset = 0;
            int bestScore = -1;
            for (const std::string& run : alt.runs) {
                for (std::size_t i = 0; i + 3 <= run.size(); ++i) {
                    const auto* p = reinterpret_cast<const unsigned char*>(run.data() + i);
                    // A word's end, a space and the next word's start ("f m" of "out of
                    // memory") is rarer in text than a piece inside a word ("mem").
                    const int across = p[1] == ' ' && p[0] != ' ' && p[2] != ' ' ? 5 : 0;
                    const int score = rarity(p[0]) + rarity(p[1]) + rarity(p[2]) + across;
                    if (score > bestScore) {
                        bestScore = score;
                        best = run.substr(i, 3);
                        bestRun = run;
                        bestOffset = i;
                    }
                }
            }
            if (best.empty()) {
                m_usable = false;  // nothing of 3 bytes that every match contains
                return;
            }
            const auto* b = reinterpret_cast<const unsigned char*>(best.data());
            const std::uint32_t h = pieceHash(pieceValue(b));
            m_bits[h >> 6] |= std::uint64_t(1) << (h & 63);
            const auto bucket = static_cast<unsigned char>(1u << (m_pieces.size() % 8));
            for (int k = 0; k < 3; ++k) {
                m_teddyLo[k][b[k] & 0x0F] |= bucket;
                m_teddyHi[k][b[k] >> 4] |= bucket;
            }
            m_pieces.push_back(best);
            m_pieceValue.push_back(pieceValue(b));
            m_pieceRow.push_back(row);
            m_pieceRun.push_back(bestRun);
            m_pieceOffset.push_back(bestOffset);
            m_piecePure.push_back(alt.pure);
        }
    }
}

// The piece at lead[pos] (pos + 3 <= lead.size()): the rows whose whole literal run is there.
void TriggerFilter::rowsOfPieceAt(std::string_view lead, std::size_t pos, TriggerRows& rows) const {
    const std::uint32_t value =
        pieceValue(reinterpret_cast<const unsigned char*>(lead.data() + pos));
    const std::uint32_t h = pieceHash(value);
    if (((m_bits[h >> 6] >> (h & 63)) & 1u) == 0) {
        return;
    }
    for (std::size_t i = 0; i < m_pieceValue.size(); ++i) {
        if (m_pieceValue[i] != value || pos < m_pieceOffset[i]) {
            continue;
        }
        const std::string& run = m_pieceRun[i];
        const std::size_t start = pos - m_pieceOffset[i];
        if (start + run.size() > lead.size() ||
            std::memcmp(lead.data() + start, run.data(), run.size()) != 0) {
            continue;
        }
        rows.maybe |= std::uint64_t(1) << m_pieceRow[i];
        if (m_piecePure[i]) {
            rows.sure |= std::uint64_t(1) << m_pieceRow[i];
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// Teddy (Hyperscan's literal matcher), for 3-byte pieces in 8 buckets: for 16 places at once,
// each of the 3 bytes' low and high nibbles are looked up (pshufb) in tables of the buckets whose
// piece has that nibble there; a place where some bucket survives all six is checked exactly
// (rowsOfPieceAt). About 2 instructions a byte instead of a rolling hash's 7.
__attribute__((target("ssse3"))) void TriggerFilter::scanSsse3(std::string_view lead,
                                                               TriggerRows& rows) const {
    const auto* p = reinterpret_cast<const unsigned char*>(lead.data());
    const std::size_t n = lead.size();
    const __m128i nibble = _mm_set1_epi8(0x0F);
    auto table = [](const std::array<std::uint8_t, 16>& t) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data()));
    };
    const __m128i lo0 = table(m_teddyLo[0]);
    const __m128i lo1 = table(m_teddyLo[1]);
    const __m128i lo2 = table(m_teddyLo[2]);
    const __m128i hi0 = table(m_teddyHi[0]);
    const __m128i hi1 = table(m_teddyHi[1]);
    const __m128i hi2 = table(m_teddyHi[2]);
    alignas(16) unsigned char tail[48];
    const unsigned char* at = p;
    std::size_t base = 0;  // lead's index of at[0]
    std::size_t left = n;
    bool last = false;
    while (left >= 3) {
        if (left < 18) {
            // The last places, from a zeroed copy (its places past the end are skipped).
            std::memset(tail, 0, sizeof tail);
            std::memcpy(tail, at, left);
            at = tail;
            last = true;
        }
        // The 16 places at..at+15 (reading at+17), unrolled (GCC -O2 kept the loop over k).
        const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
        const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 1));
        const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 2));
        const __m128i m0 =
            _mm_and_si128(_mm_shuffle_epi8(lo0, _mm_and_si128(v0, nibble)),
                          _mm_shuffle_epi8(hi0, _mm_and_si128(_mm_srli_epi16(v0, 4), nibble)));
        const __m128i m1 =
            _mm_and_si128(_mm_shuffle_epi8(lo1, _mm_and_si128(v1, nibble)),
                          _mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(v1, 4), nibble)));
        const __m128i m2 =
            _mm_and_si128(_mm_shuffle_epi8(lo2, _mm_and_si128(v2, nibble)),
                          _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(v2, 4), nibble)));
        const __m128i m = _mm_and_si128(m0, _mm_and_si128(m1, m2));
        auto candidates =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(m, _mm_setzero_si128()))) ^
            0xFFFFu;
        while (candidates != 0) {
            const auto bit = static_cast<std::size_t>(__builtin_ctz(candidates));
            candidates &= candidates - 1;
            if (base + bit + 3 <= n) {
                rowsOfPieceAt(lead, base + bit, rows);
            }
        }
        if (last) {
            break;
        }
        at += 16;
        base += 16;
        left -= 16;
    }
}
#endif

TriggerRows TriggerFilter::match(std::string_view lead) const {
    TriggerRows rows;
    if (!m_usable) {
        rows.maybe = ~std::uint64_t(0);
        return rows;
    }
    if (lead.empty()) {
        return rows;
    }
    // The anchored starts, each tested only where the line's first byte is its first byte
    // (a starts_with per start was a memcmp call per line: 4 % of the work).
    if (m_anchoredFirst[static_cast<unsigned char>(lead[0])]) {
        for (std::size_t i = 0; i < m_anchored.size(); ++i) {
            if (lead.starts_with(m_anchored[i])) {
                rows.maybe |= std::uint64_t(1) << m_anchoredRow[i];
                if (m_anchoredPure[i]) {
                    rows.sure |= std::uint64_t(1) << m_anchoredRow[i];
                }
            }
        }
    }
    if (lead.size() < 3) {
        return rows;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool ssse3 = __builtin_cpu_supports("ssse3");
    if (ssse3) {
        scanSsse3(lead, rows);
        return rows;
    }
#endif
    for (std::size_t i = 0; i + 3 <= lead.size(); ++i) {
        rowsOfPieceAt(lead, i, rows);
    }
    return rows;
}

}  // namespace runplane::agent
