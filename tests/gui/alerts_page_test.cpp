// issue 48: the Alerts page against REAL receivers and a REAL history. Two HTTP receivers on
// loopback (cpp-httplib's server, tests/alerts/receiver.h): one accepts (200), one answers 500.
// A rules file (chmod 600, URLs inline) sends process_exit events to the first and stall events
// to the second; a real AlertSender delivers stored events through them into the history's alert
// tables. The page must list the destinations (never their URLs) and rules, show each rule's last
// deliveries with their state and result, and "Send test" must send a test message to each
// destination off the GUI thread and report delivered / the error per destination.
// Saves screenshot alerts.png.
#include <gtest/gtest.h>

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>

#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backend/alerts/rules.h"
#include "backend/alerts/sender.h"
#include "db/history/alert_store.h"
#include "db/history/history.h"
#include "gui/pages/alerts_page.h"
#include "tests/alerts/receiver.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;
using runplane::testing::Answer;
using runplane::testing::ReceivedRequest;
using runplane::testing::Receiver;

namespace {

std::string writeFile(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const std::string path = dir.filePath(QString::fromLatin1(name)).toStdString();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0600);
    return path;
}

void ingest(const std::string& history, std::uint64_t& seq, const std::string& kind,
            const std::string& message, const db::EventAttrs& attrs) {
    auto h = db::History::open(history);
    ASSERT_TRUE(h.ok()) << h.error();
    db::IngestBatch batch;
    batch.nodeId = NodeId("node-a");
    batch.incarnation = 1;
    db::IngestEvent e;
    e.seq = ++seq;
    e.tNs = alerts::unixNowNs();
    e.runId = RunId("r1");
    e.kind = kind;
    e.message = message;
    e.attrs = attrs;
    batch.events.push_back(e);
    batch.throughSeq = seq;
    auto r = (*h)->ingest(batch);
    ASSERT_TRUE(r.ok()) << r.error();
}

int row(QTableWidget* t, const QString& first) {
    for (int r = 0; r < t->rowCount(); ++r) {
        if (t->item(r, 0) != nullptr && t->item(r, 0)->text() == first) {
            return r;
        }
    }
    return -1;
}

QString text(QTableWidget* t, int r, int c) {
    return t->item(r, c) != nullptr ? t->item(r, c)->text() : QString();
}

}  // namespace

TEST(AlertsPage, ListsRulesAndTheirDeliveriesAndSendsATestToEachDestination) {
    Receiver good;  // 200 "ok"
    Receiver broken([](int, const ReceivedRequest&) { return Answer{500, "boom", ""}; });
    QTemporaryDir dir;
    const std::string rulesPath = writeFile(dir, "alerts.yaml", R"(destinations:
  - name: ops-hook
    type: webhook
    url: )" + good.url("/hook") + R"(
    timeout: 5s
  - name: flaky-hook
    type: webhook
    url: )" + broken.url("/flaky") + R"(
    timeout: 2s
delivery:
  backoff_base: 30s
rules:
  - name: failures
    events: [process_exit]
    runs:
      names: ["prod-*"]
    min_level: error
    rate_limit: 10/1h
    quiet: 15m
    to: [ops-hook]
  - name: stalls
    events: [stall]
    to: flaky-hook
)");

    // A real history with a run; the sender's cursor set before anything is stored.
    const std::string history = dir.filePath(QStringLiteral("history.sqlite")).toStdString();
    {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        db::RunRecord run;
        run.id = RunId("r1");
        run.name = "prod-7b";
        run.startedNs = 1;
        ASSERT_TRUE((*h)->upsertRun(run).ok());
        auto store = db::AlertStore::open(history);
        ASSERT_TRUE(store.ok()) << store.error();
        ASSERT_TRUE((*store)->cursor(alerts::unixNowNs()).ok());
    }
    std::uint64_t seq = 0;
    ingest(history, seq, "process_exit", "run r1 exited: exit code 1",
           {{"exit_code", "1"}, {"pid", "4242"}});
    ingest(history, seq, "stall", "no progress for 600 s", {});
    {
        auto rules = alerts::loadAlertRules(rulesPath);
        ASSERT_TRUE(rules.ok()) << rules.error();
        alerts::SenderOptions o;
        o.historyPath = history;
        o.rules = *rules;
        o.poll = std::chrono::milliseconds(50);
        alerts::AlertSender sender(std::move(o));
        ASSERT_TRUE(sender.start().ok());
        ASSERT_TRUE(waitUntil([&] { return good.arrived() == 1 && broken.arrived() >= 1; }, 20000));
        ASSERT_TRUE(waitUntil([&] { return sender.stats().sent == 1; }, 5000));
        sender.stop();
    }

    AlertsPage page(QString::fromStdString(history), QString::fromStdString(rulesPath));
    page.resize(1500, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.configsApplied() >= 1 && page.statusesApplied() >= 1; },
                          10000));
    EXPECT_TRUE(page.fileStatus()->text().contains(QStringLiteral("2 destination(s), 2 rule(s)")))
        << page.fileStatus()->text().toStdString();

    // Destinations by name and type; the URLs are secrets and never shown.
    QTableWidget* destinations = page.destinationsTable();
    ASSERT_EQ(destinations->rowCount(), 2);
    const int ops = row(destinations, QStringLiteral("ops-hook"));
    const int flaky = row(destinations, QStringLiteral("flaky-hook"));
    ASSERT_GE(ops, 0);
    ASSERT_GE(flaky, 0);
    EXPECT_EQ(text(destinations, ops, 1), QStringLiteral("webhook"));
    EXPECT_EQ(text(destinations, ops, 2), QStringLiteral("URL (a secret: not shown)"));
    EXPECT_EQ(text(destinations, flaky, 3), QStringLiteral("2s"));

    // Rules, each with its last delivery from the history.
    QTableWidget* rules = page.rulesTable();
    ASSERT_EQ(rules->rowCount(), 2);
    const int failures = row(rules, QStringLiteral("failures"));
    const int stalls = row(rules, QStringLiteral("stalls"));
    ASSERT_GE(failures, 0);
    ASSERT_GE(stalls, 0);
    EXPECT_EQ(text(rules, failures, 1), QStringLiteral("events process_exit"));
    EXPECT_EQ(text(rules, failures, 2), QStringLiteral("runs prod-*"));
    EXPECT_EQ(text(rules, failures, 3), QStringLiteral("error"));
    EXPECT_EQ(text(rules, failures, 4), QStringLiteral("10/1h"));
    EXPECT_EQ(text(rules, failures, 5), QStringLiteral("15m"));
    EXPECT_EQ(text(rules, failures, 6), QStringLiteral("ops-hook"));
    EXPECT_EQ(text(rules, failures, 7), QStringLiteral("1 sent"));
    EXPECT_TRUE(text(rules, failures, 8).startsWith(QStringLiteral("sent · ops-hook · ")));
    EXPECT_TRUE(text(rules, failures, 8).contains(QStringLiteral("HTTP 200")))
        << text(rules, failures, 8).toStdString();
    EXPECT_EQ(text(rules, stalls, 7), QStringLiteral("1 pending"));
    EXPECT_TRUE(text(rules, stalls, 8).contains(QStringLiteral("HTTP 500")))
        << text(rules, stalls, 8).toStdString();
    EXPECT_TRUE(page.senderStatus()->text().contains(QStringLiteral("1 pending")))
        << page.senderStatus()->text().toStdString();

    // All deliveries, then those of the chosen rule.
    QTableWidget* deliveries = page.deliveriesTable();
    EXPECT_EQ(deliveries->rowCount(), 2);
    rules->selectRow(stalls);
    ASSERT_EQ(deliveries->rowCount(), 1);
    EXPECT_EQ(text(deliveries, 0, 1), QStringLiteral("stalls"));
    EXPECT_EQ(text(deliveries, 0, 2), QStringLiteral("flaky-hook"));
    EXPECT_EQ(text(deliveries, 0, 3), QStringLiteral("pending"));
    EXPECT_GE(text(deliveries, 0, 4).toInt(), 1);
    EXPECT_TRUE(text(deliveries, 0, 7).contains(QStringLiteral("HTTP 500")));

    // Send test: busy at once, then per destination what came back.
    const int goodBefore = good.arrived();
    const int brokenBefore = broken.arrived();
    ASSERT_TRUE(page.testButton()->isEnabled());
    const auto clicked = std::chrono::steady_clock::now();
    page.testButton()->click();
    EXPECT_LT(std::chrono::steady_clock::now() - clicked, std::chrono::milliseconds(500));
    EXPECT_TRUE(page.isTesting());
    EXPECT_FALSE(page.testButton()->isEnabled());
    ASSERT_TRUE(waitUntil([&] { return page.testsDone() == 1; }, 20000));
    EXPECT_TRUE(page.testButton()->isEnabled());
    EXPECT_TRUE(text(destinations, ops, 4).startsWith(QStringLiteral("delivered · HTTP 200")))
        << text(destinations, ops, 4).toStdString();
    EXPECT_TRUE(text(destinations, flaky, 4).startsWith(QStringLiteral("NOT delivered · HTTP 500")))
        << text(destinations, flaky, 4).toStdString();
    EXPECT_TRUE(destinations->item(flaky, 4)->toolTip().contains(QStringLiteral("boom")));
    const QString status = page.testStatus()->text();
    EXPECT_TRUE(status.startsWith(QStringLiteral("1 of 2 destination(s) delivered")))
        << status.toStdString();
    EXPECT_TRUE(status.contains(QStringLiteral("flaky-hook (HTTP 500"))) << status.toStdString();

    // The receivers got the test payload (type "test", the destination's name).
    ASSERT_EQ(good.arrived(), goodBefore + 1);
    ASSERT_GE(broken.arrived(), brokenBefore + 1);
    const auto got = good.requests().back();
    EXPECT_EQ(got.path, "/hook");
    const auto payload = nlohmann::json::parse(got.body);
    EXPECT_EQ(payload.at("schema"), "runplane.alert.v1");
    EXPECT_EQ(payload.at("type"), "test");
    EXPECT_NE(payload.dump().find("ops-hook"), std::string::npos) << payload.dump();

    // No URL (a secret) anywhere on the page.
    const QString shown = page.shownText();
    EXPECT_FALSE(shown.contains(QString::fromStdString(good.url("/hook")))) << shown.toStdString();
    EXPECT_FALSE(shown.contains(QStringLiteral("/flaky"))) << shown.toStdString();

    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("alerts.png"))));
}

TEST(AlertsPage, SaysWhenThereIsNoRulesFileAndNamesTheFaultInABrokenOne) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    const QString missing = dir.filePath(QStringLiteral("none.yaml"));
    AlertsPage page(history, missing);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.configsApplied() >= 1; }, 10000));
    EXPECT_TRUE(page.fileStatus()->text().startsWith(QStringLiteral("No rules file at ") + missing))
        << page.fileStatus()->text().toStdString();
    EXPECT_FALSE(page.testButton()->isEnabled());
    EXPECT_EQ(page.rulesTable()->rowCount(), 0);
    ASSERT_TRUE(waitUntil([&] { return page.statusesApplied() >= 1; }, 10000));
    EXPECT_TRUE(page.senderStatus()->text().startsWith(QStringLiteral("No history at ")));

    // A misspelt key: refused with file:line:col, as the CLI says it.
    const std::string broken = writeFile(dir, "broken.yaml",
                                         "destinations:\n  - name: a\n    type: command\n"
                                         "    argv: [/bin/true]\nrules:\n  - name: r\n"
                                         "    evnts: [stall]\n    to: a\n");
    const int before = page.configsApplied();
    page.setAlertsFile(QString::fromStdString(broken));
    ASSERT_TRUE(waitUntil([&] { return page.configsApplied() > before; }, 10000));
    const QString status = page.fileStatus()->text();
    EXPECT_TRUE(status.contains(QStringLiteral("broken.yaml:7:5")) &&
                status.contains(QStringLiteral("evnts")))
        << status.toStdString();
    EXPECT_FALSE(page.testButton()->isEnabled());
}
