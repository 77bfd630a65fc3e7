// common/telemetry: the stored spellings are a file format (existing histories carry them), and
// the protocol's enums must stay in step with the plain ones the proto conversion maps them to.
#include <gtest/gtest.h>

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "backend/control/node_convert.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/run_state.h"
#include "common/telemetry/series.h"

namespace runplane::telemetry {
namespace {

TEST(TelemetryVocabulary, RunStatesKeepTheirStoredSpellingAndReadBack) {
    const char* stored[] = {"running", "finished", "failed", "stopped", "daemon_lost"};
    ASSERT_EQ(std::size(stored), kRunStates.size());
    for (std::size_t i = 0; i < kRunStates.size(); ++i) {
        EXPECT_EQ(toString(kRunStates[i]), stored[i]);
        EXPECT_EQ(runStateFromString(stored[i]), kRunStates[i]);
    }
    EXPECT_EQ(runStateFromString("RUN_STATE_FAILED"), std::nullopt);  // never stored that way
    EXPECT_EQ(runStateFromString("Finished"), std::nullopt);
    EXPECT_EQ(label(RunState::DaemonLost), "daemon lost");
    EXPECT_FALSE(isEnded(RunState::Running));
    EXPECT_TRUE(isEnded(RunState::DaemonLost));
}

TEST(TelemetryVocabulary, EventKindsKeepTheirStoredSpellingAndReadBack) {
    std::set<std::string> seen;
    for (EventKind k : kEventKinds) {
        EXPECT_TRUE(seen.insert(toString(k)).second) << toString(k) << " spelled twice";
        EXPECT_EQ(eventKindFromString(toString(k)), k);
    }
    EXPECT_EQ(std::string(toString(EventKind::MemoryAlarm)), "memory_alarm");
    EXPECT_EQ(std::string(toString(EventKind::RunState)), "run_state");
    EXPECT_EQ(std::string(toString(EventKind::Gap)), "gap");
    EXPECT_EQ(eventKindFromString("no_such_kind"), std::nullopt);
    // The log's failure kinds (issue 42), their cause ranking and which are OOMs.
    EXPECT_EQ(std::string(toString(EventKind::CudaOom)), "cuda_oom");
    EXPECT_EQ(std::string(toString(EventKind::WeightSyncFailure)), "weight_sync_failure");
    EXPECT_EQ(std::string(toString(EventKind::SkippedIteration)), "skipped_iteration");
    EXPECT_TRUE(isOom(EventKind::HostOom) && isOom(EventKind::RayOom));
    EXPECT_FALSE(isOom(EventKind::NcclError));
    EXPECT_GT(causeRank(EventKind::CudaOom), causeRank(EventKind::Crash));
    EXPECT_GT(causeRank(EventKind::NcclError), causeRank(EventKind::Crash));
    EXPECT_GT(causeRank(EventKind::Crash), causeRank(EventKind::NanLoss));
    EXPECT_EQ(causeRank(EventKind::Phase), 0);
}

TEST(TelemetryVocabulary, NodeStatesFoldIntoHistoryStates) {
    EXPECT_EQ(historyState(NodeRunState::Starting), RunState::Running);
    EXPECT_EQ(historyState(NodeRunState::Running), RunState::Running);
    EXPECT_EQ(historyState(NodeRunState::Succeeded), RunState::Finished);
    EXPECT_EQ(historyState(NodeRunState::Failed), RunState::Failed);
    EXPECT_EQ(historyState(NodeRunState::Stopped), RunState::Stopped);
    EXPECT_EQ(historyState(NodeRunState::Lost), RunState::DaemonLost);
}

// Every name the daemon can write into a run_state event (v1::RunState_Name) reads back as the
// node state of the same meaning; a value added to the protocol without a plain twin fails here.
TEST(TelemetryVocabulary, EveryProtocolRunStateNameMapsToANodeState) {
    for (int v = v1::RunState_MIN; v <= v1::RunState_MAX; ++v) {
        if (!v1::RunState_IsValid(v)) {
            continue;
        }
        const auto proto = static_cast<v1::RunState>(v);
        const auto parsed = control::runStateFromName(v1::RunState_Name(proto));
        if (proto == v1::RUN_STATE_UNSPECIFIED) {
            EXPECT_EQ(parsed, std::nullopt);
            continue;
        }
        ASSERT_TRUE(parsed.has_value()) << v1::RunState_Name(proto);
        // The plain spelling is the protocol's name, lower-cased, without its prefix.
        std::string expected = v1::RunState_Name(proto).substr(std::string("RUN_STATE_").size());
        for (char& c : expected) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        EXPECT_EQ(toString(*parsed), expected);
    }
    EXPECT_EQ(control::runStateFromName("failed"), std::nullopt);
    EXPECT_EQ(control::runStateFromName(""), std::nullopt);
}

TEST(TelemetryVocabulary, SeriesNamesAndUnits) {
    EXPECT_EQ(std::string(series::kHostMemUsed), "host.mem.used_bytes");
    EXPECT_EQ(series::gpu(3, series::kGpuMemUsed), "gpu.3.mem.used_bytes");
    EXPECT_EQ(series::gpuProcessMemUsed(0, 4242), "gpu.0.pid.4242.mem.used_bytes");
    EXPECT_EQ(unitOf(series::kHostMemUsed), Unit::Bytes);
    EXPECT_EQ(unitOf(series::gpu(0, series::kGpuUtil)), Unit::Percent);
    EXPECT_EQ(unitOf("perf/step_seconds"), Unit::Seconds);
    EXPECT_EQ(unitOf("ray.poll_hz"), Unit::Hertz);
    EXPECT_EQ(unitOf(series::kRunTreeProcesses), Unit::None);
    // The stored spellings (series_registry.unit) are a file format.
    EXPECT_EQ(std::string(toString(Unit::Bytes)), "bytes");
    EXPECT_EQ(std::string(toString(Unit::Percent)), "%");
    EXPECT_EQ(std::string(toString(Unit::Seconds)), "s");
    EXPECT_EQ(std::string(toString(Unit::Hertz)), "Hz");
    EXPECT_EQ(std::string(toString(Unit::None)), "");
    for (Unit u : {Unit::None, Unit::Bytes, Unit::Percent, Unit::Seconds, Unit::Hertz}) {
        EXPECT_EQ(unitFromString(toString(u)), u);
    }
    EXPECT_EQ(unitFromString("GiB"), std::nullopt);
}

// The daemon sends each of its series with the unit the vocabulary lists; that unit is the one
// the name's suffix gives, so the history stores what it stored before units were sent.
TEST(SeriesVocabulary, TheDaemonsSeriesHaveTheirUnitAndItAgreesWithTheirName) {
    for (const series::Sampled& s : series::kSampled) {
        EXPECT_EQ(series::sampledUnit(s.name), s.unit) << s.name;
        EXPECT_EQ(unitOf(s.name), s.unit) << s.name;
    }
    for (const series::Sampled& s : series::kSampledGpu) {
        const std::string name = series::gpu(12, s.name);
        EXPECT_EQ(series::sampledUnit(name), s.unit) << name;
        EXPECT_EQ(unitOf(name), s.unit) << name;
    }
    EXPECT_EQ(series::sampledUnit(series::gpuProcessMemUsed(1, 4242)), Unit::Bytes);
    // Not the daemon's: a workload's metric, a leaf without its GPU, malformed GPU names.
    EXPECT_EQ(series::sampledUnit("eval/gsm8k"), std::nullopt);
    EXPECT_EQ(series::sampledUnit("perf/step_seconds"), std::nullopt);
    EXPECT_EQ(series::sampledUnit(series::kGpuMemUsed), std::nullopt);
    EXPECT_EQ(series::sampledUnit("gpu.x.mem.used_bytes"), std::nullopt);
    EXPECT_EQ(series::sampledUnit("gpu.0.pid.7.util_percent"), std::nullopt);
    EXPECT_EQ(series::sampledUnit("gpu.0.no_such_leaf"), std::nullopt);
}

// Sample.unit: every protocol unit but UNSPECIFIED maps to a plain one; UNSPECIFIED (an older
// daemon or spool record) maps to none, and the history then falls back to the name's suffix.
TEST(NodeConvert, SampleUnitsComeFromTheWireAndAreAbsentFromOlderRecords) {
    v1::TelemetryBatch wire;
    const std::pair<v1::Unit, std::optional<Unit>> cases[] = {
        {v1::UNIT_UNSPECIFIED, std::nullopt}, {v1::UNIT_NONE, Unit::None},
        {v1::UNIT_BYTES, Unit::Bytes},        {v1::UNIT_PERCENT, Unit::Percent},
        {v1::UNIT_SECONDS, Unit::Seconds},    {v1::UNIT_HERTZ, Unit::Hertz}};
    ASSERT_EQ(std::size(cases), static_cast<std::size_t>(v1::Unit_ARRAYSIZE));
    std::uint64_t seq = 0;
    for (const auto& [proto, plain] : cases) {
        auto* record = wire.add_records();
        record->set_seq(++seq);
        record->mutable_sample()->set_series("x_bytes");
        record->mutable_sample()->set_unit(proto);
    }
    const control::TelemetryBatchInfo batch = control::fromProto(wire);
    ASSERT_EQ(batch.records.size(), std::size(cases));
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        EXPECT_EQ(batch.records[i].sample.unit, cases[i].second) << i;
    }
    // What is stored: the sent unit, or the suffix's for the record without one.
    EXPECT_EQ(control::sampleUnit(batch.records[0].sample), Unit::Bytes);
    EXPECT_EQ(control::sampleUnit(batch.records[1].sample), Unit::None);
}

// Event.run_state is the run's state; a record from before that field (an older daemon or spool)
// has only attrs["state"], which is read instead. The history keeps the attribute either way.
TEST(NodeConvert, RunStateEventsAreTypedAndOlderRecordsReadTheirAttribute) {
    v1::TelemetryBatch wire;
    auto event = [&](std::uint64_t seq) {
        auto* record = wire.add_records();
        record->set_seq(seq);
        record->set_run_id("r");
        record->mutable_event()->set_kind(v1::EVENT_RUN_STATE);
        return record->mutable_event();
    };
    event(1)->set_run_state(v1::RUN_STATE_FAILED);  // typed only (a future daemon)
    auto* both = event(2);                          // today's daemon
    both->set_run_state(v1::RUN_STATE_SUCCEEDED);
    (*both->mutable_attrs())["state"] = "RUN_STATE_SUCCEEDED";
    (*event(3)->mutable_attrs())["state"] = "RUN_STATE_STOPPED";  // before the field
    (*event(4)->mutable_attrs())["state"] = "stopped";            // unreadable
    event(5);                                                     // neither
    auto* alarm = wire.add_records();
    alarm->set_seq(6);
    alarm->mutable_event()->set_kind(v1::EVENT_MEMORY_ALARM);
    (*alarm->mutable_event()->mutable_attrs())["state"] = "raised";

    const control::TelemetryBatchInfo batch = control::fromProto(wire);
    ASSERT_EQ(batch.records.size(), 6u);
    EXPECT_EQ(batch.records[0].event.runState, NodeRunState::Failed);
    EXPECT_EQ(batch.records[0].event.attrs.at("state"), "RUN_STATE_FAILED");
    EXPECT_EQ(batch.records[1].event.runState, NodeRunState::Succeeded);
    EXPECT_EQ(batch.records[2].event.runState, NodeRunState::Stopped);
    EXPECT_EQ(batch.records[3].event.runState, std::nullopt);
    EXPECT_EQ(batch.records[4].event.runState, std::nullopt);
    EXPECT_EQ(batch.records[4].event.attrs.count("state"), 0u);
    EXPECT_EQ(batch.records[5].event.runState, std::nullopt);
    EXPECT_EQ(batch.records[5].event.attrs.at("state"), "raised");
}

// Every protocol run state sent typed converts to the node state of the same name.
TEST(NodeConvert, EveryTypedRunStateConverts) {
    for (int v = v1::RunState_MIN; v <= v1::RunState_MAX; ++v) {
        if (!v1::RunState_IsValid(v)) {
            continue;
        }
        v1::TelemetryBatch wire;
        auto* record = wire.add_records();
        record->set_seq(1);
        record->mutable_event()->set_kind(v1::EVENT_RUN_STATE);
        record->mutable_event()->set_run_state(static_cast<v1::RunState>(v));
        const auto converted = control::fromProto(wire).records.at(0).event.runState;
        EXPECT_EQ(converted,
                  control::runStateFromName(v1::RunState_Name(static_cast<v1::RunState>(v))))
            << v1::RunState_Name(static_cast<v1::RunState>(v));
    }
}

// The controller's value types hold typed ids (issue #22): node_convert wraps the ids the daemon
// sends and unwraps them into requests, the strings on the wire unchanged.
static_assert(std::is_same_v<decltype(control::StartRunSpec::runId), RunId>);
static_assert(std::is_same_v<decltype(control::RunStatusInfo::runId), RunId>);
static_assert(std::is_same_v<decltype(control::NodeSummary::nodeId), NodeId>);

TEST(NodeConvert, IdsAreTypedOnOurSideAndStringsOnTheWire) {
    v1::NodeInfo info;
    info.set_node_id("node-7");
    EXPECT_EQ(control::fromProto(info, "10.0.0.7:7070").nodeId, NodeId{"node-7"});
    v1::RunStatus status;
    status.set_run_id("grpo-1");
    EXPECT_EQ(control::fromProto(status).runId, RunId{"grpo-1"});
    control::StartRunSpec spec;
    spec.runId = RunId{"grpo-2"};
    spec.argv = {"/bin/true"};
    EXPECT_EQ(control::toProto(spec).run_id(), "grpo-2");
}

}  // namespace
}  // namespace runplane::telemetry
