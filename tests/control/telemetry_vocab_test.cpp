// common/telemetry: the stored spellings are a file format (existing histories carry them), and
// the protocol's enums must stay in step with the plain ones the proto conversion maps them to.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

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
    EXPECT_EQ(std::string(unitOf(series::kHostMemUsed)), unit::kBytes);
    EXPECT_EQ(std::string(unitOf(series::gpu(0, series::kGpuUtil))), unit::kPercent);
    EXPECT_EQ(std::string(unitOf("perf/step_seconds")), unit::kSeconds);
    EXPECT_EQ(std::string(unitOf("ray.poll_hz")), unit::kHertz);
    EXPECT_EQ(std::string(unitOf(series::kRunTreeProcesses)), "");
}

}  // namespace
}  // namespace runplane::telemetry
