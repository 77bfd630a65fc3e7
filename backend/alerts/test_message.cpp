#include "backend/alerts/test_message.h"

#include "backend/alerts/alert_event.h"

namespace runplane::alerts {

AttemptResult sendTestMessage(const Destination& destination,
                              const std::vector<std::string>& secrets, std::int64_t nowNs) {
    nlohmann::json payload = testPayload(destination.name, nowNs);
    const std::string key = "runplane-test-" + std::to_string(nowNs);
    payload["delivery"] = {{"id", 0}, {"attempt", 1}, {"idempotency_key", key}};
    return attempt(destination, renderBody(destination.kind, payload), key, secrets);
}

}  // namespace runplane::alerts
