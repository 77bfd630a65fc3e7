// End to end (issue #48): a real runplaned, `runplanectl submit` of a run that fails, and
// `runplanectl watch --alerts FILE` ingesting it: the alert is sent from what watch stored, to a
// real HTTP receiver on loopback.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/alerts/receiver.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace runplane::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(WatchAlerts, AFailedRunIsAlertedFromWhatWatchStored) {
    ScratchDir dir;
    Receiver receiver;
    Daemon daemon(dir.file("state"), "node-w");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string rules = dir.file("alerts.yaml");
    writeAll(rules,
             "destinations:\n"
             "  - {name: hook, type: webhook, url: '" +
                 receiver.url("/hook") +
                 "'}\n"
                 "rules:\n"
                 "  - {name: failures, events: [process_exit], run_states: [failed], "
                 "runs: {names: ['nightly-*']}, min_level: error, to: hook}\n");
    ::chmod(rules.c_str(), 0600);
    Child watch = Child::spawn({builtBinary("backend/cli/runplanectl"), "watch", address,
                                "--history", history, "--alerts", rules, "--seconds", "60"},
                               dir.file("watch.out"), dir.file("watch.err"));
    // The sender has started (its cursor is set) once it holds the lease.
    ASSERT_TRUE(waitUntil([&] {
        const auto s = runCtl({"alerts", "status", "--history", history, "--json"}, dir.path());
        return s.exitCode == 0 && s.out.find("\"active\": true") != std::string::npos;
    })) << watch.stderrText();
    const auto submit = runCtl({"submit", address, "--history", history, "--name", "nightly-grpo",
                                "--run-id", "nightly-1", "--", "/bin/sh", "-c", "exit 3"},
                               dir.path());
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    ASSERT_TRUE(waitUntil([&] { return receiver.requests().size() >= 2; }, 30s))
        << watch.stderrText();
    std::this_thread::sleep_for(500ms);
    watch.kill(SIGTERM);
    EXPECT_TRUE(watch.wait(20s).has_value());
    std::map<std::string, json> byKind;
    for (const auto& r : receiver.requests()) {
        const json j = json::parse(r.body);
        byKind[j["event"]["kind"].get<std::string>()] = j;
    }
    ASSERT_EQ(receiver.requests().size(), 2u) << watch.stderrText();
    ASSERT_TRUE(byKind.count("process_exit"));
    ASSERT_TRUE(byKind.count("run_state"));
    const json& exit = byKind["process_exit"];
    EXPECT_EQ(exit["run"]["id"], "nightly-1");
    EXPECT_EQ(exit["run"]["name"], "nightly-grpo");
    EXPECT_EQ(exit["node"]["id"], "node-w");
    EXPECT_EQ(exit["event"]["numbers"]["exit_code"], 3.0);
    EXPECT_EQ(exit["level"], "error");
    EXPECT_EQ(byKind["run_state"]["event"]["attributes"]["state"], "RUN_STATE_FAILED");
    daemon.stop();
}

}  // namespace
}  // namespace runplane::testing
