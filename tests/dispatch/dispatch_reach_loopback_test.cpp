// issue 47, host reachability on loopback (runs as any user; NetnsHostsReach is the same across
// network namespaces and needs root). Real runplaned processes (tests/support/process.h,
// restartable on a fixed port), a real Controller and TelemetryIngestor writing a real SQLite
// history, and runplanectl reading it:
// - a daemon killed mid-run: one host_unreachable per run active on its node (not the run that
//   ended there, not the run on the other node; a dispatched run naming the node by address
//   included), so `history events --run RUN` shows it; the daemon back: host_reachable, once per
//   such run too;
// - a daemon that comes back with another bearer token: it answers but refuses this ingestor's,
//   which is recorded as host_refused (naming host, node, address, the error, the run) and never
//   as host_unreachable; recorded once however often the ingestor retries, its lockout
//   (RESOURCE_EXHAUSTED) included; accepted again, no event; gone for good, host_unreachable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "backend/control/controller.h"
#include "backend/control/host_reachability.h"
#include "backend/control/telemetry_ingestor.h"
#include "db/history/history.h"
#include "tests/dispatch/history_events.h"
#include "tests/dispatch/ray_test_support.h"
#include "tests/support/daemon_process.h"
#include "tests/support/process.h"

using namespace runplane::control;
using runplane::dispatch_testing::eventsOfKind;
using runplane::dispatch_testing::waitFor;
using runplane::testing::Daemon;
using runplane::testing::TempDir;

namespace {

std::set<std::string> runIdsOf(const std::vector<runplane::db::EventRecord>& events) {
    std::set<std::string> out;
    for (const auto& e : events) {
        out.insert(e.runId.value());
    }
    return out;
}

bool runEnded(const std::string& history, const std::string& runId) {
    runplane::db::OpenOptions readOnly;
    readOnly.readOnly = true;
    auto h = runplane::db::History::open(history, readOnly);
    if (!h.ok()) {
        return false;
    }
    auto run = (*h)->run(runplane::RunId{runId});
    return run.ok() && *run && (*run)->state != runplane::db::RunState::Running;
}

bool allStreaming(const Controller& controller) {
    for (const auto& n : controller.nodes()) {
        if (n.ingest.state != IngestState::Streaming) {
            return false;
        }
    }
    return !controller.nodes().empty();
}

std::string historyEvents(const std::string& history, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{runplane::testing::builtBinary("backend/cli/runplanectl"),
                                  "history", "events", "--history", history};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string out;
    runplane::testing::runCommand(argv, &out);
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

StartRunSpec sleeper(const std::string& id, const std::string& command = "exec sleep 300") {
    StartRunSpec run;
    run.runId = runplane::RunId{id};
    run.argv = {"/bin/sh", "-c", command};
    return run;
}

}  // namespace

TEST(ReachLoopback, ReachabilityEventsCarryTheRunsActiveOnTheNode) {
    TempDir dir;
    const std::string history = dir.file("history.sqlite");
    Daemon lost(dir.file("lost"), "reach-lost");
    Daemon other(dir.file("other"), "reach-other");
    ASSERT_FALSE(lost.start().empty()) << lost.error();
    ASSERT_FALSE(other.start().empty()) << other.error();

    ControllerOptions options;
    options.historyPath = history;
    options.client.callTimeout = std::chrono::seconds(3);
    options.alertsFile = std::nullopt;
    Controller controller(options);
    ASSERT_TRUE(controller.addNode(lost.address()).ok());
    ASSERT_TRUE(controller.addNode(other.address()).ok());
    ASSERT_TRUE(waitFor([&] { return allStreaming(controller); }, std::chrono::seconds(30)));

    // Two runs active on the node to be lost, one that ended there, one on the other node.
    for (const auto& [address, run] : std::vector<std::pair<std::string, StartRunSpec>>{
             {lost.address(), sleeper("reach-a")},
             {lost.address(), sleeper("reach-b")},
             {lost.address(), sleeper("reach-done", "exit 0")},
             {other.address(), sleeper("reach-z")}}) {
        SubmitSpec submit;
        submit.address = address;
        submit.run = run;
        auto started = controller.submitRun(submit);
        ASSERT_TRUE(started.ok()) << started.error();
    }
    ASSERT_TRUE(waitFor([&] { return runEnded(history, "reach-done"); }, std::chrono::seconds(30)))
        << "the finished run's end reaches the history";

    // A multi-node run as `dispatch launch` records it: its nodes are daemon addresses.
    {
        auto h = runplane::db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        runplane::db::RunRecord dispatched;
        dispatched.id = runplane::RunId{"reach-dispatched"};
        dispatched.name = "reach-dispatched";
        dispatched.startedNs = 1;
        dispatched.nodes = {other.address(), lost.address()};
        ASSERT_TRUE((*h)->upsertRun(dispatched).ok());
    }
    const std::set<std::string> active{"reach-a", "reach-b", "reach-dispatched"};

    lost.kill9();
    ASSERT_TRUE(waitFor([&] { return eventsOfKind(history, kHostUnreachableEvent).size() >= 3; },
                        std::chrono::seconds(30)));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // nothing more may follow
    const auto gone = eventsOfKind(history, kHostUnreachableEvent);
    ASSERT_EQ(gone.size(), 3u) << "once per run active on the node";
    EXPECT_EQ(runIdsOf(gone), active);
    for (const auto& e : gone) {
        EXPECT_EQ(e.nodeId.value(), "reach-lost");
        EXPECT_EQ(runplane::db::attrText(e.attrs, "address"), lost.address());
        EXPECT_TRUE(contains(e.message, "runplaned at " + lost.address() + ") unreachable since"))
            << e.message;
    }
    EXPECT_EQ(gone[0].message, gone[2].message) << "the same event, under each run";
    EXPECT_EQ(gone[0].tNs, gone[2].tNs);

    // `history events --run` finds it under each active run, and only there.
    const std::string shownA = historyEvents(history, {"--run", "reach-a"});
    std::cout << "$ runplanectl history events --history history.sqlite --run reach-a\n"
              << shownA << std::endl;
    EXPECT_TRUE(contains(shownA, kHostUnreachableEvent)) << shownA;
    EXPECT_TRUE(contains(shownA, lost.address() + ") unreachable since")) << shownA;
    EXPECT_TRUE(contains(historyEvents(history, {"--run", "reach-b"}), kHostUnreachableEvent));
    EXPECT_FALSE(contains(historyEvents(history, {"--run", "reach-done"}), kHostUnreachableEvent));
    EXPECT_FALSE(contains(historyEvents(history, {"--run", "reach-z"}), kHostUnreachableEvent));

    // Back on the same port: host_reachable, under the same runs.
    ASSERT_FALSE(lost.start().empty()) << lost.error();
    ASSERT_TRUE(waitFor([&] { return eventsOfKind(history, kHostReachableEvent).size() >= 3; },
                        std::chrono::seconds(30)));
    const auto back = eventsOfKind(history, kHostReachableEvent);
    ASSERT_EQ(back.size(), 3u);
    EXPECT_EQ(runIdsOf(back), active);
    EXPECT_TRUE(contains(historyEvents(history, {"--run", "reach-a"}), kHostReachableEvent));
    EXPECT_FALSE(contains(historyEvents(history, {"--run", "reach-z"}), kHostReachableEvent));
    EXPECT_EQ(eventsOfKind(history, kHostUnreachableEvent).size(), 3u);
    controller.stopAll();
}

TEST(ReachLoopback, RefusedCredentialsAreRecordedAsHostRefusedNotHostUnreachable) {
    TempDir dir;
    const std::string history = dir.file("history.sqlite");
    const std::string tokenA = "reach-token-a-0123456789abcdef";
    std::ofstream(dir.file("token-a")) << tokenA << "\n";
    std::ofstream(dir.file("token-b")) << "reach-token-b-fedcba9876543210\n";
    Daemon daemon(dir.file("state"), "reach-refusing");
    daemon.setExtraArgs({"--token-file", dir.file("token-a")});
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();

    NodeClientOptions client;
    client.bearerToken = tokenA;
    client.callTimeout = std::chrono::seconds(3);
    // A run on the node, recorded in the history as submitRun records it (no second ingestor).
    ControllerOptions submitter;
    submitter.historyPath = history;
    submitter.client = client;
    submitter.ingestTelemetry = false;
    submitter.alertsFile = std::nullopt;
    Controller controller(submitter);
    ASSERT_TRUE(controller.addNode(daemon.address()).ok());
    SubmitSpec submit;
    submit.address = daemon.address();
    submit.run = sleeper("reach-refused-run");
    auto started = controller.submitRun(submit);
    ASSERT_TRUE(started.ok()) << started.error();

    // The ingestor waits 4 s before reconnecting: the daemon is back, with another token, before
    // the first attempt after its stream ended (so no attempt finds the port closed).
    IngestorOptions options;
    options.address = daemon.address();
    options.historyPath = history;
    options.client = client;
    options.backoffInitial = std::chrono::seconds(4);
    options.backoffMax = std::chrono::seconds(4);
    std::mutex mutex;
    IngestorStatus status;
    IngestorCallbacks callbacks;
    callbacks.onStatus = [&](const IngestorStatus& s) {
        std::lock_guard lock(mutex);
        status = s;
    };
    auto state = [&] {
        std::lock_guard lock(mutex);
        return status;
    };
    TelemetryIngestor ingestor(options, callbacks);
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(
        waitFor([&] { return state().state == IngestState::Streaming; }, std::chrono::seconds(30)));

    // Back at once with another token, and a lockout after two refusals (backend/agent/auth.h).
    daemon.kill9();
    daemon.setExtraArgs({"--token-file", dir.file("token-b"), "--auth-max-failures", "2"});
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    ASSERT_TRUE(waitFor([&] { return !eventsOfKind(history, kHostRefusedEvent).empty(); },
                        std::chrono::seconds(30)))
        << state().lastError;
    // The ingestor keeps trying (4 s apart) until the daemon locks it out
    // (RESOURCE_EXHAUSTED): a refusal too, still one event and no loss.
    ASSERT_TRUE(waitFor(
        [&] { return contains(state().lastError, "too many failed authentication attempts"); },
        std::chrono::seconds(40)))
        << state().lastError;
    const auto refused = eventsOfKind(history, kHostRefusedEvent);
    ASSERT_EQ(refused.size(), 1u);
    const auto& e = refused.front();
    EXPECT_EQ(e.nodeId.value(), "reach-refusing");
    EXPECT_EQ(e.runId.value(), "reach-refused-run") << "the run active on the node";
    EXPECT_EQ(runplane::db::attrText(e.attrs, "node"), "reach-refusing");
    EXPECT_EQ(runplane::db::attrText(e.attrs, "address"), daemon.address());
    EXPECT_FALSE(runplane::db::attrText(e.attrs, "hostname").empty());
    // The refusal the ingestor met first: the wrong token, or the lockout its log tailing
    // (TailLogs, same token) ran into already.
    const std::string why = runplane::db::attrText(e.attrs, "error");
    EXPECT_TRUE(contains(why, kAuthenticationFailed) ||
                contains(why, "too many failed authentication attempts from 127.0.0.1"))
        << why;
    EXPECT_TRUE(contains(e.message, "(node reach-refusing, runplaned at " + daemon.address() +
                                        ") answers but refuses this controller's credentials"))
        << e.message;
    EXPECT_TRUE(contains(e.message, why)) << e.message;
    EXPECT_TRUE(eventsOfKind(history, kHostUnreachableEvent).empty())
        << "a host that answers is reachable";
    const std::string shown = historyEvents(history, {"--run", "reach-refused-run"});
    std::cout << "$ runplanectl history events --history history.sqlite --run reach-refused-run\n"
              << shown << std::endl;
    EXPECT_TRUE(contains(shown, kHostRefusedEvent)) << shown;

    // The token fixed: accepted, streaming again, no event (it never was unreachable).
    daemon.kill9();
    daemon.setExtraArgs({"--token-file", dir.file("token-a")});
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    ASSERT_TRUE(
        waitFor([&] { return state().state == IngestState::Streaming; }, std::chrono::seconds(30)))
        << state().lastError;
    EXPECT_TRUE(eventsOfKind(history, kHostReachableEvent).empty());
    EXPECT_TRUE(eventsOfKind(history, kHostUnreachableEvent).empty());

    // Gone for good: a loss, recorded as before.
    daemon.kill9();
    ASSERT_TRUE(waitFor([&] { return !eventsOfKind(history, kHostUnreachableEvent).empty(); },
                        std::chrono::seconds(30)));
    EXPECT_EQ(eventsOfKind(history, kHostRefusedEvent).size(), 1u);
    ingestor.stop();
}
