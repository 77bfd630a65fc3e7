// History::ingestMany and the HistoryWriter (issue #20, backend/control/history_writer.h) on a
// real SQLite file: several nodes' batches in one transaction, a failed commit (a full disk,
// through the fault VFS) that leaves every node's cursor where it was, and the bounded queue.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "backend/control/history_writer.h"
#include "common/thread_role.h"
#include "db/history/history.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"
#include "tests/support/fault_vfs.h"
#include "tests/support/thread_nice.h"
#include "tests/support/wait.h"

namespace runplane::control {
namespace {

using namespace std::chrono_literals;
using runplane::testing::niceOfThreadNamed;
using runplane::testing::ScratchDir;
using runplane::testing::waitUntil;
namespace faultvfs = runplane::testing::faultvfs;

// Seqs first..last of one node, one sample each of series "s".
db::IngestBatch batchOf(const std::string& node, std::uint64_t first, std::uint64_t last) {
    db::IngestBatch b;
    b.nodeId = db::NodeId{node};
    b.incarnation = 7;
    for (std::uint64_t seq = first; seq <= last; ++seq) {
        db::IngestSample s;
        s.seq = seq;
        s.tNs = static_cast<std::int64_t>(seq) * 1'000'000;
        s.series = "s";
        s.value = static_cast<double>(seq);
        b.samples.push_back(s);
    }
    b.throughSeq = last;
    return b;
}

std::uint64_t cursorOf(const std::string& path, const std::string& node) {
    auto history = db::History::open(path);
    EXPECT_TRUE(history.ok()) << history.error();
    auto cursor = (*history)->ingestCursor(db::NodeId{node});
    EXPECT_TRUE(cursor.ok()) << cursor.error();
    return cursor.ok() ? *cursor : 0;
}

// Holds the writer thread inside an operation until release(): batches queued meanwhile go
// into the next transaction together.
class WriterGate {
  public:
    explicit WriterGate(HistoryWriter& writer) : m_lane(writer.lane()) {
        m_thread = std::thread([this] {
            (void)m_lane->execute([this](db::History&) {
                std::unique_lock lock(m_mutex);
                m_entered = true;
                m_cv.notify_all();
                m_cv.wait(lock, [&] { return m_open; });
                return Status{};
            });
        });
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return m_entered; });
    }
    ~WriterGate() { release(); }
    void release() {
        {
            std::lock_guard lock(m_mutex);
            m_open = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }

  private:
    std::unique_ptr<HistoryWriter::Lane> m_lane;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_entered = false;
    bool m_open = false;
    std::thread m_thread;
};

TEST(IngestMany, CommitsEveryBatchOrNone) {
    ScratchDir dir;
    auto history = db::History::open(dir.file("h.sqlite"));
    ASSERT_TRUE(history.ok()) << history.error();
    std::vector<db::IngestBatch> batches = {batchOf("a", 1, 5), batchOf("b", 1, 3),
                                            batchOf("a", 4, 8)};
    auto results = (*history)->ingestMany(batches);
    ASSERT_TRUE(results.ok()) << results.error();
    ASSERT_EQ(results->size(), 3u);
    EXPECT_EQ((*results)[0].samplesInserted, 5u);
    EXPECT_EQ((*results)[2].samplesInserted, 3u);  // 4 and 5 were in the first batch
    EXPECT_EQ((*results)[2].duplicatesSkipped, 2u);
    EXPECT_EQ(*(*history)->ingestCursor(db::NodeId{"a"}), 8u);
    EXPECT_EQ(*(*history)->ingestCursor(db::NodeId{"b"}), 3u);

    // A batch that cannot be stored takes the whole transaction with it.
    std::vector<db::IngestBatch> bad = {batchOf("a", 9, 10), batchOf("", 1, 1)};
    auto failed = (*history)->ingestMany(bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().find("without a node id"), std::string::npos) << failed.error();
    EXPECT_EQ(*(*history)->ingestCursor(db::NodeId{"a"}), 8u);
    // ... and the history goes on from there.
    auto again = (*history)->ingest(batchOf("a", 9, 10));
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(again->samplesInserted, 2u);
    auto id = (*history)->findSeries(NodeId{"a"}, RunId(), "s");
    ASSERT_TRUE(id.ok() && *id);
    auto points = (*history)->querySeries(db::SeriesQuery{**id});
    ASSERT_TRUE(points.ok()) << points.error();
    EXPECT_EQ(points->points.size(), 10u);
}

TEST(IngestWriter, SeveralNodesShareOneTransaction) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto writer = HistoryWriter::open(HistoryWriterOptions{path});
    ASSERT_TRUE(writer.ok()) << writer.error();
    constexpr int kNodes = 6;
    std::vector<std::unique_ptr<HistoryWriter::Lane>> lanes;
    std::atomic<int> callbacks{0};
    {
        WriterGate gate(**writer);
        for (int i = 0; i < kNodes; ++i) {
            lanes.push_back((*writer)->lane());
            const std::string node = "node-" + std::to_string(i);
            // Two daemon messages per node: merged into one batch of the transaction.
            ASSERT_TRUE(lanes.back()->push(batchOf(node, 1, 10)).ok());
            ASSERT_TRUE(lanes.back()
                            ->push(batchOf(node, 11, 20), {},
                                   [&](const LaneProgress& p) {
                                       EXPECT_EQ(p.cursor, 20u);
                                       ++callbacks;
                                   })
                            .ok());
        }
        EXPECT_EQ((*writer)->stats().heldRecords, kNodes * 20u);
        for (int i = 0; i < kNodes; ++i) {
            EXPECT_EQ(lanes[static_cast<std::size_t>(i)]->progress().commits, 0u);
        }
    }
    for (auto& lane : lanes) {
        ASSERT_TRUE(lane->flush().ok());
        const LaneProgress p = lane->progress();
        EXPECT_EQ(p.cursor, 20u);
        EXPECT_EQ(p.inserted, 20u);
        EXPECT_EQ(p.commits, 1u);
    }
    const HistoryWriterStats stats = (*writer)->stats();
    EXPECT_EQ(stats.transactions, 1u);
    EXPECT_EQ(stats.batches, 2u * kNodes);
    EXPECT_EQ(stats.maxTransactionBatches, 2u * kNodes);
    EXPECT_EQ(stats.heldRecords, 0u);
    EXPECT_EQ(callbacks.load(), kNodes);
    for (int i = 0; i < kNodes; ++i) {
        EXPECT_EQ(cursorOf(path, "node-" + std::to_string(i)), 20u);
    }
}

TEST(IngestWriter, FailedCommitLeavesEveryCursor) {
    faultvfs::install();  // before the history is opened
    ScratchDir dir;
    const std::string path = dir.file("history.sqlite");
    auto writer = HistoryWriter::open(HistoryWriterOptions{path});
    ASSERT_TRUE(writer.ok()) << writer.error();
    const std::vector<std::string> nodes = {"a", "b", "c"};
    std::vector<std::unique_ptr<HistoryWriter::Lane>> lanes;
    for (const auto& node : nodes) {
        lanes.push_back((*writer)->lane());
        ASSERT_TRUE(lanes.back()->push(batchOf(node, 1, 10)).ok());
        ASSERT_TRUE(lanes.back()->flush().ok());
    }
    {
        WriterGate gate(**writer);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            ASSERT_TRUE(lanes[i]->push(batchOf(nodes[i], 11, 30)).ok());
        }
        faultvfs::arm(faultvfs::Fault::DiskFull, "history.sqlite");
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        Status flushed = lanes[i]->flush();
        ASSERT_FALSE(flushed.ok()) << nodes[i];
        EXPECT_NE(flushed.error().find("full"), std::string::npos) << flushed.error();
        EXPECT_EQ(lanes[i]->progress().cursor, 10u);  // nothing to acknowledge
        // A failed lane takes nothing more until its stream starts over.
        EXPECT_FALSE(lanes[i]->push(batchOf(nodes[i], 31, 31)).ok());
    }
    faultvfs::disarm();
    EXPECT_GE((*writer)->stats().failedTransactions, 1u);
    for (const auto& node : nodes) {
        EXPECT_EQ(cursorOf(path, node), 10u) << node;
    }
    // Writes work again: the same batches (as their nodes resend them) are stored once.
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        lanes[i]->reset();
        ASSERT_TRUE(lanes[i]->push(batchOf(nodes[i], 5, 30)).ok());
        ASSERT_TRUE(lanes[i]->flush().ok());
        EXPECT_EQ(lanes[i]->progress().inserted, 30u);  // 10 before, 20 now; 5..10 skipped
        EXPECT_EQ(cursorOf(path, nodes[i]), 30u);
    }
}

// A node's batch that waits for the next transaction (this one is full) holds back its later,
// smaller ones: committed first, they would move the cursor past it and its records would be
// skipped as already stored (found by bench_load: 1,124 samples under the cursor, not stored).
TEST(IngestWriter, ANodesBatchesCommitInOrderAcrossFullTransactions) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    HistoryWriterOptions options{path};
    options.transactionRecords = 50;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto a = (*writer)->lane();
    auto b = (*writer)->lane();
    {
        WriterGate gate(**writer);
        ASSERT_TRUE(a->push(batchOf("a", 1, 40)).ok());
        ASSERT_TRUE(b->push(batchOf("b", 1, 40)).ok());   // does not fit the first transaction
        ASSERT_TRUE(b->push(batchOf("b", 41, 45)).ok());  // would fit, must wait with it
    }
    ASSERT_TRUE(a->flush().ok());
    ASSERT_TRUE(b->flush().ok());
    EXPECT_EQ(b->progress().inserted, 45u);
    EXPECT_EQ(b->progress().duplicatesSkipped, 0u);
    EXPECT_EQ(cursorOf(path, "b"), 45u);
    EXPECT_GE((*writer)->stats().transactions, 2u);
}

TEST(IngestWriter, BackpressureBoundsMemory) {
    ScratchDir dir;
    HistoryWriterOptions options{dir.file("h.sqlite")};
    options.queueRecords = 300;  // three lanes (with the gate's): 100 records each
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto slow = (*writer)->lane();
    auto other = (*writer)->lane();
    std::atomic<int> pushed{0};
    std::thread stream;
    {
        WriterGate gate(**writer);
        // One batch larger than the share fits an empty lane.
        ASSERT_TRUE(other->push(batchOf("other", 1, 150)).ok());
        // A stream that keeps reading: 40 records a message, 10 messages.
        stream = std::thread([&] {
            for (std::uint64_t m = 0; m < 10; ++m) {
                EXPECT_TRUE(slow->push(batchOf("slow", m * 40 + 1, m * 40 + 40)).ok());
                ++pushed;
            }
        });
        // While the writer is held, the lane fills its share and the stream waits, unread.
        ASSERT_TRUE(waitUntil([&] { return pushed.load() == 2; }));
        std::this_thread::sleep_for(200ms);
        EXPECT_EQ(pushed.load(), 2);
        EXPECT_EQ((*writer)->stats().heldRecords, 150u + 80u);
    }
    stream.join();
    ASSERT_TRUE(slow->flush().ok());
    ASSERT_TRUE(other->flush().ok());
    const HistoryWriterStats stats = (*writer)->stats();
    // Each lane within its share (the bound over the lanes open: 100, then 150 once the gate's
    // lane is gone), or holding its one batch: never more than the bound in all.
    EXPECT_LE(stats.maxHeldRecords, options.queueRecords);
    EXPECT_EQ(stats.heldRecords, 0u);
    EXPECT_EQ(slow->progress().cursor, 400u);
    EXPECT_EQ(slow->progress().inserted, 400u);
}

TEST(IngestWriter, CancelDropsQueuedBatches) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    HistoryWriterOptions options{path};
    options.queueRecords = 10;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto lane = (*writer)->lane();
    std::thread waiting;
    Status second;
    {
        WriterGate gate(**writer);
        ASSERT_TRUE(lane->push(batchOf("a", 1, 10)).ok());
        waiting = std::thread([&] { second = lane->push(batchOf("a", 11, 20)); });  // no room
        std::this_thread::sleep_for(100ms);
        const auto before = std::chrono::steady_clock::now();
        lane->cancel();
        waiting.join();
        EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
        EXPECT_EQ((*writer)->stats().heldRecords, 0u);  // the queued batch was dropped too
    }
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().find("not stored"), std::string::npos) << second.error();
    (void)lane->flush();
    EXPECT_EQ(cursorOf(path, "a"), 0u);
    // A stopped writer refuses at once.
    (*writer)->stop();
    lane->reset();
    Status late = lane->push(batchOf("a", 1, 10));
    ASSERT_FALSE(late.ok());
    EXPECT_NE(late.error().find("writer stopped"), std::string::npos) << late.error();
}

// Another connection holds the write lock for less than busyRetry: SQLite answers BUSY to each
// attempt (ErrorCode::Busy, carried from the sqlite wrapper through History::ingestMany), the
// writer retries, and the batch is stored once the lock is released.
TEST(IngestWriter, ALockHeldShorterThanTheRetryIsWaitedOut) {
    ScratchDir dir;
    const std::string path = dir.file("history.sqlite");
    HistoryWriterOptions options{path};
    options.busyTimeoutMs = 20;
    options.busyRetry = 10s;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto lane = (*writer)->lane();
    ASSERT_TRUE(lane->push(batchOf("a", 1, 5)).ok());
    ASSERT_TRUE(lane->flush().ok());

    auto locker = sqlite::Database::open(path);
    ASSERT_TRUE(locker.ok()) << locker.error();
    ASSERT_TRUE((*locker)->exec("BEGIN EXCLUSIVE;").ok());
    // The wrapper's own answer while the lock is held: a Busy code, not just a sentence.
    auto other = sqlite::Database::open(path, sqlite::Database::Options{.busyTimeoutMs = 0});
    ASSERT_TRUE(other.ok()) << other.error();
    Status begun = (*other)->exec("BEGIN IMMEDIATE;");
    ASSERT_FALSE(begun.ok());
    EXPECT_EQ(begun.code(), ErrorCode::Busy) << begun.error();

    ASSERT_TRUE(lane->push(batchOf("a", 6, 9)).ok());
    std::thread release([&] {
        std::this_thread::sleep_for(500ms);
        EXPECT_TRUE((*locker)->exec("COMMIT;").ok());
    });
    Status flushed = lane->flush();
    release.join();
    EXPECT_TRUE(flushed.ok()) << flushed.error();
    EXPECT_EQ(lane->progress().cursor, 9u);
    EXPECT_EQ((*writer)->stats().failedTransactions, 0u);
    EXPECT_EQ(cursorOf(path, "a"), 9u);
}

}  // namespace
// Under continuous writes with a reader that keeps the WAL in use, SQLite's own checkpoints can
// never restart the WAL and it only grows; once no reader needs it, the writer empties it after
// the next commit past the bound.
TEST(IngestWriter, TheWalIsEmptiedPastItsBoundOnceNoReaderNeedsIt) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    HistoryWriterOptions options{path};
    options.commitInterval = 1ms;
    options.walLimitBytes = 256 * 1024;
    options.walCheckpointInterval = 0ms;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto lane = (*writer)->lane();
    ASSERT_TRUE(lane->push(batchOf("node-a", 1, 100)).ok());
    ASSERT_TRUE(lane->flush().ok());

    auto reader = db::History::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error();
    ASSERT_TRUE((*reader)->beginRead().ok());
    ASSERT_TRUE((*reader)->listSeries({}).ok());  // holds its snapshot, so the WAL stays in use
    std::uint64_t seq = 101;
    for (int i = 0; i < 40; ++i, seq += 5000) {
        ASSERT_TRUE(lane->push(batchOf("node-b" + std::to_string(i), seq, seq + 4999)).ok());
        ASSERT_TRUE(lane->flush().ok());
    }
    EXPECT_GT((*reader)->walBytes(), options.walLimitBytes);
    EXPECT_TRUE(waitUntil([&] { return (*writer)->stats().walTruncationsBusy > 0; }));

    ASSERT_TRUE((*reader)->endRead().ok());
    ASSERT_TRUE(lane->push(batchOf("node-c", 1, 10)).ok());
    ASSERT_TRUE(lane->flush().ok());
    EXPECT_TRUE(waitUntil([&] { return (*writer)->stats().walTruncations > 0; }));
    EXPECT_LE((*reader)->walBytes(), options.walLimitBytes);
    // Nothing was lost by emptying it.
    auto series = (*reader)->listSeries({});
    ASSERT_TRUE(series.ok()) << series.error();
    std::int64_t samples = 0;
    for (const db::SeriesInfo& info : *series) {
        samples += info.count;
    }
    EXPECT_EQ(samples, 100 + 40 * 5000 + 10);
}

// The writer's connection never checkpoints (wal_autocheckpoint=0): a commit neither copies
// pages into the file nor waits for an fsync. The checkpoint thread does it through its own
// connection after each commit, so without readers the WAL is restarted and stays the size of
// about one transaction instead of growing with every one (it would without any checkpoint).
// Each transaction's duration is counted.
TEST(IngestWriter, CheckpointsRunOnTheirOwnThreadAndKeepTheWalSmall) {
    for (const bool own : {true, false}) {
        ScratchDir dir;
        const std::string path = dir.file("h.sqlite");
        HistoryWriterOptions options{path};
        options.commitInterval = 1ms;
        options.walLimitBytes = 0;  // no truncation: only the checkpoints restart the WAL
        options.checkpointThread = own;
        auto writer = HistoryWriter::open(options);
        ASSERT_TRUE(writer.ok()) << writer.error();
        auto lane = (*writer)->lane();
        std::int64_t firstWal = 0;
        std::int64_t maxWal = 0;
        constexpr int kTransactions = 30;
        std::uint64_t seq = 1;
        for (int i = 0; i < kTransactions; ++i, seq += 5000) {
            ASSERT_TRUE(lane->push(batchOf("node-" + std::to_string(i), seq, seq + 4999)).ok());
            ASSERT_TRUE(lane->flush().ok());
            if (own) {
                // This commit's checkpoint is done before the next transaction begins.
                ASSERT_TRUE(waitUntil([&] {
                    const HistoryWriterStats st = (*writer)->stats();
                    return st.checkpoints == st.transactions;
                }));
            }
            auto reader = db::History::open(path);
            ASSERT_TRUE(reader.ok()) << reader.error();
            const std::int64_t wal = (*reader)->walBytes();
            firstWal = firstWal == 0 ? wal : firstWal;
            maxWal = std::max(maxWal, wal);
        }
        const HistoryWriterStats st = (*writer)->stats();
        EXPECT_EQ(st.transactions, static_cast<std::uint64_t>(kTransactions));
        std::uint64_t counted = 0;
        for (std::uint64_t n : st.transactionMs) {
            counted += n;
        }
        EXPECT_EQ(counted, st.transactions);
        EXPECT_GT(st.transactionMsTotal, 0.0);
        EXPECT_GE(st.transactionMsMax * kTransactions, st.transactionMsTotal);
        EXPECT_EQ(st.checkpoints, own ? st.transactions : 0u);
        // One transaction's WAL is tens of KiB here; 30 of them without a restart would be
        // 30 times that (SQLite's automatic checkpoint waits for 1,000 pages, ~4 MiB).
        EXPECT_GT(firstWal, 0);
        if (own) {
            EXPECT_LT(maxWal, 4 * firstWal);
        } else {
            EXPECT_GT(maxWal, 8 * firstWal);
        }
        auto reader = db::History::open(path);
        ASSERT_TRUE(reader.ok()) << reader.error();
        auto series = (*reader)->listSeries({});
        ASSERT_TRUE(series.ok()) << series.error();
        EXPECT_EQ(series->size(), static_cast<size_t>(kTransactions));
    }
}

// Without any checkpoint (the writer's option off and nobody checkpointing for it) the WAL
// grows with every commit: what the checkpoint thread above prevents.
TEST(IngestWriter, AConnectionWithoutAutoCheckpointsLeavesTheWalToAnother) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    db::OpenOptions off;
    off.walAutoCheckpointPages = 0;
    auto history = db::History::open(path, off);
    ASSERT_TRUE(history.ok()) << history.error();
    std::int64_t first = 0;
    std::uint64_t seq = 1;
    for (int i = 0; i < 30; ++i, seq += 5000) {
        ASSERT_TRUE((*history)->ingest(batchOf("node-" + std::to_string(i), seq, seq + 4999)));
        first = first == 0 ? (*history)->walBytes() : first;
    }
    EXPECT_GT((*history)->walBytes(), 8 * first);
    auto other = db::History::open(path);
    ASSERT_TRUE(other.ok()) << other.error();
    auto done = (*other)->checkpointWal();
    ASSERT_TRUE(done.ok()) << done.error();
    EXPECT_FALSE(done->busy);
    EXPECT_GT(done->logFrames, 0);
    EXPECT_EQ(done->backfilledFrames, done->logFrames);
}

// The GUI lowers its background threads (common/thread_role.h); the writer's two are among them.
TEST(IngestWriter, ItsThreadsRunBelowTheGuiThreadWhereTheProcessAsks) {
    ScratchDir dir;
    const int base = threads::currentThreadNice();
    threads::setBackgroundNice(threads::kGuiBackgroundNice);
    auto writer = HistoryWriter::open(HistoryWriterOptions{dir.file("h.sqlite")});
    ASSERT_TRUE(writer.ok()) << writer.error();
    const int expected = std::min(base + threads::kGuiBackgroundNice, 19);
    EXPECT_TRUE(waitUntil([&] { return niceOfThreadNamed("history-writer") == expected; }))
        << niceOfThreadNamed("history-writer");
    EXPECT_TRUE(waitUntil([&] { return niceOfThreadNamed("history-ckpt") == expected; }))
        << niceOfThreadNamed("history-ckpt");
    EXPECT_EQ(threads::currentThreadNice(), base);
    threads::setBackgroundNice(0);  // process-wide: the other tests' threads stay as they were
}

}  // namespace runplane::control
