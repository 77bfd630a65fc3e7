#pragma once
// Finds compute/'s helper executables (runplane-nccl-version, runplane-nccl-probe).

#include <string>

namespace runplane::compute {

/// Returns `explicitPath` when non-empty (even if missing, so that errors name it); otherwise the
/// first existing executable among: next to /proc/self/exe; <exe dir>/../../compute/gpu (the build
/// tree seen from backend/<x>/); $RUNPLANE_BINARY_DIR/compute/gpu. "" when none exists, with
/// `searched` listing where it looked.
std::string findHelperExecutable(const std::string& name, const std::string& explicitPath,
                                 std::string* searched = nullptr);

}  // namespace runplane::compute
