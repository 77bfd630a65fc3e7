#pragma once
// The NCCL entry points the probe uses, resolved with dlopen/dlsym from a chosen libnccl (types
// from nccl.h, so any NCCL 2.x with the same ABI works). Lets the probe measure exactly the copy
// the version gate resolved, not whichever one the loader would link.

#include <nccl.h>

#include <string>

namespace runplane::compute::probe {

/// Function table of one loaded libnccl. Not thread-safe to load; the pointers are.
struct NcclApi {
    decltype(&ncclGetVersion) getVersion = nullptr;
    decltype(&ncclGetUniqueId) getUniqueId = nullptr;
    decltype(&ncclCommInitAll) commInitAll = nullptr;
    decltype(&ncclCommInitRank) commInitRank = nullptr;
    decltype(&ncclCommDestroy) commDestroy = nullptr;
    decltype(&ncclCommGetAsyncError) commGetAsyncError = nullptr;
    decltype(&ncclGetErrorString) getErrorString = nullptr;
    decltype(&ncclGetLastError) getLastError = nullptr;
    decltype(&ncclGroupStart) groupStart = nullptr;
    decltype(&ncclGroupEnd) groupEnd = nullptr;
    decltype(&ncclAllReduce) allReduce = nullptr;
    decltype(&ncclAllGather) allGather = nullptr;
    decltype(&ncclReduceScatter) reduceScatter = nullptr;
    decltype(&ncclSend) send = nullptr;
    decltype(&ncclRecv) recv = nullptr;

    int versionCode = 0;
    std::string loadedFrom;  // the file dladdr() reports for ncclGetVersion

    /// Loads `library` ("" = "libnccl.so.2" through the loader's search). Returns "" or an error.
    std::string load(const std::string& library);
    /// "ncclUnhandledCudaError (1): <last error>" for messages.
    std::string describe(ncclResult_t result) const;
};

}  // namespace runplane::compute::probe
