// issue 42: host OOM kills read from the kernel log and matched to a run's pids (kernel_log.h),
// on real kernel lines people pasted into public issues (tests/agent/fixtures/logs/host_oom_*).
#include "backend/agent/kernel_log.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;

// The fixture's lines without its source header.
std::vector<std::string> fixtureLines(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src != nullptr ? src : ".") + "/tests/agent/fixtures/logs/" +
                     name);
    EXPECT_TRUE(in.good()) << name;
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && !line.starts_with("# source:")) {
            lines.push_back(line);
        }
    }
    return lines;
}

void append(const std::string& path, const std::vector<std::string>& lines) {
    std::ofstream out(path, std::ios::app);
    for (const auto& l : lines) {
        out << l << '\n';
    }
}

const std::string& attr(const LogEvent& e, const std::string& key) {
    static const std::string none = "<absent>";
    const auto it = e.attrs.find(key);
    return it == e.attrs.end() ? none : it->second;
}

TEST(KernelOomLine, BothLinesOfARealKillAndNothingElse) {
    const auto lines = fixtureLines("host_oom_kernel_dmesg_ert_7797.log");
    ASSERT_EQ(lines.size(), 6u);
    int kills = 0;
    for (const auto& l : lines) {
        kills += parseKernelOomLine(l).has_value() ? 1 : 0;
    }
    EXPECT_EQ(kills, 2) << "the oom-kill: and the Killed process lines; not the reaper's";
    const auto summary = parseKernelOomLine(lines[3]);
    ASSERT_TRUE(summary);
    EXPECT_FALSE(summary->killedLine);
    EXPECT_EQ(summary->pid, 1440763);
    EXPECT_EQ(summary->name, "perl");
    EXPECT_EQ(summary->attrs.at("constraint"), "CONSTRAINT_NONE");
    EXPECT_EQ(summary->attrs.at("memcg"), "/user.slice/user-21417.slice/user@21417.service");
    const auto killed = parseKernelOomLine(lines[4]);
    ASSERT_TRUE(killed);
    EXPECT_TRUE(killed->killedLine);
    EXPECT_EQ(killed->pid, 1440763);
    EXPECT_EQ(killed->name, "perl");
    EXPECT_EQ(killed->attrs.at("rss_bytes"), "61804892160");  // (60356340 + 0 + 0) kB
    // The syslog form of another real paste (docker/for-linux#1001).
    const auto docker = parseKernelOomLine(fixtureLines("host_oom_kernel_docker_1001.log")[0]);
    ASSERT_TRUE(docker);
    EXPECT_EQ(docker->pid, 15784);
    EXPECT_EQ(docker->name, "python3");
}

// The file source reads only what is written after it opened; the matcher makes one event of
// the kill's two lines, for the run that had the pid, and nothing for a pid no run had.
TEST(KernelOomMatcher, FileSourceKillOfARunsPidIsOneEventOnThatRun) {
    TempDir dir;
    const std::string path = dir.file("kern.log");
    append(path, fixtureLines("host_oom_kernel_docker_1001.log"));  // before the open: old
    auto source = openKernelLogFile(path);
    ASSERT_TRUE(source.ok()) << source.error();
    EXPECT_TRUE((*source)->poll().empty());
    append(path, fixtureLines("host_oom_kernel_dmesg_ert_7797.log"));
    append(path, fixtureLines("host_oom_kernel_docker_1001.log"));  // pids of no run
    const auto lines = (*source)->poll();
    EXPECT_EQ(lines.size(), 6u + fixtureLines("host_oom_kernel_docker_1001.log").size());
    EXPECT_TRUE((*source)->poll().empty());

    KernelOomMatcher matcher;
    matcher.notePid(1440763, "run-a", 1'000);
    matcher.notePid(99, "run-b", 1'000);
    const auto events = matcher.match(lines, 2'000, path);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].first, "run-a");
    const LogEvent& ev = events[0].second;
    EXPECT_EQ(ev.kind, LogEventKind::HostOom);
    EXPECT_EQ(attr(ev, "pid"), "1440763");
    EXPECT_EQ(attr(ev, "name"), "perl");
    EXPECT_EQ(attr(ev, "rss_bytes"), "61804892160");
    EXPECT_EQ(attr(ev, "anon_rss_bytes"), "61804892160");
    EXPECT_EQ(attr(ev, "constraint"), "CONSTRAINT_NONE");
    EXPECT_EQ(attr(ev, "source"), "kernel_log");
    EXPECT_EQ(attr(ev, "via"), path);
    EXPECT_EQ(ev.message, "host OOM: kernel killed pid 1440763 (perl, 57.56 GiB RSS)");
    EXPECT_TRUE(matcher.match({}, 3'000, path).empty());
}

// An `oom-kill:` line whose `Killed process` line never comes still goes out (at the next
// poll), with what it names; a pid not seen for longer than kPidMemoryNs is forgotten.
TEST(KernelOomMatcher, LoneOomKillLineAndForgottenPids) {
    const auto lines = fixtureLines("host_oom_kernel_dmesg_ert_7797.log");
    KernelOomMatcher matcher;
    matcher.notePid(1440763, "run-a", 0);
    EXPECT_TRUE(matcher.match({lines[3]}, 1, "f").empty());
    const auto later = matcher.match({}, 2, "f");
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].second.message, "host OOM: kernel killed pid 1440763 (perl)");
    EXPECT_EQ(attr(later[0].second, "memcg"), "/user.slice/user-21417.slice/user@21417.service");
    EXPECT_TRUE(matcher.match({}, KernelOomMatcher::kPidMemoryNs + 10, "f").empty());
    EXPECT_TRUE(matcher.match({lines[4]}, KernelOomMatcher::kPidMemoryNs + 20, "f").empty())
        << "the pid was forgotten";
}

// The real /dev/kmsg where this process may read it: opened at its end, a poll never blocks.
TEST(KernelLogSource, RealKmsgWherePermitted) {
    auto kmsg = openKmsg();
    if (!kmsg.ok()) {
        GTEST_SKIP() << "not readable here: " << kmsg.error();
    }
    const auto start = std::chrono::steady_clock::now();
    (*kmsg)->poll();
    (*kmsg)->poll();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ((*kmsg)->describe(), "/dev/kmsg");
    EXPECT_FALSE(openKmsg(std::string("/nonexistent/kmsg")).ok());
    auto off = openKernelLog("off");
    ASSERT_TRUE(off.ok());
    EXPECT_EQ(off->get(), nullptr);
}

// Through a real runplaned: a kernel log line that kills the run's own process (the real pasted
// line with the run's pid put in its place) is a host_oom event on that run, before its exit.
TEST(KernelOomDaemon, KillOfTheRunsProcessIsAHostOomEventOnTheRun) {
    TempDir dir;
    const std::string kernLog = dir.file("kern.log");
    append(kernLog, {});
    DaemonProcess daemon(dir.path() + "/state",
                         {"--sample-hz", "10", "--kernel-log", kernLog, "--log-level", "info"});
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = testing::agentStub(daemon);
    v1::RunStatus st;
    {
        grpc::ClientContext ctx;
        v1::StartRunRequest req;
        req.set_run_id("oom");
        for (const char* a : {"/bin/sleep", "30"}) {
            req.add_argv(a);
        }
        req.set_role(v1::RUN_ROLE_STANDALONE);
        ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    }
    ASSERT_GT(st.pid(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the tree walked
    auto lines = fixtureLines("host_oom_kernel_dmesg_ert_7797.log");
    for (auto& l : lines) {
        const auto at = l.find("1440763");
        if (at != std::string::npos) {
            l.replace(at, 7, std::to_string(st.pid()));
        }
    }
    append(kernLog, lines);
    ::kill(st.pid(), SIGKILL);  // what the OOM killer does

    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
    auto reader = stub->WatchTelemetry(&ctx, {});
    std::vector<v1::Event> events;
    v1::TelemetryBatch batch;
    bool exited = false;
    while (!exited && reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            if (r.has_event() && r.run_id() == "oom") {
                events.push_back(r.event());
                exited = exited || r.event().kind() == v1::EVENT_PROCESS_EXIT;
            }
        }
    }
    ctx.TryCancel();
    reader->Finish();
    int oom = -1;
    int exit = -1;
    for (int i = 0; i < static_cast<int>(events.size()); ++i) {
        if (events[i].kind() == v1::EVENT_HOST_OOM) {
            EXPECT_EQ(oom, -1) << "one event for the kill's two lines";
            oom = i;
        }
        if (events[i].kind() == v1::EVENT_PROCESS_EXIT) {
            exit = i;
        }
    }
    std::string seen;
    for (const auto& e : events) {
        seen += v1::EventKind_Name(e.kind()) + ": " + e.message() + "\n";
    }
    ASSERT_GE(oom, 0) << "no host_oom event (pid " << st.pid() << "); events:\n"
                      << seen << "daemon log:\n"
                      << daemon.stderrText();
    const auto& ev = events[oom];
    EXPECT_EQ(ev.attrs().at("pid"), std::to_string(st.pid()));
    EXPECT_EQ(ev.attrs().at("name"), "perl");
    EXPECT_EQ(ev.attrs().at("rss_bytes"), "61804892160");
    EXPECT_EQ(ev.attrs().at("source"), "kernel_log");
    EXPECT_EQ(ev.message(),
              "host OOM: kernel killed pid " + std::to_string(st.pid()) + " (perl, 57.56 GiB RSS)");
    ASSERT_GE(exit, 0);
    EXPECT_LT(oom, exit) << "the kill is told before the exit it caused";
}

}  // namespace
}  // namespace runplane::agent
