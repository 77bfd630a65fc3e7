// issue 2 / issue 5: the controller against real runplaned processes on 127.0.0.1. What reaches
// the SQLite history is read back with raw SQL (history_check.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "backend/control/controller.h"
#include "backend/control/telemetry_ingestor.h"
#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/daemon_process.h"
#include "tests/support/history_check.h"
#include "tests/support/process.h"
#include "tests/support/tcp_proxy.h"

namespace runplane::control {
namespace {

using runplane::testing::checkContinuity;
using runplane::testing::Daemon;
using runplane::testing::queryInt;
// TempDir, not the history tests' ScratchDir: its destructor also stops the supervisors a killed
// daemon leaves recording under it.
using ScratchDir = runplane::testing::TempDir;
using runplane::testing::TcpProxy;

template <typename Pred>
bool waitFor(Pred&& pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred();
}

IngestorOptions ingestOptions(const std::string& address, const std::string& history) {
    IngestorOptions o;
    o.address = address;
    o.historyPath = history;
    o.backoffInitial = std::chrono::milliseconds(50);
    o.backoffMax = std::chrono::milliseconds(400);
    return o;
}

std::string describe(const runplane::testing::Continuity& c) {
    std::string text = "first " + std::to_string(c.firstSeq) + " cursor " +
                       std::to_string(c.cursor) + " rows " + std::to_string(c.rows) + " distinct " +
                       std::to_string(c.distinctSeqs) + " gaps " + std::to_string(c.gaps.size()) +
                       " missing " + std::to_string(c.missing.size()) +
                       (c.error.empty() ? "" : " " + c.error);
    return text;
}

TEST(IngestIntegration, HostMemoryReachesTheHistory) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-a");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    TelemetryIngestor ingestor(ingestOptions(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return checkContinuity(history, "node-a").hostSamples >= 10; }))
        << ingestor.status().lastError;
    ingestor.stop();
    const auto c = checkContinuity(history, "node-a");
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_EQ(c.rows, c.distinctSeqs) << describe(c);
    EXPECT_TRUE(c.missing.empty()) << describe(c);
    EXPECT_TRUE(c.gaps.empty()) << describe(c);
    EXPECT_EQ(c.firstSeq, 1u);
    EXPECT_GE(c.cursor, static_cast<std::uint64_t>(c.distinctSeqs));
    // Every host series the daemon samples, with units and plausible values.
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM series WHERE node_id='node-a' AND "
                       "name IN ('host.mem.total_bytes','host.mem.available_bytes',"
                       "'host.mem.used_bytes','host.mem.page_cache_bytes',"
                       "'host.mem.shmem_bytes') AND unit='bytes';"),
              5);
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM samples s JOIN series r ON r.id=s.series_id"
                       " WHERE r.name='host.mem.used_bytes' AND (s.value <= 0 OR "
                       "s.min > s.value OR s.max < s.value);"),
              0);
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM nodes WHERE node_id='node-a' AND "
                       "address='" +
                           address + "';"),
              1);
    daemon.stop();
}

// issue 2 / issue 5: kill -9 the daemon mid-stream and restart it: no duplicate rows, the
// sequence continues (or the hole is an explicit gap event).
TEST(IngestIntegration, DaemonKilledAndRestartedMidStream) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-b");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    TelemetryIngestor ingestor(ingestOptions(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= 30; }))
        << ingestor.status().lastError;
    daemon.kill9();
    ASSERT_TRUE(waitFor([&] { return ingestor.status().state == IngestState::Backoff; }));
    const std::uint64_t before = ingestor.status().cursor;
    ASSERT_EQ(daemon.start(), address) << daemon.error();
    ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= before + 30; }))
        << ingestor.status().lastError;
    const IngestorStatus status = ingestor.status();
    ingestor.stop();
    EXPECT_GE(status.reconnects, 1u);
    const auto c = checkContinuity(history, "node-b");
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_EQ(c.rows, c.distinctSeqs) << describe(c);
    EXPECT_TRUE(c.missing.empty()) << describe(c);
    EXPECT_EQ(c.firstSeq, 1u);
    EXPECT_GE(c.cursor, before + 30);
    daemon.stop();
}

// issue 5: the network link cut mid-stream (a relay between controller and daemon closes every
// connection and refuses new ones for a while), with a run attached: after the link returns, the
// history holds every record exactly once, and the run kept running throughout.
TEST(IngestIntegration, CutConnectionResumesExactlyOnceWhileTheRunGoesOn) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-cut");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    TcpProxy link(address);
    ASSERT_FALSE(link.address().empty());
    const std::string history = dir.file("history.sqlite");
    ControllerOptions copts;
    copts.historyPath = history;
    Controller controller(copts);
    SubmitSpec spec;
    spec.address = address;  // submitted directly; only the telemetry goes over the link
    spec.run.runId = RunId{"through-the-cut"};
    spec.run.argv = {"/bin/sh", "-c",
                     "i=0; while [ $i -lt 300 ]; do echo \"step $i: {'train/loss': 1.0}\"; "
                     "i=$((i+1)); sleep 0.1; done"};
    auto submitted = controller.submitRun(spec);
    ASSERT_TRUE(submitted) << submitted.error();

    TelemetryIngestor ingestor(ingestOptions(link.address(), history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= 30; }))
        << ingestor.status().lastError;
    link.cut();
    ASSERT_TRUE(waitFor([&] { return ingestor.status().state == IngestState::Backoff; }))
        << "the ingestor did not notice the cut";
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the daemon keeps spooling meanwhile
    const std::uint64_t before = ingestor.status().cursor;
    link.resume();
    // The run prints 10 lines a second; host and role-memory records arrive faster than that, so
    // the wait is for the run's own series to pass 30 samples, not for a record count.
    const std::string lossSamples =
        "SELECT count(*) FROM samples s JOIN series r ON r.id = s.series_id WHERE"
        " r.run_id = 'through-the-cut' AND r.name = 'train/loss';";
    ASSERT_TRUE(waitFor([&] {
        return ingestor.status().cursor >= before + 40 && queryInt(history, lossSamples) >= 30;
    })) << ingestor.status().lastError;
    const IngestorStatus status = ingestor.status();
    ingestor.stop();
    EXPECT_GE(status.reconnects, 1u);
    EXPECT_GE(link.connectionsAccepted(), 2);
    const auto c = checkContinuity(history, "node-cut");
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_EQ(c.rows, c.distinctSeqs) << describe(c);
    EXPECT_TRUE(c.missing.empty()) << describe(c);
    EXPECT_TRUE(c.gaps.empty()) << describe(c);
    EXPECT_EQ(c.firstSeq, 1u);
    // The run's log-derived series went on through the cut, and its state never left running.
    EXPECT_GE(queryInt(history, lossSamples), 30);
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM runs WHERE id = 'through-the-cut' AND"
                       " status = 'running';"),
              1);
    controller.stopAll();
    daemon.stop();
}

// issue 2: a history that is behind what the daemon still keeps (restored from an older copy
// after the spool was trimmed by acknowledgements) records the hole as an explicit gap event.
TEST(IngestIntegration, TrimmedRangeIsAnExplicitGap) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-c");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string older = dir.file("older.sqlite");
    {
        TelemetryIngestor ingestor(ingestOptions(address, history));
        ASSERT_TRUE(ingestor.start().ok());
        ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= 20; }));
    }
    // The ingestor closed the file (WAL checkpointed); copy it as the "older" history.
    std::filesystem::copy_file(history, older);
    const std::uint64_t olderCursor =
        static_cast<std::uint64_t>(queryInt(older, "SELECT last_seq FROM ingest_cursor;"));
    {
        // Continue on the main history: its acknowledgements let the daemon trim its spool.
        TelemetryIngestor ingestor(ingestOptions(address, history));
        ASSERT_TRUE(ingestor.start().ok());
        ASSERT_TRUE(waitFor([&] { return ingestor.status().cursor >= olderCursor + 40; }));
    }
    TelemetryIngestor behind(ingestOptions(address, older));
    ASSERT_TRUE(behind.start().ok());
    ASSERT_TRUE(waitFor([&] { return behind.status().gapsRecorded >= 1; }))
        << behind.status().lastError;
    ASSERT_TRUE(waitFor([&] { return behind.status().cursor > olderCursor + 40; }));
    behind.stop();
    const auto c = checkContinuity(older, "node-c");
    EXPECT_EQ(c.rows, c.distinctSeqs) << describe(c);
    EXPECT_TRUE(c.missing.empty()) << describe(c);
    ASSERT_EQ(c.gaps.size(), 1u) << describe(c);
    EXPECT_EQ(c.gaps[0].first, olderCursor + 1);
    EXPECT_GE(c.gaps[0].second, olderCursor + 1);
    daemon.stop();
}

// A submitted run is recorded with its recipe snapshot and provenance, and its end (from the
// daemon's run-state events) reaches the history.
TEST(IngestIntegration, SubmittedRunIsRecordedAndItsEndArrives) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-d");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    ControllerOptions options;
    options.historyPath = history;
    Controller controller(options);
    ASSERT_TRUE(controller.addNode(address).ok());
    SubmitSpec spec;
    spec.address = address;
    spec.name = "echo run";
    spec.run.runId = RunId{"run-echo-1"};
    spec.run.argv = {"/bin/sh", "-c", "echo 'step 1: {\"loss\": 0.5}'; exit 3"};
    spec.run.recipeYaml = "name: echo\n";
    spec.provenanceJson = R"({"git_rev":"deadbeef"})";
    auto record = controller.submitRun(spec);
    ASSERT_TRUE(record.ok()) << record.error() << "\n" << daemon.child().stderrText();
    EXPECT_EQ(record->nodes, std::vector<std::string>{"node-d"});
    auto opened = db::History::open(history);
    ASSERT_TRUE(opened.ok());
    ASSERT_TRUE(waitFor([&] {
        auto run = (*opened)->run(RunId{"run-echo-1"});
        return run.ok() && *run && (*run)->state == db::RunState::Failed;
    })) << "run state never reached the history; events: "
        <<
        [&] {
            std::string text;
            db::EventFilter filter;
            filter.runId = RunId{"run-echo-1"};
            if (auto events = (*opened)->listEvents(filter); events.ok()) {
                for (const auto& e : *events) {
                    text += e.kind + " " + e.message + " " + nlohmann::json(e.attrs).dump() + "\n";
                }
            }
            auto run = (*opened)->run(RunId{"run-echo-1"});
            if (run.ok() && *run) {
                text += "state " + std::string(db::toString((*run)->state)) + " " + (*run)->message;
            }
            return text;
        }();
    auto run = *(*opened)->run(RunId{"run-echo-1"});
    EXPECT_EQ(run->recipeYaml, "name: echo\n");
    EXPECT_NE(run->provenanceJson.find("deadbeef"), std::string::npos);
    EXPECT_NE(run->provenanceJson.find("\"node_id\":\"node-d\""), std::string::npos)
        << run->provenanceJson;
    EXPECT_GT(run->endedNs, run->startedNs);
    // Submitting the same ended run id again is refused by the history.
    EXPECT_FALSE(controller.submitRun(spec).ok());
    controller.stopAll();
    daemon.stop();
}

}  // namespace
}  // namespace runplane::control
