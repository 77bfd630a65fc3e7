// runplane-nccl-version <libnccl path>: loads one libnccl in this throw-away process, calls
// ncclGetVersion and prints one JSON line. Exit 0 = version printed, 1 = could not load/ask,
// 2 = usage. A library that crashes on load kills only this process.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "common/build_info.h"
#include "compute/gpu/json_text.h"
#include "compute/gpu/nccl_resolve.h"

namespace {

using runplane::compute::json::quote;

int report(const std::string& path, const std::string& error) {
    std::printf("{\"path\":%s,\"error\":%s}\n", quote(path).c_str(), quote(error).c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (runplane::printVersionIfAsked(argc, argv, "runplane-nccl-version")) {
        return 0;
    }
    if (argc != 2) {
        std::fprintf(stderr, "usage: runplane-nccl-version <path to libnccl.so.2>\n");
        return 2;
    }
    const std::string path = argv[1];
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* error = ::dlerror();
        return report(path, std::string("dlopen failed: ") + (error ? error : "unknown error"));
    }
    using GetVersion = int (*)(int*);  // ncclResult_t ncclGetVersion(int* version)
    auto getVersion = reinterpret_cast<GetVersion>(::dlsym(handle, "ncclGetVersion"));
    if (getVersion == nullptr) {
        return report(path, "loaded, but it has no ncclGetVersion symbol (not an NCCL library?)");
    }
    int code = 0;
    const int rc = getVersion(&code);
    if (rc != 0 || code <= 0) {
        return report(path, "ncclGetVersion returned error " + std::to_string(rc) + " (version " +
                                std::to_string(code) + ")");
    }
    Dl_info info{};
    std::string loadedFrom = path;
    if (::dladdr(reinterpret_cast<void*>(getVersion), &info) != 0 && info.dli_fname != nullptr) {
        loadedFrom = info.dli_fname;
    }
    std::printf("{\"path\":%s,\"loaded_from\":%s,\"version_code\":%d,\"version\":%s}\n",
                quote(path).c_str(), quote(loadedFrom).c_str(), code,
                quote(runplane::compute::formatNcclVersion(code)).c_str());
    return 0;
}
