#include "compute/gpu/probe/nccl_api.h"

#include <dlfcn.h>

namespace runplane::compute::probe {

std::string NcclApi::load(const std::string& library) {
    const std::string name = library.empty() ? "libnccl.so.2" : library;
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* error = ::dlerror();
        return "cannot load " + name + ": " + (error ? error : "unknown dlopen error");
    }
    std::string missing;
    const auto bind = [&](auto& slot, const char* symbol) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(::dlsym(handle, symbol));
        if (slot == nullptr)
            missing += std::string(missing.empty() ? "" : ", ") + symbol;
    };
    bind(getVersion, "ncclGetVersion");
    bind(getUniqueId, "ncclGetUniqueId");
    bind(commInitAll, "ncclCommInitAll");
    bind(commInitRank, "ncclCommInitRank");
    bind(commDestroy, "ncclCommDestroy");
    bind(commGetAsyncError, "ncclCommGetAsyncError");
    bind(getErrorString, "ncclGetErrorString");
    bind(groupStart, "ncclGroupStart");
    bind(groupEnd, "ncclGroupEnd");
    bind(allReduce, "ncclAllReduce");
    bind(allGather, "ncclAllGather");
    bind(reduceScatter, "ncclReduceScatter");
    bind(send, "ncclSend");
    bind(recv, "ncclRecv");
    getLastError = reinterpret_cast<decltype(getLastError)>(::dlsym(handle, "ncclGetLastError"));
    if (!missing.empty())
        return name + " lacks " + missing + " (not NCCL >= 2.7?)";
    if (getVersion(&versionCode) != ncclSuccess || versionCode <= 0) {
        return name + ": ncclGetVersion failed";
    }
    Dl_info info{};
    loadedFrom = name;
    if (::dladdr(reinterpret_cast<void*>(getVersion), &info) != 0 && info.dli_fname != nullptr) {
        loadedFrom = info.dli_fname;
    }
    return {};
}

std::string NcclApi::describe(ncclResult_t result) const {
    std::string text = getErrorString != nullptr ? getErrorString(result) : "NCCL error";
    text += " (" + std::to_string(static_cast<int>(result)) + ")";
    if (getLastError != nullptr) {
        const char* last = getLastError(nullptr);
        if (last != nullptr && *last != '\0')
            text += ": " + std::string(last);
    }
    return text;
}

}  // namespace runplane::compute::probe
