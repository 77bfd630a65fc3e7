// JSON documents for `runplanectl validate/plan --json`. nlohmann_json stays in this file.

#include <nlohmann/json.hpp>

#include "backend/plan/planner.h"

namespace runplane::plan {
namespace {

using nlohmann::json;

json findingJson(const Finding& f) {
    json j = {{"severity", toString(f.severity)},
              {"rule", f.ruleId},
              {"field", f.fieldPath},
              {"message", f.message},
              {"fix", f.fixHint}};
    if (f.loc.known()) {
        j["line"] = f.loc.line;
        j["column"] = f.loc.column;
    }
    return j;
}

json phaseJson(const PhaseMemory& pm) {
    json items = json::array();
    for (const auto& item : pm.items()) {
        items.push_back({{"component", toString(item.component)},
                         {"bytes", item.bytes},
                         {"count", item.count},
                         {"unit_bytes", item.unitBytes},
                         {"capped", item.capped},
                         {"fixed_budget", isFixedBudget(item.component)},
                         {"formula", formulaOf(item.component)},
                         {"value", describe(item)}});
    }
    double fixed = 0;
    for (const auto& item : pm.items()) {
        fixed += isFixedBudget(item.component) ? item.bytes : 0.0;
    }
    return {{"total_bytes", pm.total()}, {"fixed_budget_bytes", fixed}, {"components", items}};
}

json phasesJson(const std::array<PhaseMemory, kPhaseCount>& phases) {
    json out = json::object();
    for (Phase p : kPhases) {
        out[toString(p)] = phaseJson(phases[std::size_t(p)]);
    }
    return out;
}

}  // namespace

std::string findingsToJson(const std::vector<Finding>& findings, std::string_view file) {
    json list = json::array();
    for (const auto& f : findings) {
        list.push_back(findingJson(f));
    }
    return json{{"file", file}, {"errors", hasErrors(findings)}, {"findings", list}}.dump(
        2, ' ', false, json::error_handler_t::replace);
}

std::string parseErrorsToJson(const std::vector<ParseDiagnostic>& diagnostics,
                              std::string_view file) {
    json list = json::array();
    for (const auto& d : diagnostics) {
        json j = {{"field", d.path}, {"message", d.message}, {"text", d.format(file)}};
        if (d.loc.known()) {
            j["line"] = d.loc.line;
            j["column"] = d.loc.column;
        }
        list.push_back(std::move(j));
    }
    return json{
        {"file", file}, {"errors", true}, {"parse_errors", list}, {"findings", json::array()}}
        .dump(2, ' ', false, json::error_handler_t::replace);
}

std::string planToJson(const Plan& plan, std::string_view file) {
    json doc;
    doc["file"] = file;
    json findings = json::array();
    for (const auto& f : plan.findings) {
        findings.push_back(findingJson(f));
    }
    doc["findings"] = findings;
    doc["errors"] = hasErrors(plan.findings);
    const Layout& l = plan.layout;
    doc["layout"] = {{"nodes", l.nodes},
                     {"gpus_per_node", l.gpusPerNode},
                     {"world_size", l.worldSize},
                     {"tp", l.tp},
                     {"pp", l.pp},
                     {"cp", l.cp},
                     {"ep", l.ep},
                     {"etp", l.etp},
                     {"dp", l.dp},
                     {"expert_dp", l.expertDp},
                     {"rollout_gpus", l.rolloutGpus},
                     {"gpus_per_engine", l.gpusPerEngine},
                     {"engines", l.engines},
                     {"engine", toString(l.engine)},
                     {"engine_tp", l.engineTp},
                     {"engine_dp", l.engineDp},
                     {"engine_ep", l.engineEp},
                     {"engine_pp", l.enginePp},
                     {"engine_cross_node", l.engineCrossNode},
                     {"colocate", l.colocate}};
    if (plan.model.has_value()) {
        doc["model"] = {{"name", plan.model->name},
                        {"layers", plan.model->numLayers},
                        {"full_attention_layers", plan.model->numFullAttentionLayers()},
                        {"linear_attention_layers", plan.model->numLinearAttentionLayers()},
                        {"params_total", plan.params.total},
                        {"params_experts", plan.params.totalExperts},
                        {"params_dense", plan.params.totalDense},
                        {"params_active", plan.params.active}};
        const MemoryPlan& m = plan.memory;
        json nodes = json::array();
        for (const auto& n : m.nodes) {
            nodes.push_back({{"node", n.node},
                             {"trainer_ranks", n.trainerRanks},
                             {"engine_gpus", n.engineGpus},
                             {"peak_bytes", n.peakBytes},
                             {"peak_phase", toString(n.peakPhase)},
                             {"phases", phasesJson(n.phases)}});
        }
        json gpus = json::array();
        for (const auto& g : m.gpus) {
            gpus.push_back({{"label", g.label()},
                            {"trainer_stage", g.trainerStage},
                            {"engine", g.engine},
                            {"gpus", g.gpus},
                            {"example_gpu", g.exampleGpu},
                            {"peak_bytes", g.peakBytes},
                            {"peak_phase", toString(g.peakPhase)},
                            {"phases", phasesJson(g.phases)}});
        }
        doc["memory"] = {{"host_ram_bytes", m.hostRamBytes},
                         {"host_alarm_bytes", m.hostAlarmBytes},
                         {"gpu_bytes", m.gpuBytes},
                         {"peak_bytes", m.peakBytes},
                         {"peak_node", m.peakNode},
                         {"peak_phase", toString(m.peakPhase)},
                         {"trainer_backup_per_node_max", m.trainerBackupPerNodeMax},
                         {"engine_mirror_per_node_max", m.engineMirrorPerNodeMax},
                         {"clone_arena_per_rank", m.cloneArenaPerRank},
                         {"page_cache_per_node_max", m.pageCachePerNodeMax},
                         {"engine_weights_per_gpu", m.engineWeightsPerGpu},
                         {"nodes", nodes},
                         {"gpus", gpus}};
    }
    json slots = json::array();
    for (const auto& s : plan.topology.gpus) {
        json slot = {{"node", s.node}, {"gpu", s.localGpu}, {"global_gpu", s.globalGpu}};
        if (s.trainer.rank >= 0) {
            slot["trainer"] = {{"rank", s.trainer.rank}, {"tp", s.trainer.tp},
                               {"cp", s.trainer.cp},     {"dp", s.trainer.dp},
                               {"pp", s.trainer.pp},     {"ep", s.trainer.ep},
                               {"etp", s.trainer.etp},   {"expert_dp", s.trainer.expertDp}};
        }
        if (s.engine.engine >= 0) {
            slot["engine"] = {{"engine", s.engine.engine}, {"rank", s.engine.rank},
                              {"tp", s.engine.tp},         {"dp", s.engine.dp},
                              {"ep", s.engine.ep},         {"pp", s.engine.pp}};
        }
        slots.push_back(slot);
    }
    json engines = json::array();
    for (const auto& e : plan.topology.engines) {
        engines.push_back({{"engine", e.engine},
                           {"first_gpu", e.firstGpu},
                           {"gpus", e.numGpus},
                           {"first_node", e.firstNode},
                           {"last_node", e.lastNode}});
    }
    doc["topology"] = {{"gpus", slots}, {"engines", engines}};
    // Recipe strings may hold any bytes: replace invalid UTF-8 instead of throwing.
    return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace runplane::plan
