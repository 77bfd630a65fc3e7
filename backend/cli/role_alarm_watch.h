#pragma once
// Live role alarms (issue 43): while `runplanectl watch` ingests a node, each report's memory by
// role (the daemon's node-level role.* series and the page cache) is compared with the plan of
// every run on the node in its current phase (the run's recipe snapshot, planned by
// backend/plan/role_budget.h: two backups resident at once, checkpoint pages not dropped, a role
// over its budget). An alarm that holds for `sustainSamples` reports in a row is recorded once as a
// `memory_alarm` event (attrs: source "plan", cause, role, node, phase, measured, planned and limit
// bytes), committed with the batch that raised it; it is recorded again only after it cleared
// (the episode ended) or in another phase. docs/memory-model.md, "Live role alarms".
// A worker node of a multi-node run says no phases (the head's launcher prints them): a run whose
// node has said none follows the run's phase events in the history (the head's watch stores
// them), read again at most every kFollowPhaseNs.
// Thread-safe (one mutex; the ingest thread calls it).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/plan/role_budget.h"
#include "db/history/history.h"

namespace runplane::cli {

struct RoleAlarmWatchOptions {
    std::string historyPath;  // where the runs' recipe snapshots are read (read-only)
    std::string recipesDir;   // the model catalog's directory; empty: next to the executable
    /// Reports in a row an alarm must hold before it is recorded (the seed's "sustained").
    int sustainSamples = 3;
    plan::RoleAlarmOptions alarm;
};

class RoleAlarmWatch {
  public:
    explicit RoleAlarmWatch(RoleAlarmWatchOptions options);
    ~RoleAlarmWatch();

    /// The alarm events (seq 0, controller-made) a committed-to-be batch of `batch.nodeId` raises.
    std::vector<db::IngestEvent> onBatch(const db::IngestBatch& batch);

  private:
    struct Run {
        bool planned = false;  // the plan was looked up (found or not)
        std::int64_t lookedUpNs = 0;
        std::optional<plan::NodeMemory> node;  // this node's share of the run's plan
        std::optional<plan::Phase> phase;      // the phase in progress; none between phases
        std::map<std::string, int> streak;     // alarm key -> reports in a row
        bool phaseHere = false;                // this node's stream said a phase of the run
        std::int64_t phaseCursorNs = 0;        // history phase events before this are applied
        std::int64_t phaseReadNs = 0;          // when the history was last read for them
    };
    struct Node {
        std::map<std::string, double> values;  // the latest reading of each series read here
        std::map<std::string, Run> runs;       // run id -> state
    };
    void evaluate(const std::string& nodeId, Node& node, std::int64_t tNs,
                  std::vector<db::IngestEvent>& out);
    void lookUpPlan(const std::string& nodeId, const std::string& runId, Run& run,
                    std::int64_t nowNs);
    /// The run's phase from its phase events in the history, from any node (a worker's).
    void followPhase(const std::string& runId, Run& run, std::int64_t nowNs);
    /// The history, opened read-only on first use; nullptr when it cannot be opened.
    db::History* history();

    RoleAlarmWatchOptions m_options;
    std::mutex m_mutex;
    std::unique_ptr<db::History> m_history;  // opened on first use
    std::map<std::string, Node> m_nodes;
};

}  // namespace runplane::cli
