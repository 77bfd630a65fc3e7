// runplane-smoke: the embedded default workload, a small real GRPO + LoRA run in LibTorch.
// Exit codes: 0 done, 1 run failed, 2 bad flags.
#include <malloc.h>

#include <cstdio>
#include <string>
#include <vector>

#include "compute/smoke/smoke_config.h"
#include "compute/smoke/smoke_workload.h"

int main(int argc, char** argv) {
    using namespace runplane::smoke;
    // Large blocks (device stand-ins on CPU, activations of big batches) go straight to mmap and
    // back to the kernel when freed, so host RSS follows the colocated pattern; the clone-mode
    // arena retention is modelled explicitly instead (docs/smoke-workload.md).
    mallopt(M_MMAP_THRESHOLD, 16 << 20);
    std::vector<std::string> args(argv + 1, argv + argc);
    auto config = parseSmokeArgs(args);
    if (!config) {
        std::fprintf(stderr, "%s\n", config.error().c_str());
        return 2;
    }
    if (config->helpRequested) {
        std::printf("%s", smokeUsage().c_str());
        return 0;
    }
    if (auto st = checkDevice(*config); !st) {
        std::fprintf(stderr, "%s\n", st.error().c_str());
        return 2;
    }
    auto summary = runSmoke(*config, stdout);
    if (!summary) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s\n", summary.error().c_str());
        return 1;
    }
    return 0;
}
