#pragma once
// The Cluster page's memory by role (issue 43): per node, the newest host memory split by role
// (the run view's layers: trainer, rollout engines, router, Ray object store, Ray workers, driver,
// page cache, other, and a role-table row's own role), and per GPU the memory NVML's per-process
// figures put into each role (gpu.<i>.role.<role>.mem.used_bytes). Read from the history on the
// HistoryReader's worker; plain values. Formulas in docs/gui.md, "Cluster: memory by role".

#include <QColor>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>
#include <vector>

namespace runplane::db {
class History;
}

namespace runplane::gui {

struct RoleSplitPart {
    QString key;    // the layer's key ("trainer", "object_store", "page_cache", a site's role)
    QString label;  // "rollout engines", ...
    QColor color;   // roleColor(key): the same as in the run view
    double bytes = 0;
    /// The plan's bytes for this part in the phase in progress: Σ over the node's live runs of
    /// their run-level role.<plan role>.planned_bytes (docs/gui.md, "Cluster: memory by role");
    /// NaN when no run plans it now.
    double plannedBytes = std::numeric_limits<double>::quiet_NaN();
    bool planned() const { return !std::isnan(plannedBytes); }
    /// Measured above the plan (only with a plan).
    bool overPlan() const { return planned() && bytes > plannedBytes; }
};

/// One bar: a node's host memory, or one GPU's memory.
struct RoleSplitRow {
    QString nodeId;
    int gpu = -1;                      // -1: the node's host memory; else the GPU's index
    QString label;                     // "node-a", "node-a GPU 3"
    std::vector<RoleSplitPart> parts;  // bottom to top, only parts with a sample
    double capacityBytes = -1;         // host.mem.total_bytes / gpu.<i>.mem.total_bytes; -1 unknown
    double usedBytes = -1;             // host.mem.used_bytes / gpu.<i>.mem.used_bytes; -1 unknown
    double t = 0;                      // the newest sample's time, seconds since the epoch
    double sum() const;
};

struct ClusterRoleSplit {
    std::vector<RoleSplitRow> hosts;  // in the order of the node ids given
    std::vector<RoleSplitRow> gpus;   // per node in that order, GPUs by index
    QString error;                    // a read failed (the rows are what could be read)
};

/// The newest sample of every node-level role series of `nodeIds` not older than `sinceT`
/// (seconds; older samples are not the current split and are left out).
ClusterRoleSplit loadClusterRoleSplit(db::History& history, const QStringList& nodeIds,
                                      double sinceT);

}  // namespace runplane::gui
