// runplanectl alerts: check a rules file, send a test message to each destination, show the last
// deliveries, and send from the history without ingesting (issue #48, docs/alerts.md).
// `runplanectl watch` sends through startWatchAlerts (alerts_cli.h).
#include <signal.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "backend/alerts/alert_event.h"
#include "backend/alerts/rules.h"
#include "backend/alerts/sender.h"
#include "backend/alerts/test_message.h"
#include "backend/alerts/transport.h"
#include "backend/cli/alerts_cli.h"
#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "db/history/alert_store.h"

namespace runplane::cli {

Result<std::unique_ptr<alerts::AlertSender>> startWatchAlerts(const std::string& alertsFile,
                                                              const std::string& historyPath) {
    const bool explicitFile = !alertsFile.empty();
    const std::string path = explicitFile ? alertsFile : alerts::defaultAlertsPath();
    std::error_code ec;
    if (!explicitFile && !std::filesystem::exists(path, ec)) {
        return std::unique_ptr<alerts::AlertSender>();  // no rules file: nothing is sent
    }
    auto rules = alerts::loadAlertRules(path);
    if (!rules.ok()) {
        return rules.failure();
    }
    alerts::SenderOptions options;
    options.historyPath = historyPath;
    options.rules = std::move(*rules);
    options.onLog = [](const std::string& line) {
        std::cerr << "runplanectl: " << line << std::endl;
    };
    auto sender = std::make_unique<alerts::AlertSender>(std::move(options));
    if (Status s = sender->start(); !s.ok()) {
        return s.failure();
    }
    return sender;
}

}  // namespace runplane::cli

namespace {

using namespace runplane;
using nlohmann::json;

struct AlertsOptions {
    std::string file;
    std::string history;
    double seconds = 0;
    int limit = 20;
    bool json = false;
};

std::string timeText(std::int64_t ns) {
    if (ns <= 0) {
        return "-";
    }
    const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

Result<alerts::AlertRules> rulesFor(const AlertsOptions& o) {
    const std::string path = o.file.empty() ? alerts::defaultAlertsPath() : o.file;
    auto rules = alerts::loadAlertRules(path);
    if (!rules.ok() && rules.code() == ErrorCode::NotFound && o.file.empty()) {
        return Error{
            "no rules file at " + path + " (give --alerts FILE); nothing is sent without one",
            ErrorCode::NotFound};
    }
    return rules;
}

void runCheck(const AlertsOptions& o, cli::CliContext& context) {
    auto rules = rulesFor(o);
    if (!rules.ok()) {
        std::cerr << "runplanectl alerts check: " << rules.error() << "\n";
        context.exitCode = rules.code() == ErrorCode::NotFound ? 2 : 1;
        return;
    }
    std::cout << rules->path << ": " << rules->destinations.size() << " destinations, "
              << rules->rules.size() << " rules\n";
    for (const auto& d : rules->destinations) {
        std::cout << "  destination " << d.name << " (" << alerts::toString(d.kind) << ")\n";
    }
    for (const auto& r : rules->rules) {
        std::string events;
        for (const auto& e : r.events) {
            events += (events.empty() ? "" : ",") + e;
        }
        for (const auto& s : r.runStates) {
            events += (events.empty() ? "" : ",") + std::string("run_state=") + s;
        }
        std::string to;
        for (const auto& t : r.to) {
            to += (to.empty() ? "" : ",") + t;
        }
        std::cout << "  rule " << r.name << ": " << (events.empty() ? "any event" : events)
                  << ", level >= " << alerts::toString(r.minLevel) << " -> " << to << "\n";
    }
}

void runTest(const AlertsOptions& o, cli::CliContext& context) {
    auto rules = rulesFor(o);
    if (!rules.ok()) {
        std::cerr << "runplanectl alerts test: " << rules.error() << "\n";
        context.exitCode = rules.code() == ErrorCode::NotFound ? 2 : 1;
        return;
    }
    // A command destination whose child exits early must not kill runplanectl (SIGPIPE).
    ::signal(SIGPIPE, SIG_IGN);
    const auto secrets = rules->secrets();
    int failed = 0;
    json out = json::array();
    for (const auto& d : rules->destinations) {
        const auto r = alerts::sendTestMessage(d, secrets, alerts::unixNowNs());
        failed += r.delivered ? 0 : 1;
        if (o.json) {
            out.push_back({{"destination", d.name},
                           {"type", alerts::toString(d.kind)},
                           {"delivered", r.delivered},
                           {"http_status", r.httpStatus},
                           {"result", r.result},
                           {"reply", r.reply}});
            continue;
        }
        std::cout << d.name << " (" << alerts::toString(d.kind)
                  << "): " << (r.delivered ? "delivered" : "NOT delivered") << " - " << r.result
                  << "\n";
        if (!r.reply.empty()) {
            std::cout << "  reply: " << r.reply.substr(0, 500) << "\n";
        }
    }
    if (o.json) {
        std::cout << out.dump(2) << "\n";
    }
    context.exitCode = failed == 0 ? 0 : 1;
}

void runStatus(const AlertsOptions& o, cli::CliContext& context) {
    auto store = db::AlertStore::open(o.history);
    if (!store.ok()) {
        std::cerr << "runplanectl alerts status: " << store.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto lease = (*store)->lease();
    auto recent = (*store)->recent(o.limit);
    auto pending = (*store)->countPending();
    if (!lease.ok() || !recent.ok() || !pending.ok()) {
        std::cerr << "runplanectl alerts status: "
                  << (!lease.ok()    ? lease.error()
                      : !recent.ok() ? recent.error()
                                     : pending.error())
                  << "\n";
        context.exitCode = 2;
        return;
    }
    const std::int64_t now = alerts::unixNowNs();
    if (o.json) {
        json j = {{"history", o.history}, {"pending", *pending}, {"deliveries", json::array()}};
        if (*lease) {
            j["sender"] = {{"holder", (*lease)->first},
                           {"expires_ns", (*lease)->second},
                           {"active", (*lease)->second > now}};
        }
        for (const auto& d : *recent) {
            j["deliveries"].push_back({{"id", d.id},
                                       {"event_id", d.eventId},
                                       {"rule", d.rule},
                                       {"destination", d.destination},
                                       {"state", db::toString(d.state)},
                                       {"attempts", d.attempts},
                                       {"created_ns", d.createdNs},
                                       {"done_ns", d.doneNs},
                                       {"next_ns", d.nextNs},
                                       {"result", d.result}});
        }
        std::cout << j.dump(2) << "\n";
        return;
    }
    if (*lease && (*lease)->second > now) {
        std::cout << "sender: " << (*lease)->first << " (lease until " << timeText((*lease)->second)
                  << ")\n";
    } else {
        std::cout << "sender: none running\n";
    }
    std::cout << "pending: " << *pending << "\n";
    if (recent->empty()) {
        std::cout << "no deliveries yet\n";
        return;
    }
    std::cout << std::left << std::setw(20) << "created" << std::setw(8) << "event" << std::setw(18)
              << "rule" << std::setw(18) << "destination" << std::setw(11) << "state"
              << std::setw(9) << "attempts"
              << "result\n";
    for (const auto& d : *recent) {
        std::cout << std::setw(20) << timeText(d.createdNs) << std::setw(8) << d.eventId
                  << std::setw(18) << d.rule << std::setw(18) << d.destination << std::setw(11)
                  << db::toString(d.state) << std::setw(9) << d.attempts << d.result.substr(0, 100)
                  << "\n";
    }
}

void runSend(const AlertsOptions& o, cli::CliContext& context) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    auto rules = rulesFor(o);
    if (!rules.ok()) {
        std::cerr << "runplanectl alerts run: " << rules.error() << "\n";
        context.exitCode = 2;
        return;
    }
    alerts::SenderOptions options;
    options.historyPath = o.history;
    options.rules = std::move(*rules);
    if (const char* ttl = std::getenv("RUNPLANE_ALERT_LEASE_SECONDS")) {
        // Tests shorten the lease so that a killed sender's successor takes over quickly.
        if (auto d = alerts::parseDuration(ttl)) {
            options.leaseTtlNs = *d;
        }
    }
    options.poll = std::chrono::milliseconds(100);
    options.onLog = [](const std::string& line) {
        std::cerr << "runplanectl " << line << std::endl;
    };
    alerts::AlertSender sender(std::move(options));
    if (Status s = sender.start(); !s.ok()) {
        std::cerr << "runplanectl alerts run: " << s.error() << "\n";
        context.exitCode = 2;
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(o.seconds * 1000));
    while (o.seconds <= 0 || std::chrono::steady_clock::now() < deadline) {
        timespec wait{0, 100'000'000};
        if (sigtimedwait(&signals, nullptr, &wait) > 0) {
            break;
        }
    }
    sender.stop();
    const auto stats = sender.stats();
    std::cerr << "runplanectl alerts run: " << stats.sent << " sent, " << stats.failed
              << " failed, " << stats.suppressed << " suppressed, " << stats.attempts << " attempts"
              << std::endl;
}

const bool kAlertsGroup = cli::registerCommands([](CLI::App& app, cli::CliContext& context) {
    auto* group = app.add_subcommand(
        "alerts", "Alerts to Slack, Discord, webhooks and commands from the history's events");
    group->require_subcommand(1);
    auto options = std::make_shared<AlertsOptions>();
    options->history = control::defaultHistoryPath();
    const std::string fileHelp = "Rules file (default " + alerts::defaultAlertsPath() + ")";

    auto* check = group->add_subcommand("check", "Read a rules file and list what it sends where");
    check->add_option("--alerts", options->file, fileHelp);
    check->callback([options, &context] { runCheck(*options, context); });

    auto* test = group->add_subcommand(
        "test", "Send a test message to each destination and print what came back");
    test->add_option("--alerts", options->file, fileHelp);
    test->add_flag("--json", options->json, "Print JSON");
    test->callback([options, &context] { runTest(*options, context); });

    auto* status = group->add_subcommand("status", "Show the sender and the last deliveries");
    status->add_option("--history", options->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    status->add_option("--limit", options->limit, "Deliveries to show")
        ->check(CLI::Range(1, 100000));
    status->add_flag("--json", options->json, "Print JSON");
    status->callback([options, &context] { runStatus(*options, context); });

    auto* run = group->add_subcommand(
        "run", "Send alerts for what the history stores, until Ctrl-C (no ingest of its own)");
    run->add_option("--alerts", options->file, fileHelp);
    run->add_option("--history", options->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    run->add_option("--seconds", options->seconds, "Stop after N seconds (0: until Ctrl-C)");
    run->callback([options, &context] { runSend(*options, context); });
});

}  // namespace
