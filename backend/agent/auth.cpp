#include "backend/agent/auth.h"

namespace runplane::agent {

bool constantTimeEquals(std::string_view a, std::string_view b) {
    // Walk the longer length; a length mismatch is folded into the result, not an early exit.
    const std::size_t n = std::max(a.size(), b.size());
    unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff |= static_cast<unsigned char>(x ^ y);
    }
    // Keep the compiler from short-circuiting the loop.
    volatile unsigned char sink = diff;
    return sink == 0;
}

Authenticator::Authenticator(std::optional<std::string> token, Logger& logger)
    : m_token(std::move(token)), m_logger(logger) {}

grpc::Status Authenticator::check(const grpc::CallbackServerContext* context,
                                  std::string_view method) const {
    if (!m_token) {
        return grpc::Status::OK;
    }
    const auto& md = context->client_metadata();
    const auto it = md.find("authorization");
    std::string_view presented;
    if (it != md.end()) {
        presented = std::string_view(it->second.data(), it->second.size());
    }
    constexpr std::string_view kBearer = "Bearer ";
    const bool wellFormed =
        presented.size() > kBearer.size() && presented.substr(0, kBearer.size()) == kBearer;
    const bool ok =
        constantTimeEquals(wellFormed ? presented.substr(kBearer.size()) : "", *m_token) &&
        wellFormed;
    if (ok) {
        return grpc::Status::OK;
    }
    const char* why = it == md.end() ? "no authorization metadata"
                      : !wellFormed  ? "authorization is not 'Bearer <token>'"
                                     : "wrong token";
    m_logger.warn("refused " + std::string(method) + " from " + context->peer() + ": " + why);
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        std::string("runplaned: ") + why + "; send 'authorization: Bearer <token>' metadata");
}

}  // namespace runplane::agent
