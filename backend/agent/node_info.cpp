#include "backend/agent/node_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <map>

#include "backend/agent/host_memory.h"
#include "backend/agent/proc_tree.h"
#include "common/build_info.h"
#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/nccl_resolve.h"

extern char** environ;

namespace runplane::agent {

const char* daemonVersion() {
    return buildInfo().version;
}

std::uint64_t bootIdHash() {
    auto text = readSmallFile("/proc/sys/kernel/random/boot_id", 128);
    if (!text) {
        return 0;
    }
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : *text) {
        if (c == '\n') {
            continue;
        }
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

NodeInventory::NodeInventory(std::string nodeId, bool gpuTelemetry)
    : m_nodeId(std::move(nodeId)), m_gpuTelemetry(gpuTelemetry) {}

std::vector<v1::NcclLibrary> NodeInventory::resolveNccl(
    const std::vector<std::pair<std::string, std::string>>& env, const std::string& python) {
    std::vector<v1::NcclLibrary> out;
    compute::NcclResolveConfig cfg;
    if (env.empty()) {
        for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
            const std::string kv = *p;
            const auto eq = kv.find('=');
            if (eq != std::string::npos) {
                cfg.env[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
        }
    } else {
        for (const auto& [k, v] : env) {
            cfg.env[k] = v;
        }
    }
    cfg.python = python;
    for (const auto& lib : compute::resolveNcclLibraries(cfg)) {
        v1::NcclLibrary l;
        l.set_path(lib.path);
        switch (lib.source) {
            case compute::NcclSource::LdPreload:
                l.set_source(v1::NCCL_SOURCE_LD_PRELOAD);
                break;
            case compute::NcclSource::SglangNcclSoPath:
                l.set_source(v1::NCCL_SOURCE_SGLANG_NCCL_SO_PATH);
                break;
            case compute::NcclSource::PythonSitePackages:
                l.set_source(v1::NCCL_SOURCE_PYTHON_SITE_PACKAGES);
                break;
            case compute::NcclSource::LdLibraryPath:
                l.set_source(v1::NCCL_SOURCE_LD_LIBRARY_PATH);
                break;
            case compute::NcclSource::System:
                l.set_source(v1::NCCL_SOURCE_SYSTEM);
                break;
            case compute::NcclSource::CudaToolkit:
                l.set_source(v1::NCCL_SOURCE_CUDA_TOOLKIT);
                break;
        }
        l.set_version_code(lib.versionCode);
        l.set_version(lib.version);
        l.set_error(lib.error);
        l.set_selected(lib.selected);
        out.push_back(std::move(l));
    }
    return out;
}

v1::NodeInfo NodeInventory::collect() {
    v1::NodeInfo info;
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    info.set_hostname(host);
    utsname u{};
    if (::uname(&u) == 0) {
        info.set_cpu_arch(u.machine);
        info.set_kernel(std::string(u.sysname) + " " + u.release + " " + u.version);
    }
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    info.set_cpu_cores(cores > 0 ? static_cast<std::uint32_t>(cores) : 0);
    if (auto mem = readHostMemory()) {
        info.set_host_ram_bytes(mem->totalBytes);
    }
    info.set_daemon_version(daemonVersion());
    info.set_build_commit(buildInfo().commit);
    info.set_build_date(buildInfo().date);
    info.set_protocol_version(kProtocolVersion);
    info.set_node_id(m_nodeId);
    info.set_boot_id_hash(bootIdHash());
    if (m_gpuTelemetry) {
        const compute::GpuSnapshot gs = compute::queryGpus();
        for (const auto& g : gs.gpus) {
            auto* gi = info.add_gpus();
            gi->set_index(g.index);
            gi->set_name(g.name);
            gi->set_uuid(g.uuid);
            gi->set_pci_bus_id(g.pciBusId);
            gi->set_memory_total_bytes(g.memoryTotalBytes);
            gi->set_memory_used_bytes(g.memoryUsedBytes);
            gi->set_utilization_percent(g.utilizationPercent);
        }
        if (gs.gpus.empty()) {
            info.set_gpus_unavailable_reason(gs.unavailableReason.empty() ? "no GPU found"
                                                                          : gs.unavailableReason);
        }
    } else {
        info.set_gpus_unavailable_reason("GPU telemetry disabled (--no-gpu)");
    }
    std::vector<v1::NcclLibrary> nccl;
    {
        std::lock_guard lock(m_mutex);
        const auto now = std::chrono::steady_clock::now();
        if (!m_ncclValid || now - m_ncclAt > std::chrono::seconds(60)) {
            m_ncclCache = resolveNccl({}, "");
            m_ncclAt = now;
            m_ncclValid = true;
        }
        nccl = m_ncclCache;
    }
    for (auto& l : nccl) {
        *info.add_nccl_libraries() = std::move(l);
    }
    return info;
}

}  // namespace runplane::agent
