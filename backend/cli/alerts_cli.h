#pragma once
// How `runplanectl watch` starts the alert sender (alerts_commands.cpp, docs/alerts.md).

#include <memory>
#include <string>

#include "backend/alerts/sender.h"
#include "common/result.h"

namespace runplane::cli {

/// The sender for `watch --alerts FILE` (or the default rules file when it exists), started on
/// historyPath; a null sender when no file was given and none exists (nothing is sent).
Result<std::unique_ptr<alerts::AlertSender>> startWatchAlerts(const std::string& alertsFile,
                                                              const std::string& historyPath);

}  // namespace runplane::cli
