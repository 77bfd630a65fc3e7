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
#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/fault_vfs.h"
#include "tests/support/wait.h"

namespace runplane::control {
namespace {

using namespace std::chrono_literals;
using runplane::testing::ScratchDir;
using runplane::testing::waitUntil;
namespace faultvfs = runplane::testing::faultvfs;

// Seqs first..last of one node, one sample each of series "s".
db::IngestBatch batchOf(const std::string& node, std::uint64_t first, std::uint64_t last) {
    db::IngestBatch b;
    b.nodeId = node;
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
    auto cursor = (*history)->ingestCursor(node);
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
    EXPECT_EQ(*(*history)->ingestCursor("a"), 8u);
    EXPECT_EQ(*(*history)->ingestCursor("b"), 3u);

    // A batch that cannot be stored takes the whole transaction with it.
    std::vector<db::IngestBatch> bad = {batchOf("a", 9, 10), batchOf("", 1, 1)};
    auto failed = (*history)->ingestMany(bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().find("without a node id"), std::string::npos) << failed.error();
    EXPECT_EQ(*(*history)->ingestCursor("a"), 8u);
    // ... and the history goes on from there.
    auto again = (*history)->ingest(batchOf("a", 9, 10));
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(again->samplesInserted, 2u);
    auto id = (*history)->findSeries("a", "", "s");
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
    std::vector<std::thread> nodes;
    std::atomic<int> stored{0};
    {
        WriterGate gate(**writer);
        for (int i = 0; i < kNodes; ++i) {
            nodes.emplace_back([&, i] {
                auto lane = (*writer)->lane();
                auto result = lane->ingest(batchOf("node-" + std::to_string(i), 1, 20));
                EXPECT_TRUE(result.ok()) << result.error();
                stored += result.ok() ? static_cast<int>(result->samplesInserted) : 0;
            });
        }
        ASSERT_TRUE(waitUntil([&] { return (*writer)->stats().queuedRecords == kNodes * 20; }));
    }
    for (auto& t : nodes) {
        t.join();
    }
    const HistoryWriterStats stats = (*writer)->stats();
    EXPECT_EQ(stats.transactions, 1u);
    EXPECT_EQ(stats.batches, static_cast<std::uint64_t>(kNodes));
    EXPECT_EQ(stats.maxTransactionBatches, static_cast<std::size_t>(kNodes));
    EXPECT_EQ(stored.load(), kNodes * 20);
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
    auto lane = (*writer)->lane();
    for (const char* node : {"a", "b", "c"}) {
        ASSERT_TRUE(lane->ingest(batchOf(node, 1, 10)).ok());
    }
    std::vector<std::thread> nodes;
    std::atomic<int> failures{0};
    {
        WriterGate gate(**writer);
        faultvfs::arm(faultvfs::Fault::DiskFull, "history.sqlite");
        for (const char* node : {"a", "b", "c"}) {
            nodes.emplace_back([&, node] {
                auto own = (*writer)->lane();
                auto result = own->ingest(batchOf(node, 11, 30));
                EXPECT_FALSE(result.ok());
                if (!result.ok()) {
                    EXPECT_NE(result.error().find("full"), std::string::npos) << result.error();
                    ++failures;
                }
            });
        }
        ASSERT_TRUE(waitUntil([&] { return (*writer)->stats().queuedRecords == 60; }));
    }
    for (auto& t : nodes) {
        t.join();
    }
    faultvfs::disarm();
    EXPECT_EQ(failures.load(), 3);
    EXPECT_GE((*writer)->stats().failedTransactions, 1u);
    for (const char* node : {"a", "b", "c"}) {
        EXPECT_EQ(cursorOf(path, node), 10u) << node;
    }
    // Writes work again: the same batches (as their nodes resend them) are stored once.
    for (const char* node : {"a", "b", "c"}) {
        auto result = lane->ingest(batchOf(node, 11, 30));
        ASSERT_TRUE(result.ok()) << result.error();
        EXPECT_EQ(result->samplesInserted, 20u);
        EXPECT_EQ(cursorOf(path, node), 30u);
    }
}

TEST(IngestWriter, BackpressureBoundsTheQueue) {
    ScratchDir dir;
    HistoryWriterOptions options{dir.file("h.sqlite")};
    options.queueRecords = 100;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    constexpr int kNodes = 8;
    std::atomic<int> done{0};
    std::vector<std::thread> nodes;
    std::vector<std::unique_ptr<HistoryWriter::Lane>> lanes;
    for (int i = 0; i < kNodes; ++i) {
        lanes.push_back((*writer)->lane());
    }
    {
        WriterGate gate(**writer);
        for (int i = 0; i < kNodes; ++i) {
            nodes.emplace_back([&, i] {
                // Node 0 sends one batch larger than the whole queue: it waits for an empty one.
                const std::uint64_t n = i == 0 ? 150 : 40;
                auto result = lanes[static_cast<std::size_t>(i)]->ingest(
                    batchOf("node-" + std::to_string(i), 1, n));
                EXPECT_TRUE(result.ok()) << result.error();
                ++done;
            });
        }
        // While the writer is held, the queue fills to its bound and the other streams wait.
        ASSERT_TRUE(waitUntil([&] { return (*writer)->stats().queuedRecords >= 80; }));
        std::this_thread::sleep_for(200ms);
        EXPECT_LE((*writer)->stats().queuedRecords, 150u);
        EXPECT_EQ(done.load(), 0);
    }
    for (auto& t : nodes) {
        t.join();
    }
    const HistoryWriterStats stats = (*writer)->stats();
    EXPECT_LE(stats.maxQueuedRecords, 150u);  // the bound, or the one batch larger than it
    EXPECT_EQ(stats.queuedRecords, 0u);
    EXPECT_EQ(done.load(), kNodes);
}

TEST(IngestWriter, CancelledWhileWaitingStoresNothing) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    HistoryWriterOptions options{path};
    options.queueRecords = 10;
    auto writer = HistoryWriter::open(options);
    ASSERT_TRUE(writer.ok()) << writer.error();
    auto first = (*writer)->lane();
    auto second = (*writer)->lane();
    std::optional<Result<db::IngestResult>> a;
    std::optional<Result<db::IngestResult>> b;
    std::thread ta;
    std::thread tb;
    {
        WriterGate gate(**writer);
        ta = std::thread([&] { a = first->ingest(batchOf("a", 1, 10)); });
        ASSERT_TRUE(waitUntil([&] { return (*writer)->stats().queuedRecords == 10; }));
        tb = std::thread([&] { b = second->ingest(batchOf("b", 1, 10)); });  // waits for room
        std::this_thread::sleep_for(100ms);
        const auto before = std::chrono::steady_clock::now();
        second->cancel();
        tb.join();
        EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
    }
    ta.join();
    ASSERT_TRUE(a && a->ok()) << (a ? a->error() : "no result");
    ASSERT_TRUE(b && !b->ok());
    EXPECT_NE(b->error().find("not stored"), std::string::npos) << b->error();
    EXPECT_EQ(cursorOf(path, "a"), 10u);
    EXPECT_EQ(cursorOf(path, "b"), 0u);
    // A stopped writer refuses at once.
    (*writer)->stop();
    second->reset();
    auto late = second->ingest(batchOf("b", 1, 10));
    ASSERT_FALSE(late.ok());
    EXPECT_NE(late.error().find("writer stopped"), std::string::npos) << late.error();
}

}  // namespace
}  // namespace runplane::control
