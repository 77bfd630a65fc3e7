#include "compute/gpu/nccl_gate.h"

namespace runplane::compute {
namespace {

std::string describe(const NcclLibraryInfo& info) {
    std::string text = info.path + " (" + std::string(toString(info.source));
    if (info.error.empty()) {
        text += ", NCCL " + info.version + ")";
    } else {
        text += ", not loadable: " + info.error + ")";
    }
    return text;
}

std::string otherCopies(const std::vector<NcclLibraryInfo>& libraries,
                        const NcclLibraryInfo* skip) {
    std::string text;
    for (const auto& info : libraries) {
        if (&info == skip)
            continue;
        text += text.empty() ? "; other copies: " : ", ";
        text += describe(info);
    }
    return text;
}

}  // namespace

NcclGateResult checkNcclRequirement(const std::vector<NcclLibraryInfo>& libraries,
                                    int minVersionCode) {
    const std::string required = formatNcclVersion(minVersionCode);
    NcclGateResult result;
    if (libraries.empty()) {
        result.message =
            "no libnccl.so.2 found (searched LD_PRELOAD, SGLANG_NCCL_SO_PATH, the run's "
            "python site-packages, LD_LIBRARY_PATH, the system cache and directories, "
            "the CUDA toolkit); NCCL >= " +
            required + " is required";
        return result;
    }
    const NcclLibraryInfo* selected = nullptr;
    const NcclLibraryInfo* sglang = nullptr;
    const NcclLibraryInfo* newest = nullptr;
    for (const auto& info : libraries) {
        if (info.selected && selected == nullptr)
            selected = &info;
        if (info.source == NcclSource::SglangNcclSoPath && sglang == nullptr)
            sglang = &info;
        if (info.error.empty() && (newest == nullptr || info.versionCode > newest->versionCode)) {
            newest = &info;
        }
    }
    if (selected == nullptr) {
        result.message =
            "no libnccl.so.2 the run would see can be loaded: " + describe(libraries.front()) +
            otherCopies(libraries, &libraries.front());
        return result;
    }
    // SGLang dlopens SGLANG_NCCL_SO_PATH by path, so that copy is used by its pynccl (the
    // CUDA-graph collectives) even when LD_PRELOAD selected another file for everything else.
    if (sglang != nullptr && sglang != selected) {
        if (!sglang->error.empty()) {
            result.message = "SGLANG_NCCL_SO_PATH=" + sglang->path + " cannot be loaded (" +
                             sglang->error +
                             "); SGLang would fail to start its NCCL; selected for the rest: " +
                             describe(*selected);
            return result;
        }
        if (sglang->versionCode < minVersionCode) {
            result.message =
                "NCCL " + sglang->version + " at " + sglang->path +
                " (SGLANG_NCCL_SO_PATH, used by SGLang's pynccl) is older than the required " +
                required + "; selected for the rest: " + describe(*selected);
            return result;
        }
    }
    if (selected->versionCode < minVersionCode) {
        result.message = "NCCL " + selected->version + " at " + selected->path + " (" +
                         std::string(toString(selected->source)) +
                         ", the copy the run loads) is older "
                         "than the required " +
                         required + otherCopies(libraries, selected) + ". Fix: ";
        if (newest != nullptr && newest->versionCode >= minVersionCode) {
            result.message += "point LD_PRELOAD and SGLANG_NCCL_SO_PATH at " + newest->path +
                              " (NCCL " + newest->version + ")";
        } else {
            result.message += "install NCCL >= " + required +
                              " (e.g. pip install nvidia-nccl-cu13==" + required +
                              ") and point LD_PRELOAD and SGLANG_NCCL_SO_PATH at its "
                              "libnccl.so.2";
        }
        return result;
    }
    result.pass = true;
    result.message = "NCCL " + selected->version + " at " + selected->path + " (" +
                     std::string(toString(selected->source)) +
                     ") meets the required >= " + required;
    if (sglang != nullptr && sglang != selected) {
        result.message += "; SGLANG_NCCL_SO_PATH " + sglang->path + " (NCCL " + sglang->version +
                          ") meets it too";
    }
    return result;
}

}  // namespace runplane::compute
