#pragma once
// What the run view draws about who holds the memory and how the run went, per process (issues
// 43 and 42), as plain values read from the history on a worker thread:
// - memory by role per node, stacked (trainer, rollout, router, Ray workers, Ray object store,
//   driver, page cache, other; a role-table row's own role too), with the plan's budget per role
//   and phase beside it;
// - the run's alert-level failure events (OOM of every kind, crash, NCCL error, weight-sync
//   failure) as markers;
// - a phase lane per rank / actor from the phase events' pid, actor and rank attributes.
// Formulas in docs/gui.md, "Memory by role", "Failure markers" and "Phase lanes".

#include <QColor>
#include <QString>
#include <QStringList>

#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "common/result.h"
#include "db/history/history.h"
#include "gui/models/series_data.h"

namespace runplane::plan {
class ModelCatalog;
}

namespace runplane::gui {

class SeriesCache;

/// One layer of the memory-by-role stack: the row of a table, not a branch in code. A layer is
/// the series `role.<role>.<leaf>` (node-level), or a host series (page cache); its budget is the
/// plan's line of plan::planBesideMeasured named `budgetRole` ("" = the plan has none).
struct RoleLayerRow {
    const char* key;         // stable key, also the colour's: "trainer", "object_store", ...
    const char* label;       // legend / hover text
    const char* series;      // the history series
    const char* processes;   // its process-count series ("" = none)
    const char* budgetRole;  // plan::RoleLine::role, "" = not planned
    unsigned rgb;            // its colour, whatever else is shown
};
/// The layers, bottom to top.
std::span<const RoleLayerRow> roleLayerRows();
/// A layer's colour: the table's, or for a role the table does not know (a --role-table row's
/// own role) one derived from its name alone, so it too keeps its colour across runs and nodes.
QColor roleColor(const QString& key);

struct RoleLayer {
    QString key;
    QString label;
    QColor color;
    std::vector<double> bytes;      // per point of the stack's grid
    std::vector<double> processes;  // per point; NaN where the layer has no process count
    std::vector<double> budget;     // per point, the plan's bytes in the phase then; NaN = none
    bool planned() const {
        for (double b : budget) {
            if (!std::isnan(b)) {
                return true;
            }
        }
        return false;
    }
};

/// One node's stack on one time grid (seconds since the epoch).
struct NodeRoleStack {
    QString nodeId;
    std::vector<double> t;
    std::vector<RoleLayer> layers;  // bottom to top; only layers with samples
    /// Top of layer k at point i: the sum of layers 0..k.
    double top(std::size_t k, std::size_t i) const;
    /// The budget line of layer k at point i (docs/gui.md): the layers 0..k summed with the
    /// plan's bytes where a layer has a plan and its measured bytes where it has none; NaN when
    /// layer k itself has no plan at that point.
    double budgetTop(std::size_t k, std::size_t i) const;
    /// The layer under (x, y bytes), -1 if none; i = the grid point nearest x.
    int layerAt(double x, double y, std::size_t* pointIndex = nullptr) const;
    /// "trainer: 1.23 GB, 3 processes (plan 2.00 GB in train)" for the layer under (x, y).
    QString hoverText(double x, double y, const std::vector<PhaseInterval>& phases) const;
};

/// Alert-level failure kinds (docs/gui.md, "Failure markers"): every OOM, crash, nccl_error,
/// weight_sync_failure.
bool isAlertFailure(const QString& kind);

struct FailureMarker {
    double t = 0;
    QString nodeId;
    QString kind;
    QString message;  // the event's one-line summary (attrs.summary), else its message
};

struct LaneSpan {
    QString phase;
    double t0 = 0;
    double t1 = 0;
    bool open = false;  // still in force at the end (no later phase event of its process)
};

/// The phases of one process of the run.
struct PhaseLane {
    QString nodeId;
    QString rank;   // torchrun's rank, "" if none
    QString actor;  // Ray's actor class, "" if none
    QString pid;    // the process id the line was printed by, "" if none
    QString label;  // "node-a rank 3", "node-a MegatronTrainRayActor pid 32167", "node-a run"
    std::vector<LaneSpan> spans;
    bool stuck = false;  // its open phase lasts beyond 2 x that phase's median (docs/gui.md)
    QString note;        // "stuck in rollout for 12 s (median 2 s)"
};

/// Lanes from the run's phase events (any order); `endT` closes the open spans.
std::vector<PhaseLane> phaseLanes(const std::vector<db::EventRecord>& events, double endT);

/// Failure markers among the run's events, in time order.
std::vector<FailureMarker> failureMarkers(const std::vector<db::EventRecord>& events);

/// Everything the role tabs of a run view show.
struct RunRoleData {
    std::vector<NodeRoleStack> nodes;  // the run's nodes that have role series, in run order
    std::vector<FailureMarker> failures;
    std::vector<PhaseLane> lanes;
    QStringList warnings;
};

struct RoleQuery {
    QStringList nodes;  // the run's nodes, in order (plan node i = the run's i-th node)
    QString recipeYaml;
    double t0 = 0;
    double t1 = 0;
    double endT = 0;  // the run's end, else now
    int maxBuckets = 1000;
    std::vector<PhaseInterval> phases;  // the run's phases (for the budget per phase)
};

/// Reads the role series of the run's nodes over [t0, t1] (through `cache` if given) and
/// derives the stacks, budgets, markers and lanes from them and `events` (the run's events).
std::shared_ptr<const RunRoleData> loadRunRoleData(db::History& history, const RoleQuery& query,
                                                   const std::vector<db::EventRecord>& events,
                                                   const plan::ModelCatalog* catalog,
                                                   SeriesCache* cache = nullptr);

}  // namespace runplane::gui
