// issue 48: `runplane --alerts FILE` and the Alerts page's read path.
//  - The flag parses (QCommandLineParser), a missing or broken rules file stops the start with
//    file:line:col (the real `runplane` binary), and the window built with it shows that file on
//    the Alerts page while the GUI's own controller sends by it: an event stored in the history
//    reaches a real HTTP receiver on loopback.
//  - A history older than the alert tables (schema version 8, made by the shipped migrations) is
//    shown by the Alerts page without being migrated or written.
#include <gtest/gtest.h>

#include <QCryptographicHash>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <sys/stat.h>

#include <fstream>

#include "backend/alerts/sender.h"
#include "db/history/alert_store.h"
#include "db/history/history.h"
#include "db/history/schema.h"
#include "db/sqlite/sqlite.h"
#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/command_line.h"
#include "gui/app/main_window.h"
#include "gui/models/alerts_data.h"
#include "gui/models/cluster_service.h"
#include "gui/pages/alerts_page.h"
#include "gui/pages/cluster_page.h"
#include "tests/alerts/receiver.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;
using runplane::testing::Receiver;

namespace {

QString writeRules(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const QString path = dir.filePath(QString::fromLatin1(name));
    std::ofstream(path.toStdString()) << text;
    ::chmod(path.toLocal8Bit().constData(), 0600);
    return path;
}

QString runplaneBinary() {
    return test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/gui/app/runplane");
}

template <typename P>
P* findPage(MainWindow& w) {
    for (int i = 0; i < w.tabs()->count(); ++i) {
        if (auto* p = qobject_cast<P*>(w.tabs()->widget(i))) {
            return p;
        }
    }
    return nullptr;
}

QByteArray sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

std::int64_t schemaVersionOf(const std::string& path) {
    sqlite::Database::Options o;
    o.readOnly = true;
    o.wal = false;
    auto db = sqlite::Database::open(path, o);
    EXPECT_TRUE(db.ok());
    auto q = (*db)->prepare("SELECT max(version) FROM schema_version;");
    EXPECT_TRUE(q.ok());
    EXPECT_TRUE(q->step().ok());
    return q->columnInt(0);
}

}  // namespace

TEST(AlertsOption, ParsesAndIsInTheUsage) {
    auto o = parseCommandLine(
        {QStringLiteral("runplane"), QStringLiteral("--alerts"), QStringLiteral("/x/rules.yaml")});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->alertsFile, QStringLiteral("/x/rules.yaml"));
    auto none = parseCommandLine({QStringLiteral("runplane")});
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->alertsFile.isEmpty());
    auto missing = parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--alerts")});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), "--alerts: expects an alert rules file path");
    auto flag = parseCommandLine({QStringLiteral("runplane"), QStringLiteral("--alerts"),
                                  QStringLiteral("--connect"), QStringLiteral("127.0.0.1:1")});
    ASSERT_FALSE(flag);
    EXPECT_EQ(flag.error(), "--alerts: expects an alert rules file path");
    EXPECT_TRUE(usageText().contains(QStringLiteral("--alerts FILE")));
}

TEST(AlertsOption, AMissingOrBrokenRulesFileStopsTheStartNamingThePlace) {
    QTemporaryDir dir;
    const QString broken = writeRules(dir, "broken.yaml",
                                      "destinations:\n"
                                      "  - name: ops\n"
                                      "    type: webhook\n"
                                      "    url: http://127.0.0.1:9/hook\n"
                                      "rules:\n"
                                      "  - name: r\n"
                                      "    evnts: [stall]\n"
                                      "    to: ops\n");
    const QString missing = dir.filePath(QStringLiteral("nowhere.yaml"));
    for (const QString& file : {broken, missing}) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        p.setProcessEnvironment(env);
        p.start(runplaneBinary(),
                {QStringLiteral("--history"), dir.filePath(QStringLiteral("h.sqlite")),
                 QStringLiteral("--alerts"), file});
        ASSERT_TRUE(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        EXPECT_EQ(p.exitCode(), 2) << err.toStdString();
        if (file == broken) {
            EXPECT_TRUE(err.contains(QStringLiteral("runplane: --alerts: ") + broken + ":7:5"))
                << err.toStdString();
            EXPECT_TRUE(err.contains(QStringLiteral("evnts"))) << err.toStdString();
        } else {
            EXPECT_TRUE(err.contains(QStringLiteral("runplane: --alerts: ") + missing +
                                     QStringLiteral(": no such file")))
                << err.toStdString();
        }
        EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("h.sqlite"))));
    }
}

// createMainWindow as `runplane --alerts FILE` builds it: the Alerts page shows FILE, and the
// controller (ClusterPage's service) sends by it, with no daemon connected: what the history
// stores is what is sent.
TEST(AlertsOption, TheWindowShowsAndSendsByTheGivenRulesFile) {
    Receiver receiver;  // 200 "ok"
    QTemporaryDir dir;
    qputenv("XDG_CONFIG_HOME", dir.filePath(QStringLiteral("config")).toLocal8Bit());
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    const QString rules = writeRules(dir, "team-alerts.yaml", R"(destinations:
  - name: team-hook
    type: webhook
    url: )" + receiver.url("/team") + R"(
rules:
  - name: exits
    events: [process_exit]
    to: team-hook
)");
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    auto w = createMainWindow(history, {}, {}, rules);
    auto* alertsPage = findPage<AlertsPage>(*w);
    auto* cluster = findPage<ClusterPage>(*w);
    ASSERT_NE(alertsPage, nullptr);
    ASSERT_NE(cluster, nullptr);
    EXPECT_EQ(alertsPage->alertsFile(), rules);
    EXPECT_EQ(cluster->service()->alertsFile(), rules);
    alertsPage->reload();
    ASSERT_TRUE(waitUntil([&] { return alertsPage->configsApplied() >= 1; }, 10000));
    ASSERT_EQ(alertsPage->destinationsTable()->rowCount(), 1);
    EXPECT_EQ(alertsPage->destinationsTable()->item(0, 0)->text(), QStringLiteral("team-hook"));
    EXPECT_FALSE(alertsPage->shownText().contains(QString::fromStdString(receiver.url(""))));

    // The controller's sender holds the history's lease (it started with this file) ...
    ASSERT_TRUE(waitUntil(
        [&] {
            auto store = db::AlertStore::openReadOnly(history.toStdString());
            if (!store.ok() || !*store) {
                return false;
            }
            auto lease = (**store).lease();
            return lease.ok() && lease->has_value();
        },
        20000));
    // ... and an event stored now reaches the receiver.
    {
        auto h = db::History::open(history.toStdString());
        ASSERT_TRUE(h.ok()) << h.error();
        db::IngestBatch batch;
        batch.nodeId = NodeId("node-a");
        batch.incarnation = 1;
        db::IngestEvent e;
        e.seq = 1;
        e.tNs = alerts::unixNowNs();
        e.runId = RunId("r-exit");
        e.kind = "process_exit";
        e.message = "run r-exit exited: exit code 7";
        e.attrs = db::eventAttrs({{"exit_code", "7"}});
        batch.events.push_back(e);
        batch.throughSeq = 1;
        ASSERT_TRUE((*h)->ingest(batch).ok());
    }
    ASSERT_TRUE(waitUntil([&] { return receiver.arrived() >= 1; }, 30000));
    const auto got = receiver.requests();
    EXPECT_EQ(got.front().path, "/team");
    EXPECT_NE(got.front().body.find("run r-exit exited: exit code 7"), std::string::npos)
        << got.front().body;
    w.reset();
    AppSettings::setFileOverride(QString());
    qunsetenv("XDG_CONFIG_HOME");
}

// A history older than the alert tables: the page reads it as is (read-only connection, no
// migration, no journal-mode switch) and says why there is nothing to show.
TEST(AlertsPageReadOnly, AnOlderHistoryIsShownNotMigrated) {
    QTemporaryDir dir;
    const QString history = dir.filePath(QStringLiteral("v8.sqlite"));
    {
        auto db = sqlite::Database::open(history.toStdString());
        ASSERT_TRUE(db.ok()) << db.error();
        auto version = db::applyMigrations(**db, db::migrations().first(8), false);
        ASSERT_TRUE(version.ok()) << version.error();
        ASSERT_EQ(*version, 8);
        ASSERT_TRUE((*db)
                        ->exec("INSERT INTO runs(id, name, status, started_ns) "
                               "VALUES ('old-run', 'old-run', 'finished', 1);")
                        .ok());
    }
    ASSERT_EQ(schemaVersionOf(history.toStdString()), 8);
    const QByteArray before = sha256(history);
    ASSERT_FALSE(before.isEmpty());

    // The data function: nothing to show, and why.
    const AlertsStatus status = readAlertsStatus(history, 20);
    EXPECT_TRUE(status.historyExists);
    EXPECT_TRUE(status.error.isEmpty()) << status.error.toStdString();
    EXPECT_TRUE(status.olderSchema);
    EXPECT_EQ(status.schemaVersion, 8);

    // The page.
    AlertsPage page(history, dir.filePath(QStringLiteral("none.yaml")));
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.statusesApplied() >= 1; }, 10000));
    const QString said = page.senderStatus()->text();
    EXPECT_TRUE(said.contains(QStringLiteral("schema version 8"))) << said.toStdString();
    EXPECT_TRUE(said.contains(QStringLiteral("not upgraded"))) << said.toStdString();
    page.refreshDeliveries();
    ASSERT_TRUE(waitUntil([&] { return page.statusesApplied() >= 2; }, 10000));

    // Untouched: same version, same bytes, no alert tables.
    EXPECT_EQ(schemaVersionOf(history.toStdString()), 8);
    EXPECT_EQ(sha256(history), before);
    // A newer schema than this build: an error, not a write either.
    {
        auto db = sqlite::Database::open(history.toStdString());
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE((*db)->exec("INSERT INTO schema_version VALUES (99, 0, 'future');").ok());
    }
    const AlertsStatus newer = readAlertsStatus(history, 20);
    EXPECT_TRUE(newer.error.contains(QStringLiteral("newer than this build")))
        << newer.error.toStdString();
}
