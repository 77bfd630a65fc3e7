#pragma once
// The bearer token a controller sends (issue 41, item 5): gRPC carries it in the HTTP/2 header
// `authorization: Bearer TOKEN`, whose value may hold printable ASCII only (0x20..0x7E). gRPC
// asserts that, aborting the process (exit 134) on a tab, a control character or a non-ASCII
// byte, so every token is checked here before it reaches a call (docs/security.md, "Tokens").

#include <cstddef>
#include <string>
#include <string_view>

namespace runplane::control {

/// The longest token sent (gRPC refuses header lists over 8 KiB; a token is 64 hex characters).
inline constexpr std::size_t kMaxBearerTokenBytes = 4096;

/// What makes `token` unfit to send, as a sentence naming the character's position (1-based)
/// and kind but never the token itself; "" when it is fit. Empty tokens are fit (none is sent).
std::string bearerTokenProblem(std::string_view token);

}  // namespace runplane::control
