#include "compute/gpu/probe/probe_kernels.h"

namespace runplane::compute::probe {
namespace {

using u64 = unsigned long long;

// Input of rank r at send index i (see probe_kernels.h).
__device__ float inputValue(Collective collective, u64 i, u64 total, u64 r, u64 n) {
    switch (collective) {
        case Collective::AllReduce:
            return static_cast<float>((r + 1) + i % 7);
        case Collective::AllGather:
            return static_cast<float>(r * 131 + i % 4099);
        case Collective::ReduceScatter: {
            const u64 block = total / n;  // recv elements per rank
            return static_cast<float>((r + 1) + i % 7 + 2 * (i / block));
        }
        case Collective::AllToAll: {
            const u64 chunk = total / n;
            return static_cast<float>(r * n + i / chunk + (i % chunk) % 97);
        }
    }
    return 0.0f;
}

// Expected output of rank r at recv index j.
__device__ float expectedValue(Collective collective, u64 j, u64 total, u64 r, u64 n) {
    switch (collective) {
        case Collective::AllReduce:
            return static_cast<float>(n * (n + 1) / 2 + n * (j % 7));
        case Collective::AllGather: {
            const u64 chunk = total / n;
            return static_cast<float>((j / chunk) * 131 + (j % chunk) % 4099);
        }
        case Collective::ReduceScatter: {
            const u64 block = total / n;
            return static_cast<float>(n * (n + 1) / 2 + n * ((r * block + j) % 7) + 2 * n * r);
        }
        case Collective::AllToAll: {
            const u64 chunk = total / n;
            const u64 source = j / chunk;
            return static_cast<float>(source * n + r + (j % chunk) % 97);
        }
    }
    return 0.0f;
}

__global__ void fillKernel(Collective collective, float* send, u64 count, u64 total, u64 r, u64 n) {
    for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<u64>(gridDim.x) * blockDim.x) {
        send[i] = inputValue(collective, i, total, r, n);
    }
}

__global__ void checkKernel(Collective collective, const float* recv, u64 count, u64 total, u64 r,
                            u64 n, u64* mismatches) {
    u64 local = 0;
    for (u64 j = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; j < count;
         j += static_cast<u64>(gridDim.x) * blockDim.x) {
        if (recv[j] != expectedValue(collective, j, total, r, n))
            ++local;
    }
    if (local != 0)
        atomicAdd(mismatches, local);
}

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocksFor(std::size_t count) {
    const std::size_t blocks = (count + kThreads - 1) / kThreads;
    return static_cast<int>(blocks < kMaxBlocks ? (blocks == 0 ? 1 : blocks) : kMaxBlocks);
}

}  // namespace

BufferShape shapeOf(Collective collective, std::size_t total, int ranks) {
    const std::size_t n = static_cast<std::size_t>(ranks);
    switch (collective) {
        case Collective::AllReduce:
            return {total, total};
        case Collective::AllGather:
            return {total / n, total};
        case Collective::ReduceScatter:
            return {total, total / n};
        case Collective::AllToAll:
            return {total, total};
    }
    return {};
}

cudaError_t launchFill(Collective collective, float* send, std::size_t total, int rank, int ranks,
                       cudaStream_t stream) {
    const BufferShape shape = shapeOf(collective, total, ranks);
    fillKernel<<<blocksFor(shape.sendCount), kThreads, 0, stream>>>(
        collective, send, shape.sendCount, total, static_cast<u64>(rank), static_cast<u64>(ranks));
    return cudaGetLastError();
}

cudaError_t launchCheck(Collective collective, const float* recv, std::size_t total, int rank,
                        int ranks, unsigned long long* mismatches, cudaStream_t stream) {
    const BufferShape shape = shapeOf(collective, total, ranks);
    checkKernel<<<blocksFor(shape.recvCount), kThreads, 0, stream>>>(
        collective, recv, shape.recvCount, total, static_cast<u64>(rank), static_cast<u64>(ranks),
        mismatches);
    return cudaGetLastError();
}

}  // namespace runplane::compute::probe
