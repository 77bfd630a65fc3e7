#pragma once
// Plain value types the control library hands to its callers (CLI, GUI workers). They mirror the
// protocol messages of proto/runplane/v1/agent.proto without exposing protobuf or gRPC, so a
// caller needs neither header and values can cross threads freely.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/run_state.h"
#include "common/telemetry/series.h"

namespace runplane::control {

/// The protocol version this controller speaks (NodeInfo.protocol_version).
inline constexpr std::uint32_t kProtocolVersion = 1;

struct GpuSummary {
    std::uint32_t index = 0;
    std::string name;
    std::string uuid;
    std::string pciBusId;
    std::uint64_t memoryTotalBytes = 0;
    std::uint64_t memoryUsedBytes = 0;
    std::uint32_t utilizationPercent = 0;
};

struct NcclLibrarySummary {
    std::string path;
    std::string source;  // "ld_preload", "sglang_nccl_so_path", "python_site_packages",
                         // "ld_library_path", "system", "cuda_toolkit", "unspecified"
    std::int32_t versionCode = 0;
    std::string version;  // "2.28.3"
    std::string error;    // why it could not be loaded or queried
    bool selected = false;
};

/// What to measure with ProbeNccl (0 = the daemon's default for each number).
struct NcclProbeSpec {
    std::vector<std::string> collectives;  // all_reduce, all_gather, reduce_scatter, all_to_all
    std::uint64_t minBytes = 0;
    std::uint64_t maxBytes = 0;
    std::uint32_t warmupIters = 0;
    std::uint32_t iters = 0;
    std::string ncclLibrary;  // empty: the library the daemon resolves
    std::string uniqueId;     // multi-node: raw ncclUniqueId bytes from GetNcclUniqueId
    std::uint32_t worldSize = 0;
    std::uint32_t firstRank = 0;
};

struct NcclProbeRowInfo {
    std::string collective;
    std::uint64_t bytes = 0;
    double timeUsP50 = 0;
    double timeUsP95 = 0;
    double algbwGbps = 0;
    double busbwGbps = 0;
    bool correct = false;
};

/// One daemon's ProbeNccl answer.
struct NcclProbeSummary {
    std::string ncclVersion;
    std::uint32_t ranks = 0;
    std::vector<NcclProbeRowInfo> rows;
    std::string error;    // why nothing (or not everything) was measured
    std::string verdict;  // "healthy ...", "degraded ...", "unavailable: ..."
    std::string libraryPath;
    std::map<std::string, std::string> ncclEnv;
    std::string rawJson;
};

/// GetNode's answer, plus the address it came from.
struct NodeSummary {
    std::string address;
    NodeId nodeId;
    std::string hostname;
    std::string cpuArch;
    std::uint32_t cpuCores = 0;
    std::uint64_t hostRamBytes = 0;
    std::string kernel;
    std::vector<GpuSummary> gpus;
    std::string gpusUnavailableReason;
    std::vector<NcclLibrarySummary> ncclLibraries;
    std::string daemonVersion;
    std::string buildCommit;  // the daemon's git commit and build date (GetNode)
    std::string buildDate;
    std::uint32_t protocolVersion = 0;
    std::uint64_t spoolIncarnation = 0;  // 0: a daemon from before spool incarnations
};

enum class RunRole { Unspecified, Standalone, Head, Worker };

/// The daemon's view of one run's state; toString gives "starting", "running", "succeeded",
/// "failed", "stopped", "lost", "unspecified" (common/telemetry/run_state.h).
using telemetry::NodeRunState;
using telemetry::toString;

/// What StartRun needs: argv is executed without a shell; workdir is relative to the run root.
struct StartRunSpec {
    RunId runId;
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;
    std::string workdir;
    RunRole role = RunRole::Standalone;
    std::string recipeYaml;
    double sampleHz = 0;
    /// The run's memory plan on this node by process role and phase (issue 43; docs/daemon.md,
    /// "Planned roles"): the daemon sends it beside what it measures per role.
    struct PlannedRole {
        std::string role, phase;
        double bytes = 0;
        std::string components;
    };
    std::vector<PlannedRole> plannedRoles;
    std::string roleRows;  // the run's own role-table rows ("" none)
};

/// A run as the daemon reports it.
struct RunStatusInfo {
    RunId runId;
    NodeRunState state = NodeRunState::Unspecified;
    std::int32_t exitCode = 0;
    std::int32_t termSignal = 0;
    std::int32_t pid = 0;
    std::int64_t startedNs = 0;
    std::int64_t endedNs = 0;
    std::string message;
    RunRole role = RunRole::Unspecified;
    std::vector<std::string> argv;
};

/// One chunk of a run's captured stdout/stderr.
struct LogChunkInfo {
    std::uint64_t offset = 0;
    std::string data;
    bool eof = false;
};

enum class LogStreamKind { Stdout, Stderr };

enum class CheckState { Unspecified, Pass, Warn, Fail, Skip };
const char* toString(CheckState state);

struct PreflightCheckInfo {
    std::string id;
    CheckState status = CheckState::Unspecified;
    std::string message;
    std::string detail;
};

/// The preflight request, as plain values (see PreflightRequest in the protocol).
struct PreflightSpec {
    std::string recipeYaml;
    std::map<std::string, std::string> env;
    std::uint32_t expectedGpus = 0;
    std::string expectedGpuModel;
    std::uint64_t plannedPeakHostBytes = 0;
    std::int32_t minNcclVersionCode = 0;
    std::string masterAddr;
    bool multiNode = false;
    std::vector<std::string> requiredPaths;
    std::vector<std::string> checkpointDirs;
    std::uint64_t minFreeDiskBytes = 0;
    std::string diskPath;
    /// The rank-0 daemon's port: every node connects to MASTER_ADDR:this
    /// (net.master_addr.reachable). 0: not probed. Launch and `dispatch preflight` set the head's.
    std::uint32_t masterProbePort = 0;
};

struct PreflightResult {
    std::string address;
    std::string hostname;
    std::vector<PreflightCheckInfo> checks;
    std::vector<std::string>
        gpuUuids;  // the GPUs NVML sees on the node (empty: none or old daemon)
    std::vector<std::string> addresses;           // its interface addresses (multi-node)
    std::vector<std::string> masterAddrResolved;  // what MASTER_ADDR resolved to there
};

/// One telemetry sample (see Sample in the protocol): value is the last reading of the interval,
/// min/max the extremes inside it; step is -1 for sampled series.
struct SampleInfo {
    std::string series;
    double value = 0;
    double min = 0;
    double max = 0;
    std::int64_t step = -1;
    /// The unit the daemon sent (Sample.unit); nullopt from a daemon or spool record older than
    /// that field (sampleUnit then reads it from the series name's suffix).
    std::optional<telemetry::Unit> unit;
};

/// A sample's unit: the one the daemon sent, or, for a sample sent without one (an older daemon
/// or spool record), the one its name's suffix gives (telemetry::unitOf; the fallback only).
inline telemetry::Unit sampleUnit(const SampleInfo& sample) {
    return sample.unit ? *sample.unit : telemetry::unitOf(sample.series);
}

/// What an event is; toString gives the history's spelling: "phase", "nccl_warning", ...,
/// "gap", "run_state", "info" (common/telemetry/event_kind.h).
using EventKindInfo = telemetry::EventKind;

struct EventInfo {
    EventKindInfo kind = EventKindInfo::Unspecified;
    std::string message;
    std::map<std::string, std::string> attrs;
    /// run_state events: the run's new state as the daemon sent it (Event.run_state) or, from a
    /// daemon or spool record older than that field, as its attrs["state"] names it (read by
    /// node_convert); nullopt for an event that names no run state.
    std::optional<NodeRunState> runState;
};

/// One record of a node's telemetry stream: a sample or an event with its per-node seq.
struct TelemetryRecordInfo {
    std::uint64_t seq = 0;
    std::int64_t tNs = 0;
    std::string runId;
    bool isEvent = false;
    SampleInfo sample;  // valid when !isEvent
    EventInfo event;    // valid when isEvent
};

struct TelemetryBatchInfo {
    std::string nodeId;
    std::uint64_t oldestKeptSeq = 0;
    std::vector<TelemetryRecordInfo> records;
    std::uint64_t spoolIncarnation = 0;  // last: the tests build this struct positionally
};

}  // namespace runplane::control
