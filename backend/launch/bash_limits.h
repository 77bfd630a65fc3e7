#pragma once
// Internal: the bounds the launch-script reader keeps on untrusted input, and overflow-checked
// 64-bit arithmetic. A script is data, not code we trust: every recursion, value and loop of the
// reader is bounded so that a small hostile file ends in a finding, never a crash or a hang
// (docs/launch-scripts.md, "Limits").

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace runplane::plan::launch::detail {

/// Nesting of the parser (if/for/while/case bodies, groups, subshells, quotes inside ${...} and
/// $(...)) and of the evaluator (${...} inside ${...}, $(...) inside $(...), $((...)) parentheses,
/// if blocks, test expressions). Real launch scripts nest a handful of levels.
inline constexpr int kMaxNesting = 64;
/// `source` chains.
inline constexpr int kMaxSourceDepth = 8;
/// The longest single value (a variable, one word after expansion, $(seq) output).
inline constexpr std::size_t kMaxValueBytes = std::size_t{1} << 20;
/// Total expansion work of one import: bytes produced by expansions, kWordCost per word (a word
/// costs far more memory and time than its bytes), and text re-parsed for ${...} operands,
/// $((...)) and $(...). Stops doubling tricks (A="$A$A", arrays of arrays).
inline constexpr std::uint64_t kMaxExpansionWork = std::uint64_t{32} << 20;
inline constexpr std::uint64_t kWordCost = 256;
/// The script and each sourced file.
inline constexpr std::size_t kMaxScriptBytes = std::size_t{8} << 20;
/// Numbers one $(seq ...) may produce.
inline constexpr long long kMaxSeqCount = 100000;
/// Calls of the script's own functions read in place: nested, and in all (a function calling
/// itself several times would otherwise take exponential time).
inline constexpr int kMaxCallDepth = 16;
inline constexpr int kMaxFunctionCalls = 10000;
/// Info and warning notes kept per import (errors are always kept).
inline constexpr std::size_t kMaxNotes = 2000;
/// Characters of one note's message (script text quoted in it is clipped).
inline constexpr std::size_t kMaxMessageChars = 400;

// Checked arithmetic: nullopt when the exact result does not fit in 64 bits (or is undefined).
inline std::optional<long long> checkedAdd(long long a, long long b) {
    long long r = 0;
    return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<long long>(r);
}
inline std::optional<long long> checkedSub(long long a, long long b) {
    long long r = 0;
    return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<long long>(r);
}
inline std::optional<long long> checkedMul(long long a, long long b) {
    long long r = 0;
    return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<long long>(r);
}
inline std::optional<long long> checkedNeg(long long a) {
    return checkedSub(0, a);
}
/// Division truncates toward zero as in bash; b == 0 and INT64_MIN / -1 give nullopt.
inline std::optional<long long> checkedDiv(long long a, long long b) {
    if (b == 0 || (a == std::numeric_limits<long long>::min() && b == -1)) {
        return std::nullopt;
    }
    return a / b;
}
/// b == 0 gives nullopt; INT64_MIN % -1 is 0 (the C++ expression itself would overflow).
inline std::optional<long long> checkedMod(long long a, long long b) {
    if (b == 0) {
        return std::nullopt;
    }
    if (b == -1) {
        return 0;
    }
    return a % b;
}
/// a << n as a * 2^n: n in [0, 63] and the product fits.
inline std::optional<long long> checkedShl(long long a, long long n) {
    if (n < 0 || n > 63) {
        return std::nullopt;
    }
    long long r = a;
    for (long long i = 0; i < n && r != 0; ++i) {
        auto next = checkedMul(r, 2);
        if (!next) {
            return std::nullopt;
        }
        r = *next;
    }
    return r;
}
/// Arithmetic right shift; n in [0, 63].
inline std::optional<long long> checkedShr(long long a, long long n) {
    if (n < 0 || n > 63) {
        return std::nullopt;
    }
    return a >> n;
}
/// base ** exp by squaring (at most 64 steps); exp < 0 or overflow give nullopt.
inline std::optional<long long> checkedPow(long long base, long long exp) {
    if (exp < 0) {
        return std::nullopt;
    }
    long long result = 1;
    while (exp > 0) {
        if ((exp & 1) != 0) {
            auto r = checkedMul(result, base);
            if (!r) {
                return std::nullopt;
            }
            result = *r;
        }
        exp >>= 1;
        if (exp > 0) {
            auto sq = checkedMul(base, base);
            if (!sq) {
                // |base| >= 2 here and a factor base^2 is still to come: the result overflows
                return std::nullopt;
            }
            base = *sq;
        }
    }
    return result;
}

}  // namespace runplane::plan::launch::detail
