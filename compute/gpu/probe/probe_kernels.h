#pragma once
// Device-side fill and check of the probe's correctness pass. Every value is a small integer held
// exactly in float32, so sums are exact in any reduction order and the check is an equality.
// Patterns (r = rank, n = ranks, i = element index): docs/nccl-health.md.

#include <cuda_runtime.h>

#include <cstddef>

namespace runplane::compute::probe {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll };

/// Element counts of one rank's buffers for a collective on `total` elements (the "size").
struct BufferShape {
    std::size_t sendCount = 0, recvCount = 0;
};
BufferShape shapeOf(Collective collective, std::size_t total, int ranks);

/// Writes rank `rank`'s input into `send` (sendCount elements).
cudaError_t launchFill(Collective collective, float* send, std::size_t total, int rank, int ranks,
                       cudaStream_t stream);
/// Adds to *mismatches the number of elements of `recv` that differ from the expected result.
cudaError_t launchCheck(Collective collective, const float* recv, std::size_t total, int rank,
                        int ranks, unsigned long long* mismatches, cudaStream_t stream);

}  // namespace runplane::compute::probe
