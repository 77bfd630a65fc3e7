#pragma once
// Text from runs (metric names, messages, attributes) into valid UTF-8, so that a protobuf
// `string` built from it can always be parsed back (docs/daemon.md, "Text from runs").
// Plain C++17: no Qt, no gRPC.

#include <string>
#include <string_view>

namespace runplane {

/// The replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

/// True when `text` is well-formed UTF-8 (Unicode 15, Table 3-7: no overlong forms, no
/// surrogates, nothing above U+10FFFF). NUL bytes are well-formed.
bool isValidUtf8(std::string_view text);

/// `text` with every maximal ill-formed subsequence replaced by one U+FFFD (the Unicode
/// "substitution of maximal subparts" practice, as WHATWG and ICU do). Valid text is returned
/// unchanged.
std::string toValidUtf8(std::string_view text);

/// In place; returns true when anything was replaced.
bool makeValidUtf8(std::string& text);

}  // namespace runplane
