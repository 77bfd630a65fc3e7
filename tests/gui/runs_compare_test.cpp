// issue 10: the Runs and Compare pages on a history written through runplane_db's real API
// (synthetic runs: layout, peaks, zoom, compare, export), models checked with
// QAbstractItemModelTester. Saves screenshots runs.png and compare.png.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QPixmap>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTemporaryDir>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "db/history/history.h"
#include "gui/models/compare_model.h"
#include "gui/models/run_models.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/flat_style.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/held_pool.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

// Three runs: the Qwen3.8 full recipe (regressing node-b), the same recipe with a different LR
// and LoRA rank, and a third forked later. One history for the suite.
class RunsAndCompare : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = new QTemporaryDir;
        s_path = s_dir->filePath(QStringLiteral("history.sqlite"));
        auto h = db::History::open(s_path.toStdString());
        ASSERT_TRUE(h) << h.error();
        const std::string recipe = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
        ASSERT_FALSE(recipe.empty());
        test::SyntheticRunSpec a;
        a.recipeYaml = recipe;
        auto spike = test::writeSyntheticRun(**h, a);
        ASSERT_TRUE(spike) << spike.error();
        test::SyntheticRunSpec b = a;
        b.runId = "run-synthetic-2";
        b.name = "qwen3.8 full LoRA lr 2e-5 (synthetic)";
        b.startNs += 2 * kHour;
        b.regressNodeB = false;
        b.plantSpike = false;
        b.evalStart = 0.61;
        b.evalEnd = 0.70;
        b.ncclVersion = "2.30.7";
        b.recipeYaml = editRecipe(recipe, b.name);
        ASSERT_TRUE(test::writeSyntheticRun(**h, b));
        test::SyntheticRunSpec c = a;
        c.runId = "run-synthetic-3";
        c.name = "qwen3.8 full (running)";
        c.startNs += 4 * kHour;
        c.finished = false;
        c.plantSpike = false;
        c.seconds = 1200;
        c.evalSteps = 10;
        ASSERT_TRUE(test::writeSyntheticRun(**h, c));
    }
    static void TearDownTestSuite() { delete s_dir; }

    // Shows `page` with `runId` selected and its first snapshot applied.
    static void showRun(RunsPage& page, const QString& runId) {
        page.resize(1700, 1000);
        page.show();
        ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
        ASSERT_TRUE(page.selectRun(runId));
        ASSERT_TRUE(waitUntil([&] { return page.snapshotsApplied() > 0; }, 10000));
    }

    // The same recipe with another learning rate and name (a real edit of its YAML text).
    static std::string editRecipe(std::string yaml, const std::string& name) {
        const auto at = yaml.find("name:");
        if (at != std::string::npos) {
            const auto end = yaml.find('\n', at);
            yaml.replace(at, end - at, "name: \"" + name + "\"");
        }
        const auto lr = yaml.find("lr:");
        if (lr != std::string::npos) {
            const auto end = yaml.find('\n', lr);
            yaml.replace(lr, end - lr, "lr: 2.0e-05");
        }
        return yaml;
    }

    static inline QTemporaryDir* s_dir = nullptr;
    static inline QString s_path;
};

}  // namespace

TEST_F(RunsAndCompare, RunListModelsPassTheTesterAndFilter) {
    RunsPage page(s_path);
    QAbstractItemModelTester listTester(page.runsModel(),
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester proxyTester(page.runsProxy(),
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    EXPECT_EQ(page.runsModel()->rowCount(), 3);
    page.runsProxy()->setState(QStringLiteral("running"));
    EXPECT_EQ(page.runsProxy()->rowCount(), 1);
    page.runsProxy()->setState(QString());
    page.runsProxy()->setText(QStringLiteral("lr 2e-5"));
    EXPECT_EQ(page.runsProxy()->rowCount(), 1);
    page.runsProxy()->setText(QString());
    // Sorted by peak host memory, descending: the regressing run (spike 900 GB) first.
    page.runsProxy()->sort(RunListModel::PeakColumn, Qt::DescendingOrder);
    EXPECT_EQ(page.runsProxy()->index(0, 0).data(RunListModel::RunIdRole).toString(),
              QStringLiteral("run-synthetic-1"));
}

TEST_F(RunsAndCompare, RunsPageShowsTheLiveViewOfTheSelectedRun) {
    RunsPage page(s_path);
    ASSERT_NO_FATAL_FAILURE(showRun(page, QStringLiteral("run-synthetic-1")));
    RunView* view = page.runView();
    QAbstractItemModelTester peaksTester(view->peaksModel(),
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    TimeSeriesPlot* host = view->hostMemoryPlot();
    host->flush();
    EXPECT_EQ(host->seriesCount(), 2);
    // RAM, the daemon's alarm, and the plan's per-phase peaks (phases within 1 % share a line:
    // here rollout 607.3 and weight_sync 609.5 GB).
    std::vector<double> planned;
    for (const auto& p : view->snapshot()->lines.plannedPhases) {
        if (std::none_of(planned.begin(), planned.end(), [&](double b) {
                return std::abs(b - p.bytes) <= 0.01 * std::max(b, p.bytes);
            })) {
            planned.push_back(p.bytes);
        }
    }
    EXPECT_EQ(planned.size(), 3u);
    EXPECT_FALSE(planned.empty());
    EXPECT_EQ(host->alarmLineCount(), 2 + static_cast<int>(planned.size()));
    EXPECT_GE(host->phaseCount(), 30);
    // The memory alarm on node-b and the NCCL error (alert-level: gui/models/role_memory.h).
    EXPECT_EQ(host->eventCount(), 2);
    EXPECT_GE(host->yRange().second, 900);  // the one-sample spike is inside the view
    ASSERT_EQ(view->peaksModel()->rowCount(), 2);
    EXPECT_EQ(view->peaksModel()->index(1, PeaksModel::PeakColumn).data().toString(),
              QStringLiteral("900.0 GB"));
    // Minutes above the alarm, in the one duration style (common/units): "4m 09s".
    EXPECT_TRUE(view->peaksModel()
                    ->index(1, PeaksModel::AboveColumn)
                    .data()
                    .toString()
                    .contains(QRegularExpression(QStringLiteral("^\\d+m \\d{2}s$"))))
        << view->peaksModel()->index(1, PeaksModel::AboveColumn).data().toString().toStdString();
    EXPECT_EQ(view->gpuMemoryPlot()->seriesCount(), 8);
    EXPECT_EQ(view->rssPlot()->seriesCount(), 2);
    EXPECT_EQ(view->ncclPlot()->eventCount(), 3);

    test::pump(300);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs.png"))));

    // Zoom: the plots freeze, and the page asks the history for the zoomed range only, which
    // then comes back undecimated (61 raw samples around the spike).
    const int before = page.snapshotsApplied();
    const double spike = 1767261600.0 + 1800;
    host->setVisibleRange(spike - 30, spike + 30);
    emit view->rangeRequested(spike - 30, spike + 30, 1000);
    ASSERT_TRUE(waitUntil([&] { return page.snapshotsApplied() > before; }, 10000));
    EXPECT_FALSE(view->isFollowing());
    ASSERT_TRUE(view->snapshot());
    EXPECT_FALSE(view->snapshot()->hostMemory[1].decimated);
    EXPECT_EQ(view->snapshot()->hostMemory[1].t.size(), 61u);

    // NCCL and metrics tabs.
    view->tabs()->setCurrentIndex(1);
    test::pump(200);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-nccl.png"))));
    view->tabs()->setCurrentIndex(2);
    view->showMetric(QStringLiteral("eval/*"));
    view->metricsPlot()->flush();
    EXPECT_EQ(view->metricsPlot()->seriesCount(), 2);  // eval/aime, eval/gsm8k
    test::pump(100);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-metrics.png"))));
    view->tabs()->setCurrentIndex(3);
    test::pump(300);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-panels.png"))));
    view->tabs()->setCurrentIndex(2);

    // A zoom on the metrics plot survives the next snapshot of the same run.
    view->metricsPlot()->setVisibleRange(5, 15);
    ASSERT_FALSE(view->metricsPlot()->isFollowing());
    const int applied = page.snapshotsApplied();
    emit view->rangeRequested(0, 0, 1000);
    ASSERT_TRUE(waitUntil([&] { return page.snapshotsApplied() > applied; }, 10000));
    EXPECT_FALSE(view->metricsPlot()->isFollowing()) << "a refresh must not undo the user's zoom";
}

// Under the GUI's style (installFlatStyle, as runplane's main sets it) a repaint of the Runs page
// (each of its run's tabs) and of the Cluster page never waits on Qt's thread pool: the GUI
// thread does not sleep in a paint (gui/widgets/flat_style.h).
TEST_F(RunsAndCompare, RunsAndClusterPagesRepaintWithoutWaitingOnQtsThreadPool) {
    installFlatStyle();  // qt_test_main installed it already: this one must keep it
    ASSERT_NE(dynamic_cast<const FlatStyle*>(QApplication::style()), nullptr);
    RunsPage page(s_path);
    ASSERT_NO_FATAL_FAILURE(showRun(page, QStringLiteral("run-synthetic-1")));
    RunView* view = page.runView();
    for (int tab = 0; tab < view->tabs()->count(); ++tab) {
        view->tabs()->setCurrentIndex(tab);
        test::pump(300);  // the tab's plots replot on their timers first
        EXPECT_LT(test::renderWhileThePoolIsHeld(&page, 3000), 1500)
            << "a paint of the Runs page's tab " << tab << " waited on the pool";
    }
    ClusterPage cluster(s_path);
    cluster.resize(1700, 1000);
    cluster.show();
    test::pump(300);
    EXPECT_LT(test::renderWhileThePoolIsHeld(&cluster, 3000), 1500)
        << "a paint of the Cluster page waited on the pool";
}

TEST_F(RunsAndCompare, ComparePageOverlaysDiffsAndExports) {
    ComparePage page(s_path);
    page.resize(1700, 1000);
    page.show();
    QAbstractItemModelTester tester(page.compareModel(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(
        page.selectRuns({QStringLiteral("run-synthetic-1"), QStringLiteral("run-synthetic-2")}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000));
    page.setMetric(QStringLiteral("eval/gsm8k"));
    page.setSmoothing(0.6);
    page.plot()->flush();
    // Two runs: faint raw points + EMA line each; only the lines are in the legend.
    EXPECT_EQ(page.plot()->seriesCount(), 4);
    // The diff lists only the fields that differ: the name and the learning rate.
    const QStringList diff = page.compareModel()->diffFields();
    EXPECT_TRUE(diff.contains(QStringLiteral("name"))) << diff.join(QLatin1Char(',')).toStdString();
    EXPECT_TRUE(diff.contains(QStringLiteral("algorithm.lr")))
        << diff.join(QLatin1Char(',')).toStdString();
    EXPECT_LE(diff.size(), 3);
    // Peak memory per run is a summary row.
    int runOneColumn = -1;
    for (int c = 1; c < page.compareModel()->columnCount(); ++c) {
        if (page.compareModel()->headerData(c, Qt::Horizontal).toString() ==
            QStringLiteral("qwen3.8 full LoRA (synthetic)")) {
            runOneColumn = c;
        }
    }
    ASSERT_GT(runOneColumn, 0);
    bool sawPeak = false;
    for (int r = 0; r < page.compareModel()->summaryRowCount(); ++r) {
        if (page.compareModel()->index(r, 0).data().toString() ==
            QStringLiteral("peak host memory")) {
            sawPeak = true;
            EXPECT_TRUE(page.compareModel()
                            ->index(r, runOneColumn)
                            .data()
                            .toString()
                            .startsWith(QStringLiteral("900.0 GB")));
            EXPECT_FALSE(page.compareModel()
                             ->index(r, 3 - runOneColumn)
                             .data()
                             .toString()
                             .startsWith(QStringLiteral("900.0 GB")));
        }
    }
    EXPECT_TRUE(sawPeak);

    test::pump(300);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("compare.png"))));

    QTemporaryDir out;
    ASSERT_TRUE(page.exportPng(out.filePath(QStringLiteral("c.png"))));
    EXPECT_EQ(QImage(out.filePath(QStringLiteral("c.png"))).size(), QSize(1400, 700));
    ASSERT_TRUE(page.exportSvg(out.filePath(QStringLiteral("c.svg"))));
    ASSERT_TRUE(page.exportCsv(out.filePath(QStringLiteral("c.csv"))));
    QFile csv(out.filePath(QStringLiteral("c.csv")));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    const QStringList lines =
        QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    // The default x axis is "rollout (aligned)": eval/* counts rollouts already.
    EXPECT_EQ(lines.front(), QStringLiteral("run_id,run_name,metric,rollout,value,smoothed"));
    EXPECT_EQ(lines.size(), 1 + 2 * 9);  // steps 0,5,...,40 per run

    // Relative step and wall time axes; too many / too few runs are refused.
    page.setAxis(CompareAxis::WallTime);
    page.plot()->flush();
    EXPECT_EQ(page.plot()->seriesCount(), 4);
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-synthetic-3")}));
    test::pump(200);
    // Below two runs the comparison is cleared, not left drawn stale (issue 46, ExportEnabled.*).
    EXPECT_EQ(page.data().runs.size(), 0u);
}

TEST(CompareData, EmaFollowsTensorBoardsConvention) {
    EXPECT_EQ(emaSmooth({1, 2, 3}, 0), (std::vector<double>{1, 2, 3}));
    // Debiased: a = 0, .5, .75; 1 - w^n = .5, .75, .875.
    const auto s = emaSmooth({0, 1, 1}, 0.5);
    EXPECT_DOUBLE_EQ(s[0], 0);
    EXPECT_DOUBLE_EQ(s[1], 0.5 / 0.75);
    EXPECT_DOUBLE_EQ(s[2], 0.75 / 0.875);
}

// issue 19 empty states: a daemon address nothing listens on says so and what to do, once the
// connection attempt failed (a real gRPC connect to a closed loopback port).
TEST(ClusterPageEmptyStates, UnreachableDaemonSaysWhatToDo) {
    QTemporaryDir dir;
    ClusterPage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1200, 800);
    page.show();
    EXPECT_TRUE(page.memoryPlot()->placeholder().contains(QStringLiteral("Add a daemon")));
    // A port that was free a moment ago: bind port 0, read the port, close.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    ::close(fd);
    const QString address = QStringLiteral("127.0.0.1:%1").arg(ntohs(addr.sin_port));
    ASSERT_TRUE(page.addAddress(address));
    ASSERT_TRUE(test::waitUntil(
        [&] { return page.memoryPlot()->placeholder().contains(QStringLiteral("Cannot reach")); },
        20000))
        << page.memoryPlot()->placeholder().toStdString();
    const QString text = page.memoryPlot()->placeholder();
    EXPECT_TRUE(text.contains(address)) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("runplaned --listen"))) << text.toStdString();
}
