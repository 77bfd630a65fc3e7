#pragma once
// GPU inventory and telemetry through NVML, loaded at run time with dlopen (no nvml.h exists on
// the build machine, so the few functions used are declared in compute/gpu/nvml_api.h).

#include <cstdint>
#include <string>
#include <vector>

namespace runplane::compute {

/// One GPU as NVML reports it. Counters NVML does not expose on a device keep their defaults.
struct GpuDevice {
    unsigned index = 0;
    std::string name, uuid, pciBusId;
    std::uint64_t memoryTotalBytes = 0, memoryUsedBytes = 0;
    unsigned utilizationPercent = 0;
    /// Volatile (since driver load) uncorrected ECC errors; 0 where ECC is off or unsupported.
    std::uint64_t eccUncorrected = 0;
    /// Last XID seen since this process first queried NVML; -1 = none seen (or not observable).
    std::int64_t lastXid = -1;
    /// Sum of NVLink replay errors over all links; -1 where NVML exposes none (no NVLink).
    std::int64_t nvlinkReplayErrors = -1;
    /// SM clock now and its maximum, in MHz; 0 where NVML does not give them.
    unsigned smClockMHz = 0, smClockMaxMHz = 0;
    /// Why the clocks are below their maximum: NVML's clock event (throttle) reason bits
    /// (nvmlClocksEventReason*: 0x1 idle, 0x4 software power cap, 0x8 hardware slowdown, 0x20
    /// software thermal, 0x40 hardware thermal, 0x80 power brake, ...; names and judgement in
    /// backend/diagnosis/gpu_clocks.h); -1 where NVML does not give them.
    std::int64_t clockEventReasons = -1;
    /// GPU temperature in degrees C; -1 where NVML does not give it.
    int temperatureC = -1;
    /// Non-empty when NVML could not read this GPU (e.g. "GPU is lost"); other fields then partial.
    std::string error;
};

/// One process holding memory on a GPU (compute contexts only).
struct GpuProcess {
    unsigned gpuIndex = 0;
    int pid = 0;
    std::uint64_t usedBytes = 0;
};

/// One sample of every GPU of this host.
struct GpuSnapshot {
    std::vector<GpuDevice> gpus;
    std::vector<GpuProcess> processes;
    /// Non-empty when NVML is absent, fails to initialise, or there is no GPU.
    std::string unavailableReason;
};

/// Samples every GPU. Thread-safe. Loads libnvidia-ml.so.1 once with dlopen on first use and keeps
/// it loaded; when NVML is absent, every call returns the same unavailableReason without logging.
GpuSnapshot queryGpus();

/// Same as queryGpus() but with an explicit NVML library path (tests, or a driver in an unusual
/// place). Each distinct path is loaded once and kept for the life of the process.
GpuSnapshot queryGpusFrom(const std::string& nvmlLibrary);

}  // namespace runplane::compute
