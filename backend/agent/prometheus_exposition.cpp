#include "backend/agent/prometheus_exposition.h"

#include <unistd.h>

#include <sstream>

#include "backend/agent/node_info.h"
#include "backend/agent/proc_tree.h"
#include "common/build_info.h"

namespace runplane::agent {
namespace {

std::string escapeLabel(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

void metric(std::ostringstream& o, const char* name, const char* type, const char* help,
            double value, const std::string& labels = "") {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << (labels.empty() ? "" : "{" + labels + "}") << ' ' << value << '\n';
}

// The Prometheus client libraries' process collector: CPU seconds and start time from
// /proc/self/stat (fields 14, 15 and 22, in clock ticks; start is relative to /proc/stat btime).
void appendProcessMetrics(std::ostringstream& o) {
    const auto stat = readSmallFile("/proc/self/stat", 4096);
    const auto procStat = readSmallFile("/proc/stat", 1 << 20);
    if (!stat) {
        return;
    }
    // The command name (field 2) may hold spaces; the fields after it start past the last ')'.
    const auto close = stat->rfind(')');
    if (close == std::string::npos) {
        return;
    }
    std::istringstream in(stat->substr(close + 2));
    std::string field;
    double utime = 0, stime = 0, start = 0;
    for (int i = 3; i <= 22 && in >> field; ++i) {
        if (i == 14) {
            utime = std::strtod(field.c_str(), nullptr);
        } else if (i == 15) {
            stime = std::strtod(field.c_str(), nullptr);
        } else if (i == 22) {
            start = std::strtod(field.c_str(), nullptr);
        }
    }
    const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    metric(o, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.", (utime + stime) / ticks);
    if (procStat) {
        const auto at = procStat->find("\nbtime ");
        if (at != std::string::npos) {
            const double btime = std::strtod(procStat->c_str() + at + 7, nullptr);
            metric(o, "process_start_time_seconds", "gauge",
                   "Start time of the process since unix epoch in seconds.", btime + start / ticks);
        }
    }
}

}  // namespace

std::string renderPrometheus(const CollectorSnapshot& s, const SpoolStats& spool,
                             const std::string& nodeId) {
    std::ostringstream o;
    o.precision(17);
    if (s.hostValid) {
        const auto& h = s.host;
        metric(o, "node_memory_MemTotal_bytes", "gauge", "Memory information field MemTotal_bytes.",
               static_cast<double>(h.totalBytes));
        metric(o, "node_memory_MemAvailable_bytes", "gauge",
               "Memory information field MemAvailable_bytes.",
               static_cast<double>(h.availableBytes));
        metric(o, "node_memory_MemFree_bytes", "gauge", "Memory information field MemFree_bytes.",
               static_cast<double>(h.freeBytes));
        metric(o, "node_memory_Cached_bytes", "gauge", "Memory information field Cached_bytes.",
               static_cast<double>(h.cachedBytes));
        metric(o, "node_memory_Buffers_bytes", "gauge", "Memory information field Buffers_bytes.",
               static_cast<double>(h.buffersBytes));
        metric(o, "node_memory_Shmem_bytes", "gauge", "Memory information field Shmem_bytes.",
               static_cast<double>(h.shmemBytes));
        metric(o, "node_memory_SwapTotal_bytes", "gauge",
               "Memory information field SwapTotal_bytes.", static_cast<double>(h.swapTotalBytes));
        metric(o, "node_memory_SwapFree_bytes", "gauge", "Memory information field SwapFree_bytes.",
               static_cast<double>(h.swapTotalBytes - h.swapUsedBytes));
        metric(o, "runplane_host_memory_used_bytes", "gauge", "MemTotal - MemAvailable.",
               static_cast<double>(h.usedBytes));
    }
    if (!s.gpus.empty()) {
        // DCGM exporter conventions: framebuffer in MiB, utilisation in percent.
        o << "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE "
             "DCGM_FI_DEV_FB_USED gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_FB_USED{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << g.usedBytes / (1024 * 1024) << '\n';
        }
        o << "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE "
             "DCGM_FI_DEV_FB_FREE gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_FB_FREE{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << (g.totalBytes - std::min(g.totalBytes, g.usedBytes)) / (1024 * 1024)
              << '\n';
        }
        o << "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL "
             "gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_GPU_UTIL{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << g.utilPercent << '\n';
        }
        // Error counters, under the DCGM exporter's names (uncorrected ECC = double-bit volatile).
        const auto counter = [&](const char* name, const char* help, const char* type, auto valueOf,
                                 bool (*has)(const CollectorSnapshot::Gpu&)) {
            o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
            for (const auto& g : s.gpus) {
                if (has(g)) {
                    o << name << "{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
                      << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\""
                      << escapeLabel(nodeId) << "\"} " << valueOf(g) << '\n';
                }
            }
        };
        counter(
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.",
            "counter", [](const CollectorSnapshot::Gpu& g) { return g.eccUncorrected; },
            [](const CollectorSnapshot::Gpu&) { return true; });
        counter(
            "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "gauge",
            [](const CollectorSnapshot::Gpu& g) { return g.lastXid; },
            [](const CollectorSnapshot::Gpu& g) { return g.lastXid >= 0; });
        counter(
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
            "Total number of NVLink retries (replay errors, all links).", "counter",
            [](const CollectorSnapshot::Gpu& g) { return g.nvlinkReplayErrors; },
            [](const CollectorSnapshot::Gpu& g) { return g.nvlinkReplayErrors >= 0; });
    }
    if (!s.roles.empty()) {
        o << "# HELP runplane_role_rss_bytes Resident memory of the node's processes of one role "
             "(docs/daemon.md, Process roles).\n"
             "# TYPE runplane_role_rss_bytes gauge\n";
        for (const auto& r : s.roles) {
            o << "runplane_role_rss_bytes{role=\"" << escapeLabel(r.role) << "\"} " << r.rssBytes
              << '\n';
        }
        o << "# HELP runplane_role_processes Processes of one role on the node.\n"
             "# TYPE runplane_role_processes gauge\n";
        for (const auto& r : s.roles) {
            o << "runplane_role_processes{role=\"" << escapeLabel(r.role) << "\"} " << r.processes
              << '\n';
        }
    }
    if (!s.plannedRoles.empty()) {
        // The plan beside the measured role bytes: every row, and the phase in progress alone
        // (so `runplane_role_rss_bytes - on(role) sum by (role) (runplane_role_planned_now_bytes)`
        // is a role's bytes beyond its plan).
        o << "# HELP runplane_role_planned_bytes A live run's planned host memory of one role "
             "in one phase on this node (StartRun planned_roles; docs/daemon.md, Planned "
             "roles).\n"
             "# TYPE runplane_role_planned_bytes gauge\n";
        for (const auto& p : s.plannedRoles) {
            o << "runplane_role_planned_bytes{run_id=\"" << escapeLabel(p.runId) << "\",role=\""
              << escapeLabel(p.role) << "\",phase=\"" << escapeLabel(p.phase) << "\"} " << p.bytes
              << '\n';
        }
        o << "# HELP runplane_role_planned_now_bytes A live run's planned host memory of one role "
             "in the phase in progress (absent between phases).\n"
             "# TYPE runplane_role_planned_now_bytes gauge\n";
        for (const auto& p : s.plannedRoles) {
            if (p.current) {
                o << "runplane_role_planned_now_bytes{run_id=\"" << escapeLabel(p.runId)
                  << "\",role=\"" << escapeLabel(p.role) << "\",phase=\"" << escapeLabel(p.phase)
                  << "\"} " << p.bytes << '\n';
            }
        }
    }
    if (!s.runs.empty()) {
        o << "# HELP runplane_run_tree_rss_bytes Resident memory of a run's whole process tree.\n"
             "# TYPE runplane_run_tree_rss_bytes gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_tree_rss_bytes{run_id=\"" << escapeLabel(r.runId) << "\"} "
              << r.rssBytes << '\n';
        }
        o << "# HELP runplane_run_tree_pss_bytes Proportional set size of a run's process tree "
             "(where readable).\n"
             "# TYPE runplane_run_tree_pss_bytes gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_tree_pss_bytes{run_id=\"" << escapeLabel(r.runId) << "\"} "
              << r.pssBytes << '\n';
        }
        o << "# HELP runplane_run_state Run state (runplane.v1.RunState number).\n"
             "# TYPE runplane_run_state gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_state{run_id=\"" << escapeLabel(r.runId) << "\",state=\""
              << v1::RunState_Name(static_cast<v1::RunState>(r.state)) << "\"} " << r.state << '\n';
        }
    }
    metric(o, "runplane_spool_last_seq", "gauge", "Highest sequence number written to the spool.",
           static_cast<double>(spool.nextSeq - 1));
    metric(o, "runplane_spool_records", "gauge",
           "Records held in the spool (not yet acknowledged).", static_cast<double>(spool.records));
    metric(o, "runplane_spool_payload_bytes", "gauge", "Payload bytes held in the spool.",
           static_cast<double>(spool.payloadBytes));
    metric(o, "runplane_spool_dropped_records_total", "counter",
           "Records dropped by the spool size bound (each drop is an EVENT_GAP).",
           static_cast<double>(spool.droppedRecords));
    metric(o, "runplane_telemetry_report_hz", "gauge", "Current telemetry report rate.",
           s.reportHz);
    appendProcessMetrics(o);
    if (auto statm = readSmallFile("/proc/self/statm", 256)) {
        std::istringstream in(*statm);
        std::uint64_t size = 0, resident = 0;
        in >> size >> resident;
        metric(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               static_cast<double>(resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))));
    }
    metric(
        o, "runplane_daemon_info", "gauge", "runplaned version and node id.", 1,
        "version=\"" + std::string(daemonVersion()) + "\",node_id=\"" + escapeLabel(nodeId) + "\"");
    // The Prometheus convention for build identity (cf. prometheus_build_info).
    const BuildInfo& build = buildInfo();
    metric(o, "runplane_build_info", "gauge",
           "A metric with a constant '1' value labeled by version, commit and build date.", 1,
           "version=\"" + escapeLabel(build.version) + "\",commit=\"" + escapeLabel(build.commit) +
               "\",build_date=\"" + escapeLabel(build.date) + "\"");
    return o.str();
}

}  // namespace runplane::agent
