// issue 47: the Cluster page's per-node preflight table. Two REAL runplaned on loopback that
// load the tests' fake libnvidia-ml.so.1 (tests/compute/fake_nvml.cpp, through LD_LIBRARY_PATH)
// and so report the same two GPU UUIDs -- one machine joined twice -- plus an address nobody
// answers on. Asked through the page's Preflight button (the answer applied on the GUI thread)
// with NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME / MASTER_ADDR taken from this process's
// environment, then with a recipe's expectations (what the Design page hands the page).
// Offscreen.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "backend/control/preflight_master_rank0.h"
#include "backend/plan/recipe.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/preflight_panel.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

/// Two real daemons (node ids PREFIX-a, PREFIX-b) that load the fake NVML, so both report the
/// same two GPUs (H200 and H100, the same UUIDs). Use with ASSERT_NO_FATAL_FAILURE.
void startFakeGpuDaemons(const QString& prefix, std::unique_ptr<test::DaemonProcess>* a,
                         std::unique_ptr<test::DaemonProcess>* b) {
    const char* binaryDir = std::getenv("RUNPLANE_BINARY_DIR");
    ASSERT_NE(binaryDir, nullptr);
    const std::string fake = std::string(binaryDir) + "/tests/compute/fake_nvml/1";
    ASSERT_TRUE(std::filesystem::exists(fake + "/libnvidia-ml.so.1")) << fake;
    ::setenv("LD_LIBRARY_PATH", fake.c_str(), 1);  // inherited by the daemons started here
    *a = std::make_unique<test::DaemonProcess>(prefix + QStringLiteral("-a"), 2);
    *b = std::make_unique<test::DaemonProcess>(prefix + QStringLiteral("-b"), 2);
    ::unsetenv("LD_LIBRARY_PATH");
    ASSERT_TRUE((*a)->ok()) << (*a)->error().toStdString();
    ASSERT_TRUE((*b)->ok()) << (*b)->error().toStdString();
}

}  // namespace

TEST(PreflightPanel, ClusterPageShowsEachNodesInterfacesMasterAddrAndGpuUuids) {
    std::unique_ptr<test::DaemonProcess> a, b;
    ASSERT_NO_FATAL_FAILURE(startFakeGpuDaemons(QStringLiteral("gui-pf"), &a, &b));

    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 900);
    page.show();
    ASSERT_TRUE(page.addAddress(a->address()));
    ASSERT_TRUE(page.addAddress(b->address()));
    ASSERT_TRUE(page.addAddress(QStringLiteral("127.0.0.1:1")));
    PreflightPanel* panel = page.preflightPanel();
    ASSERT_NE(panel, nullptr);
    PreflightTableModel* model = panel->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    EXPECT_EQ(model->rowCount(), 0);

    ::setenv("NCCL_SOCKET_IFNAME", "lo", 1);
    ::setenv("GLOO_SOCKET_IFNAME", "nosuchif0", 1);
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    panel->checkButton()->click();
    ::unsetenv("NCCL_SOCKET_IFNAME");
    ::unsetenv("GLOO_SOCKET_IFNAME");
    ::unsetenv("MASTER_ADDR");
    EXPECT_TRUE(panel->busy());
    EXPECT_FALSE(panel->checkButton()->isEnabled());
    ASSERT_TRUE(waitUntil([&] { return !panel->busy(); }, 60000));
    EXPECT_TRUE(panel->checkButton()->isEnabled());

    ASSERT_EQ(model->rowCount(), 3);
    auto cell = [&](int row, int column, int role = Qt::DisplayRole) {
        return model->index(row, column).data(role).toString();
    };
    for (int row = 0; row < 2; ++row) {
        EXPECT_EQ(cell(row, PreflightTableModel::NodeColumn), (row == 0 ? a : b)->address());
        EXPECT_EQ(cell(row, PreflightTableModel::GpuColumn),
                  QStringLiteral("2: GPU-0000aaaa, GPU-1111bbbb"));
        const int ifname = model->columnOf("net.ifname");
        ASSERT_GE(ifname, 0);
        EXPECT_EQ(cell(row, ifname), QStringLiteral("FAIL"));
        const QString tip = cell(row, ifname, Qt::ToolTipRole);
        EXPECT_TRUE(tip.contains(QStringLiteral("NCCL_SOCKET_IFNAME=lo selects lo")))
            << tip.toStdString();
        EXPECT_TRUE(tip.contains(
            QStringLiteral("GLOO_SOCKET_IFNAME=nosuchif0: no interface matches nosuchif0")))
            << tip.toStdString();
        const int master = model->columnOf("net.master_addr");
        ASSERT_GE(master, 0);
        EXPECT_EQ(cell(row, master), QStringLiteral("FAIL")) << "loopback MASTER_ADDR, 2+ nodes";
        EXPECT_GE(model->columnOf("ray.installed"), 0);
    }
    EXPECT_EQ(cell(2, PreflightTableModel::NodeColumn), QStringLiteral("127.0.0.1:1"));
    EXPECT_EQ(cell(2, PreflightTableModel::HostColumn), QStringLiteral("(daemon lost)"));
    EXPECT_EQ(cell(2, model->columnOf("daemon")), QStringLiteral("FAIL"));

    // the cross-node check names both daemons that report the same GPUs
    const QString summary = panel->summaryLabel()->text();
    EXPECT_TRUE(summary.startsWith(QStringLiteral("3 node(s): "))) << summary.toStdString();
    EXPECT_TRUE(summary.contains(QStringLiteral("gpu.distinct FAIL"))) << summary.toStdString();
    EXPECT_TRUE(summary.contains(a->address()) && summary.contains(b->address()))
        << summary.toStdString();
}

namespace {

// A non-loopback IPv4 address of this machine ("" when it has none): MASTER_ADDR must not be
// loopback for the rank-0 probe to run.
std::string hostLanAddress() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return {};
    }
    std::string found;
    for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET ||
            (i->ifa_flags & IFF_LOOPBACK) != 0 || (i->ifa_flags & IFF_UP) == 0) {
            continue;
        }
        char text[INET_ADDRSTRLEN] = {};
        const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
        if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) {
            found = text;
        }
    }
    ::freeifaddrs(list);
    return found;
}

}  // namespace

// The Design page's recipe sets what each node is asked: its GPU count and model, the host
// memory its plan peaks at, and MASTER_ADDR probed at the first node's daemon port; cleared,
// the same nodes are checked without them.
TEST(PreflightPanel, TheRecipesExpectationsAndTheRank0PortAreAskedOfEveryNode) {
    const char* sourceDir = std::getenv("RUNPLANE_SOURCE_DIR");
    ASSERT_NE(sourceDir, nullptr);
    std::unique_ptr<test::DaemonProcess> a, b;
    ASSERT_NO_FATAL_FAILURE(startFakeGpuDaemons(QStringLiteral("gui-pfr"), &a, &b));

    // 2 nodes x 8 H100, a 30B MoE whose plan peaks far above this machine's RAM
    auto recipe = plan::loadRecipe(std::string(sourceDir) + "/recipes/vime-qwen3-30B-A3B-2x8.yaml");
    ASSERT_TRUE(recipe.ok()) << recipe.error();
    const std::string lan = hostLanAddress();
    recipe->cluster.masterAddr = lan;

    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 900);
    page.show();
    ASSERT_TRUE(page.addAddress(a->address()));
    ASSERT_TRUE(page.addAddress(b->address()));
    PreflightPanel* panel = page.preflightPanel();
    EXPECT_FALSE(panel->recipeCheck()->isEnabled()) << "no recipe handed over yet";
    panel->setRecipe(*recipe, QStringLiteral("vime-qwen3-30B-A3B-2x8.yaml"), true);
    EXPECT_TRUE(panel->recipeCheck()->isChecked());
    EXPECT_TRUE(panel->recipeCheck()->text().contains(QStringLiteral("2 node(s) of 8 H100")))
        << panel->recipeCheck()->text().toStdString();
    PreflightTableModel* model = panel->model();
    auto cell = [&](int row, const std::string& id, int role = Qt::DisplayRole) {
        const int column = model->columnOf(id);
        return column < 0 ? QStringLiteral("(no column %1)").arg(QString::fromStdString(id))
                          : model->index(row, column).data(role).toString();
    };
    auto check = [&] {
        panel->checkButton()->click();
        return waitUntil([&] { return !panel->busy(); }, 60000);
    };

    ASSERT_TRUE(check());
    ASSERT_EQ(model->rowCount(), 2);
    const QString rank0Port = QString::number(control::daemonPortOf(a->address().toStdString()));
    for (int row = 0; row < 2; ++row) {
        EXPECT_EQ(cell(row, "gpu.count"), QStringLiteral("FAIL"));
        EXPECT_TRUE(cell(row, "gpu.count", Qt::ToolTipRole)
                        .contains(QStringLiteral("expected 8 GPUs, found 2")));
        EXPECT_EQ(cell(row, "gpu.model"), QStringLiteral("FAIL"))
            << cell(row, "gpu.model", Qt::ToolTipRole).toStdString();  // GPU 0 is an H200
        EXPECT_EQ(cell(row, "host.ram"), QStringLiteral("FAIL"));
        EXPECT_TRUE(cell(row, "host.ram", Qt::ToolTipRole)
                        .contains(QStringLiteral("the plan does not fit in this node's RAM")))
            << cell(row, "host.ram", Qt::ToolTipRole).toStdString();
        if (lan.empty()) {
            continue;  // no LAN address here: MASTER_ADDR stays empty and nothing is probed
        }
        // Every node connects to MASTER_ADDR at the first node's daemon port. The daemons listen
        // on loopback only, so the probe may be refused: either way it names that port.
        const QString reachable = cell(row, "net.master_addr.reachable", Qt::ToolTipRole);
        EXPECT_TRUE(reachable.contains(QString::fromStdString(lan) + QLatin1Char(':') + rank0Port))
            << reachable.toStdString();
        EXPECT_TRUE(reachable.contains(QStringLiteral("rank-0 daemon's port")))
            << reachable.toStdString();
    }
    if (lan.empty()) {
        std::cout
            << "[ NOTE ] no non-loopback IPv4 address: the MASTER_ADDR probe is not checked\n";
    }

    // the box cleared: the same nodes without the recipe's expectations
    panel->recipeCheck()->click();
    EXPECT_FALSE(panel->usingRecipe());
    panel->setRecipe(*recipe, QStringLiteral("again"), true);
    EXPECT_FALSE(panel->recipeCheck()->isChecked()) << "the user's choice is kept";
    ASSERT_TRUE(check());
    for (int row = 0; row < 2; ++row) {
        EXPECT_EQ(cell(row, "gpu.count"), QStringLiteral("skip"));
        EXPECT_EQ(cell(row, "host.ram"), QStringLiteral("skip"));
    }
}

TEST(PreflightPanel, AnswerForADestroyedPanelIsDropped) {
    auto panel = std::make_unique<PreflightPanel>();
    control::NodeClientOptions options;
    options.callTimeout = std::chrono::milliseconds(500);
    ASSERT_TRUE(panel->refresh({QStringLiteral("127.0.0.1:1")}, options));
    EXPECT_FALSE(panel->refresh({QStringLiteral("127.0.0.1:1")}, options))
        << "one answer at a time";
    panel.reset();
    // the worker's answer arrives after the panel is gone: nothing crashes
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 1500) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    SUCCEED();
}
