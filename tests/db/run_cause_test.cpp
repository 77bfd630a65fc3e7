// issue 42: a run's cause in one line, from its events: the strongest failure kind, the latest of
// it, in its own summary.
#include <gtest/gtest.h>

#include "db/history/run_cause.h"

namespace runplane::db {
namespace {

EventRecord event(std::int64_t t, std::string kind, std::string summary) {
    EventRecord e;
    e.tNs = t;
    e.kind = std::move(kind);
    e.message = "message of " + e.kind;
    if (!summary.empty()) {
        e.attrs["summary"] = summary;
    }
    return e;
}

TEST(RunCause, StrongestKindThenLatestAndItsSummary) {
    EXPECT_FALSE(runCause({}).has_value());
    EXPECT_FALSE(
        runCause({event(1, "phase", ""), event(2, "info", ""), event(3, "stall", "")}).has_value());
    // An OOM explains a failure better than the crash its traceback ends with, whatever the order.
    auto c = runCause({event(1, "cuda_oom", "CUDA OOM on GPU 3: tried 61.34 GiB, 27.07 GiB free"),
                       event(2, "crash", "torch.OutOfMemoryError: CUDA out of memory."),
                       event(3, "nan_loss", "lm loss is nan at iteration 7")});
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->kind, "cuda_oom");
    EXPECT_EQ(c->summary, "CUDA OOM on GPU 3: tried 61.34 GiB, 27.07 GiB free");
    EXPECT_EQ(c->tNs, 1);
    // Of two of the same strength, the latest.
    auto n = runCause({event(5, "nccl_error", "NCCL error 2 on rank 10"),
                       event(9, "weight_sync_failure", "weight sync failed on engine dp6.tp6")});
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->kind, "weight_sync_failure");
    // No summary attribute (an older daemon): the message.
    auto m = runCause({event(4, "crash", "")});
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->summary, "message of crash");
}

}  // namespace
}  // namespace runplane::db
