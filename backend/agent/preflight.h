#pragma once
// The per-node pre-launch checks behind the Preflight RPC (docs/daemon.md, Preflight): GPUs,
// host RAM against the planned peak, the NCCL version gate, /etc/hosts, MASTER_ADDR, socket
// interfaces, shared paths, checkpoint trackers, free disk, Ray, stale processes. Each check is
// one PreflightCheck with a sentence carrying the numbers. The environment is injectable so
// tests can point the file-based checks at fixtures.

#include <functional>
#include <string>
#include <vector>

#include "backend/agent/preflight_master.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// Where the checks look. system() is the real machine.
struct PreflightEnvironment {
    std::string hostname;
    std::string hostsFile = "/etc/hosts";
    std::string netClassDir = "/sys/class/net";
    std::string meminfoPath = "/proc/meminfo";
    std::string defaultDiskPath = "/";
    /// GPU names (empty + reason when unavailable) and GPU-holding pids.
    std::function<void(std::vector<std::string>* names, std::vector<int>* gpuPids,
                       std::string* unavailableReason)>
        gpus;
    /// The UUIDs of the GPUs on this host ("GPU-…", NVML index order; empty when none or no
    /// NVML). Reported in the PreflightReport so the controller can tell two daemons on one
    /// machine apart from two machines (docs/dispatch.md, gpu.distinct).
    std::function<std::vector<std::string>()> gpuUuids;
    /// NCCL gate for an environment: pass/fail + message; empty function = unavailable.
    std::function<std::pair<bool, std::string>(
        const std::vector<std::pair<std::string, std::string>>& env, int minVersionCode)>
        ncclGate;
    /// `ray --version` on the run's PATH: exit code 0 + output, or the failure.
    std::function<std::pair<bool, std::string>(const std::string& path)> rayVersion;
    /// Process names (comm) by pid, for stale Ray process detection.
    std::function<std::vector<std::pair<int, std::string>>()> processes;
    /// Resolves MASTER_ADDR when it is a name (net.master_addr.resolves); empty function:
    /// getaddrinfo on this node, bounded in time (resolveBounded, preflight_master.h).
    std::function<Resolved(const std::string& name)> resolve;

    /// The real machine. gpuTelemetry false (`runplaned --no-gpu`): NVML is never loaded; no GPU
    /// names, pids or UUIDs, the reason says --no-gpu.
    static PreflightEnvironment system(bool gpuTelemetry = true);
};

v1::PreflightReport runPreflight(const v1::PreflightRequest& request,
                                 const PreflightEnvironment& env);

/// Hostnames that /etc/hosts maps to a loopback address (exposed for tests).
std::vector<std::string> loopbackHostnames(const std::string& hostsText);

}  // namespace runplane::agent
