// issue 44: the GUI's own controller diagnoses runs as `runplanectl watch` does. A real runplaned
// on loopback (stall detection after 2 s) runs a real Python process blocked in barrier()
// (tests/diagnosis/blocked_rank.py, py-spy from the pinned venv on the daemon's PATH) and then a
// run that fails (exit 3). The Cluster page ingests the daemon into a real SQLite history; its
// controller must diagnose the stalled run once (trigger "stall") and the failed run once
// (trigger "failed"), off the GUI thread, store both with their runs, and say each verdict in the
// status bar; the Runs page then shows the verdict in the run list and the run view's header.
#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <chrono>

#include "db/history/history.h"
#include "gui/models/cluster_service.h"
#include "gui/models/run_models.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "tests/diagnosis/diagnosis_cluster.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr const char* kNode = "gui-diag-node";

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::vector<db::DiagnosisRecord> stored(const std::string& history, const char* run) {
    db::OpenOptions readOnly;
    readOnly.readOnly = true;
    auto h = db::History::open(history, readOnly);
    if (!h.ok()) {
        return {};
    }
    auto list = (*h)->listDiagnoses(RunId{run}, true);
    return list.ok() ? *list : std::vector<db::DiagnosisRecord>{};
}

/// Starts a run on the daemon at address through the real StartRun RPC.
std::string startRun(const std::string& address, const std::string& runId,
                     const std::vector<std::string>& argv) {
    auto stub =
        v1::Agent::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    v1::StartRunRequest req;
    req.set_run_id(runId);
    for (const auto& a : argv) {
        req.add_argv(a);
    }
    req.set_role(v1::RUN_ROLE_STANDALONE);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::RunStatus st;
    const grpc::Status s = stub->StartRun(&ctx, req, &st);
    return s.ok() ? std::string() : s.error_message();
}

}  // namespace

TEST(ControllerDiagnosis, TheGuisControllerDiagnosesAStalledAndAFailedRunOnceEach) {
    namespace dt = runplane::diagnosis::testing;
    ASSERT_TRUE(dt::haveVenv()) << "no py-spy venv at " << dt::pySpyVenv()
                                << " (the pyspy_venv fixture: scripts/setup-pyspy-venv.sh)";
    dt::ClusterOptions o;
    o.nodes = 1;
    o.runId = "stalled-run";
    o.daemonArgsOf = [](int) {
        return std::vector<std::string>{"--node-id", kNode, "--stall-seconds", "2"};
    };
    dt::DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    const std::string address = cluster.addresses().front();

    // The runs as a submit records them: on the node whose address the ingest records.
    QTemporaryDir dir;
    const std::string history = dir.filePath(QStringLiteral("history.sqlite")).toStdString();
    {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        for (const char* id : {"stalled-run", "failing-run"}) {
            db::RunRecord run;
            run.id = RunId{id};
            run.name = id;
            run.state = db::RunState::Running;
            run.startedNs = nowNs();
            run.nodes = {kNode};
            ASSERT_TRUE((*h)->upsertRun(run).ok());
        }
    }

    ClusterPage page(QString::fromStdString(history));
    QStringList messages;
    QObject::connect(&page, &Page::statusMessage,
                     [&](const QString& message) { messages << message; });
    // The GUI thread keeps turning while the nodes are asked: the largest gap between ticks.
    QElapsedTimer sinceTick;
    qint64 worstGapMs = 0;
    QTimer tick;
    tick.setInterval(20);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        if (sinceTick.isValid()) {
            worstGapMs = std::max(worstGapMs, sinceTick.elapsed());
        }
        sinceTick.restart();
    });
    tick.start();
    ASSERT_TRUE(page.service()->diagnosisOn());
    ASSERT_TRUE(page.addAddress(QString::fromStdString(address)));

    // The stall (2 s without output) -> one diagnosis, stored with the run, said in the status.
    ASSERT_TRUE(waitUntil([&] { return !stored(history, "stalled-run").empty(); }, 60000))
        << messages.join(QLatin1Char('\n')).toStdString();
    auto stalled = stored(history, "stalled-run");
    ASSERT_EQ(stalled.size(), 1u);
    EXPECT_EQ(stalled[0].trigger, "stall");
    ASSERT_FALSE(stalled[0].headline.empty());
    const QString stallLine = QStringLiteral("Run stalled-run diagnosed (stall): ") +
                              QString::fromStdString(stalled[0].headline);
    ASSERT_TRUE(waitUntil([&] { return messages.contains(stallLine); }, 10000))
        << messages.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(
        messages.contains(QStringLiteral("Run stalled-run: it stalled; diagnosing its nodes")))
        << messages.join(QLatin1Char('\n')).toStdString();
    // The daemon's real stack of the blocked process names its function (unless the sandbox
    // refuses ptrace: then the diagnosis says so instead).
    const bool ptraceRefused =
        stalled[0].json.find("Operation not permitted") != std::string::npos ||
        stalled[0].json.find("Permission denied") != std::string::npos;
    if (!ptraceRefused) {
        EXPECT_NE(stalled[0].json.find("\"barrier\""), std::string::npos) << stalled[0].json;
    }

    // A run that fails -> one diagnosis with trigger "failed".
    ASSERT_EQ(startRun(address, "failing-run",
                       {"/bin/sh", "-c", "echo 'RuntimeError: boom' >&2; sleep 0.5; exit 3"}),
              "");
    ASSERT_TRUE(waitUntil([&] { return !stored(history, "failing-run").empty(); }, 60000))
        << messages.join(QLatin1Char('\n')).toStdString();
    auto failed = stored(history, "failing-run");
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].trigger, "failed");
    const QString failedLine = QStringLiteral("Run failing-run diagnosed (failed): ") +
                               QString::fromStdString(failed[0].headline);
    ASSERT_TRUE(waitUntil([&] { return messages.contains(failedLine); }, 10000))
        << messages.join(QLatin1Char('\n')).toStdString();

    // Once per episode: the stalled run stays quiet and is not diagnosed again.
    test::pump(4000);
    EXPECT_EQ(stored(history, "stalled-run").size(), 1u);
    EXPECT_EQ(stored(history, "failing-run").size(), 1u);
    EXPECT_LT(worstGapMs, 1000) << "the GUI thread stood still while diagnosing";

    // The run's status: the Runs page's Diagnosis column and the run view's header.
    RunsPage runs(QString::fromStdString(history));
    runs.resize(1600, 900);
    runs.show();
    ASSERT_TRUE(waitUntil([&] { return runs.runsModel()->rowCount() == 2; }, 10000));
    const RunListModel* model = runs.runsModel();
    const int row = model->indexOf(QStringLiteral("stalled-run"));
    ASSERT_GE(row, 0);
    EXPECT_EQ(model->index(row, RunListModel::DiagnosisColumn).data().toString(),
              QString::fromStdString(stalled[0].headline));
    EXPECT_TRUE(model->index(row, RunListModel::StateColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("Diagnosis (stall, ")));
    ASSERT_TRUE(runs.selectRun(QStringLiteral("stalled-run")));
    ASSERT_TRUE(waitUntil([&] { return runs.runView()->snapshot() != nullptr; }, 10000));
    EXPECT_TRUE(runs.runView()->headerText().contains(
        QString::fromStdString(stalled[0].headline).toHtmlEscaped()))
        << runs.runView()->headerText().toStdString();
}

// Off: no trigger, nothing stored (the switch `runplanectl watch --no-diagnose` has too).
TEST(ControllerDiagnosis, OffMeansNoDiagnosis) {
    namespace dt = runplane::diagnosis::testing;
    ASSERT_TRUE(dt::haveVenv());
    dt::ClusterOptions o;
    o.nodes = 1;
    o.runId = "quiet-run";
    o.daemonArgsOf = [](int) {
        return std::vector<std::string>{"--node-id", kNode, "--stall-seconds", "1"};
    };
    dt::DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    QTemporaryDir dir;
    const std::string history = dir.filePath(QStringLiteral("history.sqlite")).toStdString();
    {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        db::RunRecord run;
        run.id = RunId{"quiet-run"};
        run.state = db::RunState::Running;
        run.startedNs = nowNs();
        run.nodes = {kNode};
        ASSERT_TRUE((*h)->upsertRun(run).ok());
    }
    ClusterService service(QString::fromStdString(history));
    service.setDiagnosis(false);
    service.setConnection({}, 0);  // the controller made after the switch has no trigger
    int started = 0;
    QObject::connect(&service, &ClusterService::diagnosisStarted, [&] { ++started; });
    service.addNode(QString::fromStdString(cluster.addresses().front()));
    bool stallStored = false;
    ASSERT_TRUE(waitUntil(
        [&] {
            db::OpenOptions readOnly;
            readOnly.readOnly = true;
            auto h = db::History::open(history, readOnly);
            if (!h.ok()) {
                return false;
            }
            db::EventFilter f;
            f.runId = RunId{"quiet-run"};
            f.kind = "stall";
            auto events = (*h)->listEvents(f);
            stallStored = events.ok() && !events->empty();
            return stallStored;
        },
        30000));
    test::pump(3000);
    EXPECT_EQ(started, 0);
    EXPECT_TRUE(stored(history, "quiet-run").empty());
}
