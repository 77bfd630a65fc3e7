// NCCL version codes: ncclGetVersion returns major*10000 + minor*100 + patch since 2.9, and
// major*1000 + minor*100 + patch before (NCCL_VERSION macro in nccl.h).
#include <charconv>
#include <string>
#include <string_view>

#include "compute/gpu/nccl_resolve.h"

namespace runplane::compute {

std::string_view toString(NcclSource source) {
    switch (source) {
        case NcclSource::LdPreload:
            return "LD_PRELOAD";
        case NcclSource::SglangNcclSoPath:
            return "SGLANG_NCCL_SO_PATH";
        case NcclSource::PythonSitePackages:
            return "PYTHON_SITE_PACKAGES";
        case NcclSource::LdLibraryPath:
            return "LD_LIBRARY_PATH";
        case NcclSource::System:
            return "SYSTEM";
        case NcclSource::CudaToolkit:
            return "CUDA_TOOLKIT";
    }
    return "UNKNOWN";
}

int parseNcclVersionCode(std::string_view dotted) {
    int parts[3] = {0, 0, 0};
    std::size_t pos = 0;
    for (int k = 0; k < 3; ++k) {
        if (k > 0) {
            if (pos >= dotted.size() || dotted[pos] != '.')
                return 0;
            ++pos;
        }
        const char* begin = dotted.data() + pos;
        const char* end = dotted.data() + dotted.size();
        if (begin == end || *begin < '0' || *begin > '9')
            return 0;
        const auto [next, ec] = std::from_chars(begin, end, parts[k]);
        if (ec != std::errc() || next - begin > 4)
            return 0;
        pos += static_cast<std::size_t>(next - begin);
    }
    if (pos != dotted.size())
        return 0;
    const int major = parts[0], minor = parts[1], patch = parts[2];
    if (major < 1 || minor > 99 || patch > 99)
        return 0;
    if (major <= 2 && minor <= 8) {
        return major * 1000 + minor * 100 + patch;
    }
    return major * 10000 + minor * 100 + patch;
}

std::string formatNcclVersion(int code) {
    if (code <= 0)
        return {};
    int major = 0, minor = 0, patch = code % 100;
    if (code < 10000) {  // pre-2.9 encoding
        major = code / 1000;
        minor = (code / 100) % 10;
    } else {
        major = code / 10000;
        minor = (code / 100) % 100;
    }
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace runplane::compute
