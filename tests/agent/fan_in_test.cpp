// Two watchers on one daemon never take data from each other (issue 18): each has its own cursor
// in the spool, and records are trimmed only below the slowest live one.
#include <gtest/gtest.h>

#include <set>

#include "backend/control/node_client.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using control::NodeClient;
using control::NodeClientOptions;
using control::TelemetryBatchInfo;
using testing::DaemonProcess;
using testing::TempDir;

std::shared_ptr<NodeClient> watcher(const DaemonProcess& d, const std::string& consumer) {
    NodeClientOptions o;
    o.consumer = consumer;
    auto c = NodeClient::create(d.address(), o);
    EXPECT_TRUE(c.ok()) << c.error();
    return *c;
}

// Reads from `fromSeq` until at least `atLeast` records arrived; returns their seqs.
std::vector<std::uint64_t> readSeqs(NodeClient& client, std::uint64_t fromSeq, std::size_t atLeast,
                                    std::uint64_t* oldestKept = nullptr) {
    std::vector<std::uint64_t> seqs;
    const Status s = client.watchTelemetry(fromSeq, 10, [&](TelemetryBatchInfo&& batch) {
        if (oldestKept != nullptr && seqs.empty()) {
            *oldestKept = batch.oldestKeptSeq;
        }
        for (const auto& r : batch.records) {
            seqs.push_back(r.seq);
        }
        return seqs.size() < atLeast;
    });
    EXPECT_TRUE(s.ok()) << s.error();
    return seqs;
}

TEST(FanIn, PausedWatcherResumesWithNothingMissingWhileTheOtherAcks) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--sample-hz", "10"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto gui = watcher(d, "gui-test@host");
    auto cli = watcher(d, "watch-test@host");

    // Both start watching; the CLI watcher then pauses (reads a little, never acknowledges).
    const auto firstCli = readSeqs(*cli, 1, 1);
    ASSERT_FALSE(firstCli.empty());

    // The GUI watcher reads and acknowledges everything for a while.
    std::uint64_t guiAcked = 0;
    for (int round = 0; round < 4; ++round) {
        const auto seqs = readSeqs(*gui, guiAcked + 1, 20);
        ASSERT_FALSE(seqs.empty());
        guiAcked = seqs.back();
        auto trimmed = gui->ackTelemetry(guiAcked);
        ASSERT_TRUE(trimmed.ok()) << trimmed.error();
        EXPECT_EQ(*trimmed, 0u) << "nothing may go while the CLI watcher has acknowledged nothing";
    }
    ASSERT_GE(guiAcked, 80u);

    // The paused watcher resumes from seq 1: every record is still there, in order, no gap.
    std::uint64_t oldestKept = 0;
    const auto resumed = readSeqs(*cli, 1, guiAcked, &oldestKept);
    EXPECT_EQ(oldestKept, 1u);
    ASSERT_GE(resumed.size(), guiAcked);
    for (std::size_t i = 0; i < guiAcked; ++i) {
        ASSERT_EQ(resumed[i], i + 1) << "seq " << i + 1 << " missing or out of order";
    }
    // Now both have acknowledged through guiAcked: the spool trims.
    auto trimmed = cli->ackTelemetry(guiAcked);
    ASSERT_TRUE(trimmed.ok()) << trimmed.error();
    EXPECT_EQ(*trimmed, guiAcked);
}

TEST(FanIn, CursorNamesAreChecked) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state");
    ASSERT_TRUE(d.ok()) << d.error();
    auto bad = watcher(d, "has space");
    auto r = bad->ackTelemetry(0);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("consumer"), std::string::npos) << r.error();
    EXPECT_NE(control::defaultConsumerName("watch", "/tmp/a.sqlite"),
              control::defaultConsumerName("watch", "/tmp/b.sqlite"));
    EXPECT_NE(control::defaultConsumerName("watch", "/tmp/a.sqlite"),
              control::defaultConsumerName("controller", "/tmp/a.sqlite"));
    EXPECT_EQ(control::defaultConsumerName("watch", "/tmp/a.sqlite"),
              control::defaultConsumerName("watch", "/tmp/../tmp/a.sqlite"));
}

}  // namespace
}  // namespace runplane::agent
