// Issue 23 item 6: the online pruner prunes at start, in batches, while another connection keeps
// ingesting, and stops promptly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/control/retention_pruner.h"
#include "common/clock.h"
#include "db/history/history.h"
#include "tests/db/test_util.h"

namespace runplane::control {
namespace {

TEST(RetentionPruner, PrunesAtStartWhileIngestGoesOn) {
    runplane::testing::ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    // The ingest beside the prune commits in a tight loop. Durable (fsynced) commits back to back
    // hold the write lock nearly all the time, and SQLite's busy handler, which polls, then
    // starved the pruner for the whole 30 s; the controller's writer commits every 200 ms
    // instead. So this connection commits without the fsync (the pruner's are durable, as every
    // product writer's).
    db::OpenOptions fast;
    fast.durableCommits = false;
    auto writer = db::History::open(path, fast);
    ASSERT_TRUE(writer.ok()) << writer.error();
    constexpr std::int64_t kDay = 86'400'000'000'000;
    const std::int64_t start = clock::unixNowNs() - 30 * kDay;
    std::uint64_t seq = 0;
    db::IngestBatch old;
    old.nodeId = db::NodeId{"n1"};
    for (std::int64_t t = start; t < start + 10 * kDay; t += 60'000'000'000) {
        db::IngestSample s;
        s.seq = ++seq;
        s.tNs = t;
        s.series = "host.mem.used_bytes";
        s.value = s.min = s.max = 1;
        old.samples.push_back(s);
    }
    old.throughSeq = seq;
    ASSERT_TRUE((*writer)->ingest(old).ok());
    // The last 64 old samples sit in this connection's open chunk, which the pruner (another
    // connection) leaves alone by design: open chunks hold the newest samples. Seal them, as the
    // controller's writer does within seconds.
    ASSERT_TRUE((*writer)->sealHeads().ok());
    const auto oldCount = static_cast<std::int64_t>(old.samples.size());

    std::atomic<int> reports{0};
    PrunerOptions options;
    options.historyPath = path;
    options.batchRows = 500;
    options.pause = std::chrono::milliseconds(1);
    options.onReport = [&](const db::PruneReport&) { ++reports; };
    std::mutex errorsMutex;
    std::vector<std::string> errors;
    options.onError = [&](const std::string& error) {
        std::lock_guard lock(errorsMutex);
        errors.push_back(error);
    };
    // Ingest of fresh samples on another connection is never refused while the prune runs.
    int batches = 0;
    const auto ingestFresh = [&] {
        db::IngestBatch fresh;
        fresh.nodeId = db::NodeId{"n1"};
        db::IngestSample s;
        s.seq = ++seq;
        s.tNs = clock::unixNowNs();
        s.series = "host.mem.used_bytes";
        fresh.samples.push_back(s);
        fresh.throughSeq = seq;
        auto stored = (*writer)->ingest(fresh);
        EXPECT_TRUE(stored.ok()) << stored.error();
        ++batches;
    };
    // A live controller always has a fresh sample before the pruner starts; without one the
    // pruner rightly refuses (the clock 20 days ahead of the newest sample) and waits an hour.
    ingestFresh();
    RetentionPruner pruner(options);
    pruner.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
        ingestFresh();
        // 500 commits a second, 100 times the controller's rate (one per 200 ms), still leave
        // the pruner's polling busy handler a window on a loaded machine.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } while (pruner.prunes() == 0 && std::chrono::steady_clock::now() < deadline);
    {
        std::lock_guard lock(errorsMutex);
        for (const auto& error : errors) {
            ADD_FAILURE() << "prune failed: " << error;
        }
    }
    ASSERT_EQ(pruner.prunes(), 1);
    const db::PruneReport totals = pruner.totals();
    EXPECT_EQ(totals.samplesDeleted, oldCount);
    EXPECT_GE(totals.transactions, oldCount / 500);
    EXPECT_EQ(reports.load(), 1);
    pruner.stop();  // waits an hour otherwise: must return at once
    auto series = (*writer)->listSeries({});
    ASSERT_TRUE(series.ok());
    ASSERT_EQ(series->size(), 1u);
    EXPECT_EQ((*series)[0].count, batches);  // every fresh sample kept, every old one gone
}

}  // namespace
}  // namespace runplane::control
