// issue 44: the Runs page's Diagnosis tab against REAL daemons. Two runplaned on loopback each run
// one "rank" of the same run: a real Python process blocked in a known function (rank 1 in
// all_gather_into_tensor, rank 0 in barrier; tests/diagnosis/blocked_rank.py), py-spy from the
// pinned venv on their PATH, and the run's NCCL_RAS_ADDR naming a RAS server of the test's own that
// answers a recorded report where one rank's AllGather count lags. The run's third node is an
// address where no daemon listens. The history is a real SQLite file holding the run, its nodes
// and one diagnosis stored earlier by the controller code. The tab must show the stored one, then
// "Diagnose now" must show a busy state, ask every node off the GUI thread, name the node that
// could not be asked, show the outlier's stack and the lagging rank, and store the new diagnosis.
// Saves screenshot runs-diagnosis.png.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "backend/control/diagnose.h"
#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/diagnosis_view.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/palette.h"
#include "tests/diagnosis/diagnosis_cluster.h"
#include "tests/diagnosis/fake_ras.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(runplane::testing::sourceDir() + "/tests/diagnosis/fixtures/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A loopback port nobody listens on: bound, then closed.
std::string deadAddress() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

QTreeWidgetItem* topItemContaining(QTreeWidget* tree, const QString& text) {
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
        if (tree->topLevelItem(i)->text(0).contains(text)) {
            return tree->topLevelItem(i);
        }
    }
    return nullptr;
}

// py-spy needs ptrace of the run's processes; where the sandbox refuses it, that is the only
// reason to skip (as tests/diagnosis does).
bool ptraceRefused(const diagnosis::RunDiagnosis& d, std::string& why) {
    for (const auto& n : d.nodes) {
        for (const auto& s : n.stacks) {
            if (s.error.find("Permission denied") != std::string::npos ||
                s.error.find("Operation not permitted") != std::string::npos) {
                why = s.error;
                return true;
            }
        }
    }
    return false;
}

}  // namespace

TEST(DiagnosisTab, ShowsTheStoredDiagnosisThenDiagnosesTheRunsRealNodesAndStoresIt) {
    namespace dt = runplane::diagnosis::testing;
    ASSERT_TRUE(dt::haveVenv()) << "no py-spy venv at " << dt::pySpyVenv()
                                << " (the pyspy_venv fixture: scripts/setup-pyspy-venv.sh)";
    dt::FakeRas ras(fixture("ras_lagging_rank.json"));
    dt::ClusterOptions o;
    o.nodes = 2;
    o.functionOf = [](int i) { return i == 1 ? "all_gather_into_tensor" : "barrier"; };
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    dt::DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    const std::vector<std::string> live = cluster.addresses();
    const std::string dead = deadAddress();

    // The history: the run on three nodes (by node id, their addresses in the nodes table).
    QTemporaryDir dir;
    const std::string historyPath = dir.filePath(QStringLiteral("history.sqlite")).toStdString();
    {
        auto history = db::History::open(historyPath);
        ASSERT_TRUE(history.ok()) << history.error();
        const std::vector<std::pair<std::string, std::string>> nodes = {
            {"gpu-a", live[0]}, {"gpu-b", live[1]}, {"gpu-c", dead}};
        for (const auto& [id, address] : nodes) {
            db::NodeRecord n;
            n.nodeId = NodeId{id};
            n.address = address;
            n.hostname = id;
            n.lastSeenNs = nowNs();
            ASSERT_TRUE((*history)->upsertNode(n).ok());
        }
        db::RunRecord run;
        run.id = RunId{"hung-run"};
        run.name = "hung-run";
        run.state = db::RunState::Running;
        run.startedNs = nowNs() - 60'000'000'000LL;
        run.nodes = {"gpu-a", "gpu-b", "gpu-c"};
        ASSERT_TRUE((*history)->upsertRun(run).ok());
    }
    // One diagnosis stored earlier, as the stall trigger stores it: node gpu-a only.
    control::DiagnoseSpec earlier;
    earlier.runId = RunId{"hung-run"};
    earlier.addresses = {live[0]};
    earlier.trigger = "stall";
    earlier.collectTimeout = std::chrono::milliseconds(5000);
    auto first = control::diagnoseAndStore(historyPath, earlier);
    ASSERT_TRUE(first.ok()) << first.error();
    std::string why;
    if (ptraceRefused(*first, why)) {
        GTEST_SKIP() << "py-spy cannot attach here (ptrace refused): " << why;
    }

    RunsPage page(QString::fromStdString(historyPath));
    page.resize(1700, 1000);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runsModel()->rowCount() == 1; }, 10000));
    ASSERT_TRUE(page.selectRun(QStringLiteral("hung-run")));
    RunView* view = page.runView();
    DiagnosisView* tab = view->diagnosisView();
    ASSERT_NE(tab, nullptr);
    const int at = view->tabs()->indexOf(tab);
    ASSERT_GE(at, 0);
    EXPECT_EQ(view->tabs()->tabText(at), QStringLiteral("Diagnosis"));
    view->tabs()->setCurrentIndex(at);

    // The stored diagnosis, read from the history.
    ASSERT_TRUE(waitUntil([&] { return tab->runId() == QStringLiteral("hung-run"); }, 10000));
    ASSERT_TRUE(waitUntil([&] { return tab->storedCount() == 1; }, 10000))
        << tab->statusText().toStdString();
    EXPECT_EQ(tab->storedList()->count(), 1);
    EXPECT_TRUE(tab->storedList()->itemText(0).contains(QStringLiteral("stall")))
        << tab->storedList()->itemText(0).toStdString();
    EXPECT_TRUE(tab->headlineText().contains(
        QString::fromStdString(first->verdict.headline).toHtmlEscaped()))
        << tab->headlineText().toStdString();
    EXPECT_TRUE(tab->shownText().contains(QStringLiteral("barrier (blocked_rank.py")))
        << tab->shownText().toStdString();
    EXPECT_EQ(tab->nodesTree()->topLevelItemCount(), 1);

    // Diagnose now: a busy state at once (the GUI thread is not held), then the new diagnosis.
    ASSERT_TRUE(tab->diagnoseButton()->isEnabled());
    const auto clicked = std::chrono::steady_clock::now();
    tab->diagnoseButton()->click();
    EXPECT_LT(std::chrono::steady_clock::now() - clicked, std::chrono::milliseconds(500));
    EXPECT_TRUE(tab->isDiagnosing());
    EXPECT_FALSE(tab->diagnoseButton()->isEnabled());
    EXPECT_TRUE(tab->statusText().contains(QStringLiteral("asking 3 node(s)")))
        << tab->statusText().toStdString();
    ASSERT_TRUE(waitUntil([&] { return tab->diagnosesDone() == 1; }, 60000));
    EXPECT_FALSE(tab->isDiagnosing());
    EXPECT_TRUE(tab->diagnoseButton()->isEnabled());
    const QString status = tab->statusText();
    EXPECT_TRUE(status.contains(QStringLiteral("2 of 3 node(s) answered"))) << status.toStdString();
    EXPECT_TRUE(status.contains(QStringLiteral("could not ask ") + QString::fromStdString(dead)))
        << status.toStdString();
    EXPECT_TRUE(status.contains(QStringLiteral("stored with the run"))) << status.toStdString();

    // Per node: the unreachable one in red with its reason, the others' RAS state, the lagging
    // rank, the outlier's stack, the kernel log (or why it was not read).
    ASSERT_TRUE(waitUntil([&] { return tab->storedCount() == 2; }, 10000));
    EXPECT_TRUE(tab->storedList()->itemText(0).contains(QStringLiteral("on_demand")));
    EXPECT_EQ(tab->storedList()->currentIndex(), 0);
    QTreeWidget* nodes = tab->nodesTree();
    EXPECT_EQ(nodes->topLevelItemCount(), 3);
    QTreeWidgetItem* unreachable = topItemContaining(nodes, QString::fromStdString(dead));
    ASSERT_NE(unreachable, nullptr) << tab->shownText().toStdString();
    EXPECT_TRUE(unreachable->text(1).startsWith(QStringLiteral("could not be asked: ")))
        << unreachable->text(1).toStdString();
    EXPECT_EQ(unreachable->foreground(1).color(), errorColor());
    const QString shown = tab->shownText();
    EXPECT_TRUE(shown.contains(QStringLiteral("NCCL RAS | NCCL 2.28.9 at ") +
                               QString::fromStdString(ras.address())))
        << shown.toStdString();
    EXPECT_TRUE(
        shown.contains(QStringLiteral("rank 3 (pid 4103 on 10.0.0.1): behind in AllGather "
                                      "(640 of 641)")))
        << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("rank 1 (pid ")) &&
                shown.contains(QStringLiteral("in all_gather_into_tensor (blocked_rank.py:")))
        << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("Kernel log | ")));
    EXPECT_TRUE(tab->shownText().contains(QStringLiteral("all_gather_into_tensor")));

    // Stored with the run, and the tab's headline is the stored verdict's.
    auto history = db::History::open(historyPath);
    ASSERT_TRUE(history.ok());
    auto stored = (*history)->listDiagnoses(RunId{"hung-run"}, false);
    ASSERT_TRUE(stored.ok()) << stored.error();
    ASSERT_EQ(stored->size(), 2u);
    EXPECT_EQ(stored->front().trigger, "on_demand");
    EXPECT_TRUE(tab->headlineText().contains(
        QString::fromStdString(stored->front().headline).toHtmlEscaped()))
        << tab->headlineText().toStdString() << " vs " << stored->front().headline;

    // The older one is still there to choose.
    tab->storedList()->setCurrentIndex(1);
    EXPECT_EQ(tab->nodesTree()->topLevelItemCount(), 1);
    tab->storedList()->setCurrentIndex(0);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-diagnosis.png"))));
}

TEST(DiagnosisTab, SaysSoWhenNoNodeOfTheRunCanBeAsked) {
    QTemporaryDir dir;
    const QString historyPath = dir.filePath(QStringLiteral("history.sqlite"));
    {
        auto history = db::History::open(historyPath.toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        db::RunRecord run;
        run.id = RunId{"lonely-run"};
        run.name = "lonely-run";
        run.state = db::RunState::Failed;
        run.startedNs = nowNs();
        ASSERT_TRUE((*history)->upsertRun(run).ok());
    }
    DiagnosisView tab;
    tab.setHistoryPath(historyPath);
    tab.setRun(QStringLiteral("lonely-run"), {});
    tab.show();
    ASSERT_TRUE(waitUntil([&] { return tab.loadsApplied() >= 1; }, 10000));
    EXPECT_EQ(tab.storedCount(), 0);
    EXPECT_TRUE(tab.headlineText().contains(QStringLiteral("No diagnosis is stored")))
        << tab.headlineText().toStdString();
    tab.diagnoseNow();
    ASSERT_TRUE(waitUntil([&] { return tab.diagnosesDone() == 1; }, 10000));
    EXPECT_TRUE(tab.statusText().contains(
        QStringLiteral("no daemon address is known for the nodes of run lonely-run")))
        << tab.statusText().toStdString();
    EXPECT_EQ(tab.storedCount(), 0);
    auto history = db::History::open(historyPath.toStdString());
    ASSERT_TRUE(history.ok());
    EXPECT_TRUE((*history)->listDiagnoses(RunId{"lonely-run"}, false)->empty());
}

// The per-node "Stuck ranks" lines over the recorded RAS reports (tests/diagnosis/fixtures): a
// rank RAS could not reach, a rank behind in a collective count, and none in a healthy job.
TEST(DiagnosisTab, StuckRanksOfRecordedRasReports) {
    auto missing = diagnosis::parseRasReport(fixture("ras_missing_rank.json"));
    ASSERT_TRUE(missing.ok()) << missing.error();
    const QStringList m = stuckRanks(*missing);
    ASSERT_FALSE(m.isEmpty());
    EXPECT_TRUE(
        m.contains(QStringLiteral("rank 5 (pid 4105 on 10.0.0.2): missing, considered dead")))
        << m.join(QLatin1Char('\n')).toStdString();
    auto lagging = diagnosis::parseRasReport(fixture("ras_lagging_rank.json"));
    ASSERT_TRUE(lagging.ok()) << lagging.error();
    EXPECT_EQ(stuckRanks(*lagging),
              QStringList{QStringLiteral(
                  "rank 3 (pid 4103 on 10.0.0.1): behind in AllGather (640 of 641)")});
    // Named as the verdict names them: the node whose daemon address is RAS's host is "vm".
    diagnosis::NodeDiagnosis node;
    node.hostname = "vm";
    node.address = "10.0.0.1:7070";
    node.rasAvailable = true;
    node.ras = *lagging;
    const diagnosis::HostNames names({node}, lagging->communicators);
    EXPECT_EQ(stuckRanks(*lagging, &names),
              QStringList{QStringLiteral(
                  "rank 3 (pid 4103 on vm, 10.0.0.1): behind in AllGather (640 of 641)")});
    EXPECT_EQ(nodeLines(node, &names).stuckRanks, stuckRanks(*lagging, &names));
    auto healthy = diagnosis::parseRasReport(fixture("ras_healthy.json"));
    ASSERT_TRUE(healthy.ok()) << healthy.error();
    EXPECT_TRUE(stuckRanks(*healthy).isEmpty())
        << stuckRanks(*healthy).join(QLatin1Char('\n')).toStdString();
}
