// planBatch: what reaches the history from one wire batch, and every hole as a gap event.
#include "backend/control/ingest_batch.h"

#include <gtest/gtest.h>

namespace runplane::control {
namespace {

TelemetryRecordInfo sample(std::uint64_t seq) {
    TelemetryRecordInfo r;
    r.seq = seq;
    r.tNs = static_cast<std::int64_t>(seq) * 10;
    r.sample = SampleInfo{"host.mem.used_bytes", 1.0, 0.5, 2.0, -1};
    return r;
}

TelemetryRecordInfo gapEvent(std::uint64_t seq, std::uint64_t first, std::uint64_t last) {
    TelemetryRecordInfo r;
    r.seq = seq;
    r.isEvent = true;
    r.event.kind = EventKindInfo::Gap;
    r.event.attrs = {{"first_seq", std::to_string(first)}, {"last_seq", std::to_string(last)}};
    return r;
}

TEST(PlanBatch, ContiguousRecordsPassThrough) {
    TelemetryBatchInfo batch{"n", 0, {sample(5), sample(6), sample(7)}};
    BatchPlan plan = planBatch("n", batch, 5, 0);
    EXPECT_EQ(plan.batch.samples.size(), 3u);
    EXPECT_TRUE(plan.batch.events.empty());
    EXPECT_EQ(plan.batch.throughSeq, 7u);
    EXPECT_EQ(plan.nextExpected, 8u);
    EXPECT_EQ(plan.batch.samples[0].unit, "bytes");
}

TEST(PlanBatch, RecordsBelowTheCursorAreDropped) {
    TelemetryBatchInfo batch{"n", 0, {sample(3), sample(4), sample(5), sample(6)}};
    BatchPlan plan = planBatch("n", batch, 5, 0);
    ASSERT_EQ(plan.batch.samples.size(), 2u);
    EXPECT_EQ(plan.batch.samples[0].seq, 5u);
    EXPECT_EQ(plan.gaps, 0u);
}

TEST(PlanBatch, TrimmedRangeBecomesAGapEvent) {
    TelemetryBatchInfo batch{"n", 20, {sample(20), sample(21)}};
    BatchPlan plan = planBatch("n", batch, 11, 0);
    ASSERT_EQ(plan.gaps, 1u);
    ASSERT_EQ(plan.batch.events.size(), 1u);
    const auto& gap = plan.batch.events[0];
    EXPECT_EQ(gap.kind, "gap");
    EXPECT_EQ(gap.seq, 0u);
    EXPECT_NE(gap.attrsJson.find("\"first_seq\":\"11\""), std::string::npos) << gap.attrsJson;
    EXPECT_NE(gap.attrsJson.find("\"last_seq\":\"19\""), std::string::npos) << gap.attrsJson;
    EXPECT_NE(gap.message.find("11..19"), std::string::npos);
    EXPECT_EQ(plan.batch.throughSeq, 21u);
}

TEST(PlanBatch, HoleInsideTheStreamBecomesAGapEvent) {
    TelemetryBatchInfo batch{"n", 0, {sample(1), sample(2), sample(6)}};
    BatchPlan plan = planBatch("n", batch, 1, 0);
    ASSERT_EQ(plan.gaps, 1u);
    EXPECT_NE(plan.batch.events[0].attrsJson.find("\"first_seq\":\"3\""), std::string::npos);
    EXPECT_NE(plan.batch.events[0].attrsJson.find("\"last_seq\":\"5\""), std::string::npos);
}

TEST(PlanBatch, DaemonDeclaredGapIsNotReportedTwice) {
    // The spool dropped 3..8 and appended its own EVENT_GAP (seq 9).
    TelemetryBatchInfo batch{"n", 9, {gapEvent(9, 3, 8), sample(10)}};
    BatchPlan plan = planBatch("n", batch, 3, 0);
    EXPECT_EQ(plan.gaps, 0u);
    ASSERT_EQ(plan.batch.events.size(), 1u);
    EXPECT_EQ(plan.batch.events[0].seq, 9u);
    EXPECT_EQ(plan.batch.events[0].kind, "gap");
    // Partly declared: only the rest is reported.
    BatchPlan partial = planBatch("n", batch, 1, 0);
    ASSERT_EQ(partial.gaps, 1u);
    EXPECT_NE(partial.batch.events[0].attrsJson.find("\"last_seq\":\"2\""), std::string::npos);
}

TEST(PlanBatch, FreshHistoryStartsAtTheFirstRecord) {
    TelemetryBatchInfo batch{"n", 40, {sample(40), sample(41)}};
    BatchPlan plan = planBatch("n", batch, 0, 0);
    EXPECT_EQ(plan.gaps, 0u);
    EXPECT_EQ(plan.batch.throughSeq, 41u);
}

TEST(PlanBatch, EmptyHeartbeatKeepsTheCursor) {
    TelemetryBatchInfo batch{"n", 0, {}};
    BatchPlan plan = planBatch("n", batch, 12, 0);
    EXPECT_EQ(plan.batch.throughSeq, 11u);
    EXPECT_EQ(plan.nextExpected, 12u);
}

TEST(Units, FromSeriesNames) {
    EXPECT_EQ(unitForSeries("host.mem.used_bytes"), "bytes");
    EXPECT_EQ(unitForSeries("gpu.0.util_percent"), "%");
    EXPECT_EQ(unitForSeries("eval/gsm8k"), "");
}

}  // namespace
}  // namespace runplane::control

namespace runplane::control {
namespace {

TEST(RunStates, FromEventAttributes) {
    EXPECT_EQ(runStateFromAttrs({{"state", "RUN_STATE_SUCCEEDED"}}), db::RunState::Finished);
    EXPECT_EQ(runStateFromAttrs({{"state", "RUN_STATE_FAILED"}}), db::RunState::Failed);
    EXPECT_EQ(runStateFromAttrs({{"state", "RUN_STATE_STOPPED"}}), db::RunState::Stopped);
    EXPECT_EQ(runStateFromAttrs({{"state", "RUN_STATE_LOST"}}), db::RunState::DaemonLost);
    EXPECT_EQ(runStateFromAttrs({{"state", "RUN_STATE_RUNNING"}}), db::RunState::Running);
    EXPECT_EQ(runStateFromAttrs({{"state", "raised"}}), std::nullopt);  // a memory alarm
    EXPECT_EQ(runStateFromAttrs({}), std::nullopt);
}

}  // namespace
}  // namespace runplane::control
