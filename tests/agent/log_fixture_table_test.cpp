// issue 42: the replay table of real pastes from slime, miles and vime runs (and the failures
// around them): each row names a fixture (tests/agent/fixtures/logs, headed by its source), every
// series it must give with the value a careful reader reads off the pasted text, and every event
// with the attributes a person would quote. A row also says how many series the fixture gives in
// all, so a garbage series fails the row.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "backend/agent/log_metrics.h"
#include "tests/agent/log_fixture_replay.h"

namespace runplane::agent {
namespace {

struct Replayed {
    std::map<std::string, LogMetric> last;  // the last value of each series
    std::vector<LogEvent> events;
};

// The collector's path: a LogReader fed line by line, empty lines skipped.
Replayed replay(const std::string& name) {
    Replayed r;
    test::replayLines(test::nonEmpty(test::fixtureLines(name)), [&r](ParsedLogLine p) {
        for (auto& m : p.metrics) {
            r.last[m.series] = m;
        }
        for (auto& e : p.events) {
            r.events.push_back(std::move(e));
        }
    });
    return r;
}

const char* kindName(LogEventKind k) {
    switch (k) {
        case LogEventKind::Phase:
            return "phase";
        case LogEventKind::NcclWarning:
            return "nccl_warning";
        case LogEventKind::NcclError:
            return "nccl_error";
        case LogEventKind::Info:
            return "info";
        case LogEventKind::CudaOom:
            return "cuda_oom";
        case LogEventKind::RayOom:
            return "ray_oom";
        case LogEventKind::HostOom:
            return "host_oom";
        case LogEventKind::WeightSyncFailure:
            return "weight_sync_failure";
        case LogEventKind::BatchMismatch:
            return "batch_mismatch";
        case LogEventKind::NanLoss:
            return "nan_loss";
        case LogEventKind::SkippedIteration:
            return "skipped_iteration";
        case LogEventKind::Crash:
            return "crash";
    }
    return "?";
}

struct ExpectedEvent {
    LogEventKind kind;
    std::map<std::string, std::string> attrs;  // each must be present with this value
};

struct Row {
    const char* fixture;
    std::map<std::string, double> values;  // every series the fixture gives, its last value
    std::vector<ExpectedEvent> events;     // every event, in order
};

// Written by hand from the pasted text.
const std::vector<Row>& rows() {
    static const std::vector<Row> kRows = {
        // SGLang's Decode batch of a hybrid (Mamba) model in a miles run, then the driver's
        // traceback (the paste ends before its exception line: no crash yet).
        {"miles_decode_mamba_308.log",
         {{"engine/pid276799.tp0.ep0/running_requests", 2},
          {"engine/pid276799.tp0.ep0/full_kv_tokens", 37707},
          {"engine/pid276799.tp0.ep0/full_kv_cache_usage", 0.01},
          {"engine/pid276799.tp0.ep0/mamba_slots", 4},
          {"engine/pid276799.tp0.ep0/mamba_usage", 0.00},
          {"engine/pid276799.tp0.ep0/gen_throughput", 200.40},
          {"engine/pid276799.tp0.ep0/queued_requests", 0}},
         {}},
        // vime (slime on vLLM): the engines' HTTP lines and the trainer's progress bars during a
        // weight update carry no value and no failure.
        {"vime_update_weights_55.log", {}, {}},
        // slime's weight update: the timer opens the phase on the trainer's process; the memory
        // report before it is five values of rank 0; the engines' cache flushes are nothing.
        {"slime_memory_timer_1305.log",
         {{"memory/rank0/total_GB", 79.11},
          {"memory/rank0/free_GB", 60.0},
          {"memory/rank0/used_GB", 19.11},
          {"memory/rank0/allocated_GB", 23.99},
          {"memory/rank0/reserved_GB", 25.04}},
         {{LogEventKind::Phase,
           {{"phase", "weight_sync"},
            {"edge", "start"},
            {"timer", "update_weights"},
            {"pid", "135986"},
            {"actor", "MegatronTrainRayActor"}}}}},
        // SGLang refuses a weight shard in a slime run (ETP-sharded expert weights).
        {"slime_weight_sync_failed_2280.log",
         {},
         {{LogEventKind::WeightSyncFailure,
           {{"engine_kind", "sglang"},
            {"reason", "start (256) + length (256) exceeds dimension size (256).."}}}}},
        // vLLM's weight-update calls out of order (an RL trainer's weight sync).
        {"weight_sync_vllm_skyrl_1605.log",
         {},
         {{LogEventKind::WeightSyncFailure,
           {{"engine_kind", "vllm"},
            {"reason",
             "start_weight_update called while a weight update is already active. Call "
             "finish_weight_update first."}}}}},
        // The first weight update into a vLLM rollout server fails in the weight loader: the
        // failure, then the traceback's exception line as the crash.
        {"weight_sync_vllm_ms_swift_7270.log",
         {},
         {{LogEventKind::WeightSyncFailure,
           {{"engine_kind", "vllm"},
            {"reason",
             "Call to collective_rpc method failed: default_weight_loader() got an unexpected "
             "keyword argument 'weight_name'"}}},
          {LogEventKind::Crash, {{"exception", "Exception"}}}}},
        // DeepSpeed's batch check (OpenRLHF's trainers): 8 != 2 x 1 x 1 on rank 0.
        {"batch_mismatch_deepspeed_6914.log",
         {},
         {{LogEventKind::BatchMismatch,
           {{"train_batch_size", "8"},
            {"micro_batch_per_gpu", "2"},
            {"gradient_acc_step", "1"},
            {"world_size", "1"},
            {"rank", "0"}}}}},
        // TRL's GRPO trainer: 7 processes x 1 per device is no multiple of 8 generations; the
        // ValueError also ends the traceback (the crash, on rank 1).
        {"batch_mismatch_grpo_open_r1_249.log",
         {},
         {{LogEventKind::BatchMismatch,
           {{"processes", "7"},
            {"per_device_batch_size", "1"},
            {"global_batch_size", "7"},
            {"generations_per_prompt", "8"},
            {"rank", "1"}}},
          {LogEventKind::Crash, {{"exception", "ValueError"}, {"rank", "1"}}}}},
        // A slime trainer actor dies in train(): the traceback's exception line is the crash.
        {"slime_dist_backend_error_956.log",
         {},
         {{LogEventKind::Crash, {{"exception", "ray.exceptions.RayTaskError(DistBackendError)"}}}}},
    };
    return kRows;
}

TEST(LogFixtureTable, EveryRowGivesItsValuesAndEventsAndNothingElse) {
    for (const auto& row : rows()) {
        SCOPED_TRACE(row.fixture);
        const auto r = replay(row.fixture);
        std::set<std::string> got;
        for (const auto& [series, m] : r.last) {
            got.insert(series);
        }
        std::set<std::string> want;
        for (const auto& [series, v] : row.values) {
            want.insert(series);
            const auto it = r.last.find(series);
            if (it == r.last.end()) {
                ADD_FAILURE() << "no series " << series;
                continue;
            }
            EXPECT_DOUBLE_EQ(it->second.value, v) << series;
        }
        EXPECT_EQ(got, want) << "a series nobody reads off the paste, or one missing";
        ASSERT_EQ(r.events.size(), row.events.size());
        for (std::size_t i = 0; i < row.events.size(); ++i) {
            EXPECT_STREQ(kindName(r.events[i].kind), kindName(row.events[i].kind));
            for (const auto& [k, v] : row.events[i].attrs) {
                const auto it = r.events[i].attrs.find(k);
                ASSERT_NE(it, r.events[i].attrs.end()) << k;
                EXPECT_EQ(it->second, v) << k;
            }
        }
    }
}

}  // namespace
}  // namespace runplane::agent
