#pragma once
// Host memory per daemon for the Cluster page (issue 46: "two unrelated daemons that both call
// their node `vm` were merged into one series"). A node's identity includes its daemon, as the
// history's spool incarnation does (docs/history.md "Node resets"): a node id one daemon of the
// page reports is read as the node's series (every incarnation: a restart with a new spool is
// the same machine); a node id several daemons report is read per daemon, each keeping only the
// samples of its own spool incarnation. Each series is keyed by its daemon's address (in
// PointSeries::nodeId). Worker thread (a HistoryReader job).

#include <QString>

#include <cstdint>
#include <vector>

#include "gui/models/history_queries.h"

namespace runplane::db {
class History;
}

namespace runplane::gui {

struct DaemonKey {
    QString address;
    QString nodeId;
    std::uint64_t incarnation = 0;  // the daemon's spool incarnation (GetNode), 0 = unknown
};

/// One host.mem.used_bytes series per daemon over [t0, t1] (seconds), in the order given;
/// daemons without samples are left out.
NodeMemoryResult loadDaemonHostMemory(db::History& history, const std::vector<DaemonKey>& daemons,
                                      double t0, double t1, int maxBuckets);

}  // namespace runplane::gui
