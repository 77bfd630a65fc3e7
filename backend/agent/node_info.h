#pragma once
// GetNode's inventory: host facts (uname, cores, RAM, boot id), GPUs and NCCL libraries through
// runplane_compute. NCCL resolution spawns helper processes, so its result is cached for 60 s.
//
// Thread-safety: collect() may be called from any thread (the cache has its own mutex).

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// The daemon's version string ("0.1.0").
const char* daemonVersion();
inline constexpr std::uint32_t kProtocolVersion = 1;

/// FNV-1a 64 of /proc/sys/kernel/random/boot_id (0 when unreadable).
std::uint64_t bootIdHash();

class NodeInventory {
  public:
    NodeInventory(std::string nodeId, bool gpuTelemetry);
    v1::NodeInfo collect();
    /// NCCL candidates for an environment (empty map = the daemon's own). Never cached.
    static std::vector<v1::NcclLibrary> resolveNccl(
        const std::vector<std::pair<std::string, std::string>>& env, const std::string& python);

  private:
    std::string m_nodeId;
    bool m_gpuTelemetry;
    std::mutex m_mutex;
    std::vector<v1::NcclLibrary> m_ncclCache;
    std::chrono::steady_clock::time_point m_ncclAt{};
    bool m_ncclValid = false;
};

}  // namespace runplane::agent
