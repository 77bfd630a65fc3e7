// Issue 41, the controller's half of the red-team round (docs/reliability.md, "Red-team round
// (issue 41): controller and history"): the history's disk fills while a run's output is stored,
// the controller's clock runs 30 days ahead, and the history is damaged, read-only or locked by
// another process. Real runplaned, runplanectl, SQLite files and child processes.
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/control/node_client.h"
#include "tests/agent/tmpfs.h"
#include "tests/reliability/fault_harness.h"
#include "tests/support/fault_vfs.h"

namespace runplane::reliability {
namespace {

using namespace std::chrono_literals;
namespace faultvfs = runplane::testing::faultvfs;
using runplane::agent::testing::Tmpfs;
using runplane::testing::builtBinary;
using runplane::testing::queryInt;

constexpr std::int64_t kDayNs = 86'400'000'000'000;

std::string ctl() {
    return builtBinary("backend/cli/runplanectl");
}

// The run's whole stdout as the daemon keeps it.
std::string daemonStdout(const std::string& address, const std::string& runId) {
    auto client = control::NodeClient::create(address, {});
    if (!client.ok()) {
        return "<" + client.error() + ">";
    }
    std::string out;
    const Status s = (*client)->tailLogs(RunId{runId}, control::LogStreamKind::Stdout, 0, false,
                                         [&](const control::LogChunkInfo& chunk) {
                                             out += chunk.data;
                                             return true;
                                         });
    return s.ok() ? out : "<" + s.error() + ">";
}

std::optional<db::RunLogText> storedStdout(const std::string& history, const std::string& runId) {
    db::OpenOptions o;
    o.readOnly = true;
    auto h = db::History::open(history, o);
    if (!h.ok()) {
        return std::nullopt;
    }
    auto text = (*h)->readRunLog(RunId{runId}, "stdout");
    return text.ok() ? std::optional<db::RunLogText>(*text) : std::nullopt;
}

// ---------------------------------------------------------------- item 3

class RunOutputFaultTest : public FaultTest {
  protected:
    void SetUp() override {
        faultvfs::install();  // before any connection of this process opens the history
        FaultTest::SetUp();
    }
};

// The history's disk is full for 3 s while a run prints (and ends): the run-log recorder's
// appends fail. Once the disk has room, the stored output is the run's whole stdout, byte for
// byte, with no range missing (it resumes from the last stored offset). Before the fix the
// chunks of the outage were dropped and the later ones stored after the hole, while
// `logs --from-history` still reported "(bytes 0..N)".
TEST_F(RunOutputFaultTest, RunOutputKeepsEveryByteThroughAFullHistoryDisk) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(50, 3));
    ASSERT_TRUE(waitUntil([&] {
        auto s = storedStdout(m_history, "r1");
        return s && s->endOffset > 100;
    })) << in.status().lastError;
    faultvfs::arm(faultvfs::Fault::DiskFull, "history.sqlite");
    const std::uint64_t storedAtFull = storedStdout(m_history, "r1")->endOffset;
    std::this_thread::sleep_for(3s);  // the run prints on (and ends) during the outage
    const std::string printedMeanwhile = daemonStdout(m_address, "r1");
    faultvfs::disarm();
    ASSERT_GT(printedMeanwhile.size(), storedAtFull + 200)
        << "the run printed too little during the outage for the test to mean anything";
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    const std::string whole = daemonStdout(m_address, "r1");
    ASSERT_EQ(whole.find('<'), std::string::npos) << whole;
    EXPECT_TRUE(waitUntil([&] {
        auto s = storedStdout(m_history, "r1");
        return s && s->endOffset >= whole.size();
    }));
    auto stored = storedStdout(m_history, "r1");
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->firstOffset, 0u);
    EXPECT_EQ(stored->endOffset, whole.size());
    EXPECT_TRUE(stored->missing.empty())
        << stored->missingBytes() << " bytes missing, first at " << stored->missing[0].first;
    EXPECT_EQ(stored->text, whole);
}

// ---------------------------------------------------------------- item 6

// The controller's clock runs 30 days ahead (runplanectl under the LD_PRELOAD clock shim; the
// machine's clock is left alone). `history prune` refuses, saying by how much the clock is
// ahead of the newest sample, and `watch` (which prunes on its own at start) deletes nothing.
// Before the fix both deleted every raw sample.
TEST_F(FaultTest, ControllerClockThirtyDaysAheadPrunesNothing) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(20, 0));
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 20; }));
    for (auto& i : m_ingestors) {
        i->stop();
    }
    const std::int64_t samples = queryInt(m_history, "SELECT count(*) FROM samples;");
    ASSERT_GT(samples, 20);
    const std::string offset = m_dir.file("clock-offset");
    std::ofstream(offset) << 30 * kDayNs;
    const std::vector<std::string> ahead = {
        "LD_PRELOAD=" + builtBinary("tests/support/librunplane_fake_clock.so"),
        "RUNPLANE_FAKE_CLOCK_FILE=" + offset};

    Child prune = Child::spawn({ctl(), "history", "prune", "--history", m_history},
                               m_dir.file("prune.out"), m_dir.file("prune.err"), ahead);
    EXPECT_EQ(prune.wait(30s), 1) << prune.stderrText();
    EXPECT_NE(prune.stderrText().find(m_history + ": refusing to prune: the clock ("),
              std::string::npos)
        << prune.stderrText();
    EXPECT_NE(prune.stderrText().find("is 30.0 days ahead of the newest sample stored"),
              std::string::npos)
        << prune.stderrText();
    EXPECT_EQ(queryInt(m_history, "SELECT count(*) FROM samples;"), samples);

    Child w = Child::spawn({ctl(), "watch", m_address, "--history", m_history, "--seconds", "3"},
                           m_dir.file("watch.out"), m_dir.file("watch.err"), ahead);
    ASSERT_TRUE(w.wait(30s).has_value());
    EXPECT_NE(w.stderrText().find("retention: " + m_history + ": refusing to prune"),
              std::string::npos)
        << w.stderrText();
    EXPECT_GE(queryInt(m_history, "SELECT count(*) FROM samples;"), samples);
    EXPECT_EQ(queryInt(m_history, "SELECT count(*) FROM series_horizon;"), 0);
}

// ---------------------------------------------------------------- item 10

// A history with r1's stdout stored (6,000 lines), written through the library and closed.
void historyWithStoredOutput(const std::string& path) {
    auto h = db::History::open(path);
    ASSERT_TRUE(h.ok()) << h.error();
    db::RunRecord r;
    r.id = RunId{"r1"};
    r.startedNs = 1;
    r.state = db::RunState::Finished;
    ASSERT_TRUE((*h)->upsertRun(r).ok());
    std::string text;
    for (int i = 0; i < 6000; ++i) {
        text += "step " + std::to_string(i) + ": loss " + std::to_string((i * 7919) % 10007) + "\n";
    }
    ASSERT_TRUE((*h)->appendRunLog(RunId{"r1"}, "stdout", 0, text).ok());
    ASSERT_TRUE((*h)->setRetention({7, 365}).ok());
}

// Overwrites page `page` (1-based) of a closed SQLite file with 0xA5 bytes.
void damagePage(const std::string& path, std::int64_t page) {
    const std::int64_t size = queryInt(path, "PRAGMA page_size;");
    ASSERT_GT(size, 0);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * size);
    const std::string junk(static_cast<std::size_t>(size), '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

std::int64_t rootPage(const std::string& path, const std::string& table) {
    return queryInt(path, "SELECT rootpage FROM sqlite_master WHERE name = '" + table + "';");
}

// `logs --from-history` on a history whose stored output is damaged says the history is
// damaged, and where (the file, the run and stream, the table); before the fix it said "no
// stored output of run r1".
TEST_F(FaultTest, LogsFromADamagedHistorySayItIsDamagedAndWhere) {
    historyWithStoredOutput(m_history);
    const std::int64_t root = rootPage(m_history, "run_logs");
    ASSERT_GT(root, 1);
    damagePage(m_history, root);
    auto r = runplane::testing::runCtl(
        {"logs", "127.0.0.1:1", "r1", "--from-history", "--history", m_history}, m_dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_EQ(r.err.find("no stored output"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(m_history + ": the history is damaged"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stdout of run r1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run_logs"), std::string::npos) << r.err;
}

// The history on a read-only file system: a reader and a writer each say it is read-only,
// which path, and what to do; before the fix both said "unable to open database file".
TEST_F(FaultTest, ReadOnlyHistorySaysSoWhichPathAndWhatToDo) {
    Tmpfs disk(m_dir.file("ro-disk"), "8m");
    if (!disk.ok()) {
        GTEST_SKIP() << disk.error();
    }
    const std::string path = disk.path() + "/history.sqlite";
    historyWithStoredOutput(path);
    ASSERT_EQ(::mount(nullptr, disk.path().c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
        << std::strerror(errno);

    auto logs = runplane::testing::runCtl(
        {"logs", "127.0.0.1:1", "r1", "--from-history", "--history", path}, m_dir.path());
    EXPECT_EQ(logs.exitCode, 1);
    EXPECT_NE(logs.err.find(path + ": cannot read the history: " + disk.path() +
                            " is on a read-only file system"),
              std::string::npos)
        << logs.err;
    EXPECT_NE(logs.err.find("pass the copy to --history"), std::string::npos) << logs.err;

    auto watch = runplane::testing::runCtl(
        {"watch", "127.0.0.1:1", "--history", path, "--seconds", "2"}, m_dir.path());
    EXPECT_NE(watch.exitCode, 0);
    EXPECT_NE(watch.err.find(path + ": the history is read-only: " + disk.path() +
                             " is on a read-only file system"),
              std::string::npos)
        << watch.err;
    EXPECT_NE(watch.err.find("make them writable"), std::string::npos) << watch.err;
    EXPECT_EQ(watch.err.find("unable to open database file"), std::string::npos) << watch.err;
}

// `watch` into a history that fails its integrity check (a page of the settings table, which
// ingest never writes, overwritten) stops at once, non-zero, naming the file and what SQLite
// found, and writes nothing; before the fix it stored the daemon's records into it and exited 0.
TEST_F(FaultTest, WatchRefusesAHistoryThatFailsItsIntegrityCheck) {
    historyWithStoredOutput(m_history);
    const std::int64_t root = rootPage(m_history, "settings");
    ASSERT_GT(root, 1);
    damagePage(m_history, root);
    ASSERT_NE(integrity(), "ok");
    startDaemon();  // its node telemetry is what watch would store
    const std::string before = runplane::testing::readAll(m_history);
    Child w = Child::spawn({ctl(), "watch", m_address, "--history", m_history, "--seconds", "4"},
                           m_dir.file("watch.out"), m_dir.file("watch.err"));
    EXPECT_EQ(w.wait(30s), 1) << w.stderrText();
    EXPECT_NE(w.stderrText().find(m_history + ": the history fails its integrity check"),
              std::string::npos)
        << w.stderrText();
    EXPECT_NE(w.stderrText().find("not writing into a damaged history"), std::string::npos)
        << w.stderrText();
    EXPECT_TRUE(runplane::testing::readAll(m_history) == before) << "the damaged file was written";
    EXPECT_EQ(storedCursor(), 0);
}

// Another process holds the history's lock file exclusively (flock(1)) before `watch` starts:
// `watch` says, every few seconds while it waits, which process holds what; once the lock is
// released it goes on and stores the node's telemetry exactly once. Before the fix it waited
// without a word. (No controller of this process may hold the history: its shared lock would
// keep flock(1) waiting.)
TEST_F(FaultTest, WriterWaitingOnAnotherProcessLockSaysWhoHoldsIt) {
    startDaemon();
    Child locker = Child::spawn({"/usr/bin/flock", "-x", m_history + "-lock", "sleep", "9"},
                                m_dir.file("flock.out"), m_dir.file("flock.err"));
    ASSERT_TRUE(waitUntil([&] { return std::filesystem::exists(m_history + "-lock"); }));
    std::this_thread::sleep_for(300ms);  // flock(1) holds the lock once the file exists
    Child w = watch("watch-locked");
    EXPECT_TRUE(waitUntil([&] { return w.stderrText().find("waiting") != std::string::npos; }, 8s))
        << w.stderrText();
    const std::string err = w.stderrText();
    EXPECT_NE(err.find(m_history + ": waiting "), std::string::npos) << err;
    // The holder's command line, cut at 120 characters (the scratch path is long).
    EXPECT_NE(err.find("held exclusively by pid " + std::to_string(locker.pid()) +
                       " (/usr/bin/flock -x " + m_history + "-lock"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find(") holds " + m_history + "-lock exclusively"), std::string::npos) << err;
    EXPECT_EQ(storedCursor(), 0);  // nothing written while it waited
    ASSERT_EQ(locker.wait(20s), 0) << locker.stderrText();
    EXPECT_TRUE(waitUntil([&] { return storedCursor() >= 10; })) << w.stderrText();
    w.kill(SIGTERM);
    EXPECT_EQ(w.wait(20s), 0) << w.stderrText();
    expectExactlyOnce();
}

// The sqlite3 shell holds SQLite's write lock on the history past the writer's busy timeout:
// the ingest's error names the holder (pid and command line), not only "database is locked".
TEST_F(FaultTest, WriterBusyOnSqliteWriteLockNamesTheHolder) {
    startDaemon();
    submit("r1", stepsRun(40, 3));  // creates the history before the ingest's writer opens it
    auto& in = ingest();
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    Child locker = Child::spawn(
        {"/bin/sh", "-c",
         "(echo 'BEGIN EXCLUSIVE;'; sleep 8; echo 'COMMIT;') | sqlite3 '" + m_history + "'"},
        m_dir.file("locker.out"), m_dir.file("locker.err"));
    EXPECT_TRUE(waitUntil(
        [&] {
            const std::string e = in.status().lastError;
            return e.find("locked") != std::string::npos &&
                   e.find("holds SQLite's write lock") != std::string::npos;
        },
        15s))
        << in.status().lastError;
    EXPECT_NE(in.status().lastError.find("(sqlite3 " + m_history + ")"), std::string::npos)
        << in.status().lastError;
    ASSERT_EQ(locker.wait(20s), 0) << locker.stderrText();
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectExactlyOnce();
}

}  // namespace
}  // namespace runplane::reliability
