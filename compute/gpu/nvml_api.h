#pragma once
// Our own declarations of the few NVML entry points and structs Runplane uses (no nvml.h exists on
// the build machine). Layouts follow NVML's public ABI, which only ever adds versioned symbols;
// sizes are pinned with static_asserts. Private to compute/gpu.

#include <cstddef>
#include <cstdint>

namespace runplane::compute::nvml {

using Return = int;  // nvmlReturn_t
using Device = struct DeviceOpaque*;
using EventSet = struct EventSetOpaque*;

inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;

inline constexpr unsigned kNameBufferSize = 96;    // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidBufferSize = 96;    // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kMaxNvLinks = 18;        // NVML_NVLINK_MAX_LINKS (Hopper)
inline constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr int kNvLinkErrorDlReplay = 0;     // NVML_NVLINK_ERROR_DL_REPLAY
inline constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
inline constexpr unsigned long long kValueNotAvailable = ~0ull;    // NVML_VALUE_NOT_AVAILABLE
inline constexpr int kClockSm = 1;                                 // NVML_CLOCK_SM
inline constexpr int kTemperatureGpu = 0;                          // NVML_TEMPERATURE_GPU

struct Memory {  // nvmlMemory_t (v1)
    unsigned long long total, free, used;
};
struct Utilization {  // nvmlUtilization_t
    unsigned gpu, memory;
};
struct PciInfo {  // nvmlPciInfo_t, filled by nvmlDeviceGetPciInfo_v3
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};
// nvmlProcessInfo_t: v1 {pid, usedGpuMemory} = 16 bytes; v2 adds {gpuInstanceId,
// computeInstanceId} = 24 bytes; a few drivers fill a 32-byte variant (+usedGpuCcProtectedMemory)
// from nvmlDeviceGetComputeRunningProcesses_v3. The caller picks the stride (gpu_inventory.cpp).
struct ProcessInfoV2 {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
};
struct ProcessInfoV3 {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
};
struct EventData {  // nvmlEventData_t
    Device device;
    unsigned long long eventType, eventData;
    unsigned gpuInstanceId, computeInstanceId;
};

static_assert(sizeof(Memory) == 24);
static_assert(sizeof(Utilization) == 8);
static_assert(sizeof(PciInfo) == 68 && offsetof(PciInfo, busId) == 36);
static_assert(sizeof(ProcessInfoV2) == 24 && sizeof(ProcessInfoV3) == 32);
static_assert(sizeof(EventData) == 32);

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using DeviceGetCountFn = Return (*)(unsigned*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned);  // name, UUID
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetProcessesFn = Return (*)(Device, unsigned*, void*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned, int*);
using DeviceGetNvLinkErrorCounterFn = Return (*)(Device, unsigned, int, unsigned long long*);
// nvmlDeviceGetClockInfo / nvmlDeviceGetMaxClockInfo (MHz), nvmlDeviceGetTemperature (C).
using DeviceGetClockFn = Return (*)(Device, int, unsigned*);
// nvmlDeviceGetCurrentClocksEventReasons (NVML 12.4+), formerly
// nvmlDeviceGetCurrentClocksThrottleReasons: a bit mask (compute/gpu/gpu_inventory.h).
using DeviceGetClockReasonsFn = Return (*)(Device, unsigned long long*);
using EventSetCreateFn = Return (*)(EventSet*);
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned);

}  // namespace runplane::compute::nvml
