// planBatch: what reaches the history from one wire batch, and every hole as a gap event.
#include "backend/control/ingest_batch.h"

#include <gtest/gtest.h>

namespace runplane::control {
namespace {

TelemetryRecordInfo sample(std::uint64_t seq) {
    TelemetryRecordInfo r;
    r.seq = seq;
    r.tNs = static_cast<std::int64_t>(seq) * 10;
    r.sample = SampleInfo{"host.mem.used_bytes", 1.0, 0.5, 2.0, -1, telemetry::Unit::Bytes};
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
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 5, 0);
    EXPECT_EQ(plan.batch.samples.size(), 3u);
    EXPECT_TRUE(plan.batch.events.empty());
    EXPECT_EQ(plan.batch.throughSeq, 7u);
    EXPECT_EQ(plan.nextExpected, 8u);
    EXPECT_EQ(plan.batch.samples[0].unit, "bytes");
}

TEST(PlanBatch, RecordsBelowTheCursorAreDropped) {
    TelemetryBatchInfo batch{"n", 0, {sample(3), sample(4), sample(5), sample(6)}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 5, 0);
    ASSERT_EQ(plan.batch.samples.size(), 2u);
    EXPECT_EQ(plan.batch.samples[0].seq, 5u);
    EXPECT_EQ(plan.gaps, 0u);
}

TEST(PlanBatch, TrimmedRangeBecomesAGapEvent) {
    TelemetryBatchInfo batch{"n", 20, {sample(20), sample(21)}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 11, 0);
    ASSERT_EQ(plan.gaps, 1u);
    ASSERT_EQ(plan.batch.events.size(), 1u);
    const auto& gap = plan.batch.events[0];
    EXPECT_EQ(gap.kind, "gap");
    EXPECT_EQ(gap.seq, 0u);
    EXPECT_EQ(gap.attrs.at("first_seq"), "11");
    EXPECT_EQ(gap.attrs.at("last_seq"), "19");
    EXPECT_NE(gap.message.find("11..19"), std::string::npos);
    EXPECT_EQ(plan.batch.throughSeq, 21u);
}

TEST(PlanBatch, HoleInsideTheStreamBecomesAGapEvent) {
    TelemetryBatchInfo batch{"n", 0, {sample(1), sample(2), sample(6)}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 1, 0);
    ASSERT_EQ(plan.gaps, 1u);
    EXPECT_EQ(plan.batch.events[0].attrs.at("first_seq"), "3");
    EXPECT_EQ(plan.batch.events[0].attrs.at("last_seq"), "5");
}

TEST(PlanBatch, DaemonDeclaredGapIsNotReportedTwice) {
    // The spool dropped 3..8 and appended its own EVENT_GAP (seq 9).
    TelemetryBatchInfo batch{"n", 9, {gapEvent(9, 3, 8), sample(10)}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 3, 0);
    EXPECT_EQ(plan.gaps, 0u);
    ASSERT_EQ(plan.batch.events.size(), 1u);
    EXPECT_EQ(plan.batch.events[0].seq, 9u);
    EXPECT_EQ(plan.batch.events[0].kind, "gap");
    // Partly declared: only the rest is reported.
    BatchPlan partial = planBatch(NodeId{"n"}, batch, 1, 0);
    ASSERT_EQ(partial.gaps, 1u);
    EXPECT_EQ(partial.batch.events[0].attrs.at("last_seq"), "2");
}

TEST(PlanBatch, FreshHistoryStartsAtTheFirstRecord) {
    TelemetryBatchInfo batch{"n", 40, {sample(40), sample(41)}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 0, 0);
    EXPECT_EQ(plan.gaps, 0u);
    EXPECT_EQ(plan.batch.throughSeq, 41u);
}

TEST(PlanBatch, EmptyHeartbeatKeepsTheCursor) {
    TelemetryBatchInfo batch{"n", 0, {}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 12, 0);
    EXPECT_EQ(plan.batch.throughSeq, 11u);
    EXPECT_EQ(plan.nextExpected, 12u);
}

// The history stores the unit the daemon sent; only a sample sent without one (an older daemon
// or spool record) has its unit read from the name's suffix.
TEST(Units, TheSentUnitIsStoredTheSuffixOnlyForSamplesWithout) {
    TelemetryRecordInfo typed = sample(1);
    typed.sample.series = "gpu.0.pid.7.mem.used_bytes";
    typed.sample.unit = telemetry::Unit::Bytes;
    TelemetryRecordInfo sentNone = sample(2);
    sentNone.sample.series = "train/time_bytes";  // what the suffix would misread
    sentNone.sample.unit = telemetry::Unit::None;
    TelemetryRecordInfo old = sample(3);
    old.sample.series = "gpu.0.util_percent";
    old.sample.unit = std::nullopt;
    TelemetryRecordInfo oldPlain = sample(4);
    oldPlain.sample.series = "eval/gsm8k";
    oldPlain.sample.unit = std::nullopt;
    TelemetryBatchInfo batch{"n", 0, {typed, sentNone, old, oldPlain}};
    BatchPlan plan = planBatch(NodeId{"n"}, batch, 1, 0);
    ASSERT_EQ(plan.batch.samples.size(), 4u);
    EXPECT_EQ(plan.batch.samples[0].unit, "bytes");
    EXPECT_EQ(plan.batch.samples[1].unit, "");
    EXPECT_EQ(plan.batch.samples[2].unit, "%");
    EXPECT_EQ(plan.batch.samples[3].unit, "");
}

}  // namespace
}  // namespace runplane::control

namespace runplane::control {
namespace {

// A run_state event from the wire carries its state typed (node_convert fills EventInfo::runState
// from Event.run_state, or from attrs["state"] for a record from before it; NodeConvert tests).
TEST(RunStates, FromTheEventsTypedState) {
    EventInfo event;
    event.kind = EventKindInfo::RunState;
    EXPECT_EQ(runStateOf(event), std::nullopt);
    event.runState = NodeRunState::Failed;
    EXPECT_EQ(runStateOf(event), db::RunState::Failed);
    event.runState = NodeRunState::Succeeded;
    EXPECT_EQ(runStateOf(event), db::RunState::Finished);
    event.runState = NodeRunState::Lost;
    EXPECT_EQ(runStateOf(event), db::RunState::DaemonLost);
}

// A run_state event read back from the history: its stored "state" attribute.
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
