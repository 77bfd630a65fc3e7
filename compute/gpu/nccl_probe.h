#pragma once
// NCCL bus-bandwidth probe: spawns runplane-nccl-probe (CUDA, one process driving every local GPU)
// and parses its JSON. Method, formulas and thresholds: docs/nccl-health.md.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::compute {

/// What to measure. Multi-node: every node runs the probe with the same uniqueId (128 bytes from
/// createNcclUniqueId on the rank-0 node), the same worldSize and its own firstRank; each node's
/// local GPUs take ranks firstRank, firstRank+1, ... All nodes must pass identical sweep settings.
struct NcclProbeConfig {
    std::vector<std::string> collectives{
        "all_reduce"};  // all_reduce all_gather reduce_scatter all_to_all
    std::uint64_t minBytes = 8ull << 20, maxBytes = 1ull << 30;
    unsigned warmupIters = 5, iters = 20;
    std::string ncclLibrary;  // empty = the loader's libnccl.so.2
    std::string
        probeBinaryPath;  // empty = next to /proc/self/exe, then $RUNPLANE_BINARY_DIR/compute/gpu
    std::vector<unsigned char> uniqueId;
    unsigned worldSize = 0, firstRank = 0;
    /// Added to the inherited environment of the probe (e.g. NCCL_SOCKET_IFNAME).
    /// NCCL_NVLS_ENABLE=0 is set unless given here or already in the environment.
    std::map<std::string, std::string> env;
    unsigned timeoutSeconds = 900;
};

/// One (collective, size) measurement. Times are per iteration; bandwidths use the p50 time.
struct NcclProbeRow {
    std::string collective;
    std::uint64_t bytes = 0;
    double timeUsP50 = 0, timeUsP95 = 0, algbwGBps = 0, busbwGBps = 0;
    bool correct = false;
};

/// What the probe saw. unavailableReason is non-empty (and rows empty) when there is nothing to
/// measure: built without CUDA, no GPU, NCCL not loadable.
struct NcclProbeOutcome {
    std::string ncclVersion;
    unsigned ranks = 0;
    std::vector<NcclProbeRow> rows;
    std::string verdict;
    std::string unavailableReason;
    // Context for the history (added beyond the daemon's minimum).
    std::string ncclLibraryPath;                 // the file the probe actually loaded
    std::vector<std::string> gpuNames;           // local GPUs, in device order
    std::map<std::string, std::string> ncclEnv;  // NCCL_* variables the probe ran with
    std::string rawJson;                         // the probe's full report (topology, argv, ...)
};

/// Runs the probe and waits for it (at most config.timeoutSeconds). An Error is a bad config, a
/// probe that crashed or hung, or output that is not a probe report; "nothing to measure" is an
/// outcome with unavailableReason.
Result<NcclProbeOutcome> runNcclProbe(const NcclProbeConfig& config);

/// Parses the probe's JSON report (exposed for tests and for reports fetched from other nodes).
Result<NcclProbeOutcome> parseNcclProbeReport(std::string_view json);

/// busbw / algbw: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; 0 for an
/// unknown collective or n == 0.
double busBandwidthFactor(std::string_view collective, unsigned ranks);

/// Keeps the process that created an ncclUniqueId alive: that process hosts NCCL's bootstrap root,
/// which every rank contacts during init. Destroying the lease ends the process. Not copyable.
class NcclUniqueIdLease {
  public:
    NcclUniqueIdLease(int pid, std::vector<unsigned char> id);
    ~NcclUniqueIdLease();
    NcclUniqueIdLease(const NcclUniqueIdLease&) = delete;
    NcclUniqueIdLease& operator=(const NcclUniqueIdLease&) = delete;
    const std::vector<unsigned char>& id() const { return m_id; }
    std::string hex() const;
    /// The helper process hosting the bootstrap root.
    int pid() const { return m_pid; }

  private:
    int m_pid;
    std::vector<unsigned char> m_id;
};

/// Creates an ncclUniqueId on this node with `runplane-nccl-probe --print-unique-id`; the helper
/// stays alive (hosting the bootstrap root) until the lease is destroyed or `hold` has passed.
Result<std::unique_ptr<NcclUniqueIdLease>> createNcclUniqueId(const NcclProbeConfig& config,
                                                              std::chrono::seconds hold);

/// 256 hex digits <-> 128 bytes; Error names the offending position.
Result<std::vector<unsigned char>> parseNcclUniqueIdHex(std::string_view hex);
std::string formatNcclUniqueIdHex(const std::vector<unsigned char>& id);

}  // namespace runplane::compute
