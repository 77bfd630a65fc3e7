#pragma once
// A diagnosis of one run (issue #44, docs/diagnosis.md): what each node's daemon collected for
// the run's processes on that node (NodeDiagnosis), and the verdict over all nodes (judge). Each
// piece says why it is missing when it is. Plain C++ with nlohmann-json: the daemon builds
// NodeDiagnosis, the controller judges and stores RunDiagnosis, the CLI prints it.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/diagnosis/kernel_log.h"
#include "backend/diagnosis/last_output.h"
#include "backend/diagnosis/ras.h"
#include "backend/diagnosis/stacks.h"
#include "common/result.h"

namespace runplane::diagnosis {

/// Bounds that keep one diagnosis small (a stored one is at most kMaxStoredBytes per run).
inline constexpr std::size_t kMaxStackProcesses = 128;
inline constexpr std::size_t kMaxThreadsPerProcess = 64;
inline constexpr std::size_t kMaxFramesPerThread = 64;
inline constexpr std::size_t kOutputTailLines = 40;
inline constexpr std::size_t kOutputLineBytes = 400;

struct ProcessInfo {
    std::int64_t pid = 0;
    std::string cmdline;     // argv joined by spaces, cut at 300 bytes
    std::int64_t rank = -1;  // RANK from the process's environment, -1 when unset/unreadable
    std::int64_t localRank = -1;
};

struct ProcessStacks {
    std::int64_t pid = 0;
    std::string error;  // why py-spy gave nothing (not Python, gone, timed out, ...)
    std::vector<ThreadStack> threads;
};

struct NodeDiagnosis {
    std::string address;  // the daemon's address (set by the controller)
    std::string nodeId;
    std::string hostname;
    std::string runId;
    std::int64_t tUnixNs = 0;
    std::int64_t collectionMs = 0;
    std::string error;  // the whole node failed (unreachable daemon, unknown run)

    std::string runState;  // the run's state on this node
    std::vector<ProcessInfo> processes;

    // NCCL RAS (loopback only)
    bool rasAvailable = false;
    std::string rasEndpoint;
    std::string rasMissing;
    RasReport ras;
    std::int64_t rasMs = 0;

    // Python stacks
    std::string stackTool;  // "py-spy 0.4.3"
    std::string stackToolPath;
    std::string stackToolSource;  // "bundle" or "PATH"
    std::string stacksMissing;
    bool nativeFrames = false;
    std::vector<ProcessStacks> stacks;

    // GPUs (NVML), kept as NVML's fields
    nlohmann::json gpus = nlohmann::json::array();
    std::string gpusMissing;

    // kernel log of the run's window
    std::string kernelLogSource;
    std::string kernelLogMissing;
    bool kernelLogTruncated = false;
    std::vector<KernelLine> kernelLines;

    // the run's last output lines
    std::vector<std::string> stdoutTail;
    std::vector<std::string> stderrTail;
    std::string outputMissing;
    /// Each role's last line and when (last_output.h); empty when no line was attributed.
    std::vector<RoleOutput> roleOutput;

    // PyTorch Flight Recorder dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE prefix), listed, not read
    std::vector<std::string> flightRecorderFiles;
    std::string flightRecorderMissing;
};

nlohmann::json toJson(const NodeDiagnosis& node);
/// Reads what toJson wrote; unknown keys are ignored, a wrong type is an error naming the key.
Result<NodeDiagnosis> nodeDiagnosisFromJson(const nlohmann::json& j);

struct Finding {
    std::string kind;  // missing_rank, async_error, init_error, aborted, behind, stack_outlier,
                       // gpu_throttled, kernel, node_error, stacks_agree, last_output, no_data
    std::string text;
};

/// Processes whose stacks end in the same frame.
struct StackGroup {
    std::string frame;                 // function name
    std::string file;                  // file:line of the first member
    std::vector<std::string> members;  // "rank 3 (pid 812 on gpu-a)"
};

struct Verdict {
    std::string headline;  // one line
    std::vector<Finding> findings;
    std::vector<StackGroup> stackGroups;  // smallest group first (the outlier)
};

/// The verdict over every node's collection (rules in docs/diagnosis.md, "Verdict").
Verdict judge(const std::vector<NodeDiagnosis>& nodes);

/// Every node's RAS report covers the job: the communicators merged per hash, keeping the copy
/// that saw the most ranks and the union of missing ranks.
std::vector<RasCommunicator> mergedCommunicators(const std::vector<NodeDiagnosis>& nodes);

struct RunDiagnosis {
    std::string runId;
    std::string trigger;  // on_demand, stall, failed, phase_overrun
    std::int64_t tUnixNs = 0;
    std::int64_t tookMs = 0;
    Verdict verdict;
    std::vector<NodeDiagnosis> nodes;
};

nlohmann::json toJson(const Verdict& verdict);
nlohmann::json toJson(const RunDiagnosis& diagnosis);
Result<RunDiagnosis> runDiagnosisFromJson(const nlohmann::json& j);

/// The JSON text of a diagnosis within maxBytes: stacks are cut to each process's main thread,
/// then to its signature frame, then output tails and kernel lines are dropped, until it fits;
/// "trimmed" in the document says what went.
std::string boundedJsonText(const RunDiagnosis& diagnosis, std::size_t maxBytes);

/// The human text `runplanectl diagnose` prints: the headline, the findings, the stack groups,
/// then per node what was collected or why not.
std::string formatDiagnosis(const RunDiagnosis& diagnosis);

}  // namespace runplane::diagnosis
