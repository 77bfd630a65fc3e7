#pragma once
// The NCCL version gate: a pure check of resolved libraries against a minimum version.

#include <string>
#include <vector>

#include "compute/gpu/nccl_resolve.h"

namespace runplane::compute {

/// Cross-node CUDA-graph rollout engines need NCCL >= 2.30.7: 2.28.x deadlocks CUDA-graph-captured
/// cross-node collectives (miles docs/models/qwen/qwen3-8.md).
inline constexpr int kNcclMinVersionCrossNodeCudaGraph = 23007;

/// Gate verdict; message names the paths and versions involved (and a fix when it fails).
struct NcclGateResult {
    bool pass = false;
    std::string message;
};

/// Passes when the selected library, and SGLang's explicit SGLANG_NCCL_SO_PATH copy if it loads
/// separately, are at least minVersionCode. Fails when nothing was found or nothing loads.
NcclGateResult checkNcclRequirement(const std::vector<NcclLibraryInfo>& libraries,
                                    int minVersionCode);

}  // namespace runplane::compute
