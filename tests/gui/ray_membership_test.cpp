// issue 47: the Cluster page shows which Ray cluster / GCS each node's raylets joined, from the
// data `runplanectl dispatch preflight` computes (control::rayMembership). Against a REAL
// runplaned on loopback (asked through the page's Check button, the answer applied on the GUI
// thread) and a daemon address nobody answers on; and the model's verdicts on a three-node
// answer where one node joined a stranger's GCS: that row is red. Offscreen.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>

#include "gui/models/ray_membership_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/ray_membership_panel.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

control::NodeMembership member(const std::string& address, const std::string& ip,
                               const std::string& gcs, int pid) {
    control::NodeMembership n;
    n.address = address;
    n.reachable = true;
    n.raylets.push_back({pid, gcs, ip, "c0ffee"});
    return n;
}

}  // namespace

TEST(RayMembership, ClusterPageAsksEveryDaemonAndShowsEachNodesCluster) {
    test::DaemonProcess daemon(QStringLiteral("gui-ray-node"), 2);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 900);
    page.show();
    ASSERT_TRUE(page.addAddress(daemon.address()));
    // an address nobody answers on: its row says the daemon is lost
    ASSERT_TRUE(page.addAddress(QStringLiteral("127.0.0.1:1")));

    RayMembershipPanel* panel = page.membershipPanel();
    ASSERT_NE(panel, nullptr);
    RayMembershipModel* model = panel->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    EXPECT_EQ(model->rowCount(), 0);
    panel->checkButton()->click();
    EXPECT_TRUE(panel->busy());
    EXPECT_FALSE(panel->checkButton()->isEnabled());
    ASSERT_TRUE(waitUntil([&] { return !panel->busy(); }, 60000));
    ASSERT_EQ(model->membership().size(), 2u);
    const auto& real = model->membership()[0];
    EXPECT_EQ(real.address, daemon.address().toStdString());
    EXPECT_TRUE(real.reachable) << real.error;
    const auto& lost = model->membership()[1];
    EXPECT_FALSE(lost.reachable);
    // the rows: one per raylet the real daemon sees (none unless a Ray runs on this machine),
    // then the lost one
    ASSERT_GE(model->rowCount(), 2);
    const int last = model->rowCount() - 1;
    EXPECT_EQ(model->index(last, RayMembershipModel::NodeColumn).data().toString(),
              QStringLiteral("127.0.0.1:1"));
    EXPECT_TRUE(model->index(last, RayMembershipModel::VerdictColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("daemon lost")));
    if (real.raylets.empty()) {
        EXPECT_EQ(model->index(0, RayMembershipModel::VerdictColumn).data().toString(),
                  QStringLiteral("no raylet: not in a Ray cluster"));
        EXPECT_EQ(panel->summaryLabel()->text(),
                  QStringLiteral("2 node(s): no node is in a Ray cluster"));
    }
    EXPECT_TRUE(panel->checkButton()->isEnabled());
}

TEST(RayMembership, ARayletInAStrangersClusterIsRedAndNamed) {
    RayMembershipPanel panel;
    panel.resize(900, 300);
    panel.show();
    RayMembershipModel* model = panel.model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const std::string ours = "198.18.0.1:6379";
    const std::string stranger = "198.18.0.9:6379";
    std::vector<control::NodeMembership> nodes{
        member("198.18.0.1:7070", "198.18.0.1", ours, 101),
        member("198.18.0.2:7070", "198.18.0.2", ours, 202),
        member("198.18.0.3:7070", "198.18.0.3", stranger, 303)};
    control::NodeMembership none;
    none.address = "198.18.0.4:7070";
    none.reachable = true;
    nodes.push_back(none);
    panel.apply(nodes);

    ASSERT_EQ(model->rowCount(), 4);
    EXPECT_EQ(model->expectedGcs(), QString::fromStdString(ours));
    EXPECT_EQ(model->strangerCount(), 1);
    for (int row = 0; row < 2; ++row) {
        EXPECT_FALSE(model->index(row, 0).data(RayMembershipModel::StrangerRole).toBool());
        EXPECT_FALSE(model->index(row, 0).data(Qt::ForegroundRole).isValid());
        EXPECT_EQ(model->index(row, RayMembershipModel::GcsColumn).data().toString(),
                  QString::fromStdString(ours));
    }
    const QModelIndex bad = model->index(2, RayMembershipModel::VerdictColumn);
    EXPECT_TRUE(bad.data(RayMembershipModel::StrangerRole).toBool());
    EXPECT_EQ(bad.data().toString(),
              QStringLiteral("stranger: joined GCS 198.18.0.9:6379, not 198.18.0.1:6379"));
    const QColor red = bad.data(Qt::ForegroundRole).value<QBrush>().color();
    EXPECT_GT(red.red(), 150);
    EXPECT_LT(red.green(), 80);
    EXPECT_EQ(model->index(2, RayMembershipModel::PidColumn).data().toString(),
              QStringLiteral("303"));
    EXPECT_EQ(model->index(2, RayMembershipModel::ClusterIdColumn).data().toString(),
              QStringLiteral("c0ffee"));
    EXPECT_EQ(model->index(3, RayMembershipModel::VerdictColumn).data().toString(),
              QStringLiteral("no raylet: not in a Ray cluster"));
    EXPECT_EQ(panel.summaryLabel()->text(),
              QStringLiteral("4 node(s): 2 Ray clusters; expected GCS 198.18.0.1:6379, 1 "
                             "stranger raylet(s) in red"));

    // one cluster only: no stranger
    panel.apply({member("a:1", "10.0.0.1", ours, 1), member("b:1", "10.0.0.2", ours, 2)});
    EXPECT_EQ(model->strangerCount(), 0);
    EXPECT_EQ(panel.summaryLabel()->text(),
              QStringLiteral("2 node(s): one Ray cluster, GCS 198.18.0.1:6379"));
}
