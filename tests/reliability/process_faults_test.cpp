// Issue #20, faults of processes and of the link (docs/reliability.md): each test injects one
// fault into a real runplaned / controller / supervisor / run and ends with the two checks of
// fault_harness.h (exactly-once seqs, the run's true status).
#include <signal.h>

#include <filesystem>
#include <thread>

#include "tests/reliability/fault_harness.h"
#include "tests/support/tcp_proxy.h"

namespace runplane::reliability {
namespace {

using namespace std::chrono_literals;
using db::RunState;

TEST_F(FaultTest, DaemonKill9WhileARunLives) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(40, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 20; })) << in.status().lastError;
    m_daemon->kill9();
    std::this_thread::sleep_for(1s);  // the run goes on without its daemon
    ASSERT_EQ(m_daemon->start(), m_address) << m_daemon->error();
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

TEST_F(FaultTest, DaemonCrashLoopThreeKillsInARow) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(50, 0));
    for (int i = 0; i < 3; ++i) {
        const auto before = in.status().cursor;
        ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= before + 5; }))
            << in.status().lastError;
        m_daemon->kill9();
        ASSERT_EQ(m_daemon->start(), m_address) << m_daemon->error();
    }
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::Finished, "", "exit_code=0");
    expectExactlyOnce();
}

// The 30 s: longer than the client's call timeout and every backoff step.
TEST_F(FaultTest, DaemonStoppedThirtySeconds) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(30, 3));  // ends while its daemon is stopped
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    m_daemon->child().kill(SIGSTOP);
    std::this_thread::sleep_for(30s);
    m_daemon->child().kill(SIGCONT);
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

TEST_F(FaultTest, DaemonUpgradeWithALiveRun) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(40, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 20; })) << in.status().lastError;
    // The "new" binary: a copy at another path, as a package upgrade puts it in place.
    const std::string next = m_dir.file("runplaned-next");
    std::filesystem::copy_file(runplane::testing::builtBinary("backend/daemon/runplaned"), next);
    std::filesystem::permissions(next, std::filesystem::perms::owner_all);
    std::filesystem::copy_file(runplane::testing::builtBinary("backend/daemon/runplane-supervisor"),
                               m_dir.file("runplane-supervisor"));
    m_daemon->stop();  // SIGTERM: the run is not stopped with it
    EXPECT_TRUE(std::filesystem::exists(m_state + "/runs.d/r1/supervisor.json"));
    m_daemon->setBinary(next);
    ASSERT_EQ(m_daemon->start(), m_address) << m_daemon->error();
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

TEST_F(FaultTest, ControllerKill9MidStream) {
    startDaemon();
    submit("r1", stepsRun(40, 3));
    Child first = watch("watch-1");
    ASSERT_TRUE(waitUntil([&] { return storedCursor() >= 20; })) << first.stderrText();
    first.kill(SIGKILL);
    first.wait(5s);
    std::this_thread::sleep_for(1s);
    watchUntilR1EndsThenCheck("watch-2");
}

TEST_F(FaultTest, ControllerStoppedWhileTheDaemonSpools) {
    startDaemon();
    submit("r1", stepsRun(30, 3));
    Child w = watch("watch");
    ASSERT_TRUE(waitUntil([&] { return storedCursor() >= 10; })) << w.stderrText();
    w.kill(SIGSTOP);
    std::this_thread::sleep_for(5s);  // the run ends meanwhile
    w.kill(SIGCONT);
    ASSERT_TRUE(waitRunEnded("r1")) << w.stderrText();
    w.kill(SIGTERM);
    w.wait(10s);
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

TEST_F(FaultTest, DaemonAndControllerKilledTogether) {
    startDaemon();
    submit("r1", stepsRun(40, 3));
    Child first = watch("watch-1");
    ASSERT_TRUE(waitUntil([&] { return storedCursor() >= 20; })) << first.stderrText();
    first.kill(SIGKILL);
    m_daemon->kill9();
    first.wait(5s);
    ASSERT_EQ(m_daemon->start(), m_address) << m_daemon->error();
    watchUntilR1EndsThenCheck("watch-2");
}

// The supervisor is the only process that can learn the exit status (it is the child's parent):
// without it the run is honestly "daemon_lost" once the program ends, never a guessed status.
TEST_F(FaultTest, SupervisorKill9) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(30, 0));
    ASSERT_TRUE(waitUntil([&] { return runPid("r1", "supervisor_pid") > 0; }));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; }));
    ASSERT_EQ(::kill(runPid("r1", "supervisor_pid"), SIGKILL), 0);
    std::this_thread::sleep_for(1s);
    auto alive = run("r1");
    ASSERT_TRUE(alive);
    EXPECT_EQ(db::toString(alive->state), "running");  // the program itself goes on
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::DaemonLost, "vanished", "");
    expectExactlyOnce();
}

TEST_F(FaultTest, RunChildKill9) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(100, 0));
    ASSERT_TRUE(waitUntil([&] { return runPid("r1", "child_pid") > 0; }));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; }));
    ASSERT_EQ(::kill(runPid("r1", "child_pid"), SIGKILL), 0);
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::Failed, "killed by SIGKILL", "term_signal=9");
    expectExactlyOnce();
}

// A program that hangs (SIGSTOP) is reported as a stall event, keeps its running state, and
// ends with its own exit status once it continues.
TEST_F(FaultTest, RunHangsThenContinues) {
    m_daemon->setExtraArgs({"--stall-seconds", "1"});
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(30, 3));
    ASSERT_TRUE(waitUntil([&] { return runPid("r1", "child_pid") > 0; }));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; }));
    const pid_t child = runPid("r1", "child_pid");
    ASSERT_EQ(::kill(child, SIGSTOP), 0);
    EXPECT_TRUE(waitUntil(
        [&] {
            return runplane::testing::queryInt(
                       m_history,
                       "SELECT count(*) FROM events WHERE run_id='r1' AND kind='stall';") >= 1;
        },
        10s));
    EXPECT_EQ(db::toString(run("r1")->state), "running");
    ASSERT_EQ(::kill(child, SIGCONT), 0);
    ASSERT_TRUE(waitRunEnded("r1"));
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// The ingest goes through a loopback relay (tests/support/tcp_proxy.h) that a test breaks.
class RelayFaultTest : public FaultTest {
  protected:
    // Daemon, relay, an ingest through it and a run of `steps`; returns once 10 seqs are stored.
    control::TelemetryIngestor& startRelayed(int steps) {
        startDaemon();
        m_link = std::make_unique<runplane::testing::TcpProxy>(m_address);
        EXPECT_FALSE(m_link->address().empty());
        auto& in = ingest(m_link->address());
        submit("r1", stepsRun(steps, 3));
        EXPECT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
        return in;
    }
    std::unique_ptr<runplane::testing::TcpProxy> m_link;
};

TEST_F(RelayFaultTest, ConnectionCutAndResumed) {
    auto& in = startRelayed(30);
    auto& link = *m_link;
    link.cut();
    ASSERT_TRUE(waitUntil([&] { return in.status().state == control::IngestState::Backoff; }));
    std::this_thread::sleep_for(4s);  // the run ends behind the cut
    link.resume();
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    EXPECT_GE(link.connectionsAccepted(), 2);
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

TEST_F(RelayFaultTest, ConnectionFlapping) {
    auto& in = startRelayed(40);
    auto& link = *m_link;
    for (int i = 0; i < 12; ++i) {
        link.cut();
        std::this_thread::sleep_for(150ms);
        link.resume();
        std::this_thread::sleep_for(250ms);
    }
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    EXPECT_GE(link.connectionsAccepted(), 3);
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// A silent partition (no FIN, no RST): the daemon's 5 s heartbeats stop arriving, and the
// ingestor must notice instead of waiting on the stream forever.
TEST_F(RelayFaultTest, SilentPartitionThenHeal) {
    auto& in = startRelayed(40);
    auto& link = *m_link;
    link.partition();
    // The stream's idle limit is 15 s (3 heartbeats); the rest of the wait is slack for a loaded
    // 2-core CI machine, not part of the promise.
    EXPECT_TRUE(waitUntil([&] { return in.status().reconnects >= 1; }, 30s))
        << "still " << control::toString(in.status().state) << " after 30 s of silence";
    link.heal();
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

}  // namespace
}  // namespace runplane::reliability
