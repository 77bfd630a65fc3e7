#pragma once
// PyTorch's pinned host allocator (CachingHostAllocator, used by `pin_memory=True` and
// `.pin_memory()`) rounds every request up to the next power of two and keeps the block; a host
// copy made tensor by tensor through it therefore costs more than its bytes. This is the ratio
// for the tensors one trainer rank of a pipeline stage holds (docs/memory-model.md, section 3).
// Pure; thread-safe.

#include "backend/plan/model_params.h"

namespace runplane::plan {

struct PinnedRounding {
    double dense = 1.0;    // rounded / exact bytes over the rank's non-expert tensors
    double experts = 1.0;  // the same over its routed-expert tensors
};

/// Megatron's tensors of stage `stage` as one rank holds them (TP-split dense tensors, E / EP
/// experts of ETP-split size, fused QKV and fc1). Tensors not listed (norms, biases, MLA and
/// KDA projections, MTP) count at their exact size.
PinnedRounding pinnedRounding(const ModelShape& s, const StageParams& stage, bool lastStage, int tp,
                              int ep, int etp);

}  // namespace runplane::plan
