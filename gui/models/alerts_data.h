#pragma once
// What the Alerts page shows (issue #48, docs/alerts.md, docs/gui.md "Alerts"): the rules file the
// CLI and the GUI's controller read (destinations by name and type, never their URLs or tokens;
// the rules), the sender's state and the last deliveries from the history's alert tables, and
// the outcome of a test message to each destination. The read and send functions block (file,
// SQLite, HTTP, a child process): call them on a worker thread (AlertsPage does, through
// SerialWorker); their results are plain values that cross to the GUI thread.

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace runplane::gui {

struct AlertDestinationRow {
    QString name;
    QString type;     // slack, discord, webhook, command
    QString target;   // "URL (a secret: not shown)" or the command's argv[0]
    QString timeout;  // "10s"
    QString where;    // file:line:col of its entry
};

struct AlertRuleRow {
    QString name;
    QString matches;    // "events process_exit, cuda_oom; run states failed" or "any event"
    QString scope;      // "runs prod-*; recipes qwen3-*; nodes gpu-*" or "every run and node"
    QString minLevel;   // "error"
    QString rateLimit;  // "10/1h" or "none"
    QString quiet;      // "15m" or "none"
    QString to;         // "oncall, pager"
};

struct AlertsConfig {
    QString path;
    bool exists = false;
    QString error;  // file:line:col as the CLI prints it
    std::vector<AlertDestinationRow> destinations;
    std::vector<AlertRuleRow> rules;
};

/// Reads and checks the rules file (alerts::loadAlertRules); a missing file is not an error
/// (nothing is sent). An empty path reads the default one (alerts::defaultAlertsPath()).
AlertsConfig readAlertsConfig(const QString& path);
/// $XDG_CONFIG_HOME/runplane/alerts.yaml, else ~/.config/runplane/alerts.yaml.
QString defaultAlertsFile();

struct AlertDeliveryRow {
    std::int64_t id = 0;
    std::int64_t eventId = 0;
    QString rule;
    QString destination;
    QString state;  // pending, sent, failed, suppressed
    int attempts = 0;
    std::int64_t createdNs = 0;
    std::int64_t doneNs = 0;
    std::int64_t nextNs = 0;
    QString result;  // the last answer ("HTTP 200 ok"), scrubbed of secrets by the sender
};

struct AlertsStatus {
    bool historyExists = false;
    QString error;
    int schemaVersion = 0;     // the history file's schema version
    bool olderSchema = false;  // it predates the alert tables (version < 9): nothing to show
    QString leaseHolder;       // empty: no sender ever held the lease
    std::int64_t leaseUntilNs = 0;
    int pending = 0;
    std::vector<AlertDeliveryRow> recent;  // newest first
};

/// The sender's lease, the pending count and the `limit` newest deliveries of the history at
/// historyPath (db::AlertStore::openReadOnly: the file is never created, migrated or written).
/// A history that does not exist yet: historyExists false; one older than the alert tables:
/// olderSchema true.
AlertsStatus readAlertsStatus(const QString& historyPath, int limit);

struct AlertTestRow {
    QString destination;
    QString type;
    bool delivered = false;
    int httpStatus = 0;
    QString result;  // "HTTP 200 ok", "exit 0", the error
    QString reply;   // what came back, bounded, scrubbed
};

struct AlertsTestOutcome {
    QString path;
    QString error;  // the rules file could not be read: nothing was sent
    std::vector<AlertTestRow> results;
};

/// Sends one test message to each destination of the rules file at path (or only to the one
/// named `only`, when given), as `runplanectl alerts test` does (alerts::sendTestMessage).
AlertsTestOutcome sendTestAlerts(const QString& path, const QString& only = QString());

/// "15m", "2h", "30s", "500ms", "1d": the shortest exact spelling of a duration in ns.
QString durationText(std::int64_t ns);

}  // namespace runplane::gui
