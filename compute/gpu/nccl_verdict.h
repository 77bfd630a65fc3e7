#pragma once
// Healthy / degraded verdict of a probe against expected bus bandwidth per hardware profile.
// Dependency-free: compiled into runplane_compute and into runplane-nccl-probe (nvcc, C++17).
// Profiles, tolerance and every formula: docs/nccl-health.md.

#include <string>
#include <vector>

#include "compute/gpu/nccl_probe.h"

namespace runplane::compute {

/// An RDMA NIC port as /sys/class/infiniband shows it.
struct NcclNic {
    std::string name;       // e.g. "mlx5_0/1"
    std::string linkLayer;  // "InfiniBand" or "Ethernet" (RoCE)
    double rateGbps = 0;    // line rate, e.g. 400 for NDR
    bool active = false;
};

/// Everything the verdict looks at.
struct NcclVerdictInput {
    std::vector<NcclProbeRow> rows;
    unsigned worldSize = 0;   // ranks in the communicator
    unsigned localRanks = 0;  // ranks (GPUs) on this node
    std::vector<std::string> gpuNames;
    std::vector<NcclNic> nics;
};

/// status is one of "healthy", "degraded", "failed", "n/a", "not judged"; text is the one-line
/// verdict ("<status>: <why>") stored with the probe.
struct NcclVerdict {
    std::string status;
    std::string text;
    std::string profile;
    double peakBusbwGBps = 0;
    double expectedLowGBps = 0, expectedHighGBps = 0;
    double thresholdGBps = 0;
};

/// A measurement counts as healthy at or above this fraction of the profile's expected low end.
inline constexpr double kNcclHealthyFraction = 0.9;
/// Only rows at least this large are judged: smaller messages do not reach peak bandwidth.
inline constexpr unsigned long long kNcclJudgeMinBytes = 256ull << 20;

NcclVerdict judgeNcclProbe(const NcclVerdictInput& input);

/// True for H100/H200 SXM parts (NVSwitch baseboards): name has H100 or H200 and not PCIe/NVL.
bool isNvswitchHopperName(const std::string& gpuName);

/// Every RDMA port under `sysfsRoot` (normally /sys/class/infiniband): <dev>/ports/<n>/{state,
/// rate, link_layer}. Empty when the directory does not exist. Sorted by name.
std::vector<NcclNic> scanRdmaNics(const std::string& sysfsRoot = "/sys/class/infiniband");

}  // namespace runplane::compute
