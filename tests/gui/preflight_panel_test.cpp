// issue 47: the Cluster page's per-node preflight table. Two REAL runplaned on loopback that
// load the tests' fake libnvidia-ml.so.1 (tests/compute/fake_nvml.cpp, through LD_LIBRARY_PATH)
// and so report the same two GPU UUIDs -- one machine joined twice -- plus an address nobody
// answers on. Asked through the page's Preflight button (the answer applied on the GUI thread)
// with NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME / MASTER_ADDR taken from this process's
// environment. Offscreen.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "gui/pages/cluster_page.h"
#include "gui/pages/preflight_panel.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

TEST(PreflightPanel, ClusterPageShowsEachNodesInterfacesMasterAddrAndGpuUuids) {
    const char* binaryDir = std::getenv("RUNPLANE_BINARY_DIR");
    ASSERT_NE(binaryDir, nullptr);
    const std::string fake = std::string(binaryDir) + "/tests/compute/fake_nvml/1";
    ASSERT_TRUE(std::filesystem::exists(fake + "/libnvidia-ml.so.1")) << fake;
    ::setenv("LD_LIBRARY_PATH", fake.c_str(), 1);  // inherited by the daemons started here
    auto a = std::make_unique<test::DaemonProcess>(QStringLiteral("gui-pf-a"), 2);
    auto b = std::make_unique<test::DaemonProcess>(QStringLiteral("gui-pf-b"), 2);
    ::unsetenv("LD_LIBRARY_PATH");
    ASSERT_TRUE(a->ok()) << a->error().toStdString();
    ASSERT_TRUE(b->ok()) << b->error().toStdString();

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

TEST(PreflightPanel, AnswerForADestroyedPanelIsDropped) {
    auto panel = std::make_unique<PreflightPanel>();
    control::NodeClientOptions options;
    options.callTimeout = std::chrono::milliseconds(500);
    ASSERT_TRUE(panel->refresh({QStringLiteral("127.0.0.1:1")}, options, clusterPreflightSpec(1)));
    EXPECT_FALSE(panel->refresh({QStringLiteral("127.0.0.1:1")}, options, clusterPreflightSpec(1)))
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
