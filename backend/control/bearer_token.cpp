#include "backend/control/bearer_token.h"

#include <array>
#include <cstdio>

namespace runplane::control {
namespace {

std::string hexByte(unsigned char c) {
    std::array<char, 8> text{};
    std::snprintf(text.data(), text.size(), "0x%02x", static_cast<unsigned>(c));
    return text.data();
}

// The kinds of byte a header value may not hold: a row per kind, the first that matches names it.
struct BadByte {
    bool (*matches)(unsigned char);
    const char* what;  // "is a tab", ...
};

constexpr std::array kBadBytes = {
    BadByte{[](unsigned char c) { return c == '\t'; }, "is a tab"},
    BadByte{[](unsigned char c) { return c == '\n' || c == '\r'; }, "is a line break"},
    BadByte{[](unsigned char c) { return c < 0x20 || c == 0x7f; }, "is a control character"},
    BadByte{[](unsigned char c) { return c >= 0x80; }, "is not ASCII"},
};

}  // namespace

std::string bearerTokenProblem(std::string_view token) {
    if (token.size() > kMaxBearerTokenBytes) {
        return "the token is " + std::to_string(token.size()) + " bytes long, more than " +
               std::to_string(kMaxBearerTokenBytes);
    }
    for (std::size_t i = 0; i < token.size(); ++i) {
        const auto c = static_cast<unsigned char>(token[i]);
        for (const BadByte& bad : kBadBytes) {
            if (bad.matches(c)) {
                return "the token's character " + std::to_string(i + 1) + " of " +
                       std::to_string(token.size()) + " " + bad.what + " (byte " + hexByte(c) +
                       "); a token may hold printable ASCII only (letters, digits, punctuation), "
                       "as gRPC sends it in a header";
            }
        }
    }
    return {};
}

}  // namespace runplane::control
