#pragma once
// Which libnccl.so.2 a run will load: every copy the run's environment would see, in the order the
// dynamic loader (and SGLang) would pick them, each loaded in a helper process
// (runplane-nccl-version) so that a broken or hostile library can never crash the caller.
// Resolution order and its caveats: docs/nccl-health.md.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::compute {

/// Where a candidate came from, in precedence order.
enum class NcclSource {
    LdPreload,
    SglangNcclSoPath,
    PythonSitePackages,
    LdLibraryPath,
    System,
    CudaToolkit
};

/// Protocol spelling: "LD_PRELOAD", "SGLANG_NCCL_SO_PATH", "PYTHON_SITE_PACKAGES",
/// "LD_LIBRARY_PATH", "SYSTEM", "CUDA_TOOLKIT".
std::string_view toString(NcclSource source);

/// One candidate library. versionCode is what ncclGetVersion returned (22803 = 2.28.3); error is
/// non-empty when the library could not be loaded or asked (then versionCode is 0).
struct NcclLibraryInfo {
    std::string path;
    NcclSource source = NcclSource::System;
    int versionCode = 0;
    std::string version;
    std::string error;
    bool selected = false;
};

/// The environment of the run to resolve for. Only `env` is consulted for LD_PRELOAD,
/// SGLANG_NCCL_SO_PATH, LD_LIBRARY_PATH, PATH, VIRTUAL_ENV, CONDA_PREFIX and CUDA_HOME (never the
/// caller's own environment), so a daemon can resolve for any run.
struct NcclResolveConfig {
    std::map<std::string, std::string> env;
    /// The run's Python interpreter; empty = `python3` found on env["PATH"], else VIRTUAL_ENV /
    /// CONDA_PREFIX are scanned for lib/python3*/site-packages.
    std::string python;
    /// Empty = runplane-nccl-version next to /proc/self/exe, then $RUNPLANE_BINARY_DIR/compute/gpu.
    std::string versionHelperPath;
    /// Command printing the loader cache (`ldconfig -p` format); empty = /sbin/ldconfig -p, then
    /// /usr/sbin/ldconfig -p. Tests point this at a fake.
    std::string ldconfigCommand;
    /// Trusted directories searched after the cache; empty = the Debian/Ubuntu x86-64 defaults.
    std::vector<std::string> systemDirs;
    /// CUDA toolkit library directories; empty = $CUDA_HOME/lib64 (if set) and
    /// /usr/local/cuda/lib64.
    std::vector<std::string> cudaToolkitDirs;
    /// Seconds each helper (python, ldconfig, runplane-nccl-version) may run before it is killed.
    unsigned helperTimeoutSeconds = 20;
};

/// Every libnccl copy the run would see, in loader order, one entry per distinct file (the first,
/// highest-precedence source wins); exactly one `selected` when any loads. Never throws.
std::vector<NcclLibraryInfo> resolveNcclLibraries(const NcclResolveConfig& config);

/// "2.28.3" -> 22803 (and "2.8.4" -> 2804, NCCL's pre-2.9 encoding); 0 when not a version.
int parseNcclVersionCode(std::string_view dotted);
/// 22803 -> "2.28.3", 2804 -> "2.8.4"; "" for codes <= 0.
std::string formatNcclVersion(int code);

}  // namespace runplane::compute
