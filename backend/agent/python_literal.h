#pragma once
// A small parser for Python literal reprs as the RL frameworks print them (frameworks.md §5):
// dicts, lists, tuples, sets, strings ('..', "..", with escapes and r/b/u prefixes, adjacent
// literals concatenated), ints (with _ separators), floats (1e-06, .5, 5.), nan/inf/-inf (bare,
// as float('nan'), or math.nan), True/False/None, and the numeric wrappers numpy and torch
// print (np.float64(0.5), tensor(0.25), ...). Not JSON: single quotes and Python floats.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.h"

namespace runplane::agent {

/// A parsed Python literal. Plain value type; containers own their elements.
struct PyValue {
    enum class Kind { None, Bool, Int, Float, String, List, Dict };
    // Defined in the .cpp: clang with libstdc++ cannot check pair<PyValue, PyValue> for
    // implicit default construction while PyValue is still incomplete (the fuzz build).
    PyValue();
    Kind kind = Kind::None;
    bool boolean = false;
    std::int64_t integer = 0;
    double number = 0.0;
    std::string text;
    std::vector<PyValue> items;                        // List (also tuple, set)
    std::vector<std::pair<PyValue, PyValue>> entries;  // Dict, in source order

    bool isNumeric() const {
        return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
    }
    double asDouble() const;
    /// The key as a series-name component: strings as is, numbers printed.
    std::string keyText() const;
};

/// Parses one literal that spans all of `text` (surrounding whitespace allowed). Errors name the
/// column (1-based) and what was expected, e.g. "column 14: expected ':' after dict key".
Result<PyValue> parsePythonLiteral(std::string_view text);

/// Parses one literal starting at text[0] and reports how many characters it used, so a caller
/// can parse a dict followed by trailing text.
Result<PyValue> parsePythonLiteralPrefix(std::string_view text, std::size_t* consumed);

/// Numeric leaves of a value as (path, value): dict keys joined with '/', list elements by
/// index. Bools become 0/1; NaN and infinities are kept as they are; None and strings are
/// skipped.
void flattenNumeric(const PyValue& value, const std::string& prefix,
                    std::vector<std::pair<std::string, double>>& out);

}  // namespace runplane::agent
