#pragma once
// gpu.distinct (issue 47, docs/dispatch.md "Who joined"): every daemon's preflight reports the
// UUIDs of the GPUs NVML sees on its host; two rows that share a UUID are one machine listed
// twice (two daemons on one host, or one daemon under two addresses), so a launch that counts
// them as two nodes would place twice the ranks on the same GPUs. Plain values, no gRPC.

#include <string>
#include <vector>

#include "backend/control/node_types.h"

namespace runplane::control {

struct PreflightRow;

/// The cross-node check over the reachable rows: PASS when no UUID is reported by two of them,
/// FAIL naming both nodes (address and hostname) and the shared UUIDs otherwise; SKIP when no
/// row reported a UUID (no NVML on the nodes, or daemons older than the gpu_uuids field).
PreflightCheckInfo gpuDistinctCheck(const std::vector<PreflightRow>& rows);

}  // namespace runplane::control
