#pragma once
// What a telemetry event is, spoken in types (issue #22): the kinds the daemon raises and the
// controller adds (gap), with the spelling the history stores in events.kind, and the attribute
// keys more than one party reads. The protocol's v1::EventKind mirrors EventKind; only
// backend/control/node_convert.cpp maps the two. Plain C++ (no Qt, no protobuf).

#include <array>
#include <optional>
#include <string_view>

namespace runplane::telemetry {

enum class EventKind {
    Unspecified,
    Phase,
    NcclWarning,
    NcclError,
    Stall,
    MemoryAlarm,
    ProcessExit,
    Gap,
    RunState,
    Info,
    // From the run's log (issue #42; docs/daemon.md "Log formats").
    CudaOom,
    RayOom,
    HostOom,
    WeightSyncFailure,
    BatchMismatch,
    NanLoss,
    SkippedIteration,
    Crash
};

inline constexpr std::array<EventKind, 18> kEventKinds{EventKind::Unspecified,
                                                       EventKind::Phase,
                                                       EventKind::NcclWarning,
                                                       EventKind::NcclError,
                                                       EventKind::Stall,
                                                       EventKind::MemoryAlarm,
                                                       EventKind::ProcessExit,
                                                       EventKind::Gap,
                                                       EventKind::RunState,
                                                       EventKind::Info,
                                                       EventKind::CudaOom,
                                                       EventKind::RayOom,
                                                       EventKind::HostOom,
                                                       EventKind::WeightSyncFailure,
                                                       EventKind::BatchMismatch,
                                                       EventKind::NanLoss,
                                                       EventKind::SkippedIteration,
                                                       EventKind::Crash};

/// The stored spelling (events.kind): "phase", "nccl_warning", "nccl_error", "stall",
/// "memory_alarm", "process_exit", "gap", "run_state", "info", "cuda_oom", "ray_oom", "host_oom",
/// "weight_sync_failure", "batch_mismatch", "nan_loss", "skipped_iteration", "crash";
/// "unspecified" for an event of a
/// kind this build does not know. A C string, as its callers join it.
constexpr const char* toString(EventKind kind) {
    switch (kind) {
        case EventKind::Phase:
            return "phase";
        case EventKind::NcclWarning:
            return "nccl_warning";
        case EventKind::NcclError:
            return "nccl_error";
        case EventKind::Stall:
            return "stall";
        case EventKind::MemoryAlarm:
            return "memory_alarm";
        case EventKind::ProcessExit:
            return "process_exit";
        case EventKind::Gap:
            return "gap";
        case EventKind::RunState:
            return "run_state";
        case EventKind::Info:
            return "info";
        case EventKind::CudaOom:
            return "cuda_oom";
        case EventKind::RayOom:
            return "ray_oom";
        case EventKind::HostOom:
            return "host_oom";
        case EventKind::WeightSyncFailure:
            return "weight_sync_failure";
        case EventKind::BatchMismatch:
            return "batch_mismatch";
        case EventKind::NanLoss:
            return "nan_loss";
        case EventKind::SkippedIteration:
            return "skipped_iteration";
        case EventKind::Crash:
            return "crash";
        case EventKind::Unspecified:
            break;
    }
    return "unspecified";
}

/// Inverse of toString; nullopt for a spelling no kind has.
constexpr std::optional<EventKind> eventKindFromString(std::string_view text) {
    for (EventKind k : kEventKinds) {
        if (text == toString(k)) {
            return k;
        }
    }
    return std::nullopt;
}

/// Event attribute keys read by more than the party that writes them.
namespace attr {
/// run_state: the node's state, spelled as the protocol's enum ("RUN_STATE_FAILED"; only the
/// proto conversion reads it). memory_alarm: "raised" or "cleared".
inline constexpr const char* kState = "state";
/// gap: the first and last missing seq.
inline constexpr const char* kFirstSeq = "first_seq";
inline constexpr const char* kLastSeq = "last_seq";
/// memory_alarm: the daemon's threshold and the reading, in bytes.
inline constexpr const char* kThresholdBytes = "threshold_bytes";
inline constexpr const char* kUsedBytes = "used_bytes";
/// phase: the phase's name.
inline constexpr const char* kPhase = "phase";
/// The log's failure kinds (cuda_oom, ray_oom, host_oom, nccl_error, weight_sync_failure,
/// batch_mismatch, nan_loss, skipped_iteration, crash): the one-line cause a person would quote
/// ("CUDA OOM on GPU 3: tried 61.34 GiB, 27.07 GiB free"); the run list shows it.
inline constexpr const char* kSummary = "summary";
}  // namespace attr

/// Is `kind` an OOM of any kind (alert-level on the Runs and Cluster pages)?
constexpr bool isOom(EventKind kind) {
    return kind == EventKind::CudaOom || kind == EventKind::RayOom || kind == EventKind::HostOom;
}

/// How strongly an event of `kind` explains a failed run (0: not a cause). The run list names
/// the cause from the strongest, latest such event.
constexpr int causeRank(EventKind kind) {
    switch (kind) {
        case EventKind::CudaOom:
        case EventKind::HostOom:
        case EventKind::RayOom:
            return 5;
        case EventKind::NcclError:
        case EventKind::WeightSyncFailure:
        case EventKind::BatchMismatch:
            return 4;
        case EventKind::Crash:
            return 3;
        case EventKind::NanLoss:
            return 2;
        case EventKind::SkippedIteration:
            return 1;
        default:
            return 0;
    }
}

}  // namespace runplane::telemetry
