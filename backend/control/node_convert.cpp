#include "backend/control/node_convert.h"

namespace runplane::control {

namespace {

const char* ncclSourceName(v1::NcclSource source) {
    switch (source) {
        case v1::NCCL_SOURCE_LD_PRELOAD:
            return "ld_preload";
        case v1::NCCL_SOURCE_SGLANG_NCCL_SO_PATH:
            return "sglang_nccl_so_path";
        case v1::NCCL_SOURCE_PYTHON_SITE_PACKAGES:
            return "python_site_packages";
        case v1::NCCL_SOURCE_LD_LIBRARY_PATH:
            return "ld_library_path";
        case v1::NCCL_SOURCE_SYSTEM:
            return "system";
        case v1::NCCL_SOURCE_CUDA_TOOLKIT:
            return "cuda_toolkit";
        default:
            return "unspecified";
    }
}

NodeRunState fromProto(v1::RunState state) {
    switch (state) {
        case v1::RUN_STATE_STARTING:
            return NodeRunState::Starting;
        case v1::RUN_STATE_RUNNING:
            return NodeRunState::Running;
        case v1::RUN_STATE_SUCCEEDED:
            return NodeRunState::Succeeded;
        case v1::RUN_STATE_FAILED:
            return NodeRunState::Failed;
        case v1::RUN_STATE_STOPPED:
            return NodeRunState::Stopped;
        case v1::RUN_STATE_LOST:
            return NodeRunState::Lost;
        default:
            return NodeRunState::Unspecified;
    }
}

RunRole fromProto(v1::RunRole role) {
    switch (role) {
        case v1::RUN_ROLE_STANDALONE:
            return RunRole::Standalone;
        case v1::RUN_ROLE_HEAD:
            return RunRole::Head;
        case v1::RUN_ROLE_WORKER:
            return RunRole::Worker;
        default:
            return RunRole::Unspecified;
    }
}

v1::RunRole toProto(RunRole role) {
    switch (role) {
        case RunRole::Standalone:
            return v1::RUN_ROLE_STANDALONE;
        case RunRole::Head:
            return v1::RUN_ROLE_HEAD;
        case RunRole::Worker:
            return v1::RUN_ROLE_WORKER;
        default:
            return v1::RUN_ROLE_UNSPECIFIED;
    }
}

CheckState fromProto(v1::CheckStatus status) {
    switch (status) {
        case v1::CHECK_PASS:
            return CheckState::Pass;
        case v1::CHECK_WARN:
            return CheckState::Warn;
        case v1::CHECK_FAIL:
            return CheckState::Fail;
        case v1::CHECK_SKIP:
            return CheckState::Skip;
        default:
            return CheckState::Unspecified;
    }
}

EventKindInfo fromProto(v1::EventKind kind) {
    switch (kind) {
        case v1::EVENT_PHASE:
            return EventKindInfo::Phase;
        case v1::EVENT_NCCL_WARNING:
            return EventKindInfo::NcclWarning;
        case v1::EVENT_NCCL_ERROR:
            return EventKindInfo::NcclError;
        case v1::EVENT_STALL:
            return EventKindInfo::Stall;
        case v1::EVENT_MEMORY_ALARM:
            return EventKindInfo::MemoryAlarm;
        case v1::EVENT_PROCESS_EXIT:
            return EventKindInfo::ProcessExit;
        case v1::EVENT_GAP:
            return EventKindInfo::Gap;
        case v1::EVENT_RUN_STATE:
            return EventKindInfo::RunState;
        case v1::EVENT_INFO:
            return EventKindInfo::Info;
        case v1::EVENT_CUDA_OOM:
            return EventKindInfo::CudaOom;
        case v1::EVENT_RAY_OOM:
            return EventKindInfo::RayOom;
        case v1::EVENT_HOST_OOM:
            return EventKindInfo::HostOom;
        case v1::EVENT_WEIGHT_SYNC_FAILURE:
            return EventKindInfo::WeightSyncFailure;
        case v1::EVENT_BATCH_MISMATCH:
            return EventKindInfo::BatchMismatch;
        case v1::EVENT_NAN_LOSS:
            return EventKindInfo::NanLoss;
        case v1::EVENT_SKIPPED_ITERATION:
            return EventKindInfo::SkippedIteration;
        case v1::EVENT_CRASH:
            return EventKindInfo::Crash;
        default:
            return EventKindInfo::Unspecified;
    }
}

// nullopt: not sent (UNIT_UNSPECIFIED, an older daemon or spool record) or a unit this build
// does not know.
std::optional<telemetry::Unit> fromProto(v1::Unit unit) {
    switch (unit) {
        case v1::UNIT_NONE:
            return telemetry::Unit::None;
        case v1::UNIT_BYTES:
            return telemetry::Unit::Bytes;
        case v1::UNIT_PERCENT:
            return telemetry::Unit::Percent;
        case v1::UNIT_SECONDS:
            return telemetry::Unit::Seconds;
        case v1::UNIT_HERTZ:
            return telemetry::Unit::Hertz;
        default:
            return std::nullopt;
    }
}

}  // namespace

std::optional<NodeRunState> runStateFromName(const std::string& name) {
    v1::RunState state{};
    if (!v1::RunState_Parse(name, &state)) {
        return std::nullopt;
    }
    const NodeRunState out = fromProto(state);
    return out == NodeRunState::Unspecified ? std::nullopt : std::optional<NodeRunState>(out);
}

std::optional<NodeRunState> runStateOf(const v1::Event& event,
                                       std::map<std::string, std::string>& attrs) {
    const auto key = telemetry::attr::kState;
    if (event.run_state() != v1::RUN_STATE_UNSPECIFIED) {
        // The history stores the attribute (a file format): keep it there even from a daemon
        // that sends only the typed field.
        attrs.try_emplace(key, v1::RunState_Name(event.run_state()));
        const NodeRunState typed = fromProto(event.run_state());
        return typed == NodeRunState::Unspecified ? std::nullopt
                                                  : std::optional<NodeRunState>(typed);
    }
    // A daemon or spool record from before Event.run_state: the attribute is all there is.
    auto it = attrs.find(key);
    return it == attrs.end() ? std::nullopt : runStateFromName(it->second);
}

const char* toString(CheckState state) {
    switch (state) {
        case CheckState::Pass:
            return "pass";
        case CheckState::Warn:
            return "warn";
        case CheckState::Fail:
            return "fail";
        case CheckState::Skip:
            return "skip";
        default:
            return "unspecified";
    }
}

NcclLibrarySummary fromProto(const v1::NcclLibrary& library) {
    NcclLibrarySummary out;
    out.path = library.path();
    out.source = ncclSourceName(library.source());
    out.versionCode = library.version_code();
    out.version = library.version();
    out.error = library.error();
    out.selected = library.selected();
    return out;
}

NodeSummary fromProto(const v1::NodeInfo& info, const std::string& address) {
    NodeSummary out;
    out.address = address;
    out.nodeId = NodeId{info.node_id()};
    out.spoolIncarnation = info.spool_incarnation();
    out.hostname = info.hostname();
    out.cpuArch = info.cpu_arch();
    out.cpuCores = info.cpu_cores();
    out.hostRamBytes = info.host_ram_bytes();
    out.kernel = info.kernel();
    for (const auto& gpu : info.gpus()) {
        out.gpus.push_back(GpuSummary{gpu.index(), gpu.name(), gpu.uuid(), gpu.pci_bus_id(),
                                      gpu.memory_total_bytes(), gpu.memory_used_bytes(),
                                      gpu.utilization_percent()});
    }
    out.gpusUnavailableReason = info.gpus_unavailable_reason();
    for (const auto& library : info.nccl_libraries()) {
        out.ncclLibraries.push_back(fromProto(library));
    }
    out.daemonVersion = info.daemon_version();
    out.buildCommit = info.build_commit();
    out.buildDate = info.build_date();
    out.protocolVersion = info.protocol_version();
    return out;
}

RunStatusInfo fromProto(const v1::RunStatus& status) {
    RunStatusInfo out;
    out.runId = RunId{status.run_id()};
    out.state = fromProto(status.state());
    out.exitCode = status.exit_code();
    out.termSignal = status.term_signal();
    out.pid = status.pid();
    out.startedNs = status.started_unix_ns();
    out.endedNs = status.ended_unix_ns();
    out.message = status.message();
    out.role = fromProto(status.role());
    out.argv.assign(status.argv().begin(), status.argv().end());
    return out;
}

PreflightResult fromProto(const v1::PreflightReport& report, const std::string& address) {
    PreflightResult out;
    out.address = address;
    out.hostname = report.hostname();
    out.gpuUuids.assign(report.gpu_uuids().begin(), report.gpu_uuids().end());
    out.addresses.assign(report.addresses().begin(), report.addresses().end());
    out.masterAddrResolved.assign(report.master_addr_resolved().begin(),
                                  report.master_addr_resolved().end());
    for (const auto& check : report.checks()) {
        out.checks.push_back(PreflightCheckInfo{check.id(), fromProto(check.status()),
                                                check.message(), check.detail()});
    }
    return out;
}

TelemetryBatchInfo fromProto(const v1::TelemetryBatch& batch) {
    TelemetryBatchInfo out;
    out.nodeId = batch.node_id();
    out.oldestKeptSeq = batch.oldest_kept_seq();
    out.spoolIncarnation = batch.spool_incarnation();
    out.records.reserve(static_cast<std::size_t>(batch.records_size()));
    for (const auto& record : batch.records()) {
        TelemetryRecordInfo r;
        r.seq = record.seq();
        r.tNs = record.t_unix_ns();
        r.runId = record.run_id();
        if (record.has_event()) {
            r.isEvent = true;
            r.event.kind = fromProto(record.event().kind());
            r.event.message = record.event().message();
            r.event.attrs.insert(record.event().attrs().begin(), record.event().attrs().end());
            r.event.runState = runStateOf(record.event(), r.event.attrs);
        } else if (record.has_sample()) {
            const auto& s = record.sample();
            r.sample =
                SampleInfo{s.series(), s.value(), s.min(), s.max(), s.step(), fromProto(s.unit())};
        } else {
            // A record with neither body (a newer daemon's kind): keep its seq as an info event.
            r.isEvent = true;
            r.event.kind = EventKindInfo::Unspecified;
            r.event.message = "record without sample or event";
        }
        out.records.push_back(std::move(r));
    }
    return out;
}

v1::StartRunRequest toProto(const StartRunSpec& spec) {
    v1::StartRunRequest out;
    out.set_run_id(spec.runId.value());
    for (const auto& arg : spec.argv) {
        out.add_argv(arg);
    }
    out.mutable_env()->insert(spec.env.begin(), spec.env.end());
    out.set_workdir(spec.workdir);
    out.set_role(toProto(spec.role));
    out.set_recipe_yaml(spec.recipeYaml);
    out.set_sample_hz(spec.sampleHz);
    for (const auto& p : spec.plannedRoles) {
        auto* row = out.add_planned_roles();
        row->set_role(p.role);
        row->set_phase(p.phase);
        row->set_planned_bytes(p.bytes);
        row->set_components(p.components);
    }
    out.set_role_rows(spec.roleRows);
    return out;
}

v1::PreflightRequest toProto(const PreflightSpec& spec) {
    v1::PreflightRequest out;
    out.set_recipe_yaml(spec.recipeYaml);
    out.mutable_env()->insert(spec.env.begin(), spec.env.end());
    out.set_expected_gpus(spec.expectedGpus);
    out.set_expected_gpu_model(spec.expectedGpuModel);
    out.set_planned_peak_host_bytes(spec.plannedPeakHostBytes);
    out.set_min_nccl_version_code(spec.minNcclVersionCode);
    out.set_master_addr(spec.masterAddr);
    out.set_master_probe_port(spec.masterProbePort);
    out.set_multi_node(spec.multiNode);
    for (const auto& path : spec.requiredPaths) {
        out.add_required_paths(path);
    }
    for (const auto& dir : spec.checkpointDirs) {
        out.add_checkpoint_dirs(dir);
    }
    out.set_min_free_disk_bytes(spec.minFreeDiskBytes);
    out.set_disk_path(spec.diskPath);
    return out;
}

}  // namespace runplane::control
