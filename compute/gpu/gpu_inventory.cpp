// NVML sampling through dlopen. One NvmlLibrary per library path lives for the whole process
// (NVML is initialised once and never unloaded); a mutex serialises samples of one library.
#include "compute/gpu/gpu_inventory.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "compute/gpu/nvml_api.h"

namespace runplane::compute {
namespace {

constexpr const char* kDefaultNvml = "libnvidia-ml.so.1";

class NvmlLibrary {
  public:
    explicit NvmlLibrary(const std::string& path) { load(path); }
    ~NvmlLibrary() {
        if (m_initialised && m_shutdown != nullptr)
            m_shutdown();
    }
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    GpuSnapshot sample() {
        std::lock_guard<std::mutex> lock(m_mutex);
        GpuSnapshot snapshot;
        if (!m_unavailable.empty()) {
            snapshot.unavailableReason = m_unavailable;
            return snapshot;
        }
        unsigned count = 0;
        const nvml::Return rc = m_getCount(&count);
        if (rc != nvml::kSuccess) {
            snapshot.unavailableReason =
                "NVML unavailable: nvmlDeviceGetCount_v2 failed: " + describe(rc);
            return snapshot;
        }
        if (count == 0) {
            snapshot.unavailableReason = "no GPU: NVML reports 0 devices";
            return snapshot;
        }
        registerEvents(count);
        drainXidEvents();
        for (unsigned index = 0; index < count; ++index) {
            snapshot.gpus.push_back(readDevice(index, snapshot.processes));
        }
        return snapshot;
    }

  private:
    template <typename Fn>
    Fn symbol(const char* name) {
        return reinterpret_cast<Fn>(::dlsym(m_handle, name));
    }

    void load(const std::string& path) {
        m_handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (m_handle == nullptr) {
            const char* error = ::dlerror();
            m_unavailable = "NVML unavailable: cannot load " + path + " (" +
                            (error != nullptr ? error : "unknown dlopen error") +
                            "); no NVIDIA driver on this host?";
            return;
        }
        m_init = symbol<nvml::InitFn>("nvmlInit_v2");
        m_shutdown = symbol<nvml::ShutdownFn>("nvmlShutdown");
        m_errorString = symbol<nvml::ErrorStringFn>("nvmlErrorString");
        m_getCount = symbol<nvml::DeviceGetCountFn>("nvmlDeviceGetCount_v2");
        m_getHandle = symbol<nvml::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
        m_getName = symbol<nvml::DeviceGetStringFn>("nvmlDeviceGetName");
        m_getUuid = symbol<nvml::DeviceGetStringFn>("nvmlDeviceGetUUID");
        m_getPci = symbol<nvml::DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3");
        m_getMemory = symbol<nvml::DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo");
        m_getUtilization =
            symbol<nvml::DeviceGetUtilizationRatesFn>("nvmlDeviceGetUtilizationRates");
        m_getEcc = symbol<nvml::DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors");
        m_getLinkState = symbol<nvml::DeviceGetNvLinkStateFn>("nvmlDeviceGetNvLinkState");
        m_getLinkErrors =
            symbol<nvml::DeviceGetNvLinkErrorCounterFn>("nvmlDeviceGetNvLinkErrorCounter");
        m_getClock = symbol<nvml::DeviceGetClockFn>("nvmlDeviceGetClockInfo");
        m_getMaxClock = symbol<nvml::DeviceGetClockFn>("nvmlDeviceGetMaxClockInfo");
        m_getTemperature = symbol<nvml::DeviceGetClockFn>("nvmlDeviceGetTemperature");
        m_getClockReasons =
            symbol<nvml::DeviceGetClockReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
        if (m_getClockReasons == nullptr) {  // drivers before NVML 12.4
            m_getClockReasons =
                symbol<nvml::DeviceGetClockReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
        }
        m_eventSetCreate = symbol<nvml::EventSetCreateFn>("nvmlEventSetCreate");
        m_registerEvents = symbol<nvml::DeviceRegisterEventsFn>("nvmlDeviceRegisterEvents");
        m_eventSetWait = symbol<nvml::EventSetWaitFn>("nvmlEventSetWait_v2");
        pickProcessApi();
        const char* missing = m_init == nullptr        ? "nvmlInit_v2"
                              : m_getCount == nullptr  ? "nvmlDeviceGetCount_v2"
                              : m_getHandle == nullptr ? "nvmlDeviceGetHandleByIndex_v2"
                              : m_getMemory == nullptr ? "nvmlDeviceGetMemoryInfo"
                                                       : nullptr;
        if (missing != nullptr) {
            m_unavailable =
                "NVML unavailable: " + path + " has no " + missing + " (driver too old?)";
            return;
        }
        const nvml::Return rc = m_init();
        if (rc != nvml::kSuccess) {
            m_unavailable = "NVML unavailable: nvmlInit_v2 failed: " + describe(rc);
            return;
        }
        m_initialised = true;
    }

    // nvmlDeviceGetComputeRunningProcesses_v3 fills 24-byte entries on current drivers; drivers
    // that have nvmlDeviceGetConfComputeMemSizeInfo but not nvmlDeviceGetRunningProcessDetailList
    // (a short-lived generation) fill 32-byte entries (+usedGpuCcProtectedMemory).
    void pickProcessApi() {
        if (auto v3 =
                symbol<nvml::DeviceGetProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3")) {
            m_getProcesses = v3;
            const bool ccLayout =
                ::dlsym(m_handle, "nvmlDeviceGetConfComputeMemSizeInfo") != nullptr &&
                ::dlsym(m_handle, "nvmlDeviceGetRunningProcessDetailList") == nullptr;
            m_processStride = ccLayout ? sizeof(nvml::ProcessInfoV3) : sizeof(nvml::ProcessInfoV2);
        } else if (auto v2 = symbol<nvml::DeviceGetProcessesFn>(
                       "nvmlDeviceGetComputeRunningProcesses_v2")) {
            m_getProcesses = v2;
            m_processStride = sizeof(nvml::ProcessInfoV2);
        } else if (auto v1 =
                       symbol<nvml::DeviceGetProcessesFn>("nvmlDeviceGetComputeRunningProcesses")) {
            m_getProcesses = v1;
            m_processStride = 16;  // {pid, usedGpuMemory}
        }
    }

    std::string describe(nvml::Return rc) const {
        std::string text = m_errorString != nullptr ? m_errorString(rc) : "NVML error";
        return text + " (code " + std::to_string(rc) + ")";
    }

    void registerEvents(unsigned count) {
        if (m_eventsTried || m_eventSetCreate == nullptr || m_registerEvents == nullptr ||
            m_eventSetWait == nullptr) {
            return;
        }
        m_eventsTried = true;
        if (m_eventSetCreate(&m_events) != nvml::kSuccess) {
            m_events = nullptr;
            return;
        }
        for (unsigned index = 0; index < count; ++index) {
            nvml::Device device = nullptr;
            if (m_getHandle(index, &device) == nvml::kSuccess) {
                m_registerEvents(device, nvml::kEventXidCriticalError, m_events);  // best effort
            }
        }
    }

    void drainXidEvents() {
        if (m_events == nullptr)
            return;
        for (int guard = 0; guard < 1024; ++guard) {
            nvml::EventData data{};
            if (m_eventSetWait(m_events, &data, 0) != nvml::kSuccess)
                break;
            if (data.eventType == nvml::kEventXidCriticalError) {
                m_lastXid[data.device] = static_cast<std::int64_t>(data.eventData);
            }
        }
    }

    GpuDevice readDevice(unsigned index, std::vector<GpuProcess>& processes) {
        GpuDevice gpu;
        gpu.index = index;
        nvml::Device device = nullptr;
        nvml::Return rc = m_getHandle(index, &device);
        if (rc != nvml::kSuccess) {
            gpu.error = "nvmlDeviceGetHandleByIndex_v2 failed: " + describe(rc);
            return gpu;
        }
        char text[nvml::kNameBufferSize] = {};
        if (m_getName != nullptr && m_getName(device, text, sizeof text) == nvml::kSuccess) {
            gpu.name = text;
        }
        std::memset(text, 0, sizeof text);
        if (m_getUuid != nullptr && m_getUuid(device, text, sizeof text) == nvml::kSuccess) {
            gpu.uuid = text;
        }
        if (m_getPci != nullptr) {
            nvml::PciInfo pci{};
            if (m_getPci(device, &pci) == nvml::kSuccess) {
                pci.busId[sizeof pci.busId - 1] = '\0';
                gpu.pciBusId = pci.busId;
            }
        }
        nvml::Memory memory{};
        rc = m_getMemory(device, &memory);
        if (rc == nvml::kSuccess) {
            gpu.memoryTotalBytes = memory.total;
            gpu.memoryUsedBytes = memory.used;
        } else {
            gpu.error = "nvmlDeviceGetMemoryInfo failed: " + describe(rc);
        }
        nvml::Utilization utilization{};
        if (m_getUtilization != nullptr &&
            m_getUtilization(device, &utilization) == nvml::kSuccess) {
            gpu.utilizationPercent = utilization.gpu;
        }
        unsigned long long ecc = 0;
        if (m_getEcc != nullptr && m_getEcc(device, nvml::kMemoryErrorUncorrected,
                                            nvml::kVolatileEcc, &ecc) == nvml::kSuccess) {
            gpu.eccUncorrected = ecc;
        }
        if (const auto it = m_lastXid.find(device); it != m_lastXid.end()) {
            gpu.lastXid = it->second;
        }
        gpu.nvlinkReplayErrors = readNvlinkReplays(device);
        readClocks(device, gpu);
        readProcesses(index, device, processes);
        return gpu;
    }

    // SM clock, its maximum, the clock event reasons and the temperature (each best effort).
    void readClocks(nvml::Device device, GpuDevice& gpu) {
        unsigned value = 0;
        if (m_getClock != nullptr && m_getClock(device, nvml::kClockSm, &value) == nvml::kSuccess)
            gpu.smClockMHz = value;
        if (m_getMaxClock != nullptr &&
            m_getMaxClock(device, nvml::kClockSm, &value) == nvml::kSuccess)
            gpu.smClockMaxMHz = value;
        unsigned long long reasons = 0;
        if (m_getClockReasons != nullptr && m_getClockReasons(device, &reasons) == nvml::kSuccess)
            gpu.clockEventReasons = static_cast<std::int64_t>(reasons);
        if (m_getTemperature != nullptr &&
            m_getTemperature(device, nvml::kTemperatureGpu, &value) == nvml::kSuccess)
            gpu.temperatureC = static_cast<int>(value);
    }

    std::int64_t readNvlinkReplays(nvml::Device device) {
        if (m_getLinkState == nullptr || m_getLinkErrors == nullptr)
            return -1;
        std::int64_t total = -1;
        for (unsigned link = 0; link < nvml::kMaxNvLinks; ++link) {
            int active = 0;
            if (m_getLinkState(device, link, &active) != nvml::kSuccess || active == 0)
                continue;
            unsigned long long replays = 0;
            if (m_getLinkErrors(device, link, nvml::kNvLinkErrorDlReplay, &replays) !=
                nvml::kSuccess) {
                continue;
            }
            total = (total < 0 ? 0 : total) + static_cast<std::int64_t>(replays);
        }
        return total;
    }

    void readProcesses(unsigned index, nvml::Device device, std::vector<GpuProcess>& processes) {
        if (m_getProcesses == nullptr)
            return;
        unsigned count = 0;
        nvml::Return rc = m_getProcesses(device, &count, nullptr);
        if (rc != nvml::kErrorInsufficientSize)
            return;  // success = no processes; else unreadable
        for (int attempt = 0; attempt < 3; ++attempt) {
            count = count * 2 + 8;  // room for processes that start in between
            std::vector<unsigned char> buffer(static_cast<std::size_t>(count) * m_processStride);
            rc = m_getProcesses(device, &count, buffer.data());
            if (rc == nvml::kErrorInsufficientSize)
                continue;
            if (rc != nvml::kSuccess)
                return;
            for (unsigned k = 0; k < count; ++k) {
                const unsigned char* entry =
                    buffer.data() + static_cast<std::size_t>(k) * m_processStride;
                unsigned pid = 0;
                unsigned long long used = 0;
                std::memcpy(&pid, entry, sizeof pid);
                std::memcpy(&used, entry + offsetof(nvml::ProcessInfoV2, usedGpuMemory),
                            sizeof used);
                GpuProcess process;
                process.gpuIndex = index;
                process.pid = static_cast<int>(pid);
                process.usedBytes = used == nvml::kValueNotAvailable ? 0 : used;
                processes.push_back(process);
            }
            return;
        }
    }

    std::mutex m_mutex;
    void* m_handle = nullptr;
    std::string m_unavailable;
    bool m_initialised = false;
    nvml::InitFn m_init = nullptr;
    nvml::ShutdownFn m_shutdown = nullptr;
    nvml::ErrorStringFn m_errorString = nullptr;
    nvml::DeviceGetCountFn m_getCount = nullptr;
    nvml::DeviceGetHandleByIndexFn m_getHandle = nullptr;
    nvml::DeviceGetStringFn m_getName = nullptr;
    nvml::DeviceGetStringFn m_getUuid = nullptr;
    nvml::DeviceGetPciInfoFn m_getPci = nullptr;
    nvml::DeviceGetMemoryInfoFn m_getMemory = nullptr;
    nvml::DeviceGetUtilizationRatesFn m_getUtilization = nullptr;
    nvml::DeviceGetProcessesFn m_getProcesses = nullptr;
    std::size_t m_processStride = sizeof(nvml::ProcessInfoV2);
    nvml::DeviceGetTotalEccErrorsFn m_getEcc = nullptr;
    nvml::DeviceGetNvLinkStateFn m_getLinkState = nullptr;
    nvml::DeviceGetNvLinkErrorCounterFn m_getLinkErrors = nullptr;
    nvml::DeviceGetClockFn m_getClock = nullptr;
    nvml::DeviceGetClockFn m_getMaxClock = nullptr;
    nvml::DeviceGetClockFn m_getTemperature = nullptr;
    nvml::DeviceGetClockReasonsFn m_getClockReasons = nullptr;
    nvml::EventSetCreateFn m_eventSetCreate = nullptr;
    nvml::DeviceRegisterEventsFn m_registerEvents = nullptr;
    nvml::EventSetWaitFn m_eventSetWait = nullptr;
    bool m_eventsTried = false;
    nvml::EventSet m_events = nullptr;
    std::map<nvml::Device, std::int64_t> m_lastXid;
};

NvmlLibrary& libraryFor(const std::string& path) {
    static std::mutex mutex;
    static auto* libraries =
        new std::map<std::string, std::unique_ptr<NvmlLibrary>>();  // never freed:
    // samplers may still run on other threads during static destruction.
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = (*libraries)[path];
    if (!slot)
        slot = std::make_unique<NvmlLibrary>(path);
    return *slot;
}

}  // namespace

GpuSnapshot queryGpusFrom(const std::string& nvmlLibrary) {
    return libraryFor(nvmlLibrary).sample();
}

GpuSnapshot queryGpus() {
    return queryGpusFrom(kDefaultNvml);
}

}  // namespace runplane::compute
