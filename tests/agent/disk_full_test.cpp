// A full state disk (issue #23 item 4), on a real 2 MiB tmpfs: a run's true exit status
// survives it, the spool's in-memory backlog stays bounded (the loss becomes a gap event with
// its count and seq range), appends resume once space returns, and the failure is logged once
// plus rate-limited summaries, not tens of lines a second. docs/reliability.md.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>

#include "tests/agent/daemon_process.h"
#include "tests/agent/tmpfs.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;
using testing::Tmpfs;
using testing::waitFor;

v1::RunStatus runStatus(v1::Agent::Stub& stub, const std::string& id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListRunsResponse resp;
    if (!stub.ListRuns(&ctx, {}, &resp).ok()) {
        return {};
    }
    for (const auto& r : resp.runs()) {
        if (r.run_id() == id) {
            return r;
        }
    }
    return {};
}

// Telemetry from `fromSeq` until `enough` holds or the timeout passes.
std::vector<v1::TelemetryRecord> watch(
    v1::Agent::Stub& stub, std::uint64_t fromSeq,
    const std::function<bool(const std::vector<v1::TelemetryRecord>&)>& enough,
    std::chrono::seconds timeout = std::chrono::seconds(20)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::WatchTelemetryRequest req;
    req.set_from_seq(fromSeq);
    auto reader = stub.WatchTelemetry(&ctx, req);
    std::vector<v1::TelemetryRecord> out;
    v1::TelemetryBatch batch;
    while (reader->Read(&batch)) {
        out.insert(out.end(), batch.records().begin(), batch.records().end());
        if (enough(out)) {
            ctx.TryCancel();
            break;
        }
    }
    const grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok() || status.error_code() == grpc::StatusCode::CANCELLED)
        << status.error_code() << ": " << status.error_message();
    return out;
}

std::size_t countLines(const std::string& text, const std::string& needle) {
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
        n += line.find(needle) != std::string::npos ? 1 : 0;
    }
    return n;
}

// Keeps the disk full (anything freed, e.g. by a WAL truncation, is taken again) until stopped.
class DiskFiller {
  public:
    explicit DiskFiller(const Tmpfs& fs)
        : m_thread([this, &fs] {
              while (!m_stop) {
                  fs.fill("fill");
                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
              }
          }) {}
    ~DiskFiller() { stop(); }
    void stop() {
        m_stop = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }

  private:
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

// Before: the supervisor could not write exit.json, exited, and the run became
// RUN_STATE_LOST with its exit status gone.
TEST(DiskFull, RunExitStatusSurvivesAFullStateDisk) {
    TempDir dir;
    Tmpfs fs(dir.path() + "/state", "2m");
    if (!fs.ok()) {
        GTEST_SKIP() << fs.error();
    }
    DaemonProcess d(fs.path(), {"--sample-hz", "10"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const std::string fill = fs.path() + "/fill";
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::StartRunRequest req;
    req.set_run_id("filler");
    // The run fills the state disk itself, then exits 7.
    for (const char* a : {"/bin/sh", "-c", ""}) {
        req.add_argv(a);
    }
    req.set_argv(2, "cat /dev/zero > " + fill + " 2>/dev/null; exit 7");
    v1::RunStatus st;
    ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    ASSERT_TRUE(waitFor(
        [&] {
            const auto s = runStatus(*stub, "filler");
            return s.state() != v1::RUN_STATE_RUNNING && s.state() != v1::RUN_STATE_STARTING;
        },
        std::chrono::seconds(20)));
    const auto ended = runStatus(*stub, "filler");
    EXPECT_EQ(ended.state(), v1::RUN_STATE_FAILED) << ended.message();
    EXPECT_EQ(ended.exit_code(), 7) << ended.message();
    EXPECT_NE(testing::slurp(fs.path() + "/runs.d/filler/exit.json").find("\"exit_code\":7"),
              std::string::npos);
    // Space returns: the exit reaches telemetry with the real status.
    ASSERT_EQ(::unlink(fill.c_str()), 0);
    const auto rs = watch(*stub, 0, [](const auto& v) {
        for (const auto& r : v) {
            if (r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT &&
                r.run_id() == "filler") {
                return true;
            }
        }
        return false;
    });
    const auto exit = std::find_if(rs.begin(), rs.end(), [](const v1::TelemetryRecord& r) {
        return r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT;
    });
    ASSERT_NE(exit, rs.end()) << "no EVENT_PROCESS_EXIT after space returned; daemon log:\n"
                              << d.stderrText();
    const auto& last = *exit;
    EXPECT_EQ(last.event().attrs().at("exit_code"), "7");
}

// Before: the backlog grew without bound, every retry wrote all of it in one transaction, the
// error was logged about 45 times a second, and --spool-backlog-records did not exist.
TEST(DiskFull, SpoolBacklogIsBoundedLoggedOnceAndRecoversWithAGap) {
    TempDir dir;
    Tmpfs fs(dir.path() + "/state", "2m");
    if (!fs.ok()) {
        GTEST_SKIP() << fs.error();
    }
    DaemonProcess d(fs.path(), {"--sample-hz", "10", "--spool-backlog-records", "40"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const auto before = watch(*stub, 0, [](const auto& v) { return v.size() >= 5; });
    ASSERT_GE(before.size(), 5u);
    {
        DiskFiller filler(fs);
        ASSERT_TRUE(waitFor([&] { return countLines(d.stderrText(), "spool append failed") > 0; },
                            std::chrono::seconds(20)))
            << d.stderrText();
        std::this_thread::sleep_for(std::chrono::seconds(4));
        const std::string log = d.stderrText();
        EXPECT_EQ(countLines(log, "spool append failed"), 1u) << log;
        EXPECT_EQ(countLines(log, "spool append still failing"), 0u) << log;
    }
    ASSERT_EQ(::unlink((fs.path() + "/fill").c_str()), 0);
    // After the gap event, at least 20 records written after the recovery.
    const auto after = watch(*stub, before.back().seq() + 1, [](const auto& v) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i].has_event() && v[i].event().kind() == v1::EVENT_GAP) {
                return v.size() - i > 20;
            }
        }
        return false;
    });
    std::size_t gapAt = after.size();
    for (std::size_t i = 0; i < after.size(); ++i) {
        if (after[i].has_event() && after[i].event().kind() == v1::EVENT_GAP) {
            gapAt = i;
            break;
        }
    }
    ASSERT_LT(gapAt, after.size()) << "no gap event after the outage; daemon log:\n"
                                   << d.stderrText();
    const auto& attrs = after[gapAt].event().attrs();
    const std::uint64_t first = std::stoull(attrs.at("first_seq"));
    const std::uint64_t last = std::stoull(attrs.at("last_seq"));
    const std::uint64_t count = std::stoull(attrs.at("count"));
    EXPECT_GT(count, 0u);
    EXPECT_EQ(last - first + 1, count);
    EXPECT_EQ(after[gapAt].seq(), last + 1);
    EXPECT_GT(first, before.back().seq());
    // Nothing after the gap is missing: seqs are consecutive.
    for (std::size_t i = gapAt + 1; i < after.size(); ++i) {
        EXPECT_EQ(after[i].seq(), after[i - 1].seq() + 1);
    }
    EXPECT_EQ(countLines(d.stderrText(), "spool append recovered"), 1u) << d.stderrText();
}

}  // namespace
}  // namespace runplane::agent
