#include "backend/agent/auth.h"

#include <algorithm>

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

std::string peerHost(std::string_view peer) {
    for (std::string_view scheme : {std::string_view("ipv4:"), std::string_view("ipv6:")}) {
        if (peer.substr(0, scheme.size()) != scheme) {
            continue;
        }
        std::string_view rest = peer.substr(scheme.size());
        if (!rest.empty() && rest.front() == '[') {
            const auto close = rest.find(']');
            return std::string(close == std::string_view::npos ? rest.substr(1)
                                                               : rest.substr(1, close - 1));
        }
        const auto colon = rest.rfind(':');
        return std::string(colon == std::string_view::npos ? rest : rest.substr(0, colon));
    }
    return std::string(peer);
}

AuthThrottle::AuthThrottle(AuthThrottleOptions options, Clock clock)
    : m_options(options), m_clock(std::move(clock)) {}

std::chrono::steady_clock::time_point AuthThrottle::now() const {
    return m_clock ? m_clock() : std::chrono::steady_clock::now();
}

long AuthThrottle::lockedForSeconds(const std::string& host) {
    std::lock_guard lock(m_mutex);
    const auto it = m_hosts.find(host);
    if (it == m_hosts.end()) {
        return 0;
    }
    const auto t = now();
    if (it->second.lockedUntil <= t) {
        return 0;
    }
    // Round up: "retry in 0 s" would invite an immediate retry that is still refused.
    const auto left = it->second.lockedUntil - t;
    return static_cast<long>(std::chrono::ceil<std::chrono::seconds>(left).count());
}

void AuthThrottle::evictIfFull() {
    if (m_hosts.size() < m_options.maxTrackedHosts) {
        return;
    }
    auto stalest = std::min_element(
        m_hosts.begin(), m_hosts.end(),
        [](const auto& a, const auto& b) { return a.second.lastSeen < b.second.lastSeen; });
    m_hosts.erase(stalest);
}

bool AuthThrottle::recordFailure(const std::string& host) {
    if (m_options.maxFailures <= 0) {
        return false;
    }
    std::lock_guard lock(m_mutex);
    const auto t = now();
    auto it = m_hosts.find(host);
    if (it == m_hosts.end()) {
        evictIfFull();
        it = m_hosts.emplace(host, HostState{}).first;
        it->second.windowStart = t;
    }
    HostState& h = it->second;
    h.lastSeen = t;
    if (t - h.windowStart > m_options.window) {
        h.failures = 0;
        h.windowStart = t;
    }
    if (++h.failures < m_options.maxFailures) {
        return false;
    }
    // Lockout k (0-based) lasts firstLockout * 2^k, capped.
    auto length = m_options.firstLockout;
    for (int i = 0; i < h.lockouts && length < m_options.maxLockout; ++i) {
        length *= 2;
    }
    length = std::min(length, m_options.maxLockout);
    h.lockedUntil = t + length;
    h.lockouts += 1;
    h.failures = 0;
    h.windowStart = t;
    return true;
}

void AuthThrottle::recordSuccess(const std::string& host) {
    std::lock_guard lock(m_mutex);
    const auto it = m_hosts.find(host);
    if (it != m_hosts.end()) {
        it->second.failures = 0;
    }
}

std::size_t AuthThrottle::trackedHosts() {
    std::lock_guard lock(m_mutex);
    return m_hosts.size();
}

Authenticator::Authenticator(std::optional<std::string> token, Logger& logger,
                             AuthThrottleOptions throttle)
    : m_token(std::move(token)), m_logger(logger), m_throttle(throttle) {}

grpc::Status Authenticator::check(const grpc::CallbackServerContext* context,
                                  std::string_view method) const {
    if (!m_token) {
        return grpc::Status::OK;
    }
    const auto& md = context->client_metadata();
    const auto it = md.find("authorization");
    std::optional<std::string_view> presented;
    if (it != md.end()) {
        presented = std::string_view(it->second.data(), it->second.size());
    }
    return checkPresented(context->peer(), presented, method);
}

grpc::Status Authenticator::checkPresented(const std::string& peer,
                                           std::optional<std::string_view> authorization,
                                           std::string_view method) const {
    if (!m_token) {
        return grpc::Status::OK;
    }
    const std::string host = peerHost(peer);
    if (const long left = m_throttle.lockedForSeconds(host); left > 0) {
        return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "runplaned: too many failed authentication attempts from " + host +
                                "; retry in " + std::to_string(left) + " s");
    }
    const std::string_view presented = authorization.value_or("");
    constexpr std::string_view kBearer = "Bearer ";
    const bool wellFormed =
        presented.size() > kBearer.size() && presented.substr(0, kBearer.size()) == kBearer;
    const bool ok =
        constantTimeEquals(wellFormed ? presented.substr(kBearer.size()) : "", *m_token) &&
        wellFormed;
    if (ok) {
        m_throttle.recordSuccess(host);
        return grpc::Status::OK;
    }
    const char* why = !authorization ? "no authorization metadata"
                      : !wellFormed  ? "authorization is not 'Bearer <token>'"
                                     : "wrong token";
    if (m_throttle.recordFailure(host)) {
        m_logger.warn("refused " + std::string(method) + " from " + peer + ": " + why +
                      "; too many failures, host " + host + " locked out for " +
                      std::to_string(m_throttle.lockedForSeconds(host)) + " s");
    } else {
        m_logger.warn("refused " + std::string(method) + " from " + peer + ": " + why);
    }
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        std::string("runplaned: ") + why + "; send 'authorization: Bearer <token>' metadata");
}

}  // namespace runplane::agent
