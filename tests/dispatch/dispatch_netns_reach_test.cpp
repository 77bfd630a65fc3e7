// issue 47, "a host's link cut during a run (its daemon unreachable, the run's state on the other
// hosts kept, an event naming the host); a host that comes back". Three namespace hosts
// (tests/support/netns_hosts.h), one secured runplaned each, watched by a real Controller into a
// real SQLite history, as the GUI and `runplanectl watch` watch them. A run goes on host 1; host
// 3's cable is cut: the history gets one host_unreachable event naming host 3 (hostname, address,
// when it was last heard), `runplanectl history events` shows it, the run on host 1 keeps running
// and hosts 1 and 2 get no such event. The cable back: a host_reachable event with how long host 3
// was away. Needs root; skipped with the reason elsewhere. No Ray.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "backend/control/controller.h"
#include "backend/control/host_reachability.h"
#include "db/history/history.h"
#include "tests/dispatch/history_events.h"
#include "tests/dispatch/netns_cluster.h"
#include "tests/dispatch/ray_test_support.h"
#include "tests/support/daemon_process.h"
#include "tests/support/process.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;
using runplane::testing::NetnsHosts;

namespace {

bool allStreaming(const Controller& controller) {
    for (const auto& n : controller.nodes()) {
        if (n.ingest.state != IngestState::Streaming) {
            return false;
        }
    }
    return true;
}

std::string historyEvents(const std::string& history, const std::string& kind) {
    std::string out;
    runplane::testing::runCommand({runplane::testing::builtBinary("backend/cli/runplanectl"),
                                   "history", "events", "--history", history, "--kind", kind},
                                  &out);
    return out;
}

}  // namespace

TEST(NetnsHostsReach, LinkCutRecordsHostUnreachableNamingTheHostAndItsReturn) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    SecuredHosts c(3);
    std::string error;
    ASSERT_TRUE(c.start({{"PATH", "/usr/bin:/bin"}}, &error)) << error;
    const std::string history = c.dir.path() + "/history.sqlite";

    ControllerOptions options;
    options.historyPath = history;
    options.client = c.client;
    options.client.callTimeout = std::chrono::seconds(3);
    options.alertsFile = std::nullopt;
    Controller controller(options);
    for (const auto& address : c.addresses()) {
        ASSERT_TRUE(controller.addNode(address).ok()) << address;
    }
    ASSERT_TRUE(waitFor([&] { return allStreaming(controller); }, std::chrono::seconds(60)));

    SubmitSpec submit;
    submit.address = c.daemons[0]->address();
    submit.run.runId = runplane::RunId{"netns-reach-run"};
    submit.run.argv = {"/bin/sh", "-c", "exec sleep 300"};
    auto run = controller.submitRun(submit);
    ASSERT_TRUE(run.ok()) << run.error();

    // Host 3's cable cut (mid-run): within the stream's silence limit (15 s) and one GetNode.
    const auto cutAt = std::chrono::system_clock::now();
    ASSERT_TRUE(c.hosts.setLinkUp(2, false)) << c.hosts.error();
    ASSERT_TRUE(waitFor([&] { return !eventsOfKind(history, kHostUnreachableEvent).empty(); },
                        std::chrono::seconds(60)));
    auto lost = eventsOfKind(history, kHostUnreachableEvent);
    ASSERT_EQ(lost.size(), 1u) << "only host 3 is lost";
    const auto& e = lost.front();
    EXPECT_EQ(e.nodeId.value(), c.hosts.hostname(2));
    EXPECT_TRUE(e.runId.empty()) << "a node-level event";
    EXPECT_EQ(runplane::db::attrText(e.attrs, "hostname"), c.hosts.hostname(2));
    EXPECT_EQ(runplane::db::attrText(e.attrs, "address"), c.daemons[2]->address());
    const std::int64_t sinceNs = e.attrs.at("since_ns").get<std::int64_t>();
    const std::int64_t cutNs =
        std::chrono::duration_cast<std::chrono::nanoseconds>(cutAt.time_since_epoch()).count();
    // Last heard: a heartbeat or sample shortly before the cut, not when the loss was noticed.
    EXPECT_LE(sinceNs, cutNs + 1'000'000'000) << e.message;
    EXPECT_GE(sinceNs, cutNs - 10'000'000'000) << e.message;
    EXPECT_LT(sinceNs, e.tNs);
    EXPECT_NE(e.message.find("host " + c.hosts.hostname(2) + " (node " + c.hosts.hostname(2) +
                             ", runplaned at " + c.daemons[2]->address() + ") unreachable since " +
                             utcText(sinceNs)),
              std::string::npos)
        << e.message;
    const std::string shown = historyEvents(history, kHostUnreachableEvent);
    std::cout << "$ runplanectl history events --history history.sqlite --kind host_unreachable\n"
              << shown << std::endl;
    EXPECT_NE(shown.find(c.hosts.hostname(2)), std::string::npos) << shown;
    EXPECT_NE(shown.find(c.daemons[2]->address() + ") unreachable since"), std::string::npos)
        << shown;

    // The run on host 1 is untouched; hosts 1 and 2 still stream.
    auto runs = controller.syncRuns(c.daemons[0]->address());
    ASSERT_TRUE(runs.ok()) << runs.error();
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(runs->front().state, NodeRunState::Running);
    for (const auto& n : controller.nodes()) {
        if (n.address != c.daemons[2]->address()) {
            EXPECT_EQ(n.ingest.state, IngestState::Streaming) << n.address;
        }
    }

    // The cable back: host_reachable, with how long host 3 was away; no second "unreachable".
    ASSERT_TRUE(c.hosts.setLinkUp(2, true)) << c.hosts.error();
    ASSERT_TRUE(waitFor([&] { return !eventsOfKind(history, kHostReachableEvent).empty(); },
                        std::chrono::seconds(60)));
    const auto back = eventsOfKind(history, kHostReachableEvent);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back.front().nodeId.value(), c.hosts.hostname(2));
    EXPECT_EQ(back.front().attrs.at("since_ns").get<std::int64_t>(), sinceNs);
    const std::int64_t awayMs = back.front().attrs.at("away_ms").get<std::int64_t>();
    EXPECT_GE(awayMs, 10'000) << back.front().message;  // the 15 s silence limit at least
    EXPECT_NE(back.front().message.find("host " + c.hosts.hostname(2)), std::string::npos);
    EXPECT_NE(back.front().message.find("reachable again after"), std::string::npos);
    const std::string shownBack = historyEvents(history, kHostReachableEvent);
    std::cout << "$ runplanectl history events --history history.sqlite --kind host_reachable\n"
              << shownBack << std::endl;
    EXPECT_NE(shownBack.find(c.hosts.hostname(2)), std::string::npos) << shownBack;
    EXPECT_EQ(eventsOfKind(history, kHostUnreachableEvent).size(), 1u);
    ASSERT_TRUE(waitFor([&] { return allStreaming(controller); }, std::chrono::seconds(60)));
    EXPECT_TRUE(
        controller.stopRun(c.daemons[0]->address(), runplane::RunId{"netns-reach-run"}, 1).ok());
    controller.stopAll();
}
