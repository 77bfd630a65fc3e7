#pragma once
// The daemon's side of a diagnosis (issue #44, docs/diagnosis.md): for one run on this node,
// collect the NCCL RAS report (loopback only), the Python stacks of the run's own processes
// (py-spy, from the node bundle or PATH), GPU state (NVML), the kernel log lines of the run's
// window and the run's last output lines. Every piece has its own time bound and says why it is
// missing; nothing here signals, stops or slows the run beyond py-spy's stack sample.

#include <chrono>
#include <string>

#include "backend/agent/process_roles.h"
#include "backend/agent/run_manager.h"
#include "backend/diagnosis/diagnosis.h"
#include "common/result.h"

namespace runplane::agent {

struct DiagnoseOptions {
    std::string nodeId;
    bool gpuTelemetry = true;   // false: the daemon runs with --no-gpu
    bool nativeFrames = false;  // py-spy --native
    std::chrono::milliseconds rasTimeout{8000};
    std::chrono::milliseconds stackTimeout{6000};  // per process
    unsigned stackParallel = 8;                    // py-spy processes at once
    std::string kmsgPath = "/dev/kmsg";
    /// Kernel lines from this long before the run started are kept too.
    double kernelWindowMarginSeconds = 60;
    /// Where py-spy is looked for before PATH (empty: the directory of this executable, which
    /// is the node bundle's bin/).
    std::string bundleDir;
    /// The daemon's role table (`--role-table` rows, then the built-in ones; null: the built-in
    /// rows). The last output per role tries the run's own `role_rows` first, then this: the
    /// table the memory-by-role walk uses for the run's processes.
    const RoleTable* roleTable = nullptr;
};

/// Where py-spy is: `<bundleDir>/py-spy` ("bundle"), else the first `py-spy` on PATH ("PATH").
/// path empty and why set when neither exists.
struct PySpyLocation {
    std::string path;
    std::string source;
    std::string why;
};
PySpyLocation findPySpy(const std::string& bundleDir, const std::string& pathVariable);

/// Collects the diagnosis of `runId` on this node. NotFound when the daemon has no such run.
Result<diagnosis::NodeDiagnosis> diagnoseRun(RunManager& runs, const std::string& runId,
                                             const DiagnoseOptions& options);

}  // namespace runplane::agent
