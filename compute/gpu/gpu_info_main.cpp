// runplane-gpu-info: prints queryGpus() as one JSON object (for the GPU host script and humans).
// Usage: runplane-gpu-info [--nvml PATH]
#include <cstdio>
#include <cstring>
#include <string>

#include "common/build_info.h"
#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/json_text.h"

int main(int argc, char** argv) {
    using runplane::compute::json::quote;
    if (runplane::printVersionIfAsked(argc, argv, "runplane-gpu-info")) {
        return 0;
    }
    std::string library;
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--nvml") == 0 && k + 1 < argc) {
            library = argv[++k];
        } else {
            std::fprintf(stderr, "usage: runplane-gpu-info [--nvml PATH]\n");
            return 2;
        }
    }
    const auto snapshot = library.empty() ? runplane::compute::queryGpus()
                                          : runplane::compute::queryGpusFrom(library);
    std::string out = "{\"unavailable\":" + quote(snapshot.unavailableReason) + ",\"gpus\":[";
    for (std::size_t k = 0; k < snapshot.gpus.size(); ++k) {
        const auto& gpu = snapshot.gpus[k];
        out += (k ? "," : "") + std::string("{\"index\":") + std::to_string(gpu.index) +
               ",\"name\":" + quote(gpu.name) + ",\"uuid\":" + quote(gpu.uuid) +
               ",\"pci_bus_id\":" + quote(gpu.pciBusId) +
               ",\"memory_total_bytes\":" + std::to_string(gpu.memoryTotalBytes) +
               ",\"memory_used_bytes\":" + std::to_string(gpu.memoryUsedBytes) +
               ",\"utilization_percent\":" + std::to_string(gpu.utilizationPercent) +
               ",\"ecc_uncorrected\":" + std::to_string(gpu.eccUncorrected) +
               ",\"last_xid\":" + std::to_string(gpu.lastXid) +
               ",\"nvlink_replay_errors\":" + std::to_string(gpu.nvlinkReplayErrors) +
               ",\"error\":" + quote(gpu.error) + "}";
    }
    out += "],\"processes\":[";
    for (std::size_t k = 0; k < snapshot.processes.size(); ++k) {
        const auto& process = snapshot.processes[k];
        out += (k ? "," : "") + std::string("{\"gpu_index\":") + std::to_string(process.gpuIndex) +
               ",\"pid\":" + std::to_string(process.pid) +
               ",\"used_bytes\":" + std::to_string(process.usedBytes) + "}";
    }
    out += "]}";
    std::printf("%s\n", out.c_str());
    return snapshot.unavailableReason.empty() ? 0 : 3;
}
