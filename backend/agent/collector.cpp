// Over 600 lines: one sampling loop (host, GPUs, runs, logs, events) whose parts share the
// collector's per-tick state; splitting it would pass that state through every call.
#include "backend/agent/collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "backend/agent/log_metrics.h"
#include "backend/agent/proc_tree.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/series.h"
#include "compute/gpu/gpu_inventory.h"

namespace runplane::agent {

namespace series = telemetry::series;

namespace {

constexpr double kMaxHz = 10.0;
constexpr std::size_t kMaxLineBytes = 1u << 20;
constexpr std::size_t kReadChunk = 256u << 10;
// Log-derived records are written with the next report, or earlier once this many are pending
// or this long has passed (each write is one fsync'ed transaction). 4,096 (was 500): a run
// printing 2,000 lines/s gives ~3,000 records/s, which is then one transaction a second rather
// than one per 4 Hz poll; memory stays bounded at ~1 MB of pending records.
constexpr std::size_t kLogFlushRecords = 4096;
constexpr std::int64_t kLogFlushNs = 1'000'000'000;

std::int64_t wallNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool isFinal(v1::RunState s) {
    return s == v1::RUN_STATE_SUCCEEDED || s == v1::RUN_STATE_FAILED ||
           s == v1::RUN_STATE_STOPPED || s == v1::RUN_STATE_LOST;
}

v1::EventKind eventKind(LogEventKind k) {
    switch (k) {
        case LogEventKind::Phase:
            return v1::EVENT_PHASE;
        case LogEventKind::NcclWarning:
            return v1::EVENT_NCCL_WARNING;
        case LogEventKind::NcclError:
            return v1::EVENT_NCCL_ERROR;
        case LogEventKind::CudaOom:
            return v1::EVENT_CUDA_OOM;
        case LogEventKind::RayOom:
            return v1::EVENT_RAY_OOM;
        case LogEventKind::HostOom:
            return v1::EVENT_HOST_OOM;
        case LogEventKind::WeightSyncFailure:
            return v1::EVENT_WEIGHT_SYNC_FAILURE;
        case LogEventKind::BatchMismatch:
            return v1::EVENT_BATCH_MISMATCH;
        case LogEventKind::NanLoss:
            return v1::EVENT_NAN_LOSS;
        case LogEventKind::SkippedIteration:
            return v1::EVENT_SKIPPED_ITERATION;
        case LogEventKind::Crash:
            return v1::EVENT_CRASH;
        case LogEventKind::Info:
            break;
    }
    return v1::EVENT_INFO;
}

// The stored spelling of a log event's kind ("cuda_oom"): its proto name without EVENT_.
std::string kindName(LogEventKind k) {
    std::string name = v1::EventKind_Name(eventKind(k));
    if (name.rfind("EVENT_", 0) == 0) {
        name.erase(0, 6);
    }
    for (char& c : name) {
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    return name;
}

v1::Unit toProto(telemetry::Unit unit) {
    switch (unit) {
        case telemetry::Unit::None:
            return v1::UNIT_NONE;
        case telemetry::Unit::Bytes:
            return v1::UNIT_BYTES;
        case telemetry::Unit::Percent:
            return v1::UNIT_PERCENT;
        case telemetry::Unit::Seconds:
            return v1::UNIT_SECONDS;
        case telemetry::Unit::Hertz:
            return v1::UNIT_HERTZ;
    }
    return v1::UNIT_UNSPECIFIED;
}

}  // namespace

void Collector::Aggregate::add(double v) {
    if (!any) {
        last = min = max = v;
        any = true;
        return;
    }
    last = v;
    min = std::min(min, v);
    max = std::max(max, v);
}

Collector::Collector(CollectorOptions options, Spool& spool, RunManager& runs, Logger& logger)
    : m_options(std::move(options)),
      m_spool(spool),
      m_runManager(runs),
      m_logger(logger),
      m_writer(spool, logger, SpoolWriterOptions{.maxBacklog = m_options.spoolBacklogRecords}) {
    m_options.sampleHz = std::clamp(m_options.sampleHz, 0.01, kMaxHz);
    if (m_options.roleMemory) {
        m_roleMemory = std::make_unique<RoleMemory>(m_options.roleTable);
    }
    if (auto source = openKernelLog(m_options.kernelLog)) {
        m_kernelLog = std::move(*source);
        if (m_kernelLog) {
            m_logger.info("host OOM kills read from the kernel log: " + m_kernelLog->describe());
        }
    } else {
        m_logger.warn("kernel log not readable (" + source.error() +
                      "): host OOM kills are seen only in the runs' own output");
    }
    if (m_options.engineMetrics) {
        m_engineScraper = std::make_unique<EngineScraper>();
    }
    m_snapshot.reportHz = m_options.sampleHz;
}

Collector::~Collector() {
    stop();
}

void Collector::setOnAppend(std::function<void()> callback) {
    m_onAppend = std::move(callback);
}

void Collector::start() {
    m_thread = std::thread([this] { loop(); });
}

void Collector::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void Collector::requestRate(const std::string& key, double hz) {
    {
        std::lock_guard lock(m_mutex);
        m_rates[key] = std::clamp(hz, 0.0, kMaxHz);
    }
    m_cv.notify_all();
}

void Collector::releaseRate(const std::string& key) {
    std::lock_guard lock(m_mutex);
    m_rates.erase(key);
}

double Collector::reportHz() const {
    std::lock_guard lock(m_mutex);
    double hz = m_options.sampleHz;
    for (const auto& [k, v] : m_rates) {
        hz = std::max(hz, v);
    }
    return std::min(hz, kMaxHz);
}

CollectorSnapshot Collector::snapshot() const {
    std::lock_guard lock(m_mutex);
    return m_snapshot;
}

void Collector::addSample(std::int64_t t, const std::string& runId, const std::string& series,
                          double last, double min, double max) {
    // Every name the collector samples is in the vocabulary (SeriesVocabulary tests); one that
    // is not would go out as a plain number.
    addSample(t, runId, series,
              telemetry::series::sampledUnit(series).value_or(telemetry::Unit::None), last, min,
              max, -1);
}

void Collector::addSample(std::int64_t t, const std::string& runId, const std::string& series,
                          telemetry::Unit unit, double last, double min, double max,
                          std::int64_t step) {
    v1::TelemetryRecord r;
    r.set_t_unix_ns(t);
    r.set_run_id(runId);
    auto* s = r.mutable_sample();
    s->set_series(series);
    s->set_value(last);
    s->set_min(min);
    s->set_max(max);
    s->set_step(step);
    s->set_unit(toProto(unit));
    m_pending.push_back(std::move(r));
}

void Collector::addEvent(std::int64_t t, const std::string& runId, int kind,
                         const std::string& message,
                         const std::map<std::string, std::string>& attrs) {
    v1::TelemetryRecord r;
    r.set_t_unix_ns(t);
    r.set_run_id(runId);
    auto* e = r.mutable_event();
    e->set_kind(static_cast<v1::EventKind>(kind));
    e->set_message(message);
    for (const auto& [k, v] : attrs) {
        (*e->mutable_attrs())[k] = v;
    }
    m_pending.push_back(std::move(r));
}

void Collector::loop() {
    using Clock = std::chrono::steady_clock;
    auto nextReport = Clock::now();
    auto nextFast = Clock::now();
    m_lastFlushNs = wallNs();
    while (true) {
        const double hz = reportHz();
        const double fastHz = std::clamp(4.0 * hz, 4.0, 40.0);
        const auto fastPeriod = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / fastHz));
        const auto reportPeriod = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / hz));
        {
            std::unique_lock lock(m_mutex);
            m_snapshot.reportHz = hz;
            if (m_cv.wait_until(lock, std::min(nextFast, nextReport), [this] { return m_stop; })) {
                break;
            }
        }
        const auto now = Clock::now();
        // Stamped at whole microseconds: the tick wakes 0.1-2 ms late anyway, so the digits
        // below 1 us are noise, and the history stores a chunk's times in its coarsest exact
        // unit (docs/history.md, "Time resolution").
        const std::int64_t t = wallNs() / 1000 * 1000;
        if (now >= nextFast) {
            sampleFast(t);
            nextFast += fastPeriod;
            if (nextFast < now) {
                nextFast = now + fastPeriod;  // fell behind (suspend, overload): do not burst
            }
        }
        if (now >= nextReport) {
            report(t);
            nextReport += reportPeriod;
            if (nextReport < now) {
                nextReport = now + reportPeriod;
            }
            // A faster rate asked for mid-interval takes effect at once.
            nextReport = std::min(nextReport, now + reportPeriod);
        } else if (m_pending.size() >= kLogFlushRecords ||
                   (!m_pending.empty() && t - m_lastFlushNs >= kLogFlushNs)) {
            flush();
        }
    }
    // Final drain: whatever the logs hold now, and the last interval's samples.
    pollLogs(wallNs(), false);
    flush();
}

void Collector::sampleFast(std::int64_t nowNs) {
    auto mem = readHostMemory(m_options.meminfoPath);
    if (mem) {
        m_host[series::kHostMemTotal].add(static_cast<double>(mem->totalBytes));
        m_host[series::kHostMemAvailable].add(static_cast<double>(mem->availableBytes));
        m_host[series::kHostMemUsed].add(static_cast<double>(mem->usedBytes));
        m_host[series::kHostMemPageCache].add(static_cast<double>(mem->pageCacheBytes));
        m_host[series::kHostMemShmem].add(static_cast<double>(mem->shmemBytes));
        m_host[series::kHostSwapUsed].add(static_cast<double>(mem->swapUsedBytes));
        m_lastUsed = mem->usedBytes;
        {
            std::lock_guard lock(m_mutex);
            m_snapshot.host = *mem;
            m_snapshot.hostValid = true;
        }
        if (m_options.memAlarmBytes > 0) {
            if (mem->usedBytes > m_options.memAlarmBytes) {
                if (m_memOverSinceNs == 0) {
                    m_memOverSinceNs = nowNs;
                }
                const double over = static_cast<double>(nowNs - m_memOverSinceNs) / 1e9;
                if (!m_memAlarmed && over >= m_options.memAlarmSeconds) {
                    m_memAlarmed = true;
                    addEvent(nowNs, "", v1::EVENT_MEMORY_ALARM,
                             "host memory used " + std::to_string(mem->usedBytes) +
                                 " bytes above the alarm line " +
                                 std::to_string(m_options.memAlarmBytes) + " for " +
                                 std::to_string(static_cast<long>(over)) + " s",
                             {{telemetry::attr::kUsedBytes, std::to_string(mem->usedBytes)},
                              {telemetry::attr::kThresholdBytes,
                               std::to_string(m_options.memAlarmBytes)},
                              {"sustained_seconds", std::to_string(over)},
                              {telemetry::attr::kState, "raised"}});
                }
            } else {
                if (m_memAlarmed) {
                    addEvent(nowNs, "", v1::EVENT_MEMORY_ALARM,
                             "host memory back under the alarm line (" +
                                 std::to_string(mem->usedBytes) + " bytes)",
                             {{telemetry::attr::kUsedBytes, std::to_string(mem->usedBytes)},
                              {telemetry::attr::kThresholdBytes,
                               std::to_string(m_options.memAlarmBytes)},
                              {telemetry::attr::kState, "cleared"}});
                }
                m_memAlarmed = false;
                m_memOverSinceNs = 0;
            }
        }
    } else if (mem.error() != m_lastMeminfoError) {
        m_lastMeminfoError = mem.error();
        m_logger.error("host memory sampling failed: " + mem.error());
    }
    // Run trees between reports: RSS only (statm is cheap; PSS is read once per report).
    for (auto& [id, track] : m_tracks) {
        if (!track.ended && !track.pids.empty()) {
            const TreeMemory tm = treeMemory(track.pids, false);
            track.rss.add(static_cast<double>(tm.rssBytes));
        }
    }
    pollLogs(nowNs, false);
}

void Collector::report(std::int64_t nowNs) {
    for (auto& [series, agg] : m_host) {
        if (agg.any) {
            addSample(nowNs, "", series, agg.last, agg.min, agg.max);
            agg.reset();
        }
    }
    pollKernelLog(nowNs);  // before syncRuns: a kill precedes the exit it causes
    syncRuns(nowNs);
    scrapeEngines(nowNs);
    sampleRoles(nowNs);
    sampleGpus(nowNs);
    checkStalls(nowNs);
    flush();
}

void Collector::syncRuns(std::int64_t nowNs) {
    std::vector<CollectorSnapshot::Run> snapRuns;
    for (auto& view : m_runManager.views()) {
        auto [it, inserted] = m_tracks.try_emplace(view.runId);
        RunTrack& track = it->second;
        if (inserted) {
            track.runId = view.runId;
            track.out.path = view.stdoutPath;
            track.err.path = view.stderrPath;
            track.out.metaKey = "log." + view.runId + ".stdout";
            track.err.metaKey = "log." + view.runId + ".stderr";
            for (LogFollow* lf : {&track.out, &track.err}) {
                if (auto off = m_spool.meta(lf->metaKey)) {
                    // A damaged value must not throw out of the collector thread: read from 0.
                    const auto offset = parseSpoolCounter(*off);
                    lf->committed = offset.value_or(0);
                    if (!offset) {
                        m_logger.warn("spool meta " + lf->metaKey + " is not an offset; reading " +
                                      lf->path + " from its start");
                    }
                }
            }
            track.reportedState = m_spool.meta("run." + view.runId + ".state").value_or("");
            track.lastProgressNs = nowNs;
        }
        track.rolePlan = view.rolePlan;
        if (view.sampleHz > 0 && !isFinal(view.status.state())) {
            requestRate("run:" + view.runId, view.sampleHz);
        } else {
            releaseRate("run:" + view.runId);
        }
        const v1::RunState state = view.status.state();
        // Run-state events, exactly once across daemon restarts: the last state reported is
        // stored in the spool in the same transaction as the event.
        const std::string stateKey = "run." + view.runId + ".state";
        const std::string stateName = v1::RunState_Name(state);
        if (track.reportedState != stateName && state != v1::RUN_STATE_STARTING) {
            // An ended run's events carry the supervisor's own exit time: this tick's clock
            // was read before the run was looked at, and can precede even its start.
            const std::int64_t eventNs =
                isFinal(state) && state != v1::RUN_STATE_LOST && view.status.ended_unix_ns() > 0
                    ? view.status.ended_unix_ns()
                    : nowNs;
            if (isFinal(state)) {
                // Drain the logs first so the exit follows the last metric lines.
                followLog(track, track.out, nowNs, true);
                followLog(track, track.err, nowNs, true);
                if (state != v1::RUN_STATE_LOST) {
                    addEvent(
                        eventNs, view.runId, v1::EVENT_PROCESS_EXIT,
                        "run " + view.runId + " exited: " +
                            (view.status.message().empty() ? "exit code 0" : view.status.message()),
                        {{"exit_code", std::to_string(view.status.exit_code())},
                         {"term_signal", std::to_string(view.status.term_signal())},
                         {"pid", std::to_string(view.status.pid())}});
                }
            }
            addEvent(eventNs, view.runId, v1::EVENT_RUN_STATE,
                     "run " + view.runId + " " + stateName +
                         (view.status.message().empty() ? "" : ": " + view.status.message()),
                     {{telemetry::attr::kState, stateName},
                      {"previous", track.reportedState},
                      {"exit_code", std::to_string(view.status.exit_code())},
                      {"term_signal", std::to_string(view.status.term_signal())}});
            // Typed on the wire (Event.run_state); attrs["state"] stays for older controllers
            // and is what the history stores.
            m_pending.back().mutable_event()->set_run_state(state);
            m_pendingMeta.emplace_back(stateKey, stateName);
            track.reportedState = stateName;
        }
        if (inserted && !isFinal(state)) {
            // What the run printed while no daemon read it (a restart re-attaching it) is read
            // now, stamped with this report's time, the time of the host sample just taken:
            // that sample is in the phase those lines began, not the one before (issue 46).
            followLog(track, track.out, nowNs, false);
            followLog(track, track.err, nowNs, false);
        }
        CollectorSnapshot::Run snap;
        snap.runId = view.runId;
        snap.state = state;
        if (isFinal(state)) {
            track.ended = true;
            track.pids.clear();
            track.rss.reset();
            snapRuns.push_back(snap);
            continue;
        }
        // Process tree: walked once per report; RSS between reports; PSS where readable.
        track.pids = runTree(view.supervisorPid, view.supervisorStartTicks, view.childPid,
                             view.childStartTicks);
        for (const int pid : track.pids) {
            m_oomMatcher.notePid(pid, view.runId, nowNs);
        }
        const TreeMemory tm = treeMemory(track.pids, true);
        track.rss.add(static_cast<double>(tm.rssBytes));
        addSample(nowNs, view.runId, series::kRunTreeRss, track.rss.last, track.rss.min,
                  track.rss.max);
        track.rss.reset();
        if (tm.pssReadable > 0) {
            addSample(nowNs, view.runId, series::kRunTreePss, static_cast<double>(tm.pssBytes),
                      static_cast<double>(tm.pssBytes), static_cast<double>(tm.pssBytes));
        }
        addSample(nowNs, view.runId, series::kRunTreeProcesses, static_cast<double>(tm.processes),
                  static_cast<double>(tm.processes), static_cast<double>(tm.processes));
        snap.rssBytes = tm.rssBytes;
        snap.pssBytes = tm.pssBytes;
        snapRuns.push_back(snap);
    }
    std::lock_guard lock(m_mutex);
    m_snapshot.runs = std::move(snapRuns);
}

// NVML's error counters as series (gpu.N.ecc.uncorrected, gpu.N.nvlink.replay_errors), and each
// change as one event: a new XID, more uncorrected ECC errors, more NVLink replays, or the GPU
// becoming unreadable.
void Collector::reportGpuErrors(std::int64_t nowNs, const compute::GpuDevice& g) {
    const auto ecc = static_cast<double>(g.eccUncorrected);
    addSample(nowNs, "", series::gpu(g.index, series::kGpuEccUncorrected), ecc, ecc, ecc);
    if (g.nvlinkReplayErrors >= 0) {
        const auto replay = static_cast<double>(g.nvlinkReplayErrors);
        addSample(nowNs, "", series::gpu(g.index, series::kGpuNvlinkReplays), replay, replay,
                  replay);
    }
    auto [it, first] = m_gpuCounters.try_emplace(g.index);
    GpuCounters& last = it->second;
    const std::map<std::string, std::string> who{
        {"component", "gpu"}, {"gpu", std::to_string(g.index)}, {"uuid", g.uuid}};
    auto event = [&](const std::string& what, const std::string& message,
                     const std::string& value) {
        auto attrs = who;
        attrs["what"] = what;
        attrs["value"] = value;
        addEvent(nowNs, "", v1::EVENT_INFO, "GPU " + std::to_string(g.index) + ": " + message,
                 attrs);
    };
    if (g.lastXid >= 0 && g.lastXid != last.lastXid) {
        event("xid", "XID " + std::to_string(g.lastXid), std::to_string(g.lastXid));
    }
    if (!first && g.eccUncorrected > last.eccUncorrected) {
        event("ecc_uncorrected",
              std::to_string(g.eccUncorrected - last.eccUncorrected) +
                  " new uncorrected ECC error(s)",
              std::to_string(g.eccUncorrected));
    }
    if (!first && g.nvlinkReplayErrors > last.nvlinkReplayErrors && last.nvlinkReplayErrors >= 0) {
        event("nvlink_replay",
              std::to_string(g.nvlinkReplayErrors - last.nvlinkReplayErrors) +
                  " new NVLink replay error(s)",
              std::to_string(g.nvlinkReplayErrors));
    }
    if (!g.error.empty() && g.error != last.error) {
        event("nvml_error", g.error, g.error);
    }
    last = GpuCounters{g.eccUncorrected, g.lastXid, g.nvlinkReplayErrors, g.error};
}

void Collector::sampleGpus(std::int64_t nowNs) {
    if (!m_options.gpuTelemetry) {
        if (!m_gpuReported) {
            m_gpuReported = true;
            addEvent(nowNs, "", v1::EVENT_INFO, "GPU telemetry disabled (--no-gpu)",
                     {{"component", "gpu"}, {"reason", "disabled by --no-gpu"}});
        }
        return;
    }
    const compute::GpuSnapshot gs = compute::queryGpus();
    if (!gs.unavailableReason.empty()) {
        if (!m_gpuReported) {
            m_gpuReported = true;
            addEvent(nowNs, "", v1::EVENT_INFO,
                     "GPU telemetry unavailable: " + gs.unavailableReason,
                     {{"component", "gpu"}, {"reason", gs.unavailableReason}});
            m_logger.info("GPU telemetry unavailable: " + gs.unavailableReason);
        }
        std::lock_guard lock(m_mutex);
        m_snapshot.gpuUnavailableReason = gs.unavailableReason;
        return;
    }
    std::vector<CollectorSnapshot::Gpu> snaps;
    for (const auto& g : gs.gpus) {
        const auto used = static_cast<double>(g.memoryUsedBytes);
        addSample(nowNs, "", series::gpu(g.index, series::kGpuMemUsed), used, used, used);
        addSample(nowNs, "", series::gpu(g.index, series::kGpuMemTotal),
                  static_cast<double>(g.memoryTotalBytes), static_cast<double>(g.memoryTotalBytes),
                  static_cast<double>(g.memoryTotalBytes));
        addSample(nowNs, "", series::gpu(g.index, series::kGpuUtil), g.utilizationPercent,
                  g.utilizationPercent, g.utilizationPercent);
        reportGpuErrors(nowNs, g);
        snaps.push_back({g.index, g.name, g.uuid, g.memoryUsedBytes, g.memoryTotalBytes,
                         g.utilizationPercent, g.eccUncorrected, g.lastXid, g.nvlinkReplayErrors});
    }
    // Per process, attributed to the run whose tree holds the pid; and summed by role.
    std::vector<std::pair<unsigned, pid_t>> gpuProcs;
    std::vector<std::uint64_t> gpuProcBytes;
    for (const auto& p : gs.processes) {
        gpuProcs.emplace_back(p.gpuIndex, p.pid);
        gpuProcBytes.push_back(p.usedBytes);
        std::string runId;
        for (const auto& [id, track] : m_tracks) {
            if (std::find(track.pids.begin(), track.pids.end(), p.pid) != track.pids.end()) {
                runId = id;
            }
        }
        const auto used = static_cast<double>(p.usedBytes);
        addSample(nowNs, runId, series::gpuProcessMemUsed(p.gpuIndex, p.pid), used, used, used);
    }
    addGpuRoleSamples(nowNs, gpuProcs, gpuProcBytes);
    std::lock_guard lock(m_mutex);
    m_snapshot.gpus = std::move(snaps);
    m_snapshot.gpuUnavailableReason.clear();
}

void Collector::checkStalls(std::int64_t nowNs) {
    if (m_options.stallSeconds <= 0) {
        return;
    }
    for (auto& [id, track] : m_tracks) {
        if (track.ended || track.pids.empty()) {
            continue;
        }
        const double quiet = static_cast<double>(nowNs - track.lastProgressNs) / 1e9;
        if (!track.stalled && quiet >= m_options.stallSeconds) {
            track.stalled = true;
            addEvent(nowNs, id, v1::EVENT_STALL,
                     "run " + id + ": no progress line for " +
                         std::to_string(static_cast<long>(quiet)) + " s while the process lives",
                     {{"quiet_seconds", std::to_string(quiet)},
                      {"threshold_seconds", std::to_string(m_options.stallSeconds)},
                      {"last_progress_unix_ns", std::to_string(track.lastProgressNs)}});
        }
    }
}

void Collector::pollLogs(std::int64_t nowNs, bool final) {
    for (auto& [id, track] : m_tracks) {
        if (track.logsDrained) {
            continue;
        }
        followLog(track, track.out, nowNs, final);
        followLog(track, track.err, nowNs, final);
        if (track.ended) {
            track.logsDrained = true;  // the final drain happened in syncRuns
        }
    }
}

void Collector::followLog(RunTrack& run, LogFollow& log, std::int64_t nowNs, bool drain) {
    const int fd = ::open(log.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    // One buffer for every read (allocating and zeroing 256 KiB per poll and log showed in the
    // profile at 2,000 lines/s).
    if (!m_readBuf) {
        m_readBuf = std::make_unique_for_overwrite<char[]>(kReadChunk);
    }
    bool progressed = false;
    while (true) {
        const std::uint64_t readPos = log.committed + log.partial.size();
        const ssize_t n = ::pread(fd, m_readBuf.get(), kReadChunk, static_cast<off_t>(readPos));
        if (n <= 0) {
            break;
        }
        const std::string_view buf(m_readBuf.get(), static_cast<std::size_t>(n));
        std::size_t start = 0;
        while (true) {
            const auto nl = buf.find('\n', start);
            if (nl == std::string_view::npos) {
                log.partial.append(buf.substr(start));
                break;
            }
            std::string_view piece(buf.data() + start, nl - start);
            if (log.partial.empty()) {
                if (!piece.empty()) {
                    handleLine(run, log.reader.feed(piece), nowNs);
                }
            } else {
                log.partial.append(piece);
                handleLine(run, log.reader.feed(log.partial), nowNs);
            }
            log.committed += log.partial.size() + (log.partial.empty() ? piece.size() : 0) + 1;
            log.partial.clear();
            start = nl + 1;
            progressed = true;
        }
        if (log.partial.size() > kMaxLineBytes) {
            // A line this long is not a metric line: skip it whole.
            log.committed += log.partial.size();
            log.partial.clear();
            progressed = true;
        }
        if (static_cast<std::size_t>(n) < kReadChunk) {
            break;
        }
    }
    ::close(fd);
    if (drain && !log.partial.empty()) {
        handleLine(run, log.reader.feed(log.partial), nowNs);  // no final newline
        log.committed += log.partial.size();
        log.partial.clear();
        progressed = true;
    }
    if (drain) {
        handleLine(run, log.reader.finish(), nowNs);  // a record still waiting for its rest
    }
    if (progressed) {
        // Replace any earlier offset for this log in the pending transaction.
        for (auto& [k, v] : m_pendingMeta) {
            if (k == log.metaKey) {
                v = std::to_string(log.committed);
                return;
            }
        }
        m_pendingMeta.emplace_back(log.metaKey, std::to_string(log.committed));
    }
}

void Collector::handleLine(RunTrack& run, ParsedLogLine parsed, std::int64_t nowNs) {
    if (parsed.progress) {
        if (run.stalled) {
            run.stalled = false;
            addEvent(nowNs, run.runId, v1::EVENT_INFO, "run " + run.runId + ": progress resumed",
                     {{"what", "stall_cleared"}});
        }
        run.lastProgressNs = nowNs;
    }
    for (const auto& m : parsed.metrics) {
        addSample(nowNs, run.runId, m.series, telemetry::unitOf(m.series), m.value, m.value,
                  m.value, m.step);
    }
    for (const auto& ev : parsed.events) {
        if (ev.kind == LogEventKind::Phase) {
            trackPhase(run, ev.attrs);
        }
        // A per-minute budget for each kind a log can repeat (phases and info are not limited).
        if (ev.kind != LogEventKind::Phase && ev.kind != LogEventKind::Info) {
            const bool nccl =
                ev.kind == LogEventKind::NcclWarning || ev.kind == LogEventKind::NcclError;
            const int key = static_cast<int>(nccl ? LogEventKind::NcclError : ev.kind);
            auto [it, fresh] = run.eventBudgets.try_emplace(key);
            EventBudget& b = it->second;
            if (fresh || nowNs - b.windowStartNs >= 60'000'000'000LL) {
                if (b.suppressed > 0) {
                    addEvent(nowNs, run.runId, v1::EVENT_INFO,
                             "run " + run.runId + ": " + std::to_string(b.suppressed) +
                                 (nccl ? " further NCCL lines"
                                       : " further " + kindName(ev.kind) + " events") +
                                 " in the last minute were not sent as events",
                             {{"what", nccl ? "nccl_suppressed" : "events_suppressed"},
                              {"kind", nccl ? "nccl" : kindName(ev.kind)},
                              {"count", std::to_string(b.suppressed)}});
                }
                b.windowStartNs = nowNs;
                b.left = static_cast<int>(m_options.ncclEventsPerMinute);
                b.suppressed = 0;
            }
            if (b.left <= 0) {
                ++b.suppressed;
                continue;
            }
            --b.left;
        }
        addEvent(nowNs, run.runId, eventKind(ev.kind), ev.message, ev.attrs);
    }
    if (!parsed.warning.empty()) {
        m_logger.warn("run " + run.runId + ": unparsed metric line: " + parsed.warning);
    }
}

void Collector::pollKernelLog(std::int64_t nowNs) {
    if (!m_kernelLog) {
        return;
    }
    const auto lines = m_kernelLog->poll();
    for (auto& [runId, ev] : m_oomMatcher.match(lines, nowNs, m_kernelLog->describe())) {
        const auto track = m_tracks.find(runId);
        if (track == m_tracks.end()) {
            continue;
        }
        ParsedLogLine parsed;
        parsed.events.push_back(std::move(ev));
        handleLine(track->second, std::move(parsed), nowNs);  // the per-kind event budget
    }
}

void Collector::flush() {
    m_writer.add(m_pending, m_pendingMeta);
    m_lastFlushNs = wallNs();
    if (!m_writer.flush(m_lastFlushNs)) {
        return;  // nothing new stored (the writer retries and logs)
    }
    {
        std::lock_guard lock(m_mutex);
        m_snapshot.lastSeq = m_spool.lastSeq();
    }
    if (m_onAppend) {
        m_onAppend();
    }
}

}  // namespace runplane::agent
