// A run's diagnosis across its nodes, stored with the run (diagnose.h). Opens its own channel
// per node with the same security rule as the other control RPCs: plaintext only to loopback,
// TLS when a root certificate is given, bearer token as metadata.
#include "backend/control/diagnose.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "backend/control/agent_channel.h"
#include "backend/plan/recipe.h"
#include "db/history/history.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::control {
namespace {

namespace dx = runplane::diagnosis;
using Clock = std::chrono::steady_clock;

std::int64_t nowUnixNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

dx::NodeDiagnosis diagnoseOne(const std::string& address, const DiagnoseSpec& spec) {
    dx::NodeDiagnosis failed;
    failed.address = address;
    failed.runId = spec.runId.value();
    auto stub = makeAgentStub(address, spec.client, 64 << 20);
    if (!stub) {
        failed.error = stub.error();
        return failed;
    }
    v1::DiagnoseRequest req;
    req.set_run_id(spec.runId.value());
    req.set_native(spec.native);
    req.set_timeout_ms(static_cast<std::uint32_t>(spec.collectTimeout.count()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + spec.callTimeout);
    if (!spec.client.bearerToken.empty()) {
        context.AddMetadata("authorization", "Bearer " + spec.client.bearerToken);
    }
    v1::DiagnoseReport resp;
    const grpc::Status st = (*stub)->Diagnose(&context, req, &resp);
    if (!st.ok()) {
        failed.error = rpcFailure(address, "Diagnose", static_cast<RpcCode>(st.error_code()),
                                  st.error_message())
                           .message;
        return failed;
    }
    const auto j = nlohmann::json::parse(resp.json(), nullptr, false);
    if (j.is_discarded()) {
        failed.error = "the daemon at " + address + " sent a diagnosis that is not JSON";
        return failed;
    }
    auto node = dx::nodeDiagnosisFromJson(j);
    if (!node) {
        failed.error = address + ": " + node.error();
        return failed;
    }
    node->address = address;
    return std::move(*node);
}

}  // namespace

dx::RunDiagnosis diagnoseAcross(const DiagnoseSpec& spec) {
    const auto t0 = Clock::now();
    dx::RunDiagnosis out;
    out.runId = spec.runId.value();
    out.trigger = spec.trigger;
    out.tUnixNs = nowUnixNs();
    out.nodes.resize(spec.addresses.size());
    std::vector<std::thread> threads;
    threads.reserve(spec.addresses.size());
    for (std::size_t i = 0; i < spec.addresses.size(); ++i) {
        threads.emplace_back([&, i] { out.nodes[i] = diagnoseOne(spec.addresses[i], spec); });
    }
    for (auto& t : threads) {
        t.join();
    }
    out.verdict = dx::judge(out.nodes);
    out.tookMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    return out;
}

Result<std::int64_t> storeDiagnosis(const std::string& historyPath,
                                    const dx::RunDiagnosis& diagnosis) {
    auto history = db::History::open(historyPath);
    if (!history) {
        return history.failure();
    }
    const std::string text = dx::boundedJsonText(diagnosis, kDiagnosisMaxDocumentBytes);
    return (*history)->addDiagnosis(RunId(diagnosis.runId), diagnosis.tUnixNs, diagnosis.trigger,
                                    diagnosis.verdict.headline, text);
}

Result<dx::RunDiagnosis> diagnoseAndStore(const std::string& historyPath,
                                          const DiagnoseSpec& spec) {
    dx::RunDiagnosis d = diagnoseAcross(spec);
    auto stored = storeDiagnosis(historyPath, d);
    if (!stored) {
        return Error{"diagnosis of run " + spec.runId.value() + " not stored: " + stored.error()};
    }
    return d;
}

Result<std::vector<std::string>> runNodeAddresses(const std::string& historyPath,
                                                  const RunId& runId) {
    auto history = db::History::open(historyPath);
    if (!history) {
        return history.failure();
    }
    auto run = (*history)->run(runId);
    if (!run) {
        return run.failure();
    }
    if (!*run) {
        return Error{historyPath + ": no run '" + runId.value() + "'", ErrorCode::NotFound};
    }
    auto nodes = (*history)->listNodes();
    if (!nodes) {
        return nodes.failure();
    }
    std::vector<std::string> out;
    for (const auto& entry : (*run)->nodes) {
        std::string address;
        for (const auto& n : *nodes) {
            if (n.nodeId.value() == entry) {
                address = n.address;
            }
        }
        if (address.empty() && entry.find(':') != std::string::npos) {
            address = entry;  // dispatch records addresses
        }
        if (!address.empty() && std::find(out.begin(), out.end(), address) == out.end()) {
            out.push_back(address);
        }
    }
    return out;
}

namespace {

Result<std::vector<std::pair<std::int64_t, std::string>>> phaseEvents(db::History& history,
                                                                      const RunId& runId) {
    db::EventFilter filter;
    filter.runId = runId;
    filter.kind = "phase";
    filter.limit = 100000;
    auto events = history.listEvents(filter);
    if (!events) {
        return events.failure();
    }
    // Occurrences, not markers (docs/diagnosis.md "Phase overrun"): a timer's end edge closes
    // the phase it ends ("done", which phaseSpans skips); the same phase announced again by
    // another process (pid, actor, rank) while it is open is the same occurrence (every rank
    // prints its marker), by the same process a new one.
    std::vector<std::pair<std::int64_t, std::string>> out;
    std::string openPhase;
    std::string openBy;
    for (const auto& e : *events) {
        auto it = e.attrs.find("phase");
        if (it == e.attrs.end() || !it->second.is_string()) {
            continue;
        }
        const std::string phase = it->second.get<std::string>();
        const std::string by = db::attrText(e.attrs, "pid") + "/" + db::attrText(e.attrs, "actor") +
                               "/" + db::attrText(e.attrs, "rank");
        if (db::attrText(e.attrs, "edge") == "end") {
            if (!openPhase.empty() && phase == openPhase) {
                out.emplace_back(e.tNs, "done");
                openPhase.clear();
            }
            continue;
        }
        if (!openPhase.empty() && phase == openPhase && by != openBy && by != "//" &&
            openBy != "//") {
            continue;
        }
        out.emplace_back(e.tNs, phase);
        openPhase = phase == "done" ? std::string() : phase;
        openBy = by;
    }
    return out;
}

}  // namespace

std::optional<double> expectedPhaseSeconds(const std::string& recipeYaml,
                                           const std::string& phase) {
    if (recipeYaml.find_first_not_of(" \t\r\n") == std::string::npos) {
        return std::nullopt;
    }
    auto recipe = plan::parseRecipe(recipeYaml, "recipe snapshot");
    if (!recipe) {
        return std::nullopt;
    }
    for (const auto& [name, seconds] : recipe->analysis.phaseSeconds) {
        if (name == phase) {
            return seconds;
        }
    }
    return std::nullopt;
}

Result<std::optional<PhaseOverrun>> checkPhaseOverrun(const std::string& historyPath,
                                                      const RunId& runId, std::int64_t nowNs,
                                                      const dx::PhaseRule& rule) {
    auto history = db::History::open(historyPath);
    if (!history) {
        return history.failure();
    }
    auto run = (*history)->run(runId);
    if (!run) {
        return run.failure();
    }
    if (!*run || (*run)->endedNs != 0) {
        return std::optional<PhaseOverrun>();
    }
    auto own = phaseEvents(**history, runId);
    if (!own) {
        return own.failure();
    }
    const auto spans = dx::phaseSpans(*own, 0);
    if (spans.empty() || spans.back().endNs != 0) {
        return std::optional<PhaseOverrun>();
    }
    const auto& current = spans.back();
    // The run's own earlier occurrences of the phase (an RL loop repeats rollout and train).
    std::vector<double> past;
    for (std::size_t i = 0; i + 1 < spans.size(); ++i) {
        if (spans[i].phase == current.phase && spans[i].endNs > spans[i].startNs) {
            past.push_back(spans[i].seconds());
        }
    }
    const std::size_t ownCount = past.size();
    auto runs = (*history)->listRuns();
    if (!runs) {
        return runs.failure();
    }
    for (const auto& r : *runs) {
        if (r.id == runId || r.recipeYaml.empty() || r.recipeYaml != (*run)->recipeYaml) {
            continue;
        }
        auto events = phaseEvents(**history, r.id);
        if (!events) {
            return events.failure();
        }
        for (const auto& s : dx::phaseSpans(*events, r.endedNs)) {
            if (s.phase == current.phase && s.endNs > s.startNs) {
                past.push_back(s.seconds());
            }
        }
    }
    auto limit = dx::phaseLimit(past, rule);
    if (!limit) {
        // Too little history of the phase: the plan's expectation, when the recipe declares one
        // (analysis.phase_seconds; docs/diagnosis.md "Phase overrun").
        if (const auto expected = expectedPhaseSeconds((*run)->recipeYaml, current.phase)) {
            limit = dx::planPhaseLimit(*expected, past.size(), rule);
        }
    }
    const double elapsed = static_cast<double>(nowNs - current.startNs) / 1e9;
    if (!limit || elapsed <= limit->limitSeconds) {
        return std::optional<PhaseOverrun>();
    }
    return std::optional<PhaseOverrun>(
        PhaseOverrun{current.phase, current.startNs, ownCount, elapsed, *limit});
}

// ------------------------------------------------------------------ DiagnosisTrigger

DiagnosisTrigger::DiagnosisTrigger(Options options) : m_options(std::move(options)) {}

DiagnosisTrigger::~DiagnosisTrigger() {
    std::vector<std::thread> threads;
    {
        std::lock_guard lock(m_mutex);
        threads.swap(m_threads);
    }
    for (auto& t : threads) {
        t.join();
    }
}

std::string DiagnosisTrigger::triggerOf(const std::string& kind, const std::string& state) {
    if (kind == "stall") {
        return "stall";
    }
    if (kind == "run_state" && (state == "failed" || state == "RUN_STATE_FAILED")) {
        return "failed";
    }
    return {};
}

bool DiagnosisTrigger::onEvent(const RunId& runId, const std::string& kind,
                               const std::string& state) {
    if (runId.value().empty()) {
        return false;
    }
    const std::string trigger = triggerOf(kind, state);
    return !trigger.empty() && fire(runId, trigger);
}

std::vector<std::pair<RunId, std::string>> DiagnosisTrigger::onLiveEvents(
    const std::vector<LiveEvent>& events) {
    std::vector<std::pair<RunId, std::string>> started;
    for (const LiveEvent& e : events) {
        if (e.runId.value().empty()) {
            continue;
        }
        {
            std::lock_guard lock(m_mutex);
            m_seen.insert(e.runId.value());
        }
        const auto state = e.attrs.find("state");
        const std::string stateText = state != e.attrs.end() && state->second.is_string()
                                          ? state->second.get<std::string>()
                                          : std::string();
        if (onEvent(e.runId, e.kind, stateText)) {
            started.emplace_back(e.runId, triggerOf(e.kind, stateText));
        }
    }
    return started;
}

std::vector<std::pair<RunId, PhaseOverrun>> DiagnosisTrigger::checkPhases(std::int64_t nowNs) {
    std::vector<std::string> runs;
    {
        std::lock_guard lock(m_mutex);
        runs.assign(m_seen.begin(), m_seen.end());
    }
    std::vector<std::pair<RunId, PhaseOverrun>> fired;
    for (const std::string& run : runs) {
        if (auto o = checkPhase(RunId(run), nowNs)) {
            fired.emplace_back(RunId(run), std::move(*o));
        }
    }
    return fired;
}

std::string DiagnosisTrigger::describe(const PhaseOverrun& o) {
    char text[400];
    if (o.limit.fromPlan) {
        std::snprintf(text, sizeof text,
                      "phase '%s' has lasted %.0f s, past its limit %.0f s (expected %.0f s by "
                      "the recipe's analysis.phase_seconds; %zu earlier occurrence(s), too few "
                      "for a median)",
                      o.phase.c_str(), o.elapsedSeconds, o.limit.limitSeconds,
                      o.limit.medianSeconds, o.limit.samples);
        return text;
    }
    std::snprintf(text, sizeof text,
                  "phase '%s' has lasted %.0f s, past its limit %.0f s (median %.0f s of %zu "
                  "earlier, %zu in this run)",
                  o.phase.c_str(), o.elapsedSeconds, o.limit.limitSeconds, o.limit.medianSeconds,
                  o.limit.samples, o.ownSamples);
    return text;
}

std::optional<PhaseOverrun> DiagnosisTrigger::checkPhase(const RunId& runId, std::int64_t nowNs) {
    auto overrun = checkPhaseOverrun(m_options.historyPath, runId, nowNs, m_options.phaseRule);
    if (!overrun || !*overrun) {
        return std::nullopt;
    }
    const std::string episode =
        "phase_overrun:" + (*overrun)->phase + "@" + std::to_string((*overrun)->startNs);
    if (!fireOnce(runId, "phase_overrun", episode)) {
        return std::nullopt;
    }
    return *overrun;
}

bool DiagnosisTrigger::fire(const RunId& runId, const std::string& trigger) {
    return fireOnce(runId, trigger, trigger);
}

bool DiagnosisTrigger::fireOnce(const RunId& runId, const std::string& trigger,
                                const std::string& key) {
    std::lock_guard lock(m_mutex);
    if (!m_fired.insert({runId.value(), key}).second) {
        return false;
    }
    m_threads.emplace_back([this, runId, trigger] {
        DiagnoseSpec spec = m_options.base;
        spec.runId = runId;
        spec.trigger = trigger;
        if (m_options.addressesOf) {
            spec.addresses = m_options.addressesOf(runId);
        } else if (auto a = runNodeAddresses(m_options.historyPath, runId)) {
            spec.addresses = std::move(*a);
        }
        auto result = spec.addresses.empty()
                          ? Result<dx::RunDiagnosis>(
                                Error{"run " + runId.value() + ": no node address known"})
                          : diagnoseAndStore(m_options.historyPath, spec);
        if (m_options.onDone) {
            m_options.onDone(runId, trigger, result);
        }
    });
    return true;
}

}  // namespace runplane::control
