#include "gui/models/alerts_data.h"

#include <csignal>
#include <filesystem>

#include "backend/alerts/rules.h"
#include "backend/alerts/sender.h"
#include "backend/alerts/test_message.h"
#include "db/history/alert_store.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {
namespace {

QString joined(const std::vector<std::string>& items) {
    QStringList out;
    for (const auto& i : items) {
        out << qs(i);
    }
    return out.join(QStringLiteral(", "));
}

bool fileExists(const std::string& path) {
    std::error_code ec;
    return !path.empty() && std::filesystem::exists(path, ec);
}

}  // namespace

QString durationText(std::int64_t ns) {
    struct Unit {
        std::int64_t ns;
        const char* suffix;
    };
    static constexpr Unit kUnits[] = {{86'400'000'000'000LL, "d"},
                                      {3'600'000'000'000LL, "h"},
                                      {60'000'000'000LL, "m"},
                                      {1'000'000'000LL, "s"},
                                      {1'000'000LL, "ms"}};
    if (ns <= 0) {
        return QStringLiteral("0s");
    }
    for (const Unit& u : kUnits) {
        if (ns % u.ns == 0) {
            return QString::number(ns / u.ns) + QLatin1String(u.suffix);
        }
    }
    return QString::number(static_cast<double>(ns) / 1e9, 'g', 6) + QStringLiteral("s");
}

QString defaultAlertsFile() {
    return qs(alerts::defaultAlertsPath());
}

AlertsConfig readAlertsConfig(const QString& path) {
    AlertsConfig out;
    out.path = path.isEmpty() ? defaultAlertsFile() : path;
    const std::string file = out.path.toStdString();
    out.exists = fileExists(file);
    if (!out.exists) {
        return out;
    }
    auto rules = alerts::loadAlertRules(file);
    if (!rules) {
        out.error = qs(rules.error());
        return out;
    }
    for (const auto& d : rules->destinations) {
        AlertDestinationRow row;
        row.name = qs(d.name);
        row.type = QLatin1String(alerts::toString(d.kind));
        row.target = d.kind == alerts::DestinationKind::Command
                         ? (d.argv.empty() ? QString() : qs(d.argv.front()))
                         : QStringLiteral("URL (a secret: not shown)");
        if (!d.token.empty()) {
            row.target += QStringLiteral(" + bearer token");
        }
        row.timeout = durationText(static_cast<std::int64_t>(d.timeoutSeconds * 1e9));
        row.where = qs(d.where);
        out.destinations.push_back(std::move(row));
    }
    for (const auto& r : rules->rules) {
        AlertRuleRow row;
        row.name = qs(r.name);
        QStringList matches;
        if (!r.events.empty()) {
            matches << QStringLiteral("events ") + joined(r.events);
        }
        if (!r.runStates.empty()) {
            matches << QStringLiteral("run states ") + joined(r.runStates);
        }
        row.matches =
            matches.isEmpty() ? QStringLiteral("any event") : matches.join(QStringLiteral("; "));
        QStringList scope;
        if (!r.runNames.empty()) {
            scope << QStringLiteral("runs ") + joined(r.runNames);
        }
        if (!r.recipes.empty()) {
            scope << QStringLiteral("recipes ") + joined(r.recipes);
        }
        if (!r.tags.empty()) {
            scope << QStringLiteral("tags ") + joined(r.tags);
        }
        if (!r.nodes.empty()) {
            scope << QStringLiteral("nodes ") + joined(r.nodes);
        }
        row.scope = scope.isEmpty() ? QStringLiteral("every run and node")
                                    : scope.join(QStringLiteral("; "));
        row.minLevel = QLatin1String(alerts::toString(r.minLevel));
        row.rateLimit = r.rateCount > 0 ? QString::number(r.rateCount) + QLatin1Char('/') +
                                              durationText(r.rateWindowNs)
                                        : QStringLiteral("none");
        row.quiet = r.quietNs > 0 ? durationText(r.quietNs) : QStringLiteral("none");
        row.to = joined(r.to);
        out.rules.push_back(std::move(row));
    }
    return out;
}

AlertsStatus readAlertsStatus(const QString& historyPath, int limit) {
    AlertsStatus out;
    const std::string path = historyPath.toStdString();
    out.historyExists = fileExists(path);
    if (!out.historyExists) {
        return out;
    }
    // Read-only: the page never creates, migrates or writes the history it shows (an older
    // history is migrated by the first sender or controller that opens it read-write).
    auto store = db::AlertStore::openReadOnly(path, &out.schemaVersion);
    if (!store) {
        out.error = qs(store.error());
        return out;
    }
    if (!*store) {
        out.olderSchema = true;  // no alert tables yet: nothing was ever sent from it
        return out;
    }
    auto lease = (*store)->lease();
    auto pending = (*store)->countPending();
    auto recent = (*store)->recent(limit);
    if (!lease || !pending || !recent) {
        out.error = qs(!lease ? lease.error() : !pending ? pending.error() : recent.error());
        return out;
    }
    if (*lease) {
        out.leaseHolder = qs((*lease)->first);
        out.leaseUntilNs = (*lease)->second;
    }
    out.pending = *pending;
    for (const auto& d : *recent) {
        AlertDeliveryRow row;
        row.id = d.id;
        row.eventId = d.eventId;
        row.rule = qs(d.rule);
        row.destination = qs(d.destination);
        row.state = QLatin1String(db::toString(d.state));
        row.attempts = d.attempts;
        row.createdNs = d.createdNs;
        row.doneNs = d.doneNs;
        row.nextNs = d.nextNs;
        row.result = qs(d.result);
        out.recent.push_back(std::move(row));
    }
    return out;
}

AlertsTestOutcome sendTestAlerts(const QString& path, const QString& only) {
    AlertsTestOutcome out;
    out.path = path.isEmpty() ? defaultAlertsFile() : path;
    const std::string file = out.path.toStdString();
    if (!fileExists(file)) {
        out.error = QStringLiteral("no rules file at ") + out.path +
                    QStringLiteral(": there is no destination to test");
        return out;
    }
    auto rules = alerts::loadAlertRules(file);
    if (!rules) {
        out.error = qs(rules.error());
        return out;
    }
    // A command destination whose child exits before reading its stdin must not end the GUI.
    std::signal(SIGPIPE, SIG_IGN);
    const auto secrets = rules->secrets();
    for (const auto& d : rules->destinations) {
        if (!only.isEmpty() && qs(d.name) != only) {
            continue;
        }
        const alerts::AttemptResult r = alerts::sendTestMessage(d, secrets, alerts::unixNowNs());
        AlertTestRow row;
        row.destination = qs(d.name);
        row.type = QLatin1String(alerts::toString(d.kind));
        row.delivered = r.delivered;
        row.httpStatus = r.httpStatus;
        row.result = qs(r.result);
        row.reply = qs(r.reply.substr(0, 500));
        out.results.push_back(std::move(row));
    }
    if (out.results.empty()) {
        out.error = only.isEmpty() ? QStringLiteral("the rules file names no destination")
                                   : QStringLiteral("no destination named ") + only;
    }
    return out;
}

}  // namespace runplane::gui
