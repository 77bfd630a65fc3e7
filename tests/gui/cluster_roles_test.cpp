// issue 43: the Cluster page splits each node's host memory and each GPU's memory by role,
// against a REAL runplaned on loopback: real processes titled as slime's train actor and SGLang's
// scheduler (`exec -a`, where setproctitle writes) hold known amounts of memory; NVML is the
// tests' fake libnvidia-ml.so.1 (tests/compute), told through FAKE_NVML_GPU0_PIDS that GPU 0's
// processes (1 and 2 GiB) are those two. Also the run view's plots' shared base
// (HoverPlotWidget): a change while hidden is drawn on show, and the hover tooltip.
// Saves screenshot cluster-roles.png.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDateTime>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPixmap>
#include <QTemporaryDir>
#include <QToolTip>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <qcustomplot.h>

#include "gui/models/node_table_model.h"
#include "gui/models/role_memory.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/cluster_roles_panel.h"
#include "gui/widgets/role_plots.h"
#include "gui/widgets/role_split_bars.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

/// The interpreter itself (sys.executable): a pyenv shim on PATH would exec it again under its
/// own argv[0] and lose the title.
std::string realPython() {
    std::string out;
    if (FILE* p = ::popen("python3 -c 'import sys; print(sys.executable)'", "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p) != nullptr) {
            out += buf;
        }
        ::pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
        out.pop_back();
    }
    return out.empty() ? "python3" : out;
}

/// `exec -a TITLE python3` holding `mib` written MiB; creates `flag` once they are resident.
class Titled {
  public:
    Titled(const std::string& title, int mib, const std::string& flag) {
        const std::string script = "exec -a '" + title + "' " + realPython() +
                                   " -c \"import time; b = bytearray(b'\\x01') * (" +
                                   std::to_string(mib) + " << 20); open('" + flag +
                                   "', 'w').close(); time.sleep(300)\"";
        m_pid = ::fork();
        if (m_pid == 0) {
            ::setpgid(0, 0);
            ::execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    ~Titled() {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
    pid_t pid() const { return m_pid; }

  private:
    pid_t m_pid = -1;
};

const SplitSegment* segmentNamed(const SplitBar& bar, const QString& label, int* index = nullptr) {
    for (std::size_t i = 0; i < bar.segments.size(); ++i) {
        if (bar.segments[i].label == label) {
            if (index != nullptr) {
                *index = static_cast<int>(i);
            }
            return &bar.segments[i];
        }
    }
    return nullptr;
}

std::string describe(const RoleSplitBars& bars) {
    std::string out;
    for (int i = 0; i < bars.barCount(); ++i) {
        out += bars.bar(i).label.toStdString() + " [";
        for (const SplitSegment& s : bars.bar(i).segments) {
            out += s.label.toStdString() + "=" + std::to_string(s.value) + " ";
        }
        out += "] ";
    }
    return out;
}

}  // namespace

TEST(ClusterRoles, RealDaemonSplitsEachNodeAndEachGpuByRole) {
    const char* binaryDir = std::getenv("RUNPLANE_BINARY_DIR");
    ASSERT_NE(binaryDir, nullptr);
    const std::string fake = std::string(binaryDir) + "/tests/compute/fake_nvml/1";
    ASSERT_TRUE(std::filesystem::exists(fake + "/libnvidia-ml.so.1")) << fake;
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    Titled trainer("ray::MegatronTrainRayActor.train", 48, d + "/t");
    Titled scheduler("sglang::scheduler_TP0", 24, d + "/s");
    ASSERT_TRUE(waitUntil(
        [&] { return std::filesystem::exists(d + "/t") && std::filesystem::exists(d + "/s"); },
        20000));

    const char* old = std::getenv("LD_LIBRARY_PATH");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("LD_LIBRARY_PATH", fake.c_str(), 1);  // inherited by the daemon started here
    ::setenv("FAKE_NVML_GPU0_PIDS",
             (std::to_string(trainer.pid()) + "," + std::to_string(scheduler.pid())).c_str(), 1);
    test::DaemonProcess daemon(QStringLiteral("gui-roles-node"), 4);
    if (old != nullptr) {
        ::setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
    } else {
        ::unsetenv("LD_LIBRARY_PATH");
    }
    ::unsetenv("FAKE_NVML_GPU0_PIDS");
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();

    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 900);
    page.show();
    ASSERT_TRUE(page.addAddress(daemon.address()));
    ClusterRolesPanel* panel = page.rolesPanel();
    ASSERT_NE(panel, nullptr);
    RoleSplitBars* hosts = panel->hostBars();
    RoleSplitBars* gpus = panel->gpuBars();
    const double mib = 1024.0 * 1024.0;
    const double gib = 1024.0 * mib;
    ASSERT_TRUE(waitUntil(
        [&] {
            if (hosts->barCount() != 1 || gpus->barCount() < 1) {
                return false;
            }
            const SplitSegment* t = segmentNamed(hosts->bar(0), QStringLiteral("trainer"));
            const SplitSegment* r = segmentNamed(hosts->bar(0), QStringLiteral("rollout engines"));
            return t != nullptr && r != nullptr && t->value >= 48 * mib && r->value >= 24 * mib &&
                   segmentNamed(gpus->bar(0), QStringLiteral("trainer")) != nullptr;
        },
        30000))
        << "host bars " << hosts->barCount() << ", GPU bars " << gpus->barCount() << ": "
        << hosts->placeholder().toStdString() << " / " << gpus->placeholder().toStdString()
        << "; host: " << describe(*hosts) << "; GPU: " << describe(*gpus);

    // The node's host memory: its processes by role, the page cache, everything else as other.
    const SplitBar& host = hosts->bar(0);
    EXPECT_TRUE(host.label.contains(QStringLiteral("127.0.0.1"))) << host.label.toStdString();
    EXPECT_NE(segmentNamed(host, QStringLiteral("page cache")), nullptr);
    ASSERT_NE(segmentNamed(host, QStringLiteral("other")), nullptr);
    EXPECT_GT(segmentNamed(host, QStringLiteral("other"))->value, 0);
    EXPECT_GT(host.capacity, 0);  // the node's RAM: the bar's full length
    EXPECT_TRUE(host.note.contains(QStringLiteral("GB used"))) << host.note.toStdString();
    // Roles keep the run view's colours.
    EXPECT_EQ(segmentNamed(host, QStringLiteral("trainer"))->color,
              roleColor(QStringLiteral("trainer")));

    // GPU 0: NVML's per-process memory summed by role, exactly.
    const SplitBar& gpu0 = gpus->bar(0);
    EXPECT_TRUE(gpu0.label.endsWith(QStringLiteral("GPU 0"))) << gpu0.label.toStdString();
    int trainerIndex = -1;
    const SplitSegment* gt = segmentNamed(gpu0, QStringLiteral("trainer"), &trainerIndex);
    const SplitSegment* gr = segmentNamed(gpu0, QStringLiteral("rollout engines"));
    ASSERT_TRUE(gt != nullptr && gr != nullptr);
    EXPECT_EQ(gt->value, 1 * gib);
    EXPECT_EQ(gr->value, 2 * gib);
    EXPECT_GT(gpu0.capacity, 3 * gib);  // the fake GPU's total memory

    // The hover text names the GPU, the role and its share.
    page.rolesPanel()->gpuBars()->repaint();
    const QRect seg = gpus->segmentRect(0, trainerIndex);
    ASSERT_FALSE(seg.isEmpty());
    const QString hover = gpus->hoverTextAt(seg.center());
    EXPECT_TRUE(hover.contains(QStringLiteral("GPU 0 — trainer: 1.1 GB"))) << hover.toStdString();
    EXPECT_TRUE(hover.contains(QStringLiteral("% of"))) << hover.toStdString();
    QHelpEvent help(QEvent::ToolTip, seg.center(), gpus->mapToGlobal(seg.center()));
    QApplication::sendEvent(gpus, &help);
    EXPECT_EQ(QToolTip::text(), hover);
    EXPECT_TRUE(gpus->hoverTextAt(QPoint(1, 1)).isEmpty());  // the title, no segment

    test::pump(500);
    const QPixmap shot = page.grab();
    ASSERT_FALSE(shot.isNull());
    EXPECT_TRUE(shot.save(test::screenshotPath(QStringLiteral("cluster-roles.png"))));
}

// The run view's two plots share HoverPlotWidget: data set while hidden is drawn only when shown,
// and a mouse move over the plot shows the plot's own hover text as the tooltip.
TEST(HoverPlotWidget, HiddenChangeIsDrawnOnShowAndTheTooltipIsThePlotsHoverText) {
    const double t0 = static_cast<double>(QDateTime::currentSecsSinceEpoch());
    StackedAreaPlot stacked;
    stacked.resize(600, 300);
    stacked.setHoverText(
        [](double x, double) { return QStringLiteral("layer at %1").arg(x, 0, 'f', 0); });
    stacked.setData({t0, t0 + 10, t0 + 20},
                    {StackedLayer{QStringLiteral("trainer"), Qt::blue, {1e9, 2e9, 3e9}, {}}}, {},
                    {});
    auto* plot = stacked.findChild<QCustomPlot*>();
    ASSERT_NE(plot, nullptr);
    test::pump(200);
    EXPECT_EQ(plot->graphCount(), 0) << "drawn while hidden";
    stacked.show();
    ASSERT_TRUE(waitUntil([&] { return plot->graphCount() > 0; }, 5000));
    stacked.flush();
    const QPoint pixel = stacked.pixelOf(t0 + 10, 1e9);
    const QString expected = stacked.hoverTextAt(pixel);
    ASSERT_FALSE(expected.isEmpty());
    const QPoint inPlot = plot->mapFrom(&stacked, pixel);
    QMouseEvent move(QEvent::MouseMove, QPointF(inPlot), QPointF(plot->mapToGlobal(inPlot)),
                     Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(plot, &move);
    EXPECT_EQ(QToolTip::text(), expected);

    PhaseLanesPlot lanes;
    lanes.resize(600, 300);
    lanes.setLanes({LaneRow{QStringLiteral("node-a rank 0"),
                            {LaneBar{QStringLiteral("train"), t0, t0 + 20}},
                            false,
                            {}}},
                   {});
    auto* lanePlot = lanes.findChild<QCustomPlot*>();
    ASSERT_NE(lanePlot, nullptr);
    test::pump(200);
    EXPECT_EQ(lanePlot->itemCount(), 0) << "drawn while hidden";
    lanes.show();
    ASSERT_TRUE(waitUntil([&] { return lanePlot->itemCount() > 0; }, 5000));
    lanes.flush();
    const QPoint lanePixel = lanes.pixelOf(t0 + 10, 0);
    const QString laneText = lanes.hoverTextAt(lanePixel);
    EXPECT_TRUE(laneText.contains(QStringLiteral("node-a rank 0: train")))
        << laneText.toStdString();
    const QPoint inLanes = lanePlot->mapFrom(&lanes, lanePixel);
    QMouseEvent laneMove(QEvent::MouseMove, QPointF(inLanes),
                         QPointF(lanePlot->mapToGlobal(inLanes)), Qt::NoButton, Qt::NoButton,
                         Qt::NoModifier);
    QApplication::sendEvent(lanePlot, &laneMove);
    EXPECT_EQ(QToolTip::text(), laneText);
}
