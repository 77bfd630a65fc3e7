#pragma once
// One test message to one destination (docs/alerts.md, `runplanectl alerts test`): the test
// payload (type "test", event kind alert_test), rendered for the destination's kind and sent
// once, within its timeout. Shared by the CLI and the GUI's Alerts page.

#include <cstdint>
#include <string>
#include <vector>

#include "backend/alerts/rules.h"
#include "backend/alerts/transport.h"

namespace runplane::alerts {

/// Sends the test message; result and reply never hold a secret. Never throws. SIGPIPE must be
/// ignored by the caller's process when a command destination may exit early.
AttemptResult sendTestMessage(const Destination& destination,
                              const std::vector<std::string>& secrets, std::int64_t nowNs);

}  // namespace runplane::alerts
