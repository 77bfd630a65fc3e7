// A stand-in libnvidia-ml.so.1 for the NVML sampler tests. The structs are transcribed here from
// NVML's public ABI independently of compute/gpu/nvml_api.h. FAKE_NVML_VARIANT:
//   1 = current driver (24-byte process entries; has nvmlDeviceGetRunningProcessDetailList)
//   2 = the confidential-computing generation (32-byte entries from ..._v3)
//   3 = nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
//   4 = no devices
// FAKE_NVML_GPU0_PIDS="P1,P2,P3" (environment) names GPU 0's three processes instead of
// 101..103 (the role tests put real processes' pids there). FAKE_NVML_UUID_TAG="T" makes the
// UUIDs GPU-T-0000aaaa / GPU-T-1111bbbb (two fake machines that are not the same machine).
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

typedef struct FakeDevice* nvmlDevice_t;
typedef struct FakeEventSet* nvmlEventSet_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} ProcessV2;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} ProcessV3;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

static struct FakeDevice { int index; } g_devices[2] = {{0}, {1}};
static struct FakeEventSet { int pending; } g_events = {0};
static int g_registered = 0;

int nvmlInit_v2() {
    return FAKE_NVML_VARIANT == 3 ? 9 : 0;
}
int nvmlShutdown() {
    return 0;
}
const char* nvmlErrorString(int rc) {
    return rc == 9 ? "Driver Not Loaded" : "Fake Error";
}
int nvmlDeviceGetCount_v2(unsigned int* count) {
    *count = FAKE_NVML_VARIANT == 4 ? 0 : 2;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    if (index > 1)
        return 2;
    *device = &g_devices[index];
    return 0;
}
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
    std::strncpy(name, device->index == 0 ? "NVIDIA H200" : "NVIDIA H100 80GB HBM3", length);
    return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
    const char* base = device->index == 0 ? "0000aaaa" : "1111bbbb";
    const char* tag = std::getenv("FAKE_NVML_UUID_TAG");
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "GPU-%s%s%s", tag != nullptr ? tag : "",
                  tag != nullptr ? "-" : "", base);
    std::strncpy(uuid, buffer, length);
    return 0;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
    std::memset(pci, 0, sizeof *pci);
    std::strcpy(pci->busId, device->index == 0 ? "00000000:18:00.0" : "00000000:2A:00.0");
    pci->bus = device->index == 0 ? 0x18 : 0x2A;
    return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
    memory->total = device->index == 0 ? 150754820096ull : 85520809984ull;
    memory->used = device->index == 0 ? 6442450944ull : 1048576ull;
    memory->free = memory->total - memory->used;
    return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
    utilization->gpu = device->index == 0 ? 97 : 0;
    utilization->memory = 10;
    return 0;
}
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                unsigned long long* count) {
    if (device->index == 1)
        return 3;  // NOT_SUPPORTED
    *count = (errorType == 1 && counterType == 0) ? 5 : 999;
    return 0;
}
int nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int* active) {
    if (device->index == 1)
        return 3;
    *active = link < 2 ? 1 : 0;
    return 0;
}
int nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t, unsigned int link, int counter,
                                    unsigned long long* value) {
    *value = counter == 0 ? 3 + link : 1000;
    return 0;
}
// Clocks as the H100 host read them (docs/results/2026-12-06-diagnosis-daemon-h100.md): GPU 0
// idle (345 of 1980 MHz, reason 0x1 idle, 34 C), GPU 1 under load (1980 of 1980 MHz, no reason,
// 56 C). Only NVML_CLOCK_SM (1) and NVML_TEMPERATURE_GPU (0) are answered.
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* clock) {
    if (type != 1)
        return 3;
    *clock = device->index == 0 ? 345 : 1980;
    return 0;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t, int type, unsigned int* clock) {
    if (type != 1)
        return 3;
    *clock = 1980;
    return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* temp) {
    if (sensor != 0)
        return 3;
    *temp = device->index == 0 ? 34 : 56;
    return 0;
}
// NVML 12.4 renamed the call; the confidential-computing generation (variant 2) has the old name.
#if FAKE_NVML_VARIANT == 2
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
    *reasons = device->index == 0 ? 0x1 : 0x44;  // GPU 1: SW power cap + HW thermal slowdown
    return 0;
}
#else
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
    *reasons = device->index == 0 ? 0x1 : 0x0;
    return 0;
}
#endif
int nvmlEventSetCreate(nvmlEventSet_t* set) {
    *set = &g_events;
    return 0;
}
int nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
    if (types & 0x8) {
        ++g_registered;
        if (device->index == 1)
            set->pending = 1;  // an XID 79 happens right after registration
    }
    return 0;
}
int nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int) {
    if (set->pending == 0)
        return 10;  // TIMEOUT
    set->pending = 0;
    std::memset(data, 0, sizeof *data);
    data->device = &g_devices[1];
    data->eventType = 0x8;
    data->eventData = 79;
    return 0;
}

static int fillProcesses(nvmlDevice_t device, unsigned int* count, void* infos) {
    const unsigned int have = device->index == 0 ? 3 : 1;
    if (infos == nullptr || *count < have) {
        *count = have;
        return 7;  // INSUFFICIENT_SIZE
    }
    for (unsigned int k = 0; k < have; ++k) {
        unsigned int pid = device->index == 0 ? 101 + k : 201;
        if (const char* pids = std::getenv("FAKE_NVML_GPU0_PIDS"); pids && device->index == 0) {
            const char* p = pids;
            for (unsigned int skip = 0; skip < k && p != nullptr; ++skip) {
                p = std::strchr(p, ',');
                p = p != nullptr ? p + 1 : nullptr;
            }
            if (p != nullptr) {
                pid = static_cast<unsigned int>(std::strtoul(p, nullptr, 10));
            }
        }
        const unsigned long long used =
            device->index == 0 ? (k + 1) * 1073741824ull : ~0ull;  // NVML_VALUE_NOT_AVAILABLE
        if (FAKE_NVML_VARIANT == 2) {
            ProcessV3* entry = static_cast<ProcessV3*>(infos) + k;
            *entry = {pid, used, 0xFFFFFFFFu, 0xFFFFFFFFu, 77};
        } else {
            ProcessV2* entry = static_cast<ProcessV2*>(infos) + k;
            *entry = {pid, used, 0xFFFFFFFFu, 0xFFFFFFFFu};
        }
    }
    *count = have;
    return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count, void* infos) {
    return fillProcesses(device, count, infos);
}
int nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t, void*) {
    return 3;
}
#if FAKE_NVML_VARIANT != 2
int nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t, void*) {
    return 3;
}
#endif
}
