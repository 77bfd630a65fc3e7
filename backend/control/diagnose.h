#pragma once
// A run's diagnosis across its nodes (issue #44, docs/diagnosis.md): Diagnose on every node's
// daemon at once (one thread per node, each call bounded), the verdict over what came back, and
// the diagnosis stored with the run in the history, readable after the nodes are gone. The
// triggers (on demand, a stall event, the run failing) call diagnoseAndStore; DiagnosisTrigger
// turns the live events a controller ingests into such calls.
// No gRPC or protobuf type appears here.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/control/node_client.h"
#include "backend/control/telemetry_ingestor.h"
#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/phase_rule.h"
#include "common/ids.h"
#include "common/result.h"

namespace runplane::control {

struct DiagnoseSpec {
    RunId runId;
    std::vector<std::string> addresses;  // daemon addresses HOST:PORT
    std::string trigger = "on_demand";
    bool native = false;  // py-spy --native
    /// Bound of each node's RAS exchange and of each stack (the daemon's own bound).
    std::chrono::milliseconds collectTimeout{8000};
    /// Deadline of each Diagnose call (> collectTimeout: the node collects in parallel).
    std::chrono::milliseconds callTimeout{14000};
    NodeClientOptions client;
};

/// Asks every address at once; a node that fails becomes a NodeDiagnosis with `error` set. The
/// verdict is judged over all of them. Never throws.
diagnosis::RunDiagnosis diagnoseAcross(const DiagnoseSpec& spec);

/// The stored form: at most this many bytes of JSON per diagnosis (boundedJsonText).
inline constexpr std::size_t kDiagnosisMaxDocumentBytes = 4u << 20;

/// Stores the diagnosis with its run (History::addDiagnosis). Errors name the file.
Result<std::int64_t> storeDiagnosis(const std::string& historyPath,
                                    const diagnosis::RunDiagnosis& diagnosis);

/// diagnoseAcross, then storeDiagnosis.
Result<diagnosis::RunDiagnosis> diagnoseAndStore(const std::string& historyPath,
                                                 const DiagnoseSpec& spec);

/// The daemon addresses of a run's nodes as the history knows them (the run's node ids looked up
/// in the nodes table; an entry that is already HOST:PORT is kept). Empty when none is known.
Result<std::vector<std::string>> runNodeAddresses(const std::string& historyPath,
                                                  const RunId& runId);

/// A run's current phase lasting past its limit (docs/diagnosis.md, "Triggers").
struct PhaseOverrun {
    std::string phase;
    std::int64_t startNs = 0;    // when this occurrence began (the episode's identity)
    std::size_t ownSamples = 0;  // of limit.samples, earlier occurrences in the run itself
    double elapsedSeconds = 0;
    diagnosis::PhaseLimit limit;
};

/// The recipe's expected duration of a phase (analysis.phase_seconds), nullopt when it declares
/// none or the recipe does not parse.
std::optional<double> expectedPhaseSeconds(const std::string& recipeYaml, const std::string& phase);

/// Whether the run's current phase (its last phase event) has lasted, at nowNs, longer than the
/// limit learned from the same phase's earlier occurrences: in the run itself, and in past runs
/// of the same recipe (identical recipe_yaml); with too few of them, from the recipe's expected
/// duration (expectedPhaseSeconds). nullopt: no current phase (a timer's end edge closes it),
/// too few earlier occurrences and no expectation, or within the limit.
Result<std::optional<PhaseOverrun>> checkPhaseOverrun(const std::string& historyPath,
                                                      const RunId& runId, std::int64_t nowNs,
                                                      const diagnosis::PhaseRule& rule = {});

/// Turns live events into diagnoses: a run's first `stall` event, and the run ending `failed`,
/// each start diagnoseAndStore on a thread of its own (at most one per run and trigger, and one
/// run at a time per trigger kind is never blocked by another). Call onEvent from any thread
/// (e.g. ControllerCallbacks::onTelemetry); it returns at once.
class DiagnosisTrigger {
  public:
    struct Options {
        std::string historyPath;
        DiagnoseSpec base;  // client, timeouts, native; runId/addresses/trigger are filled in
        /// The addresses of a run (default: runNodeAddresses of the history).
        std::function<std::vector<std::string>(const RunId&)> addressesOf;
        /// Called with each stored diagnosis (or the error), on the trigger's thread.
        std::function<void(const RunId&, const std::string& trigger,
                           const Result<diagnosis::RunDiagnosis>&)>
            onDone;
        /// The phase-overrun rule checkPhase applies.
        diagnosis::PhaseRule phaseRule;
    };
    explicit DiagnosisTrigger(Options options);
    ~DiagnosisTrigger();  // waits for the diagnoses under way
    DiagnosisTrigger(const DiagnosisTrigger&) = delete;
    DiagnosisTrigger& operator=(const DiagnosisTrigger&) = delete;

    /// kind is the stored event kind ("stall", "run_state", ...); state the run's new state for
    /// a run_state event ("failed", ...). Returns true when it started a diagnosis.
    bool onEvent(const RunId& runId, const std::string& kind, const std::string& state);
    /// Starts a diagnosis with this trigger name (e.g. "phase_overrun") unless one ran already.
    bool fire(const RunId& runId, const std::string& trigger);
    /// checkPhaseOverrun at nowNs; fires "phase_overrun" when the run's phase is past its limit,
    /// once per episode (one occurrence of the phase: a later occurrence that overruns fires
    /// again). Returns the overrun when it fired. For the caller's periodic tick (runplanectl
    /// watch: every --phase-check-seconds for each run it has seen).
    std::optional<PhaseOverrun> checkPhase(const RunId& runId, std::int64_t nowNs);

    /// What every ingesting process does with a committed batch (TelemetryUpdate::events; the
    /// CLI's watch and the GUI's controller both call this): each run an event names is
    /// remembered for checkPhases, and onEvent gets the event's kind and its `state` attribute.
    /// Returns the diagnoses it started, as (run, trigger). Any thread; returns at once.
    std::vector<std::pair<RunId, std::string>> onLiveEvents(const std::vector<LiveEvent>& events);
    /// checkPhase at nowNs for every run onLiveEvents has seen; the overruns that fired.
    std::vector<std::pair<RunId, PhaseOverrun>> checkPhases(std::int64_t nowNs);
    /// The trigger an event starts ("stall", "failed"), or "" for none.
    static std::string triggerOf(const std::string& kind, const std::string& state);
    /// "phase 'train' has lasted 95 s, past its limit 30 s (median 10 s of 4 earlier, 4 in this
    /// run)": the line both ingesters show when an overrun fires.
    static std::string describe(const PhaseOverrun& overrun);

  private:
    bool fireOnce(const RunId& runId, const std::string& trigger, const std::string& key);

    Options m_options;
    std::mutex m_mutex;
    std::set<std::pair<std::string, std::string>> m_fired;  // (run, trigger or episode key)
    std::set<std::string> m_seen;                           // runs onLiveEvents saw
    std::vector<std::thread> m_threads;
};

}  // namespace runplane::control
