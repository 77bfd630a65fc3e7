// issue 46: "two unrelated daemons that both call their node `vm` were merged into one series on
// the Cluster page (a node's identity must include its daemon, as the history's incarnation
// does)". Two REAL runplaned daemons, both `--node-id vm`, each reading host memory from its own
// meminfo file (`--meminfo`: 20 GiB and 60 GiB used); the real ClusterPage (offscreen) ingests
// both into a real history. Each row keeps its own daemon's value, and the plot has one series
// per daemon, named by its address, holding that daemon's values only.
#include <gtest/gtest.h>

#include <QFile>
#include <QTemporaryDir>

#include <cmath>
#include <memory>

#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

QString meminfoFile(const QTemporaryDir& dir, const char* name, int usedGiB) {
    const QString path = dir.filePath(QLatin1String(name));
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    const qint64 totalKiB = 100LL * 1024 * 1024;
    const qint64 availableKiB = (100LL - usedGiB) * 1024 * 1024;
    f.write(QStringLiteral("MemTotal:       %1 kB\nMemFree:        %2 kB\nMemAvailable:   %2 kB\n")
                .arg(totalKiB)
                .arg(availableKiB)
                .toLatin1());
    return path;
}

}  // namespace

TEST(ClusterByDaemon, TwoDaemonsCalledVmAreTwoRowsAndTwoSeries) {
    QTemporaryDir dir;
    const QString fileA = meminfoFile(dir, "meminfo-a", 20);
    const QString fileB = meminfoFile(dir, "meminfo-b", 60);
    test::DaemonProcess a(QStringLiteral("vm"), 10, {QStringLiteral("--meminfo"), fileA});
    test::DaemonProcess b(QStringLiteral("vm"), 10, {QStringLiteral("--meminfo"), fileB});
    ASSERT_TRUE(a.ok()) << a.error().toStdString();
    ASSERT_TRUE(b.ok()) << b.error().toStdString();

    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1280, 720);
    page.show();
    ASSERT_TRUE(page.addAddress(a.address()));
    ASSERT_TRUE(page.addAddress(b.address()));
    NodeTableModel* model = page.model();
    ASSERT_TRUE(waitUntil(
        [&] {
            return model->rowCount() == 2 && model->row(0).usedBytes >= 0 &&
                   model->row(1).usedBytes >= 0 && model->row(0).nodeId == QStringLiteral("vm") &&
                   model->row(1).nodeId == QStringLiteral("vm");
        },
        30000));
    const int rowA = model->indexOf(a.address());
    const int rowB = model->indexOf(b.address());
    ASSERT_GE(rowA, 0);
    ASSERT_GE(rowB, 0);
    // For two seconds of live samples, each row shows its own daemon's value, never the other's.
    int wrong = 0;
    for (int i = 0; i < 40; ++i) {
        test::pump(50);
        wrong += std::abs(model->row(rowA).usedBytes - 20 * kGiB) > 1e6 ? 1 : 0;
        wrong += std::abs(model->row(rowB).usedBytes - 60 * kGiB) > 1e6 ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0) << "a row showed the other daemon's memory";

    // The plot: one series per daemon, named by its address, with that daemon's values only.
    TimeSeriesPlot* plot = page.memoryPlot();
    const auto seriesOf = [&](const QString& address) -> const PlotSeries* {
        for (const PlotSeries& s : plot->series()) {
            if (s.name.contains(address)) {
                return &s;
            }
        }
        return nullptr;
    };
    ASSERT_TRUE(waitUntil(
        [&] {
            const PlotSeries* sa = seriesOf(a.address());
            const PlotSeries* sb = seriesOf(b.address());
            return sa != nullptr && sb != nullptr && sa->value.size() >= 5 && sb->value.size() >= 5;
        },
        20000))
        << plot->series().size() << " series";
    EXPECT_EQ(plot->series().size(), 2U);
    test::pump(300);
    page.grab().save(test::screenshotPath(QStringLiteral("cluster-two-vm.png")));
    for (const auto& [address, gib] :
         {std::pair{a.address(), 20.0}, std::pair{b.address(), 60.0}}) {
        const PlotSeries* s = seriesOf(address);
        ASSERT_NE(s, nullptr);
        for (double y : s->value) {
            if (!std::isnan(y)) {
                EXPECT_NEAR(y, gib * kGiB / 1e9, 0.01) << address.toStdString();
            }
        }
    }
}
