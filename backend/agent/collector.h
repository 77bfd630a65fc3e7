#pragma once
// The telemetry collector: one thread that samples host memory (and each run's process tree)
// faster than it reports, keeps min/max/last per interval, follows every run's stdout/stderr
// into log-derived metrics and events, watches for stalls, memory alarms and run-state
// changes, and writes everything to the spool. The spool write happens before any client is
// told (onAppend), so nothing is ever offered that is not durable.
//
// Rates: the report rate is max(--sample-hz, rates asked for by watchers and runs), capped at
// 10 Hz; the internal sampling rate is 4x the report rate, at least 4 Hz, at most 40 Hz.
//
// Thread-safety: public methods may be called from any thread.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runplane::compute {
struct GpuDevice;
}

#include "backend/agent/engine_metrics.h"
#include "backend/agent/host_memory.h"
#include "backend/agent/kernel_log.h"
#include "backend/agent/log_metrics.h"
#include "backend/agent/logger.h"
#include "backend/agent/proc_sockets.h"
#include "backend/agent/role_memory.h"
#include "backend/agent/run_manager.h"
#include "backend/agent/spool.h"
#include "backend/agent/spool_writer.h"
#include "common/telemetry/series.h"

namespace runplane::agent {

struct CollectorOptions {
    double sampleHz = 1.0;            // default report rate (--sample-hz)
    double stallSeconds = 0;          // 0 = stall detection off
    std::uint64_t memAlarmBytes = 0;  // 0 = memory alarm off
    double memAlarmSeconds = 60;
    std::string meminfoPath = "/proc/meminfo";
    bool gpuTelemetry = true;
    unsigned ncclEventsPerMinute = 20;          // per run and log event kind; beyond: counted
    std::size_t spoolBacklogRecords = 100'000;  // held in memory while the spool is unwritable
    bool roleMemory = true;                     // memory by process role (role_memory.h)
    RoleTable roleTable = RoleTable::builtin();
    /// Where host OOM kills are read (kernel_log.h): "auto" (/dev/kmsg, else syslog(2)), "off",
    /// or a file the kernel log is written to.
    std::string kernelLog = "auto";
    /// Scrape the inference engines' /metrics found in the runs (engine_metrics.h).
    bool engineMetrics = true;
};

/// Latest values for the Prometheus exposition (a value snapshot).
struct CollectorSnapshot {
    HostMemory host;
    bool hostValid = false;
    struct Gpu {
        unsigned index = 0;
        std::string name, uuid;
        std::uint64_t usedBytes = 0, totalBytes = 0;
        unsigned utilPercent = 0;
        std::uint64_t eccUncorrected = 0;
        std::int64_t lastXid = -1;             // -1: none seen
        std::int64_t nvlinkReplayErrors = -1;  // -1: no NVLink
    };
    std::vector<Gpu> gpus;
    std::string gpuUnavailableReason;
    struct Run {
        std::string runId;
        std::uint64_t rssBytes = 0, pssBytes = 0;
        int state = 0;
    };
    std::vector<Run> runs;
    /// Memory by process role, the last walk (role_memory.h); empty with the walk off.
    struct Role {
        std::string role;
        std::uint64_t rssBytes = 0;
        std::size_t processes = 0;
    };
    std::vector<Role> roles;
    /// Each live run's plan by role (StartRun's planned_roles), every phase; `current` marks the
    /// rows of the phase in progress (docs/daemon.md, "Planned roles"). Empty with the walk off.
    struct PlannedRole {
        std::string runId, role, phase;
        double bytes = 0;
        bool current = false;
    };
    std::vector<PlannedRole> plannedRoles;
    std::uint64_t lastSeq = 0;
    double reportHz = 1.0;
};

/// See the file comment. Owns its thread; stop() (or the destructor) joins it.
class Collector {
  public:
    Collector(CollectorOptions options, Spool& spool, RunManager& runs, Logger& logger);
    ~Collector();
    Collector(const Collector&) = delete;
    Collector& operator=(const Collector&) = delete;

    /// Called (from the collector thread) after each durable append.
    void setOnAppend(std::function<void()> callback);
    void start();
    void stop();

    /// A watcher (or anything else) asks for at least `hz`; key identifies the asker.
    void requestRate(const std::string& key, double hz);
    void releaseRate(const std::string& key);
    double reportHz() const;

    CollectorSnapshot snapshot() const;

  private:
    struct Aggregate {
        double last = 0, min = 0, max = 0;
        bool any = false;
        void add(double v);
        void reset() { any = false; }
    };
    struct LogFollow {
        std::string path;
        std::string metaKey;
        std::uint64_t committed = 0;  // offset after the last complete line handled
        std::string partial;
        LogReader reader;  // what spans lines (joined records, tracebacks)
    };
    // Log events of one kind (NCCL warnings and errors count together) per run per minute.
    struct EventBudget {
        int left = 0;
        std::int64_t windowStartNs = 0;
        std::uint64_t suppressed = 0;
    };
    struct RunTrack {
        std::string runId;
        LogFollow out, err;
        std::vector<int> pids;
        Aggregate rss;
        std::int64_t lastProgressNs = 0;
        bool stalled = false;
        std::map<int, EventBudget> eventBudgets;  // by LogEventKind (NCCL: NcclError)
        bool ended = false;
        bool logsDrained = false;
        std::string reportedState;  // last EVENT_RUN_STATE state stored in the spool
        std::shared_ptr<const RunRolePlan> rolePlan;  // StartRun's plan by role (null: none)
        std::string phase;  // the phase in progress (its phase events), "" between phases
    };

    void loop();
    void sampleFast(std::int64_t nowNs);
    void report(std::int64_t nowNs);
    void pollLogs(std::int64_t nowNs, bool final);
    void followLog(RunTrack& run, LogFollow& log, std::int64_t nowNs, bool drain);
    void handleLine(RunTrack& run, ParsedLogLine parsed, std::int64_t nowNs);
    void syncRuns(std::int64_t nowNs);
    void sampleGpus(std::int64_t nowNs);
    /// Memory by process role (collector_roles.cpp): one walk, role.* series.
    void sampleRoles(std::int64_t nowNs);
    /// The live runs' own role rows join the walk's table (collector_roles.cpp).
    void syncRunRoleRows();
    /// A phase event moves the run's phase in progress (collector_roles.cpp).
    static void trackPhase(RunTrack& run, const std::map<std::string, std::string>& attrs);
    /// GPU memory by role: gpu.<i>.role.<role>.mem.used_bytes (collector_roles.cpp).
    void addGpuRoleSamples(std::int64_t nowNs, const std::vector<std::pair<unsigned, pid_t>>& procs,
                           const std::vector<std::uint64_t>& usedBytes);
    void reportGpuErrors(std::int64_t nowNs, const compute::GpuDevice& gpu);
    void checkStalls(std::int64_t nowNs);
    /// Kernel OOM kills of the runs' processes: host_oom events on those runs (kernel_log.h).
    void pollKernelLog(std::int64_t nowNs);
    /// Engines' /metrics of the runs: targets found, scrapes stored (collector_engines.cpp).
    void scrapeEngines(std::int64_t nowNs);
    void flush();
    /// One of the daemon's own series (step -1), sent with the unit the vocabulary gives it
    /// (telemetry::series::sampledUnit).
    void addSample(std::int64_t t, const std::string& runId, const std::string& series, double last,
                   double min, double max);
    /// Any series with its unit (a workload's metric: telemetry::unitOf); sent as Sample.unit.
    void addSample(std::int64_t t, const std::string& runId, const std::string& series,
                   telemetry::Unit unit, double last, double min, double max, std::int64_t step);
    void addEvent(std::int64_t t, const std::string& runId, int kind, const std::string& message,
                  const std::map<std::string, std::string>& attrs);

    CollectorOptions m_options;
    Spool& m_spool;
    RunManager& m_runManager;
    Logger& m_logger;
    std::function<void()> m_onAppend;

    mutable std::mutex m_mutex;  // guards m_rates, m_snapshot, m_stop
    std::condition_variable m_cv;
    bool m_stop = false;
    std::map<std::string, double> m_rates;
    CollectorSnapshot m_snapshot;
    std::thread m_thread;

    // Collector-thread state.
    std::map<std::string, Aggregate> m_host;
    std::map<std::string, RunTrack> m_tracks;
    std::vector<v1::TelemetryRecord> m_pending;
    std::vector<std::pair<std::string, std::string>> m_pendingMeta;
    SpoolWriter m_writer;  // takes m_pending at each flush
    std::int64_t m_memOverSinceNs = 0;
    bool m_memAlarmed = false;
    std::uint64_t m_lastUsed = 0;
    bool m_gpuReported = false;
    // Per GPU index: the error counters last reported, so a change becomes one event.
    struct GpuCounters {
        std::uint64_t eccUncorrected = 0;
        std::int64_t lastXid = -1;
        std::int64_t nvlinkReplayErrors = -1;
        std::string error;
    };
    std::map<unsigned, GpuCounters> m_gpuCounters;
    std::int64_t m_lastFlushNs = 0;
    std::unique_ptr<char[]> m_readBuf;  // followLog's read buffer, kept between polls
    std::string m_lastMeminfoError;
    std::unique_ptr<RoleMemory> m_roleMemory;  // null with roleMemory off
    std::string m_runRoleRows;  // the live runs' own role rows the walk's table was built with
    std::unique_ptr<KernelLogSource> m_kernelLog;  // null: off or not readable
    KernelOomMatcher m_oomMatcher;
    std::unique_ptr<EngineScraper> m_engineScraper;   // null with engineMetrics off
    std::int64_t m_engineDiscoveryNs = 0;             // when the targets were last looked for
    std::map<int, std::string> m_engineErrorsLogged;  // per port, the failure last logged
    std::string m_engineTargetsLogged;                // the target list last logged
    ListenerScanner m_engineSockets;                  // engine processes' listening sockets
};

}  // namespace runplane::agent
