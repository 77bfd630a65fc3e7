#pragma once
// Alert rules (issue #48, docs/alerts.md): which stored events become alerts, and where they go.
// Read from ~/.config/runplane/alerts.yaml (or --alerts FILE) with yaml-cpp; every error names
// file:line:col. Secrets (webhook URLs, tokens) come from files or the environment; a rules file
// holding one inline is refused when group or others may read it. Plain C++: no Qt, no gRPC.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::alerts {

/// How bad an event is. Each event kind has a level in a table (levelOf); a rule's min_level
/// keeps the events at or above it.
enum class Level { Info, Warning, Error, Critical };
const char* toString(Level level);
std::optional<Level> levelFromString(std::string_view text);

enum class DestinationKind { Slack, Discord, Webhook, Command };
const char* toString(DestinationKind kind);

/// One place alerts go. The URL and token are secrets: never printed, logged or stored.
struct Destination {
    std::string name;
    DestinationKind kind = DestinationKind::Webhook;
    std::string url;                // slack, discord, webhook (a secret)
    std::string token;              // webhook: sent as "Authorization: Bearer <token>" (a secret)
    std::vector<std::string> argv;  // command: run without a shell, payload on stdin
    double timeoutSeconds = 10;     // one attempt's bound
    std::string where;              // file:line:col of its entry
};

/// One rule. Empty lists match everything (docs/alerts.md, "Matching").
struct Rule {
    std::string name;
    std::vector<std::string> events;     // event kinds by their stored name ("cuda_oom", ...)
    std::vector<std::string> runStates;  // run_state events whose state is one of these
    std::vector<std::string> runNames;   // glob patterns (* and ?) over the run's name or id
    std::vector<std::string> recipes;    // glob patterns over the recipe's name
    std::vector<std::string> tags;       // glob patterns over the run's tags ("framework=miles")
    std::vector<std::string> nodes;      // glob patterns over the node id
    Level minLevel = Level::Warning;
    int rateCount = 0;  // at most rateCount alerts per rateWindowNs (0: no limit)
    std::int64_t rateWindowNs = 0;
    std::int64_t quietNs = 0;     // after an alert, none for the same run and kind for this long
    std::vector<std::string> to;  // destination names
    std::string where;
};

/// Delivery settings (the `delivery:` section).
struct DeliverySettings {
    std::int64_t deadlineNs = 3600ll * 1'000'000'000;  // undelivered by then: an alert_failed event
    std::int64_t backoffBaseNs = 2'000'000'000;        // first retry after ~this
    std::int64_t backoffMaxNs = 300ll * 1'000'000'000;  // the back-off's cap
    int maxPending = 1000;  // pending deliveries before the sender stops taking new events
};

struct AlertRules {
    std::string path;
    std::vector<Destination> destinations;
    std::vector<Rule> rules;
    DeliverySettings delivery;
    const Destination* destination(std::string_view name) const;
    /// Every secret value (URLs, tokens), for scrubbing text before it is printed or stored.
    std::vector<std::string> secrets() const;
};

/// $XDG_CONFIG_HOME/runplane/alerts.yaml, else ~/.config/runplane/alerts.yaml.
std::string defaultAlertsPath();

/// Reads and checks a rules file. Errors name file:line:col. `environment` looks variables up
/// (nullptr: the process environment).
Result<AlertRules> loadAlertRules(const std::string& path);
/// The same over text (fileIsPrivate: the file may be read by its owner only).
Result<AlertRules> parseAlertRules(const std::string& text, const std::string& path,
                                   bool fileIsPrivate);

/// Durations as the file writes them: "500ms", "30s", "10m", "2h", "1d", or a number of seconds.
std::optional<std::int64_t> parseDuration(std::string_view text);

/// Shell-style glob with * and ? (no character classes).
bool globMatch(std::string_view pattern, std::string_view text);

/// `text` with every secret replaced by <redacted> and then redact::redactText applied.
std::string scrub(std::string text, const std::vector<std::string>& secrets);

}  // namespace runplane::alerts
