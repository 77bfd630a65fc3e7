// Runs under runplaned: argv without a shell, confinement, idempotency, StopRun of a whole tree,
// logs, log-derived metrics/events, and runs that outlive a kill -9 of the daemon. issue 5
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;
using testing::waitFor;

grpc::Status startRun(v1::Agent::Stub& stub, const std::string& id,
                      const std::vector<std::string>& argv, v1::RunStatus* out,
                      const std::string& workdir = "",
                      const std::map<std::string, std::string>& env = {}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::StartRunRequest req;
    req.set_run_id(id);
    for (const auto& a : argv) {
        req.add_argv(a);
    }
    req.set_workdir(workdir);
    req.set_role(v1::RUN_ROLE_STANDALONE);
    for (const auto& [k, v] : env) {
        (*req.mutable_env())[k] = v;
    }
    return stub.StartRun(&ctx, req, out);
}

v1::RunStatus runStatus(v1::Agent::Stub& stub, const std::string& id) {
    grpc::ClientContext ctx;
    v1::ListRunsResponse resp;
    EXPECT_TRUE(stub.ListRuns(&ctx, {}, &resp).ok());
    for (const auto& r : resp.runs()) {
        if (r.run_id() == id) {
            return r;
        }
    }
    return {};
}

bool finalState(v1::RunState s) {
    return s == v1::RUN_STATE_SUCCEEDED || s == v1::RUN_STATE_FAILED ||
           s == v1::RUN_STATE_STOPPED || s == v1::RUN_STATE_LOST;
}

std::string tail(v1::Agent::Stub& stub, const std::string& id, v1::LogStream stream,
                 std::uint64_t from, bool follow, bool* eof = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::TailLogsRequest req;
    req.set_run_id(id);
    req.set_stream(stream);
    req.set_from_offset(from);
    req.set_follow(follow);
    auto reader = stub.TailLogs(&ctx, req);
    std::string data;
    v1::LogChunk chunk;
    std::uint64_t expectOffset = from;
    while (reader->Read(&chunk)) {
        EXPECT_EQ(chunk.offset(), expectOffset);
        expectOffset += chunk.data().size();
        data += chunk.data();
        if (eof != nullptr) {
            *eof = chunk.eof();
        }
    }
    EXPECT_TRUE(reader->Finish().ok());
    return data;
}

// Every telemetry record of the node from seq 0 until `enough` holds.
std::vector<v1::TelemetryRecord> records(
    v1::Agent::Stub& stub,
    const std::function<bool(const std::vector<v1::TelemetryRecord>&)>& enough,
    std::chrono::seconds timeout = std::chrono::seconds(15)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    auto reader = stub.WatchTelemetry(&ctx, {});
    std::vector<v1::TelemetryRecord> out;
    v1::TelemetryBatch batch;
    while (reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            out.push_back(r);
        }
        if (enough(out)) {
            ctx.TryCancel();
            break;
        }
    }
    reader->Finish();
    return out;
}

bool hasEvent(const std::vector<v1::TelemetryRecord>& rs, v1::EventKind kind,
              const std::string& runId = "") {
    for (const auto& r : rs) {
        if (r.has_event() && r.event().kind() == kind && (runId.empty() || r.run_id() == runId)) {
            return true;
        }
    }
    return false;
}

class Runs : public ::testing::Test {
  protected:
    void SetUp() override {
        daemon = std::make_unique<DaemonProcess>(
            dir.path() + "/state",
            std::vector<std::string>{"--sample-hz", "10", "--stall-seconds", "2"});
        ASSERT_TRUE(daemon->ok()) << daemon->error();
        stub = testing::agentStub(*daemon);
    }
    std::string runRoot() const { return dir.path() + "/state/runs"; }
    TempDir dir;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<v1::Agent::Stub> stub;
};

// issue 5: a recipe/argv field full of shell metacharacters reaches the child verbatim.
TEST_F(Runs, ArgvWithShellMetacharactersReachesChildVerbatim) {
    const std::string nasty =
        "$(touch pwned); `id` && rm -rf / ; echo 'q' \"d\" | cat > x * ? ~ \\n";
    v1::RunStatus st;
    ASSERT_TRUE(startRun(*stub, "meta", {"/bin/echo", nasty, "--lr", "1e-5"}, &st).ok());
    ASSERT_TRUE(waitFor([&] { return finalState(runStatus(*stub, "meta").state()); },
                        std::chrono::seconds(10)));
    EXPECT_EQ(runStatus(*stub, "meta").state(), v1::RUN_STATE_SUCCEEDED);
    bool eof = false;
    EXPECT_EQ(tail(*stub, "meta", v1::LOG_STREAM_STDOUT, 0, false, &eof), nasty + " --lr 1e-5\n");
    EXPECT_TRUE(eof);
    EXPECT_FALSE(std::filesystem::exists(runRoot() + "/meta/pwned"));
    EXPECT_FALSE(std::filesystem::exists(runRoot() + "/meta/x"));
}

TEST_F(Runs, StartIsIdempotentAndListed) {
    v1::RunStatus a, b;
    ASSERT_TRUE(startRun(*stub, "idem", {"/bin/sleep", "30"}, &a).ok());
    EXPECT_EQ(a.state(), v1::RUN_STATE_RUNNING);
    EXPECT_GT(a.pid(), 0);
    ASSERT_TRUE(startRun(*stub, "idem", {"/bin/sleep", "30"}, &b).ok());
    EXPECT_EQ(a.pid(), b.pid()) << "the same run id must not start a second process";
    v1::RunStatus c;
    EXPECT_EQ(startRun(*stub, "idem", {"/bin/sleep", "31"}, &c).error_code(),
              grpc::StatusCode::ALREADY_EXISTS);
    const auto listed = runStatus(*stub, "idem");
    EXPECT_EQ(listed.state(), v1::RUN_STATE_RUNNING);
    EXPECT_EQ(listed.argv_size(), 2);
    EXPECT_EQ(listed.role(), v1::RUN_ROLE_STANDALONE);
    grpc::ClientContext ctx;
    v1::StopRunRequest stop;
    stop.set_run_id("idem");
    stop.set_grace_seconds(2);
    v1::RunStatus stopped;
    ASSERT_TRUE(stub->StopRun(&ctx, stop, &stopped).ok());
    EXPECT_EQ(stopped.state(), v1::RUN_STATE_STOPPED);
    EXPECT_EQ(stopped.term_signal(), SIGTERM);
}

// issue #23 item 9: a variable name with a space was passed on to the run.
TEST_F(Runs, InvalidEnvironmentNameIsRefusedAndNamed) {
    int i = 0;
    for (const std::string name : {"A B", "1X", "A-B"}) {
        v1::RunStatus st;
        const grpc::Status s =
            startRun(*stub, "env-" + std::to_string(i++), {"/bin/true"}, &st, "", {{name, "1"}});
        EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
        EXPECT_NE(s.error_message().find("'" + name + "'"), std::string::npos) << s.error_message();
    }
    v1::RunStatus st;
    EXPECT_TRUE(startRun(*stub, "env-ok", {"/bin/true"}, &st, "", {{"GOOD_NAME_1", "x"}}).ok());
}

TEST_F(Runs, WorkdirEscapesAreRejected) {
    std::filesystem::create_directories(runRoot());
    std::filesystem::create_directories(dir.path() + "/outside");
    ::symlink((dir.path() + "/outside").c_str(), (runRoot() + "/escape").c_str());
    int n = 0;
    for (const std::string bad : {"../x", "a/../../x", "/etc", "escape/sub"}) {
        v1::RunStatus st;
        const auto status = startRun(*stub, "esc" + std::to_string(n++), {"/bin/true"}, &st, bad);
        EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
        EXPECT_NE(status.error_message().find("workdir"), std::string::npos)
            << status.error_message();
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/outside/sub"));
    v1::RunStatus st;
    EXPECT_EQ(startRun(*stub, "../evil", {"/bin/true"}, &st).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(startRun(*stub, "noargv", {}, &st).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    // A good relative workdir is created under the root and is the child's cwd.
    ASSERT_TRUE(startRun(*stub, "cwd", {"/bin/pwd"}, &st, "exp/one").ok());
    ASSERT_TRUE(waitFor([&] { return finalState(runStatus(*stub, "cwd").state()); },
                        std::chrono::seconds(10)));
    EXPECT_EQ(tail(*stub, "cwd", v1::LOG_STREAM_STDOUT, 0, false),
              std::filesystem::canonical(runRoot()).string() + "/exp/one\n");
}

TEST_F(Runs, ExecFailureAndExitCodesAreRecorded) {
    v1::RunStatus st;
    ASSERT_TRUE(startRun(*stub, "missing", {"no-such-program-xyz"}, &st).ok());
    EXPECT_EQ(st.state(), v1::RUN_STATE_FAILED);
    EXPECT_NE(st.message().find("not found"), std::string::npos) << st.message();
    ASSERT_TRUE(startRun(*stub, "exit3", {"/bin/sh", "-c", "echo oops >&2; exit 3"}, &st).ok());
    ASSERT_TRUE(waitFor([&] { return finalState(runStatus(*stub, "exit3").state()); },
                        std::chrono::seconds(10)));
    const auto done = runStatus(*stub, "exit3");
    EXPECT_EQ(done.state(), v1::RUN_STATE_FAILED);
    EXPECT_EQ(done.exit_code(), 3);
    EXPECT_GT(done.ended_unix_ns(), done.started_unix_ns());
    EXPECT_EQ(tail(*stub, "exit3", v1::LOG_STREAM_STDERR, 0, false), "oops\n");
    ASSERT_TRUE(startRun(*stub, "envrun", {"/bin/sh", "-c", "echo \"$FOO:$RUNPLANE_RUN_ID\""}, &st,
                         "", {{"FOO", "bar baz"}})
                    .ok());
    ASSERT_TRUE(waitFor([&] { return finalState(runStatus(*stub, "envrun").state()); },
                        std::chrono::seconds(10)));
    EXPECT_EQ(tail(*stub, "envrun", v1::LOG_STREAM_STDOUT, 0, false), "bar baz:envrun\n");
}

// StopRun takes down the whole tree, including a grandchild that ignores SIGTERM and one that
// left the process group.
TEST_F(Runs, StopRunKillsTheWholeTree) {
    const std::string pids = dir.path() + "/pids";
    v1::RunStatus st;
    const std::string script = "trap '' TERM; sleep 300 & echo $! > " + pids +
                               "; "
                               "setsid sleep 301 & echo $! >> " +
                               pids +
                               "; "
                               "(trap '' TERM; exec sleep 302) & echo $! >> " +
                               pids + "; wait";
    ASSERT_TRUE(startRun(*stub, "tree", {"/bin/sh", "-c", script}, &st).ok());
    std::vector<pid_t> children;
    ASSERT_TRUE(waitFor(
        [&] {
            std::ifstream in(pids);
            children.clear();
            pid_t p;
            while (in >> p) {
                children.push_back(p);
            }
            return children.size() == 3;
        },
        std::chrono::seconds(10)));
    for (pid_t p : children) {
        ASSERT_EQ(::kill(p, 0), 0);
    }
    grpc::ClientContext ctx;
    v1::StopRunRequest stop;
    stop.set_run_id("tree");
    stop.set_grace_seconds(1);
    v1::RunStatus stopped;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(stub->StopRun(&ctx, stop, &stopped).ok());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
    EXPECT_EQ(stopped.state(), v1::RUN_STATE_STOPPED);
    EXPECT_EQ(stopped.term_signal(), SIGKILL) << "the shell ignores SIGTERM, so the grace ran out";
    for (pid_t p : children) {
        // Gone, or a zombie waiting for its reaper.
        const std::string stat = testing::slurp("/proc/" + std::to_string(p) + "/stat");
        EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos)
            << "pid " << p << " survived: " << stat;
    }
    grpc::ClientContext ctx2;
    stop.set_run_id("nope");
    EXPECT_EQ(stub->StopRun(&ctx2, stop, &stopped).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Log lines become series with their step, phases/NCCL become events, exit becomes events.
TEST_F(Runs, LogDerivedMetricsAndEvents) {
    const std::string script =
        "echo '[runplane-phase] rollout'; "
        "echo \"(MegatronTrainRayActor pid=32167) [2025-12-17 14:10:28] model.py:649 - step 11: "
        "{'train/loss': -6.05e-09, 'train/grad_norm': 0.0799, 'train/lr-pg_0': 1e-06}\"; "
        "echo \"(RolloutManager pid=7) eval 3: {'eval/gsm8k': 0.75}\"; "
        "echo 'node:1:2 [0] NCCL WARN Call to connect returned Connection refused' >&2; "
        "printf 'no newline at the end: step 12: {\"x\": 1}'";
    v1::RunStatus st;
    ASSERT_TRUE(startRun(*stub, "logs", {"/bin/sh", "-c", script}, &st).ok());
    const auto rs =
        records(*stub, [](const auto& v) { return hasEvent(v, v1::EVENT_PROCESS_EXIT, "logs"); });
    std::map<std::string, v1::TelemetryRecord> bySeries;
    for (const auto& r : rs) {
        if (r.has_sample() && r.run_id() == "logs") {
            bySeries[r.sample().series()] = r;
        }
    }
    ASSERT_EQ(bySeries.count("train/loss"), 1u);
    EXPECT_DOUBLE_EQ(bySeries["train/loss"].sample().value(), -6.05e-09);
    EXPECT_EQ(bySeries["train/loss"].sample().step(), 11);
    EXPECT_DOUBLE_EQ(bySeries["train/lr-pg_0"].sample().value(), 1e-06);
    ASSERT_EQ(bySeries.count("eval/gsm8k"), 1u);
    EXPECT_EQ(bySeries["eval/gsm8k"].sample().step(), 3);
    ASSERT_EQ(bySeries.count("x"), 1u) << "a final line without newline is still parsed at exit";
    EXPECT_EQ(bySeries["x"].sample().step(), 12);
    // A workload's metric gets its unit from its name's suffix (none here); the run's process
    // tree from the daemon's vocabulary.
    EXPECT_EQ(bySeries["train/loss"].sample().unit(), v1::UNIT_NONE);
    if (bySeries.count("run.tree.rss_bytes") != 0) {
        EXPECT_EQ(bySeries["run.tree.rss_bytes"].sample().unit(), v1::UNIT_BYTES);
    }
    // The run-state events carry the state typed, and as the attribute older controllers read.
    int runStates = 0;
    for (const auto& r : rs) {
        if (r.has_event() && r.event().kind() == v1::EVENT_RUN_STATE && r.run_id() == "logs") {
            ++runStates;
            EXPECT_NE(r.event().run_state(), v1::RUN_STATE_UNSPECIFIED);
            EXPECT_EQ(r.event().attrs().at("state"), v1::RunState_Name(r.event().run_state()));
        }
    }
    EXPECT_GE(runStates, 1);
    EXPECT_TRUE(hasEvent(rs, v1::EVENT_PHASE, "logs"));
    EXPECT_TRUE(hasEvent(rs, v1::EVENT_NCCL_WARNING, "logs"));
    EXPECT_TRUE(hasEvent(rs, v1::EVENT_RUN_STATE, "logs"));
    // Ordering: the metrics come before the exit event.
    std::uint64_t lossSeq = bySeries["train/loss"].seq(), exitSeq = 0;
    for (const auto& r : rs) {
        if (r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT) {
            exitSeq = r.seq();
            EXPECT_EQ(r.event().attrs().at("exit_code"), "0");
        }
    }
    EXPECT_LT(lossSeq, exitSeq);
}

TEST_F(Runs, StallEventAndProcessTreeMemory) {
    v1::RunStatus st;
    ASSERT_TRUE(
        startRun(*stub, "quiet", {"/bin/sh", "-c", "echo '[runplane-phase] train'; sleep 30"}, &st)
            .ok());
    const auto rs = records(
        *stub, [](const auto& v) { return hasEvent(v, v1::EVENT_STALL, "quiet"); },
        std::chrono::seconds(15));
    EXPECT_TRUE(hasEvent(rs, v1::EVENT_STALL, "quiet"));
    bool rss = false;
    for (const auto& r : rs) {
        if (r.run_id() == "quiet" && r.has_sample() &&
            r.sample().series() == "run.tree.rss_bytes") {
            rss = rss || r.sample().value() > 0;
            EXPECT_LE(r.sample().min(), r.sample().max());
        }
    }
    EXPECT_TRUE(rss);
}

TEST_F(Runs, TailLogsFollowsUntilTheRunEnds) {
    v1::RunStatus st;
    ASSERT_TRUE(startRun(*stub, "follow",
                         {"/bin/sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.3; done"}, &st)
                    .ok());
    bool eof = false;
    EXPECT_EQ(tail(*stub, "follow", v1::LOG_STREAM_STDOUT, 0, true, &eof), "line1\nline2\nline3\n");
    EXPECT_TRUE(eof);
    EXPECT_EQ(tail(*stub, "follow", v1::LOG_STREAM_STDOUT, 6, false), "line2\nline3\n");
}

// issue 5: runs outlive the daemon. kill -9 it, let the run finish meanwhile, restart: the run
// is re-attached with its true exit status, and telemetry continues without duplicates.
TEST(RunsOutliveDaemon, KillNineReattachWithTrueExitStatus) {
    TempDir dir;
    const std::string state = dir.path() + "/state";
    const std::string marker = dir.path() + "/go";
    pid_t childPid = 0;
    std::uint64_t lastSeq = 0;
    {
        DaemonProcess d(state, {"--sample-hz", "10"});
        ASSERT_TRUE(d.ok()) << d.error();
        auto stub = testing::agentStub(d);
        v1::RunStatus st;
        // Runs until the marker exists, then exits 7.
        ASSERT_TRUE(startRun(*stub, "survivor",
                             {"/bin/sh", "-c",
                              "echo started; while [ ! -e " + marker +
                                  " ]; do sleep 0.05; done; echo done; exit 7"},
                             &st)
                        .ok());
        childPid = st.pid();
        ASSERT_GT(childPid, 0);
        const auto rs = records(
            *stub, [](const auto& v) { return hasEvent(v, v1::EVENT_RUN_STATE, "survivor"); });
        lastSeq = rs.back().seq();
        d.kill9();
    }
    ASSERT_EQ(::kill(childPid, 0), 0) << "the run must survive the daemon's death";
    {
        DaemonProcess d(state, {"--sample-hz", "10"});
        ASSERT_TRUE(d.ok()) << d.error();
        auto stub = testing::agentStub(d);
        EXPECT_EQ(runStatus(*stub, "survivor").state(), v1::RUN_STATE_RUNNING);
        EXPECT_EQ(runStatus(*stub, "survivor").pid(), childPid);
        d.kill9();
    }
    // While no daemon runs, the run ends.
    { std::ofstream(marker) << "x"; }
    ASSERT_TRUE(waitFor([&] { return ::kill(childPid, 0) != 0; }, std::chrono::seconds(10)));
    DaemonProcess d(state, {"--sample-hz", "10"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const auto st = runStatus(*stub, "survivor");
    EXPECT_EQ(st.state(), v1::RUN_STATE_FAILED);
    EXPECT_EQ(st.exit_code(), 7);
    EXPECT_EQ(st.term_signal(), 0);
    EXPECT_EQ(tail(*stub, "survivor", v1::LOG_STREAM_STDOUT, 0, false), "started\ndone\n");
    // The exit shows up in telemetry exactly once, after everything from before the kill.
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
    v1::WatchTelemetryRequest req;
    req.set_from_seq(1);
    auto reader = stub->WatchTelemetry(&ctx, req);
    v1::TelemetryBatch batch;
    std::uint64_t prev = 0;
    int exits = 0;
    while (reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            EXPECT_EQ(r.seq(), prev + 1) << "continuous seq across two kill -9 restarts";
            prev = r.seq();
            if (r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT &&
                r.run_id() == "survivor") {
                ++exits;
                EXPECT_EQ(r.event().attrs().at("exit_code"), "7");
                EXPECT_GT(r.seq(), lastSeq);
            }
        }
        if (exits > 0 && prev > lastSeq + 50) {
            ctx.TryCancel();
            break;
        }
    }
    reader->Finish();
    EXPECT_EQ(exits, 1);
}

TEST(RunsOutliveDaemon, LostWhenSupervisorAndRunVanish) {
    TempDir dir;
    const std::string state = dir.path() + "/state";
    DaemonProcess d(state);
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    v1::RunStatus st;
    ASSERT_TRUE(startRun(*stub, "doomed", {"/bin/sleep", "60"}, &st).ok());
    // Kill supervisor and child behind the daemon's back (as a reboot or the OOM killer would).
    const std::string info = testing::slurp(state + "/runs.d/doomed/supervisor.json");
    const auto p = info.find("\"supervisor_pid\":");
    ASSERT_NE(p, std::string::npos) << info;
    const pid_t sup = std::atoi(info.c_str() + p + 17);
    ::kill(sup, SIGKILL);
    ::kill(st.pid(), SIGKILL);
    ASSERT_TRUE(waitFor([&] { return runStatus(*stub, "doomed").state() == v1::RUN_STATE_LOST; },
                        std::chrono::seconds(10)));
    EXPECT_NE(runStatus(*stub, "doomed").message().find("vanished"), std::string::npos);
}

// Host used memory as the daemon counts it (MemTotal - MemAvailable), in bytes.
std::uint64_t hostUsedBytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t value = 0, total = 0, available = 0;
    std::string unit;
    while (in >> key >> value >> unit) {
        if (key == "MemTotal:") {
            total = value * 1024;
        } else if (key == "MemAvailable:") {
            available = value * 1024;
        }
    }
    return total - available;
}

// issue 5: the memory alarm is raised only after host used memory stays above the line for the
// configured time, and cleared once it drops back. The line is set 2 GiB above what the host uses
// now; the test then holds 4 GiB of touched memory for a while and frees it. The margins are the
// host's: the daemon counts every process's memory, and neighbours (parallel tests, fuzzers)
// moved it by up to ~1 GiB while a 1 GiB margin made this test fail now and then.
TEST(MemoryAlarm, RaisedWhenSustainedAboveTheLineAndClearedBelow) {
    TempDir dir;
    const std::uint64_t line = hostUsedBytes() + (2ull << 30);
    DaemonProcess daemon(dir.path() + "/state", {"--sample-hz", "10", "--mem-alarm-bytes",
                                                 std::to_string(line), "--mem-alarm-seconds", "2"});
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    auto alarms = [](const std::vector<v1::TelemetryRecord>& rs, const char* state) {
        std::vector<v1::TelemetryRecord> out;
        for (const auto& r : rs) {
            if (r.has_event() && r.event().kind() == v1::EVENT_MEMORY_ALARM &&
                r.event().attrs().count("state") && r.event().attrs().at("state") == state) {
                out.push_back(r);
            }
        }
        return out;
    };
    // The line is crossed somewhere while the pages are touched, so not before this instant.
    const auto over = std::chrono::steady_clock::now();
    std::vector<char> held(std::size_t(4) << 30);
    for (std::size_t i = 0; i < held.size(); i += 4096) {
        reinterpret_cast<volatile char*>(held.data())[i] = 1;  // resident: MemAvailable drops
    }
    auto rs = records(
        *stub, [&](const auto& v) { return !alarms(v, "raised").empty(); },
        std::chrono::seconds(20));
    const auto raised = alarms(rs, "raised");
    ASSERT_EQ(raised.size(), 1u) << "no alarm while 4 GiB over a line 2 GiB above the start";
    EXPECT_GE(std::chrono::steady_clock::now() - over, std::chrono::milliseconds(1900))
        << "raised before the line was crossed for --mem-alarm-seconds";
    EXPECT_EQ(raised[0].event().attrs().at("threshold_bytes"), std::to_string(line));
    EXPECT_GT(std::stoull(raised[0].event().attrs().at("used_bytes")), line);
    EXPECT_GE(std::stod(raised[0].event().attrs().at("sustained_seconds")), 2.0);

    held.clear();
    held.shrink_to_fit();
    rs = records(
        *stub, [&](const auto& v) { return !alarms(v, "cleared").empty(); },
        std::chrono::seconds(20));
    const auto cleared = alarms(rs, "cleared");
    ASSERT_EQ(cleared.size(), 1u) << "the alarm did not clear after the memory was freed";
    EXPECT_GT(cleared[0].seq(), raised[0].seq());
    EXPECT_LT(std::stoull(cleared[0].event().attrs().at("used_bytes")), line);
}

// issue 7: NVML's error counters reach the telemetry stream. The daemon loads the test's fake
// libnvidia-ml.so.1 (tests/compute/fake_nvml.cpp, variant 1: GPU 0 has 5 uncorrected ECC errors
// and NVLink replays 3 + 4 on its two active links; GPU 1 raises XID 79 once events are
// registered), found through LD_LIBRARY_PATH as the real one would be.
TEST(GpuTelemetry, ErrorCountersAreSeriesAndAnXidIsAnEvent) {
    const std::string fake =
        std::string(std::getenv("RUNPLANE_BINARY_DIR")) + "/tests/compute/fake_nvml/1";
    ASSERT_TRUE(std::filesystem::exists(fake + "/libnvidia-ml.so.1")) << fake;
    const char* old = std::getenv("LD_LIBRARY_PATH");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("LD_LIBRARY_PATH", fake.c_str(), 1);  // inherited by the daemon we spawn
    TempDir dir;
    DaemonProcess daemon(dir.path() + "/state",
                         {"--sample-hz", "10", "--metrics-listen", "127.0.0.1:0"}, "127.0.0.1:0",
                         true);
    if (old != nullptr) {
        ::setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
    } else {
        ::unsetenv("LD_LIBRARY_PATH");
    }
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    auto value = [](const std::vector<v1::TelemetryRecord>& rs, const std::string& series) {
        double v = -1;
        for (const auto& r : rs) {
            if (r.has_sample() && r.sample().series() == series) {
                v = r.sample().value();
            }
        }
        return v;
    };
    auto xid = [](const std::vector<v1::TelemetryRecord>& rs) {
        for (const auto& r : rs) {
            if (r.has_event() && r.event().kind() == v1::EVENT_INFO &&
                r.event().attrs().count("what") && r.event().attrs().at("what") == "xid") {
                return r;
            }
        }
        return v1::TelemetryRecord{};
    };
    const auto rs = records(
        *stub,
        [&](const auto& v) { return value(v, "gpu.0.ecc.uncorrected") >= 0 && xid(v).has_event(); },
        std::chrono::seconds(15));
    EXPECT_EQ(value(rs, "gpu.0.ecc.uncorrected"), 5);
    EXPECT_EQ(value(rs, "gpu.0.nvlink.replay_errors"), 7);
    EXPECT_EQ(value(rs, "gpu.1.nvlink.replay_errors"), -1) << "GPU 1 has no NVLink: no series";
    const auto event = xid(rs);
    ASSERT_TRUE(event.has_event()) << "no XID event";
    EXPECT_EQ(event.event().attrs().at("gpu"), "1");
    EXPECT_EQ(event.event().attrs().at("value"), "79");

    // The same counters under the DCGM exporter's names on /metrics (fetched with Python's
    // standard library, which every test machine has).
    const std::string rest = daemon.stdoutRest();
    const auto at = rest.find("http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << rest;
    const std::string url = rest.substr(at, rest.find_first_of(" \n", at) - at);
    std::string body;
    ASSERT_EQ(testing::runCommand({"/usr/bin/env", "python3", "-c",
                                   "import sys, urllib.request; "
                                   "sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read()"
                                   ".decode())",
                                   url},
                                  &body),
              0)
        << url;
    EXPECT_NE(body.find("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\""), std::string::npos) << body;
    EXPECT_NE(body.find("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{gpu=\"0\""), std::string::npos)
        << body;
    EXPECT_EQ(body.find("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{gpu=\"1\""), std::string::npos)
        << "no NVLink on GPU 1: no sample";
}

}  // namespace
}  // namespace runplane::agent
