// issue 2: runplanectl against real daemons: nodes, watch (killed with -9 and restarted),
// unreachable addresses and corrupt history files.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/db/test_util.h"
#include "tests/support/history_check.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

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

TEST(CliIntegration, NodesTableAndJson) {
    ScratchDir dir;
    Daemon a(dir.file("a"), "node-a");
    Daemon b(dir.file("b"), "node-b");
    const std::string addrA = a.start();
    const std::string addrB = b.start();
    ASSERT_FALSE(addrA.empty()) << a.error();
    ASSERT_FALSE(addrB.empty()) << b.error();
    auto json = runCtl({"nodes", addrA, addrB, "--json"}, dir.path().string());
    ASSERT_EQ(json.exitCode, 0) << json.err;
    auto parsed = nlohmann::json::parse(json.out);
    ASSERT_EQ(parsed.size(), 2u);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(parsed[i]["address"], i == 0 ? addrA : addrB);
        EXPECT_EQ(parsed[i]["hostname"], std::string(host));
        EXPECT_EQ(parsed[i]["protocol_version"], 1);
        EXPECT_EQ(parsed[i]["cpu_cores"], std::thread::hardware_concurrency());
        EXPECT_GT(parsed[i]["host_ram_bytes"].get<std::uint64_t>(), 0u);
        EXPECT_FALSE(parsed[i]["kernel"].get<std::string>().empty());
        EXPECT_TRUE(parsed[i]["gpus"].empty());
        EXPECT_FALSE(parsed[i]["gpus_unavailable_reason"].get<std::string>().empty());
    }
    EXPECT_EQ(parsed[0]["node_id"], "node-a");
    auto table = runCtl({"nodes", addrA}, dir.path().string());
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("ADDRESS"), std::string::npos);
    EXPECT_NE(table.out.find(addrA), std::string::npos);
    EXPECT_NE(table.out.find(host), std::string::npos);
    EXPECT_NE(table.out.find("none: "), std::string::npos) << table.out;  // no GPU: the reason
}

// issue 2: an unreachable address gives a clear message (and a non-zero exit).
TEST(CliIntegration, UnreachableAddressIsOneClearLine) {
    ScratchDir dir;
    Daemon a(dir.file("a"), "node-a");
    const std::string addrA = a.start();
    ASSERT_FALSE(addrA.empty()) << a.error();
    auto nodes = runCtl({"nodes", addrA, "127.0.0.1:1"}, dir.path().string());
    EXPECT_EQ(nodes.exitCode, 1);
    EXPECT_NE(nodes.out.find(addrA), std::string::npos);  // the reachable node is still shown
    EXPECT_NE(nodes.err.find("cannot reach runplaned at 127.0.0.1:1: connection refused"),
              std::string::npos)
        << nodes.err;
    auto watch =
        runCtl({"watch", "127.0.0.1:1", "--history", dir.file("h.sqlite"), "--seconds", "1"},
               dir.path().string());
    EXPECT_EQ(watch.exitCode, 1);
    EXPECT_NE(watch.err.find("cannot reach runplaned at 127.0.0.1:1: connection refused"),
              std::string::npos)
        << watch.err;
}

// issue 2 / issue 5: the controller (runplanectl watch) killed with -9 mid-ingest and started
// again resumes from its cursor: every seq once, no duplicates, no hole.
TEST(CliIntegration, WatchKilledAndRestartedResumesFromTheCursor) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-w");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string ctl = builtBinary("backend/cli/runplanectl");
    Child watch = Child::spawn({ctl, "watch", address, "--history", history, "--seconds", "60"},
                               dir.file("w1.out"), dir.file("w1.err"));
    ASSERT_TRUE(waitFor([&] { return checkContinuity(history, "node-w").hostSamples >= 5; }))
        << watch.stderrText();
    watch.kill(SIGKILL);
    ASSERT_EQ(watch.wait(std::chrono::seconds(5)), 128 + SIGKILL);
    const auto afterKill = checkContinuity(history, "node-w");
    EXPECT_NE(watch.stdoutText().find("used "), std::string::npos) << watch.stdoutText();
    // Let records pile up in the daemon's spool while no controller runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    Child again = Child::spawn({ctl, "watch", address, "--history", history, "--seconds", "60"},
                               dir.file("w2.out"), dir.file("w2.err"));
    ASSERT_TRUE(waitFor([&] {
        return checkContinuity(history, "node-w").cursor >= afterKill.cursor + 40;
    })) << again.stderrText();
    again.kill(SIGTERM);  // clean stop: commits, prints a summary
    ASSERT_EQ(again.wait(std::chrono::seconds(10)), 0) << again.stderrText();
    EXPECT_NE(again.stderrText().find("resuming after seq " + std::to_string(afterKill.cursor)),
              std::string::npos)
        << again.stderrText();
    const auto c = checkContinuity(history, "node-w");
    EXPECT_EQ(c.rows, c.distinctSeqs);
    EXPECT_TRUE(c.missing.empty()) << c.missing.size() << " missing";
    EXPECT_TRUE(c.gaps.empty());
    EXPECT_EQ(c.firstSeq, 1u);
    daemon.stop();
}

// issue 2: a corrupt history file gives a clear message naming it and loses nothing.
TEST(CliIntegration, CorruptHistoryIsRefusedAndUntouched) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-x");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("corrupt.sqlite");
    writeAll(history, "this is not SQLite\n" + std::string(5000, 'z'));
    const std::string before = readAll(history);
    auto watch =
        runCtl({"watch", address, "--history", history, "--seconds", "3"}, dir.path().string());
    EXPECT_EQ(watch.exitCode, 1);
    EXPECT_NE(watch.err.find(history + ": file is not a database"), std::string::npos) << watch.err;
    auto runs = runCtl({"runs", "--history", history}, dir.path().string());
    EXPECT_EQ(runs.exitCode, 2);
    EXPECT_NE(runs.err.find(history + ": file is not a database"), std::string::npos) << runs.err;
    auto submit =
        runCtl({"submit", address, "--history", history, "--", "/bin/true"}, dir.path().string());
    EXPECT_NE(submit.exitCode, 0);
    EXPECT_NE(submit.err.find(history), std::string::npos) << submit.err;
    EXPECT_EQ(readAll(history), before);
    daemon.stop();
}

// issue 50: the plan text of a CPU-only recipe reads as one, not as a broken layout
// ("1 nodes x 0 GPUs; trainer 0 ranks ... DP 0").
TEST(CliIntegration, PlanOfACpuRecipeSaysCpuOnly) {
    ScratchDir dir;
    auto plan = runCtl({"plan", sourceDir() + "/recipes/smoke-local.yaml"}, dir.path().string());
    ASSERT_EQ(plan.exitCode, 0) << plan.err;
    EXPECT_NE(
        plan.out.find("layout: 1 node, CPU only: the smoke workload, no trainer or engine GPUs"),
        std::string::npos)
        << plan.out;
    EXPECT_EQ(plan.out.find("0 ranks"), std::string::npos) << plan.out;
    EXPECT_EQ(plan.out.find("1 nodes"), std::string::npos) << plan.out;
}

// issue 50: a program that ends at once is reported with its exit status (or, within the bounded
// wait, as being recorded), never with a hint that the state disk is full on a disk with room.
TEST(CliIntegration, QuickProgramsNeverBlameTheDisk) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-q");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    for (int i = 0; i < 12; ++i) {
        auto submit = runCtl({"submit", address, "--history", history, "--run-id",
                              "quick-" + std::to_string(i), "--json", "--", "/bin/true"},
                             dir.path().string());
        ASSERT_EQ(submit.exitCode, 0) << submit.err;
        const auto reply = nlohmann::json::parse(submit.out);
        const std::string message = reply["message"].get<std::string>();
        EXPECT_EQ(message.find("disk"), std::string::npos) << "submit " << i << ": " << message;
    }
    daemon.stop();
}

TEST(CliIntegration, SubmitThenRunsListsTheRun) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "node-s");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string recipe = sourceDir() + "/recipes/smoke-local.yaml";
    auto submit =
        runCtl({"submit", address, "--history", history, "--name", "cli run", "--run-id",
                "cli-run-1", "--recipe", recipe, "--json", "--", "/bin/sh", "-c", "sleep 0.3"},
               dir.path().string());
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    auto started = nlohmann::json::parse(submit.out);
    EXPECT_EQ(started["run_id"], "cli-run-1");
    // Ingest until the run's end arrives.
    auto watch =
        runCtl({"watch", address, "--history", history, "--seconds", "3"}, dir.path().string());
    EXPECT_EQ(watch.exitCode, 0) << watch.err;
    auto runs = runCtl({"runs", "--history", history, "--json"}, dir.path().string());
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    auto list = nlohmann::json::parse(runs.out);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["id"], "cli-run-1");
    EXPECT_EQ(list[0]["name"], "cli run");
    EXPECT_EQ(list[0]["status"], "finished");
    EXPECT_EQ(list[0]["nodes"][0], "node-s");
    EXPECT_EQ(list[0]["provenance"]["argv"][0], "/bin/sh");
    EXPECT_EQ(list[0]["provenance"]["daemon"]["address"], address);
    EXPECT_EQ(list[0]["provenance"]["recipe_path"], recipe);
    if (std::filesystem::is_directory(sourceDir() + "/.git")) {
        EXPECT_EQ(list[0]["provenance"]["git_rev"].get<std::string>().size(), 40u);
    }
    ASSERT_FALSE(list[0]["peaks"].empty());
    EXPECT_GT(list[0]["peaks"][0]["peak"].get<double>(), 0);
    auto table = runCtl({"runs", "--history", history}, dir.path().string());
    EXPECT_NE(table.out.find("cli-run-1"), std::string::npos);
    EXPECT_NE(table.out.find("finished"), std::string::npos);
    daemon.stop();
}

}  // namespace
}  // namespace runplane::testing

namespace runplane::testing {
namespace {

// issue 7: `runplanectl nccl probe` through a real daemon, stored in the history. On a host
// without a GPU (CI) the honest answer is "unavailable" (exit 3) with the reason, still recorded;
// with a GPU it is measured rows that passed the correctness check (exit 0).
TEST(CliIntegration, NcclProbeThroughADaemonIsRecordedWithItsVerdict) {
    ScratchDir dir;
    Daemon daemon(dir.file("state"), "probe-node");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    auto probe = runCtl({"nccl", "probe", address, "--history", history, "--run-id", "probe-run",
                         "--min-bytes", "1M", "--max-bytes", "2M", "--iters", "2", "--json"},
                        dir.path(), std::chrono::seconds(120));
    const auto doc = nlohmann::json::parse(probe.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << probe.out << probe.err;
    ASSERT_EQ(doc["nodes"].size(), 1u);
    const auto& node = doc["nodes"][0];
    EXPECT_EQ(node["node_id"], "probe-node");
    if (node["rows"].empty()) {
        EXPECT_EQ(probe.exitCode, 3) << probe.out << probe.err;
        EXPECT_EQ(node["verdict"].get<std::string>().rfind("unavailable", 0), 0u) << node.dump();
    } else {
        EXPECT_EQ(probe.exitCode, 0) << probe.out << probe.err;
        for (const auto& r : node["rows"]) {
            EXPECT_TRUE(r["correct"].get<bool>()) << r.dump();
        }
    }
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM events WHERE node_id = 'probe-node' AND "
                       "run_id = 'probe-run' AND kind = 'nccl_probe' AND message <> '';"),
              1);
    EXPECT_EQ(queryInt(history,
                       "SELECT count(*) FROM events WHERE node_id = 'probe-node' AND "
                       "kind = 'info' AND attrs_json LIKE '%busbw_gbps%';"),
              static_cast<std::int64_t>(node["rows"].size()));

    // Two daemons form one NCCL world only when each can hold a rank: a node without GPUs is
    // refused by name, before any daemon is asked to initialise NCCL.
    Daemon second(dir.file("state2"), "probe-node-2");
    const std::string address2 = second.start();
    ASSERT_FALSE(address2.empty()) << second.error();
    auto world = runCtl({"nccl", "probe", address, address2, "--no-history", "--json"}, dir.path(),
                        std::chrono::seconds(120));
    const auto worldDoc = nlohmann::json::parse(world.out, nullptr, false);
    ASSERT_FALSE(worldDoc.is_discarded()) << world.out << world.err;
    EXPECT_EQ(world.exitCode, 1);
    EXPECT_NE(worldDoc["error"].get<std::string>().find("reports no GPU"), std::string::npos)
        << worldDoc.dump();
}

}  // namespace
}  // namespace runplane::testing
