#pragma once
// Minimal JSON text helpers for the dependency-free helper executables (they must also build on the
// GPU host, which has no nlohmann_json): a string quoter and a reader for one flat object.

#include <map>
#include <string>
#include <string_view>

namespace runplane::compute::json {

/// `s` as a JSON string literal, quotes included. Invalid UTF-8 bytes become U+FFFD.
std::string quote(std::string_view s);

/// A scalar value of a flat object.
struct FlatValue {
    enum class Kind { String, Number, Bool, Null };
    Kind kind = Kind::Null;
    std::string text;  // string contents (decoded) or the number's spelling
    double number = 0;
    bool boolean = false;
};

/// Reads `{"key": scalar, ...}` (strings, numbers, true/false/null; no nesting). Returns false and
/// sets `error` ("offset N: ...") on anything else.
bool parseFlatObject(std::string_view text, std::map<std::string, FlatValue>& out,
                     std::string& error);

}  // namespace runplane::compute::json
