#pragma once
// The NCCL bus-bandwidth probe across one or more daemons (docs/nccl-health.md, "Across
// daemons"): one daemon measures its own GPUs; several form one NCCL world whose ncclUniqueId the
// controller fetches from the first daemon and hands to every daemon over gRPC (no MPI), each
// daemon's GPUs taking the next block of ranks. Results can be kept in the run history.

#include <chrono>
#include <string>
#include <vector>

#include "backend/control/node_client.h"
#include "backend/control/node_types.h"

namespace runplane::control {

struct NodeProbe {
    std::string address;
    std::string nodeId;      // from GetNode ("" when the daemon could not be reached)
    std::uint32_t gpus = 0;  // local GPUs (NVML inventory)
    std::uint32_t firstRank = 0;
    bool reachable = false;
    std::string error;  // RPC failure, or why the daemon measured nothing
    NcclProbeSummary report;
};

struct ClusterProbe {
    std::uint32_t worldSize = 0;  // 0: each daemon alone (a single address)
    std::vector<NodeProbe> nodes;
    std::string error;  // set when the world could not be formed (no GPUs, no unique id)
    /// True when every node answered with rows and every row passed the correctness check.
    bool measured() const;
};

/// Probes `addresses` (one: its local GPUs; several: one world over all their GPUs, concurrently,
/// every call bounded by `timeout`).
ClusterProbe probeNcclAcross(const std::vector<std::string>& addresses, const NcclProbeSpec& spec,
                             const NodeClientOptions& options, std::chrono::seconds timeout);

/// Stores the probe in the history as events of `runId` (may be empty): per node one
/// "nccl_probe" event (verdict as message; attrs: version, library, ranks, world size, first
/// rank, NCCL_* env, the raw report with GPU topology), and per measured row one "info" event
/// with collective, bytes, busbw/algbw and p50/p95 (what the Runs page's NCCL tab draws).
Status recordNcclProbe(const std::string& historyPath, const std::string& runId,
                       const ClusterProbe& probe);

}  // namespace runplane::control
