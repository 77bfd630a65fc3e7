// Issue #20, faults of storage and of the clock (docs/reliability.md): a full or failing history
// (fault VFS in this process, or a real full tmpfs), a full spool disk (tmpfs), the history
// locked by another process, a power cut of the controller's host, the node's clock stepping.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/agent/spool.h"
#include "tests/agent/tmpfs.h"
#include "tests/reliability/fault_harness.h"
#include "tests/support/fault_vfs.h"

namespace runplane::reliability {
namespace {

using namespace std::chrono_literals;
using db::RunState;
namespace faultvfs = runplane::testing::faultvfs;
using runplane::agent::testing::Tmpfs;
using runplane::testing::queryInt;

// The history refuses writes (the fault armed for `fault`) while the run ends; the ingestor says
// why, retries, and stores everything once writes succeed again.
void historyOutage(control::TelemetryIngestor& in, faultvfs::Fault fault,
                   const std::string& expectedError) {
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    const auto injectedBefore = faultvfs::injected();
    faultvfs::arm(fault, "history.sqlite");
    EXPECT_TRUE(waitUntil([&] {
        return in.status().lastError.find(expectedError) != std::string::npos;
    })) << in.status().lastError;
    std::this_thread::sleep_for(3s);  // the run ends during the outage
    faultvfs::disarm();
    EXPECT_GT(faultvfs::injected(), injectedBefore);
}

class HistoryFaultTest : public FaultTest {
  protected:
    void SetUp() override {
        faultvfs::install();  // before any connection of this process opens the history
        FaultTest::SetUp();
    }
    // A run that ends (exit code 3) during an outage of the history (historyOutage), then the
    // two checks of the matrix.
    void runThroughHistoryOutage(faultvfs::Fault fault, const std::string& expectedError) {
        startDaemon();
        auto& in = ingest();
        submit("r1", stepsRun(30, 3));
        historyOutage(in, fault, expectedError);
        ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
        expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
        expectExactlyOnce();
    }
};

TEST_F(HistoryFaultTest, HistoryDiskFull) {
    runThroughHistoryOutage(faultvfs::Fault::DiskFull, "database or disk is full");
}

TEST_F(HistoryFaultTest, HistoryWriteIoError) {
    runThroughHistoryOutage(faultvfs::Fault::WriteError, "disk I/O error");
}

// Every fsync of the history and its WAL fails (SQLITE_IOERR_FSYNC) while the run ends. The
// writer's commits fsync the WAL (synchronous=FULL), so each commit fails and nothing it held is
// acknowledged; the connection must still commit once fsync works again.
TEST_F(HistoryFaultTest, HistoryFsyncFails) {
    runThroughHistoryOutage(faultvfs::Fault::SyncError, "disk I/O error");
}

// As above, and each failed fsync loses what it was to write: the history's and the WAL's writes
// since their last good sync are undone in place (the kernel dropped the dirty pages after a
// writeback error). A commit that failed is written again in full, a checkpoint that failed is
// not counted, so the history stays intact and holds every record once, provided no connection
// committed without an fsync (docs/reliability.md).
TEST_F(HistoryFaultTest, HistoryFsyncFailsAndLosesItsWrites) {
    faultvfs::trackUnsynced("history.sqlite");
    runThroughHistoryOutage(faultvfs::Fault::SyncErrorLosesWrites, "disk I/O error");
    EXPECT_GT(faultvfs::writesLost(), 0u);
}

// A power cut of the controller's host, modelled on the disk: every write to the history and its
// WAL since that file's last fsync is lost (fault VFS, copyAsSynced). Every batch the history
// writer reported committed (the ingestor's cursor; it acknowledges that to the daemon, which
// then drops the records) must be in what the cut leaves. With synchronous=NORMAL commits
// (fsync at checkpoints only) the cut loses acknowledged batches and this fails.
TEST_F(HistoryFaultTest, PowerCutKeepsEveryAcknowledgedRecord) {
    faultvfs::trackUnsynced("history.sqlite");
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(60, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    // A reader in a long read transaction (the GUI reading a wide range): checkpoints cannot
    // copy the frames committed after its snapshot, so they do not fsync the WAL either; only
    // the commit's own sync makes a batch durable then.
    sqlite3* reader = nullptr;
    ASSERT_EQ(sqlite3_open_v2(m_history.c_str(), &reader, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM ingest_cursor;", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    for (int i = 0; i < 8; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(53 * (i + 1)));
        const std::uint64_t acknowledged = in.status().cursor;
        const std::string dir = m_dir.file("cut-" + std::to_string(i));
        std::filesystem::create_directories(dir);
        ASSERT_FALSE(faultvfs::copyAsSynced(m_history, dir).empty());
        const std::string copy = dir + "/history.sqlite";
        EXPECT_EQ(integrity(copy), "ok") << copy;
        const auto c = runplane::testing::checkContinuity(copy, "node-f");
        EXPECT_TRUE(c.error.empty()) << c.error;
        EXPECT_GE(c.cursor, acknowledged)
            << "cut " << i << ": committed through seq " << acknowledged
            << ", the disk holds through " << c.cursor;
        EXPECT_TRUE(c.missing.empty()) << copy;
    }
    sqlite3_exec(reader, "COMMIT;", nullptr, nullptr, nullptr);
    sqlite3_close(reader);
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// A power cut whose disk wrote back some unsynced writes and not earlier ones (out of order),
// taken at writes of the history writer mid-transaction and mid-checkpoint (fault VFS,
// cutMidWrite): every torn copy opens intact, misses no seq and holds at least what the synced
// copy of the same moment holds, i.e. a lost or reordered write loses nothing an fsync had made
// durable (and so, by the test above, nothing acknowledged).
TEST_F(HistoryFaultTest, PowerCutLosingWritesOutOfOrderKeepsWhatWasSynced) {
    faultvfs::trackUnsynced("history.sqlite");
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(60, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    constexpr std::size_t kCuts = 16;
    faultvfs::cutMidWrite(m_history, m_dir.file("cuts"), 5, 4, kCuts);
    // Checkpoints as the writer's checkpoint thread runs them, more often, so that some cuts
    // fall among a checkpoint's writes to the history file itself.
    std::atomic<bool> stop{false};
    std::thread checkpointer([&] {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(m_history.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
            sqlite3_busy_timeout(db, 1000);
            while (!stop) {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                sqlite3_exec(db, "PRAGMA wal_checkpoint(PASSIVE);", nullptr, nullptr, nullptr);
            }
        }
        sqlite3_close(db);
    });
    const bool taken = waitUntil([&] { return faultvfs::cutsTaken().size() >= kCuts; });
    stop = true;
    checkpointer.join();
    const auto cuts = faultvfs::cutsTaken();
    faultvfs::cutMidWrite(m_history, m_dir.file("cuts"), 0, 0, 0);
    ASSERT_TRUE(taken) << cuts.size() << " cuts taken";
    std::size_t partial = 0;
    std::size_t midCheckpoint = 0;
    for (const auto& cut : cuts) {
        const std::string synced = cut.dir + "/synced/history.sqlite";
        EXPECT_EQ(integrity(synced), "ok") << synced;
        const auto base = runplane::testing::checkContinuity(synced, "node-f");
        EXPECT_TRUE(base.error.empty()) << synced << ": " << base.error;
        midCheckpoint += cut.unsyncedDbWrites > 0 ? 1 : 0;
        for (std::size_t j = 0; j < cut.kept.size(); ++j) {
            const std::string torn = cut.dir + "/torn-" + std::to_string(j) + "/history.sqlite";
            const std::string what = torn + " (kept " + std::to_string(cut.kept[j]) + " of " +
                                     std::to_string(cut.unsyncedWrites) + " unsynced writes, " +
                                     std::to_string(cut.unsyncedDbWrites) + " to the file)";
            EXPECT_EQ(integrity(torn), "ok") << what;
            const auto c = runplane::testing::checkContinuity(torn, "node-f");
            EXPECT_TRUE(c.error.empty()) << what << ": " << c.error;
            EXPECT_TRUE(c.missing.empty()) << what;
            EXPECT_GE(c.cursor, base.cursor) << what;
            partial += cut.kept[j] > 0 && cut.kept[j] < cut.unsyncedWrites ? 1 : 0;
        }
    }
    EXPECT_GT(partial, 0u) << "no torn copy kept some unsynced writes and lost others";
    EXPECT_GT(midCheckpoint, 0u) << "no cut fell among a checkpoint's writes";
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// A power cut of the node, modelled on its disk (fault VFS, copyAsSynced): the daemon's spool
// (the library runplaned uses, in this process) appends, trims what a controller acknowledged and
// appends again; at 8 moments the spool and its WAL are copied as a cut would leave them. Every
// append that returned is in the copy (the daemon reports a record's seq only after its append,
// and the run's exit status is one of them), the copy opens intact, and the seqs it issues next
// are new: a seq is never reused for other content after a cut.
TEST(SpoolPowerCut, EveryAppendThatReturnedSurvivesAndNoSeqIsReused) {
    faultvfs::install();
    faultvfs::trackUnsynced("spool.sqlite");
    runplane::testing::ScratchDir dir;
    const std::string path = dir.file("spool.sqlite");
    auto spool = agent::Spool::open({path, 1 << 20});
    ASSERT_TRUE(spool.ok()) << spool.error();
    auto records = [](int n, int cut) {
        std::vector<v1::TelemetryRecord> out(static_cast<std::size_t>(n));
        for (auto& r : out) {
            r.mutable_sample()->set_series("cut-" + std::to_string(cut));
            r.mutable_sample()->set_value(cut);
        }
        return out;
    };
    for (int cut = 0; cut < 8; ++cut) {
        std::uint64_t last = 0;
        for (int batch = 0; batch < 3; ++batch) {
            auto appended = records(40 + 7 * cut, cut);
            auto seq = (*spool)->append(appended, {{"cut", std::to_string(cut)}});
            ASSERT_TRUE(seq.ok()) << seq.error();
            last = *seq;
        }
        ASSERT_TRUE((*spool)->acknowledge(last - 30).ok());  // a controller committed through here
        const std::string cutDir = dir.file("cut-" + std::to_string(cut));
        std::filesystem::create_directories(cutDir);
        ASSERT_FALSE(faultvfs::copyAsSynced(path, cutDir).empty());
        const std::string copy = cutDir + "/spool.sqlite";
        EXPECT_EQ(queryInt(copy,
                           "SELECT count(*) FROM pragma_integrity_check WHERE "
                           "integrity_check <> 'ok';"),
                  0)
            << copy;
        auto reopened = agent::Spool::open({copy, 1 << 20});
        ASSERT_TRUE(reopened.ok()) << reopened.error();
        EXPECT_EQ((*reopened)->incarnation(), (*spool)->incarnation());
        EXPECT_GE((*reopened)->lastSeq(), last) << "cut " << cut;
        auto kept = (*reopened)->read(last - 29, 1000);
        ASSERT_TRUE(kept.ok()) << kept.error();
        ASSERT_EQ(kept->size(), 30u) << "cut " << cut;
        EXPECT_EQ(kept->back().seq(), last);
        EXPECT_EQ(kept->back().sample().series(), "cut-" + std::to_string(cut));
        EXPECT_EQ((*reopened)->meta("cut"), std::to_string(cut));
        auto next = records(1, 99);
        auto nextSeq = (*reopened)->append(next);
        ASSERT_TRUE(nextSeq.ok()) << nextSeq.error();
        EXPECT_EQ(*nextSeq, last + 1);
    }
}

// The node's power cut, losing writes out of order: the spool's appends and trims, cut among
// their own writes (fault VFS, cutMidWrite: every 3rd write, 24 cuts, 4 torn copies each). Each
// copy opens intact with the same incarnation, holds every append that had returned before the
// cut with its records, and the seq it issues next is after all of them: no seq handed out is
// ever reused for other content.
TEST(SpoolPowerCut, LosingWritesOutOfOrderKeepsEveryReturnedAppend) {
    faultvfs::install();
    faultvfs::trackUnsynced("spool-torn.sqlite");
    runplane::testing::ScratchDir dir;
    const std::string path = dir.file("spool-torn.sqlite");
    auto spool = agent::Spool::open({path, 1 << 20});
    ASSERT_TRUE(spool.ok()) << spool.error();
    constexpr std::size_t kCuts = 24;
    faultvfs::cutMidWrite(path, dir.file("cuts"), 3, 4, kCuts);
    std::vector<std::uint64_t> returnedAtCut;  // per cut: the last seq an append had returned
    std::uint64_t returned = 0;
    for (int batch = 0; batch < 400 && returnedAtCut.size() < kCuts; ++batch) {
        std::vector<v1::TelemetryRecord> records(static_cast<std::size_t>(20 + batch % 30));
        for (auto& r : records) {
            r.mutable_sample()->set_series("batch-" + std::to_string(batch));
        }
        auto seq = (*spool)->append(records, {{"batch", std::to_string(batch)}});
        ASSERT_TRUE(seq.ok()) << seq.error();
        // Cuts taken during this append saw only the earlier appends returned.
        returnedAtCut.resize(faultvfs::cutsTaken().size(), returned);
        returned = *seq;
        if (batch % 4 == 3) {
            ASSERT_TRUE((*spool)->acknowledge(returned - 10).ok());
            returnedAtCut.resize(faultvfs::cutsTaken().size(), returned);
        }
    }
    const auto cuts = faultvfs::cutsTaken();
    faultvfs::cutMidWrite(path, dir.file("cuts"), 0, 0, 0);
    ASSERT_EQ(cuts.size(), kCuts);
    std::size_t partial = 0;
    for (std::size_t k = 0; k < cuts.size(); ++k) {
        std::vector<std::string> copies{cuts[k].dir + "/synced/spool-torn.sqlite"};
        for (std::size_t j = 0; j < cuts[k].kept.size(); ++j) {
            copies.push_back(cuts[k].dir + "/torn-" + std::to_string(j) + "/spool-torn.sqlite");
            partial += cuts[k].kept[j] > 0 && cuts[k].kept[j] < cuts[k].unsyncedWrites ? 1 : 0;
        }
        for (const std::string& copy : copies) {
            SCOPED_TRACE(copy + ": appends returned through seq " +
                         std::to_string(returnedAtCut[k]) + ", " +
                         std::to_string(cuts[k].unsyncedWrites) + " unsynced writes");
            EXPECT_EQ(queryInt(copy,
                               "SELECT count(*) FROM pragma_integrity_check WHERE "
                               "integrity_check <> 'ok';"),
                      0);
            auto reopened = agent::Spool::open({copy, 1 << 20});
            ASSERT_TRUE(reopened.ok()) << reopened.error();
            EXPECT_EQ((*reopened)->incarnation(), (*spool)->incarnation());
            const std::uint64_t last = (*reopened)->lastSeq();
            EXPECT_GE(last, returnedAtCut[k]);
            if (returnedAtCut[k] > 0) {
                auto kept = (*reopened)->read(returnedAtCut[k], 1);
                ASSERT_TRUE(kept.ok()) << kept.error();
                ASSERT_EQ(kept->size(), 1u);
                EXPECT_EQ(kept->front().seq(), returnedAtCut[k]);
            }
            std::vector<v1::TelemetryRecord> next(1);
            auto nextSeq = (*reopened)->append(next);
            ASSERT_TRUE(nextSeq.ok()) << nextSeq.error();
            EXPECT_EQ(*nextSeq, last + 1);
        }
    }
    EXPECT_GT(partial, 0u) << "no torn copy kept some unsynced writes and lost others";
}

// A power cut of the node with the daemon itself under the fault VFS (runplaned-powercut:
// runplaned's main, its SQLite through the VFS): among the spool's writes during a live run the
// daemon copies the spool as a cut that lost writes out of order would leave it, and kills itself
// there (SIGKILL: nothing after that write happens). The copy is put back as the node's disk
// (no -shm: shared memory does not survive a cut), the ordinary runplaned starts on it, and the
// run is reattached: every seq the controller had is still the daemon's, none is issued twice.
TEST_F(FaultTest, NodePowerCutRestartsTheDaemonOnWhatTheDiskHeld) {
    const std::string spool = m_state + "/spool.sqlite";
    const std::string cuts = m_dir.file("cuts");
    m_daemon->setBinary(runplane::testing::builtBinary("backend/daemon/runplaned-powercut"));
    m_daemon->setEnv({"RUNPLANE_TEST_POWER_CUT_PATH=" + spool,
                      "RUNPLANE_TEST_POWER_CUT_DIR=" + cuts, "RUNPLANE_TEST_POWER_CUT_EVERY=5",
                      "RUNPLANE_TEST_POWER_CUT_TORN=1", "RUNPLANE_TEST_POWER_CUT_AT=40"});
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(60, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    ASSERT_TRUE(waitUntil([&] { return std::filesystem::exists(cuts + "/powered-off"); },
                          std::chrono::seconds(40)))
        << m_daemon->child().stderrText();
    m_daemon->kill9();  // reaps it: it killed itself at the cut
    const std::uint64_t cursorAtCut = in.status().cursor;
    putBackTheTornCopy(cuts, spool);
    m_daemon->setBinary("");
    m_daemon->setEnv({});
    ASSERT_EQ(m_daemon->start(), m_address) << m_daemon->error();
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    EXPECT_GT(in.status().cursor, cursorAtCut);
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// A real filesystem running out of space under the history (and its WAL).
TEST_F(FaultTest, HistoryDiskFullOnARealFilesystem) {
    Tmpfs disk(m_dir.file("hist-disk"), "4m");
    if (!disk.ok()) {
        GTEST_SKIP() << disk.error();
    }
    m_history = disk.path() + "/history.sqlite";
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(30, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    disk.fill("filler");
    EXPECT_TRUE(waitUntil([&] { return !in.status().lastError.empty(); }))
        << "the ingestor never noticed the full disk";
    std::this_thread::sleep_for(3s);
    std::filesystem::remove(disk.path() + "/filler");
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// The spool's disk fills while the run ends: records wait in memory (well under the backlog
// bound), then everything is stored and streamed, none lost.
TEST_F(FaultTest, SpoolDiskFull) {
    Tmpfs disk(m_dir.file("state-disk"), "8m");
    if (!disk.ok()) {
        GTEST_SKIP() << disk.error();
    }
    m_state = disk.path() + "/state";
    m_daemon = std::make_unique<Daemon>(m_state, "node-f", 10);
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(30, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    disk.fill("filler");
    EXPECT_TRUE(waitUntil([&] {
        return m_daemon->child().stderrText().find("spool append failed") != std::string::npos;
    })) << m_daemon->child().stderrText();
    std::this_thread::sleep_for(4s);
    std::filesystem::remove(disk.path() + "/filler");
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    EXPECT_NE(m_daemon->child().stderrText().find("spool append recovered"), std::string::npos);
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// Another process (the sqlite3 shell) holds the history's write lock past the busy timeout.
TEST_F(FaultTest, HistoryLockedByAnotherProcess) {
    startDaemon();
    auto& in = ingest();
    submit("r1", stepsRun(40, 3));
    ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 10; })) << in.status().lastError;
    Child locker = Child::spawn(
        {"/bin/sh", "-c",
         "(echo 'BEGIN EXCLUSIVE;'; sleep 8; echo 'COMMIT;') | sqlite3 '" + m_history + "'"},
        m_dir.file("locker.out"), m_dir.file("locker.err"));
    EXPECT_TRUE(
        waitUntil([&] { return in.status().lastError.find("locked") != std::string::npos; }, 15s))
        << in.status().lastError;
    ASSERT_EQ(locker.wait(20s), 0) << locker.stderrText();
    ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
    expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

// Power cut of the controller's host: its history and WAL as the disk held them at an instant
// mid-write (the writer frozen between two writes, then killed). Every such copy opens intact
// with whole batches only; the last one, put back in place, is resumed exactly once.
TEST_F(FaultTest, ControllerPowerCutMidWrite) {
    startDaemon();
    submit("r1", stepsRun(50, 3));
    Child w = watch("watch-1");
    ASSERT_TRUE(waitUntil([&] { return storedCursor() >= 10; })) << w.stderrText();
    auto snapshot = [&](const std::string& to) {
        std::filesystem::copy_file(m_history, to);
        if (std::filesystem::exists(m_history + "-wal")) {
            std::filesystem::copy_file(m_history + "-wal", to + "-wal");
        }
    };
    for (int i = 0; i < 8; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(37 * (i + 1)));
        w.kill(SIGSTOP);
        const std::string copy = m_dir.file("cut-" + std::to_string(i) + ".sqlite");
        snapshot(copy);
        w.kill(SIGCONT);
        expectWholeBatchesOnly(copy);
    }
    w.kill(SIGSTOP);
    const std::string last = m_dir.file("cut-last.sqlite");
    snapshot(last);
    w.kill(SIGKILL);
    w.wait(5s);
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(m_history + suffix);
    }
    std::filesystem::copy_file(last, m_history);
    if (std::filesystem::exists(last + "-wal")) {
        std::filesystem::copy_file(last + "-wal", m_history + "-wal");
    }
    watchUntilR1EndsThenCheck("watch-2");
}

// A power cut of the controller's host under `runplanectl watch` (runplanectl-powercut: its
// main, the history through the fault VFS): among the history's writes during a live run, watch
// copies the history and its WAL as a cut that lost unsynced writes out of order would leave
// them, and kills itself there. The copy is put back (no -shm), it opens intact with whole
// batches below its cursor and nothing beyond, and the ordinary watch resumes on it: the run ends
// with its true status and every record is stored exactly once.
TEST_F(FaultTest, ControllerPowerCutUnderWatchResumesOnWhatTheDiskHeld) {
    const std::string cuts = m_dir.file("cuts");
    startDaemon();
    submit("r1", stepsRun(60, 3));
    Child w = watch("watch-cut", "backend/cli/runplanectl-powercut",
                    {"RUNPLANE_TEST_POWER_CUT_PATH=" + m_history,
                     "RUNPLANE_TEST_POWER_CUT_DIR=" + cuts, "RUNPLANE_TEST_POWER_CUT_EVERY=5",
                     "RUNPLANE_TEST_POWER_CUT_TORN=1", "RUNPLANE_TEST_POWER_CUT_AT=30"});
    ASSERT_TRUE(waitUntil([&] { return std::filesystem::exists(cuts + "/powered-off"); },
                          std::chrono::seconds(40)))
        << w.stderrText();
    w.wait(5s);  // it killed itself at the cut
    putBackTheTornCopy(cuts, m_history);
    EXPECT_GT(expectWholeBatchesOnly(m_history), 0u)
        << "the cut kept nothing of the stored batches";
    watchUntilR1EndsThenCheck("watch-after-cut");
}

// The node's wall clock steps (runplaned, its supervisors and runs under the LD_PRELOAD clock
// shim; the machine's clock is left alone). Seqs, not times, carry the exactly-once promise.
class ClockFaultTest : public FaultTest {
  protected:
    void SetUp() override {
        FaultTest::SetUp();
        m_offsetFile = m_dir.file("clock-offset");
        std::ofstream(m_offsetFile) << 0;
        m_daemon->setEnv({"LD_PRELOAD=" + runplane::testing::builtBinary(
                                              "tests/support/librunplane_fake_clock.so"),
                          "RUNPLANE_FAKE_CLOCK_FILE=" + m_offsetFile});
    }
    void jump(std::int64_t offsetNs) {
        startDaemon();
        auto& in = ingest();
        submit("r1", stepsRun(50, 3));
        ASSERT_TRUE(waitUntil([&] { return in.status().cursor >= 20; })) << in.status().lastError;
        std::ofstream(m_offsetFile) << offsetNs;
        ASSERT_TRUE(waitRunEnded("r1")) << in.status().lastError;
        // Samples stamped after the step were stored, not dropped or merged by time.
        const std::int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
        const std::string shifted = offsetNs < 0
                                        ? "s.t_ns < " + std::to_string(nowNs + offsetNs / 2)
                                        : "s.t_ns > " + std::to_string(nowNs + offsetNs / 2);
        EXPECT_GE(queryInt(m_history,
                           "SELECT count(*) FROM samples s JOIN series r ON r.id = s.series_id "
                           "WHERE r.run_id = 'r1' AND r.name = 'train/loss' AND " +
                               shifted + ";"),
                  5);
        // A stepped clock never makes a run end before it started.
        const auto r = run("r1");
        ASSERT_TRUE(r);
        EXPECT_GE(r->endedNs, r->startedNs)
            << "ended " << r->endedNs << " started " << r->startedNs;
        expectTrueStatus("r1", RunState::Failed, "exit code 3", "exit_code=3");
        expectExactlyOnce();
    }
    std::string m_offsetFile;
};

TEST_F(ClockFaultTest, NodeClockJumpsBackwardsOneHour) {
    jump(-3600LL * 1'000'000'000LL);
}

TEST_F(ClockFaultTest, NodeClockJumpsForwardTwoDays) {
    jump(2 * 86400LL * 1'000'000'000LL);
}

}  // namespace
}  // namespace runplane::reliability
