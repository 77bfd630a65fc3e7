#pragma once
// Host OOM kills from the kernel's own log (issue #42): the kernel's OOM killer prints
//   `oom-kill:constraint=CONSTRAINT_NONE,...,task_memcg=/user.slice/...,task=perl,pid=1440763,uid=21417`
//   `Out of memory: Killed process 1440763 (perl) total-vm:87033376kB, anon-rss:60356340kB, ...`
// (also `Memory cgroup out of memory: Killed process ...`, and older kernels' bare `Killed process
// N (name) ...`). The daemon reads those lines where it can (/dev/kmsg; else the ring buffer
// through syslog(2), what `dmesg` reads; or a file named by --kernel-log) and matches the killed
// pid to the pids it has seen in each run's process tree: a match is a `host_oom` event on that
// run with the pid, the name and the RSS. The run's own output (`Killed`) stays the fallback.
// docs/daemon.md "Kernel log".

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/agent/log_metrics.h"
#include "common/result.h"

namespace runplane::agent {

/// One OOM kill read from a kernel log line.
struct KernelOomKill {
    std::int64_t pid = -1;
    std::string name;
    /// true for the `Killed process` line (with RSS); false for the `oom-kill:` line.
    bool killedLine = false;
    std::map<std::string, std::string> attrs;  // rss_bytes, anon_rss_bytes, constraint, memcg
};

/// Reads one kernel log line in any of the forms it is shown in (a /dev/kmsg record
/// `6,1234,518050606,-;text`, syslog's `<6>[  518.050606] text`, `dmesg` with or without
/// times, /var/log/kern.log); nullopt when it is not an OOM kill line.
std::optional<KernelOomKill> parseKernelOomLine(std::string_view line);

/// Where kernel log lines come from; behind an interface so a test can feed a file.
class KernelLogSource {
  public:
    virtual ~KernelLogSource() = default;
    /// The lines logged since the last call (the first call: since the source was opened). At
    /// most a bounded amount per call (kMaxPollBytes); the rest comes at the next call.
    virtual std::vector<std::string> poll() = 0;
    /// "/dev/kmsg", "syslog(2)" or the file's path.
    virtual std::string describe() const = 0;

    static constexpr std::size_t kMaxPollBytes = 1 << 20;
};

/// /dev/kmsg (or `path`), from its end: only records logged after the open. Fails when the
/// kernel does not let this process read it (dmesg_restrict=1 without CAP_SYSLOG).
Result<std::unique_ptr<KernelLogSource>> openKmsg(const std::string& path = "/dev/kmsg");
/// The kernel ring buffer through syslog(2) SYSLOG_ACTION_READ_ALL (what `dmesg` reads where
/// /dev/kmsg is missing): each poll reads the ring and returns the lines after the last one seen.
Result<std::unique_ptr<KernelLogSource>> openKernelRing();
/// A text file the kernel log is written to (/var/log/kern.log, or a test's file), from its end.
Result<std::unique_ptr<KernelLogSource>> openKernelLogFile(const std::string& path);
/// `spec`: "auto" (/dev/kmsg, else syslog(2)), "off" (nullptr, no error) or a file path.
Result<std::unique_ptr<KernelLogSource>> openKernelLog(const std::string& spec);

/// Matches kills to runs by the pids seen in each run's process tree. A pid is remembered for
/// kPidMemoryNs after it was last seen (the kill is read after the process is gone, often after
/// its run ended). Not thread-safe (the collector's thread owns it).
class KernelOomMatcher {
  public:
    static constexpr std::int64_t kPidMemoryNs = 10LL * 60 * 1'000'000'000;

    void notePid(std::int64_t pid, const std::string& runId, std::int64_t nowNs);
    /// The kills among `lines` of a pid some run had, as (run id, host_oom event). An `oom-kill:`
    /// line and the `Killed process` line of the same kill are one event (the second adds the
    /// RSS); an `oom-kill:` line whose partner never comes goes out at the next call.
    std::vector<std::pair<std::string, LogEvent>> match(const std::vector<std::string>& lines,
                                                        std::int64_t nowNs, const std::string& via);

  private:
    struct Seen {
        std::string runId;
        std::int64_t lastNs = 0;
    };
    std::map<std::int64_t, Seen> m_pids;
    std::map<std::int64_t, KernelOomKill> m_pendingOomKill;  // oom-kill: lines awaiting partners
    std::vector<std::pair<std::string, LogEvent>> emit(const KernelOomKill& kill,
                                                       const std::string& via);
};

}  // namespace runplane::agent
