#include "backend/control/dispatch_history.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "backend/control/controller.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "common/redact.h"
#include "db/history/history.h"

namespace runplane::control {
namespace {

using clock::unixNowNs;

// Events share one timestamp base but stay in step order: a nanosecond apart.
db::IngestBatch eventsBatch(const RunId& runId, const std::vector<DispatchEvent>& events) {
    db::IngestBatch batch;
    batch.nodeId = NodeId{kDispatchEventsNode};
    std::int64_t t = unixNowNs() - static_cast<std::int64_t>(events.size());
    for (const auto& e : events) {
        db::IngestEvent ev;
        ev.seq = 0;  // made by the controller, not a daemon's spool
        ev.tNs = t++;
        ev.runId = runId;
        ev.kind = std::string("dispatch.") + toString(e.step);
        ev.message = redact::redactText(e.message);  // docs/security.md
        ev.attrs = {{"node", e.node}, {"ok", e.ok}};
        batch.events.push_back(std::move(ev));
    }
    return batch;
}

Result<std::unique_ptr<db::History>> openHistory(const std::string& path) {
    return db::History::open(path);
}

}  // namespace

Status recordLaunch(const DispatchRecordSpec& spec, const LaunchRequest& request,
                    const DispatchResult& result) {
    auto history = openHistory(spec.historyPath);
    if (!history.ok()) {
        return Error{history.error()};
    }
    const RunId& runId = result.headRun.runId.empty() ? request.run.runId : result.headRun.runId;
    if (result.launched) {
        db::RunRecord record;
        record.id = runId;
        record.name = spec.runName.empty() ? runId.value() : spec.runName;
        record.recipeYaml = spec.recipeYaml;
        auto provenance = nlohmann::json::parse(
            spec.provenanceJson.empty() ? std::string("{}") : spec.provenanceJson, nullptr, false);
        if (!provenance.is_object()) {
            provenance = nlohmann::json{{"caller", spec.provenanceJson}};
        }
        provenance["dispatch"] = {{"head", request.head},
                                  {"workers", request.workers},
                                  {"gpus_per_node", request.gpusPerNode},
                                  {"ray_port", request.rayPort},
                                  {"env", result.runEnv},
                                  {"preflight_overridden", result.preflightOverridden},
                                  {"overridden_failures", result.overriddenFailures}};
        record.provenanceJson = json_text::dump(provenance);
        record.state = telemetry::historyState(result.headRun.state);
        record.startedNs = result.headRun.startedNs != 0 ? result.headRun.startedNs : unixNowNs();
        record.endedNs = result.headRun.endedNs;
        record.nodes.push_back(request.head);
        record.nodes.insert(record.nodes.end(), request.workers.begin(), request.workers.end());
        record.message = result.headRun.message;
        if (Status s = (*history)->upsertRun(record); !s.ok()) {
            return s;
        }
    }
    auto stored = (*history)->ingest(eventsBatch(runId, result.events));
    if (!stored.ok()) {
        return Error{stored.error()};
    }
    return {};
}

Status recordStop(const std::string& historyPath, const std::string& runId,
                  const StopResult& result) {
    auto history = openHistory(historyPath);
    if (!history.ok()) {
        return Error{history.error()};
    }
    const RunId id{runId};
    auto stored = (*history)->ingest(eventsBatch(id, result.events));
    if (!stored.ok()) {
        return Error{stored.error()};
    }
    for (const auto& e : result.events) {
        if (e.step == DispatchStep::StopRun && e.ok) {
            auto run = (*history)->run(id);
            if (run.ok() && *run && (*run)->state == db::RunState::Running) {
                return (*history)->updateRunState(id, db::RunState::Stopped, unixNowNs(),
                                                  "stopped by runplanectl dispatch stop");
            }
        }
    }
    return {};
}

}  // namespace runplane::control
