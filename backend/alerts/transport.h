#pragma once
// One delivery attempt to one destination (docs/alerts.md, "Delivery"): an HTTP POST
// (cpp-httplib, http and https) or a local command (argv, no shell, the body on stdin).

#include <cstdint>
#include <optional>
#include <string>

#include "backend/alerts/rules.h"

namespace runplane::alerts {

struct AttemptResult {
    bool delivered = false;
    bool retryable = true;                     // false: the destination refused it for good (4xx)
    std::optional<std::int64_t> retryAfterNs;  // 429's Retry-After (or Discord's retry_after)
    int httpStatus = 0;                        // 0: no HTTP answer (or a command)
    std::string result;  // one line for people and the history: "HTTP 200 ok", "exit 0", ...
    std::string reply;   // what came back (body or stdout), bounded; scrubbed of secrets
};

/// Sends body to the destination once, within its timeout. idempotencyKey goes in the
/// Idempotency-Key header (webhook) or RUNPLANE_ALERT_ID (command). Never throws; secrets never
/// appear in result or reply.
AttemptResult attempt(const Destination& destination, const std::string& body,
                      const std::string& idempotencyKey, const std::vector<std::string>& secrets);

/// Retry-After as seconds or an HTTP date; nullopt when neither.
std::optional<std::int64_t> parseRetryAfter(const std::string& value, std::int64_t nowUnixNs);

}  // namespace runplane::alerts
