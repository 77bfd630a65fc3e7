// issue 18, GUI half: the "Add cluster…" dialog builds and saves a cluster profile the CLI's
// loader reads back, and the Cluster page reaches REAL runplaned daemons that require TLS (even
// on loopback) with that profile's CA, token and client certificate; a wrong token shows the
// daemon's whole refusal in the row's tooltip. Certificates come from control::initCluster (the
// code behind `runplanectl cluster init`). Profiles go to a throw-away $XDG_CONFIG_HOME.
// Saves screenshots add-cluster.png and cluster-tls.png.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLineEdit>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>

#include "backend/control/cluster_certs.h"
#include "backend/control/cluster_profile.h"
#include "gui/models/cluster_connection.h"
#include "gui/models/log_tailer.h"
#include "gui/models/node_table_model.h"
#include "gui/pages/add_cluster_dialog.h"
#include "gui/pages/cluster_page.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

void screenshot(QWidget& w, const QString& name) {
    const QPixmap shot = w.grab();
    ASSERT_FALSE(shot.isNull());
    EXPECT_TRUE(shot.save(test::screenshotPath(name)));
}

class ClusterTls : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(m_dir.isValid());
        qputenv("XDG_CONFIG_HOME", m_dir.filePath(QStringLiteral("config")).toLocal8Bit());
        control::ClusterInitOptions init;
        init.hosts = {"127.0.0.1"};
        init.outDir = pki().toStdString();
        init.name = "certs";
        auto r = control::initCluster(init);
        ASSERT_TRUE(r.ok()) << r.error();
        QFile wrong(m_dir.filePath(QStringLiteral("wrong-token")));
        ASSERT_TRUE(wrong.open(QIODevice::WriteOnly));
        wrong.write("0123456789abcdef0123456789abcdef\n");
    }
    void TearDown() override {
        qunsetenv("XDG_CONFIG_HOME");
        setActiveClientOptions({});
    }
    QString pki() const { return m_dir.filePath(QStringLiteral("pki")); }
    QString f(const QString& name) const { return pki() + QLatin1Char('/') + name; }
    QString wrongToken() const { return m_dir.filePath(QStringLiteral("wrong-token")); }
    QString history() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }
    /// runplaned that refuses plaintext even on loopback, with a bearer token (and mTLS).
    QStringList serverFlags(bool mutualTls) const {
        QStringList flags{QStringLiteral("--require-tls"),
                          QStringLiteral("--tls-cert"),
                          f(QStringLiteral("server-127.0.0.1.pem")),
                          QStringLiteral("--tls-key"),
                          f(QStringLiteral("server-127.0.0.1.key")),
                          QStringLiteral("--token-file"),
                          f(QStringLiteral("token"))};
        if (mutualTls) {
            flags << QStringLiteral("--tls-client-ca") << f(QStringLiteral("ca.pem"));
        }
        return flags;
    }
    /// Fills the dialog the way a user would.
    void fill(AddClusterDialog& d, const QString& name, const QString& nodes, bool mutualTls,
              const QString& tokenFile) const {
        d.nameEdit()->setText(name);
        d.nodesEdit()->setPlainText(nodes);
        d.caEdit()->setText(f(QStringLiteral("ca.pem")));
        if (mutualTls) {
            d.certEdit()->setText(f(QStringLiteral("client.pem")));
            d.keyEdit()->setText(f(QStringLiteral("client.key")));
        }
        d.tokenFileEdit()->setText(tokenFile);
        d.telemetryHzEdit()->setValue(5);
    }

    QTemporaryDir m_dir;
};

}  // namespace

TEST_F(ClusterTls, DialogBuildsAndSavesAProfileTheCliLoaderReadsBack) {
    AddClusterDialog d;
    fill(d, QStringLiteral("lab"), QStringLiteral("127.0.0.1:7070 n1 head\n\n10.0.0.2:7070 n2\n"),
         true, f(QStringLiteral("token")));
    d.serverNameEdit()->setText(QStringLiteral("gpu.example"));
    auto p = d.profile();
    ASSERT_TRUE(p.ok()) << p.error();
    ASSERT_EQ(p->nodes.size(), 2u);
    EXPECT_EQ(p->nodes[0].address, "127.0.0.1:7070");
    EXPECT_EQ(p->nodes[0].name, "n1");
    EXPECT_EQ(p->nodes[0].role, "head");
    EXPECT_EQ(p->nodes[1].name, "n2");
    EXPECT_EQ(p->nodes[1].role, "");
    EXPECT_EQ(p->tlsCa, f(QStringLiteral("ca.pem")).toStdString());
    EXPECT_EQ(p->tlsCert, f(QStringLiteral("client.pem")).toStdString());
    EXPECT_EQ(p->tlsKey, f(QStringLiteral("client.key")).toStdString());
    EXPECT_EQ(p->tokenFile, f(QStringLiteral("token")).toStdString());
    EXPECT_EQ(p->tlsServerName, "gpu.example");
    EXPECT_DOUBLE_EQ(p->telemetryHz, 5);

    auto saved = d.save(false);
    ASSERT_TRUE(saved.ok()) << saved.error();
    EXPECT_EQ(*saved, m_dir.filePath(QStringLiteral("config/runplane/clusters/lab.yaml")));
    // The file holds the token FILE, never the token.
    QFile file(*saved);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray yaml = file.readAll();
    QFile tokenFile(f(QStringLiteral("token")));
    ASSERT_TRUE(tokenFile.open(QIODevice::ReadOnly));
    EXPECT_FALSE(yaml.contains(tokenFile.readAll().trimmed()));
    // What `runplanectl --cluster lab` loads is what the dialog described.
    auto loaded = control::loadClusterProfile("lab");
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    ASSERT_EQ(loaded->nodes.size(), 2u);
    EXPECT_EQ(loaded->nodes[0].role, "head");
    EXPECT_EQ(loaded->nodes[1].address, "10.0.0.2:7070");
    EXPECT_EQ(loaded->tlsCa, p->tlsCa);
    EXPECT_EQ(loaded->tlsCert, p->tlsCert);
    EXPECT_EQ(loaded->tlsKey, p->tlsKey);
    EXPECT_EQ(loaded->tokenFile, p->tokenFile);
    EXPECT_EQ(loaded->tlsServerName, "gpu.example");
    EXPECT_DOUBLE_EQ(loaded->telemetryHz, 5);
    EXPECT_EQ(listClusterProfileNames(), QStringList{QStringLiteral("lab")});
    // Saving again does not silently replace it.
    auto again = d.save(false);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().find("exists"), std::string::npos) << again.error();
}

TEST_F(ClusterTls, DialogRefusesBadInputNamingTheField) {
    AddClusterDialog d;
    fill(d, QStringLiteral("lab"), QStringLiteral("127.0.0.1:7070\nnot-an-address\n"), false,
         f(QStringLiteral("token")));
    auto p = d.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("Nodes, line 2: 'not-an-address' is not HOST:PORT"), std::string::npos)
        << p.error();

    d.nodesEdit()->setPlainText(QStringLiteral("10.0.0.1:7070"));
    d.caEdit()->clear();
    p = d.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("CA bundle: 10.0.0.1:7070 is not a loopback address"),
              std::string::npos)
        << p.error();

    d.caEdit()->setText(f(QStringLiteral("ca.pem")));
    d.certEdit()->setText(f(QStringLiteral("client.pem")));
    p = d.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("give both"), std::string::npos) << p.error();

    d.certEdit()->clear();
    d.tokenFileEdit()->setText(m_dir.filePath(QStringLiteral("missing")));
    p = d.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("Token file: "), std::string::npos) << p.error();
    EXPECT_NE(p.error().find("not a readable file"), std::string::npos) << p.error();

    d.tokenFileEdit()->setText(f(QStringLiteral("token")));
    d.nameEdit()->setText(QStringLiteral("../evil"));
    p = d.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("Name: '../evil'"), std::string::npos) << p.error();
}

TEST_F(ClusterTls, TestConnectionAsksEveryNodeFromAWorkerAndShowsEachResult) {
    test::DaemonProcess daemon(QStringLiteral("tls-node"), 10, serverFlags(false));
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    AddClusterDialog d;
    // The real daemon, and a port where nothing listens.
    fill(d, QStringLiteral("lab"), daemon.address() + QStringLiteral(" good\n127.0.0.1:1 gone\n"),
         false, f(QStringLiteral("token")));
    d.testButton()->click();
    EXPECT_TRUE(d.testRunning());  // the GUI thread returned at once
    ASSERT_TRUE(waitUntil([&] { return !d.testRunning(); }, 20000));
    ASSERT_EQ(d.results()->rowCount(), 2);
    const QString good = d.results()->item(0, 1)->text();
    EXPECT_TRUE(good.startsWith(QStringLiteral("ok (TLS + token)"))) << good.toStdString();
    EXPECT_TRUE(good.contains(QStringLiteral("tls-node"))) << good.toStdString();
    const QString gone = d.results()->item(1, 1)->text();
    EXPECT_FALSE(gone.startsWith(QStringLiteral("ok"))) << gone.toStdString();
    EXPECT_TRUE(gone.contains(QStringLiteral("127.0.0.1:1"))) << gone.toStdString();
    EXPECT_EQ(d.results()->item(1, 1)->toolTip(), gone);
    d.show();
    screenshot(d, QStringLiteral("add-cluster.png"));

    // A wrong token: the daemon's refusal, whole.
    d.nodesEdit()->setPlainText(daemon.address());
    d.tokenFileEdit()->setText(wrongToken());
    d.testButton()->click();
    ASSERT_TRUE(waitUntil([&] { return !d.testRunning(); }, 20000));
    const QString refused = d.results()->item(0, 1)->text();
    EXPECT_TRUE(refused.contains(QString::fromLatin1(control::kAuthenticationFailed)))
        << refused.toStdString();
}

TEST_F(ClusterTls, ClusterPageConnectsWithTheSavedProfileAndShowsTheTlsState) {
    test::DaemonProcess daemon(QStringLiteral("mtls-node"), 10, serverFlags(true));
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    ClusterPage page(history());
    page.resize(1200, 700);
    page.show();
    NodeTableModel* model = page.model();

    // Plaintext (no cluster): the daemon that requires TLS refuses, and the row says so.
    ASSERT_TRUE(page.addAddress(daemon.address()));
    EXPECT_EQ(model->row(0).security, QStringLiteral("plaintext (loopback)"));
    ASSERT_TRUE(waitUntil([&] { return !model->row(0).error.isEmpty(); }, 20000));
    EXPECT_NE(model->row(0).state, QStringLiteral("streaming"));

    // "Add cluster…" → Save: the profile is written, listed in the picker and used at once.
    AddClusterDialog* dialog = page.openAddClusterDialog();
    fill(*dialog, QStringLiteral("lab"), daemon.address() + QStringLiteral(" n1 head"), true,
         f(QStringLiteral("token")));
    dialog->saveButton()->click();
    EXPECT_EQ(page.currentCluster(), QStringLiteral("lab"));
    EXPECT_GE(page.clusterPicker()->findData(QStringLiteral("lab")), 0);
    EXPECT_EQ(page.clusterPicker()->currentData().toString(), QStringLiteral("lab"));
    ASSERT_EQ(model->rowCount(), 1);
    ASSERT_TRUE(waitUntil(
        [&] {
            return model->row(0).state == QStringLiteral("streaming") &&
                   model->row(0).nodeId == QStringLiteral("mtls-node");
        },
        20000))
        << model->row(0).state.toStdString() << " " << model->row(0).error.toStdString();
    EXPECT_EQ(model->row(0).security, QStringLiteral("mTLS + token"));
    EXPECT_EQ(model->index(0, NodeTableModel::SecurityColumn).data().toString(),
              QStringLiteral("mTLS + token"));
    // The Runs page's log tailer uses the same settings.
    EXPECT_EQ(activeClientOptions().tlsCertFile, f(QStringLiteral("client.pem")).toStdString());
    EXPECT_FALSE(activeClientOptions().bearerToken.empty());
    test::pump(1500);
    screenshot(page, QStringLiteral("cluster-tls.png"));
    delete dialog;
}

TEST_F(ClusterTls, WrongTokenShowsTheWholeErrorInTheTooltipThenTheRightOneConnects) {
    test::DaemonProcess daemon(QStringLiteral("tls-node"), 10, serverFlags(false));
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    const QString profile = m_dir.filePath(QStringLiteral("wrong.yaml"));
    control::ClusterProfile p;
    p.nodes.push_back({daemon.address().toStdString(), "n1", ""});
    p.tlsCa = f(QStringLiteral("ca.pem")).toStdString();
    p.tokenFile = wrongToken().toStdString();
    ASSERT_TRUE(writeClusterProfile(profile, p, false).ok());

    ClusterPage page(history());
    page.show();
    ASSERT_TRUE(page.useCluster(profile).ok());
    NodeTableModel* model = page.model();
    ASSERT_EQ(model->rowCount(), 1);
    ASSERT_TRUE(waitUntil([&] { return !model->row(0).error.isEmpty(); }, 20000));
    EXPECT_EQ(model->row(0).security, QStringLiteral("TLS + token"));
    const QString error = model->row(0).error;
    EXPECT_TRUE(error.contains(QString::fromLatin1(control::kAuthenticationFailed)))
        << error.toStdString();
    EXPECT_TRUE(error.contains(daemon.address())) << error.toStdString();
    for (int c = 0; c < NodeTableModel::ColumnCount; ++c) {
        const QString tip = model->index(0, c).data(Qt::ToolTipRole).toString();
        EXPECT_TRUE(tip.contains(error)) << c << ": " << tip.toStdString();  // whole, not elided
    }
    EXPECT_TRUE(model->index(0, NodeTableModel::StateColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("connection: TLS + token")));

    // The right token, same address: the page switches clusters and the row streams.
    const QString right = m_dir.filePath(QStringLiteral("right.yaml"));
    p.tokenFile = f(QStringLiteral("token")).toStdString();
    ASSERT_TRUE(writeClusterProfile(right, p, false).ok());
    ASSERT_TRUE(page.useCluster(right).ok());
    ASSERT_EQ(model->rowCount(), 1);
    ASSERT_TRUE(waitUntil(
        [&] {
            return model->row(0).state == QStringLiteral("streaming") &&
                   model->row(0).nodeId == QStringLiteral("tls-node");
        },
        20000))
        << model->row(0).state.toStdString() << " " << model->row(0).error.toStdString();
    EXPECT_TRUE(model->row(0).error.isEmpty()) << model->row(0).error.toStdString();
    EXPECT_EQ(model->row(0).security, QStringLiteral("TLS + token"));
    test::pump(500);  // nothing late from the wrong-token controller overwrites the row
    EXPECT_EQ(model->row(0).state, QStringLiteral("streaming"));

    // A profile that does not load leaves the page as it was and says where it is wrong.
    const QString broken = m_dir.filePath(QStringLiteral("broken.yaml"));
    QFile b(broken);
    ASSERT_TRUE(b.open(QIODevice::WriteOnly));
    b.write("nodes:\n  - address: nohostport\n");
    b.close();
    auto bad = page.useCluster(broken);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("broken.yaml:2:"), std::string::npos) << bad.error();
    EXPECT_NE(bad.error().find("nodes[0].address"), std::string::npos) << bad.error();
    EXPECT_EQ(page.currentCluster(), right);
    EXPECT_EQ(model->rowCount(), 1);
}

TEST_F(ClusterTls, TheLogTailerUsesTheActiveClusterOptions) {
    test::DaemonProcess daemon(QStringLiteral("tls-node"), 10, serverFlags(false));
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    auto tail = [&] {
        LogTailer tailer;
        QString error;
        bool ended = false;
        QObject::connect(&tailer, &LogTailer::ended, [&](const QString& e) {
            error = e;
            ended = true;
        });
        tailer.start(daemon.address(), QStringLiteral("no-such-run"), false);
        EXPECT_TRUE(waitUntil([&] { return ended; }, 20000));
        return error;
    };
    // Plaintext: the TLS daemon closes the connection; no request is ever answered.
    setActiveClientOptions({});
    const QString plain = tail();
    EXPECT_TRUE(plain.contains(QStringLiteral("cannot reach"))) << plain.toStdString();
    // With the cluster's options the daemon answers the request itself: that run is unknown.
    auto connection = [&] {
        control::ClusterProfile p;
        p.path = "test";
        p.tlsCa = f(QStringLiteral("ca.pem")).toStdString();
        p.tokenFile = f(QStringLiteral("token")).toStdString();
        return clientOptionsFor(p);
    }();
    ASSERT_TRUE(connection.ok()) << connection.error();
    setActiveClientOptions(*connection);
    const QString secured = tail();
    EXPECT_FALSE(secured.contains(QStringLiteral("cannot reach"))) << secured.toStdString();
    EXPECT_FALSE(secured.contains(QString::fromLatin1(control::kAuthenticationFailed)))
        << secured.toStdString();
    EXPECT_TRUE(secured.contains(QStringLiteral("no-such-run"))) << secured.toStdString();
}
