#pragma once
// Host memory by process role (issue 43): one walk of the process table per report classifies
// every process with a RoleTable (process_roles.h) and sums its memory into its role. Per
// process: /proc/PID/statm every walk (RSS); for a new process, and every `refreshEvery` walks
// (staggered by pid) for a known one, /proc/PID/stat (parent, start time: a recycled pid is
// classified again) and, for the run's roles (every role but `other`), /proc/PID/status (swap,
// locked and pinned pages) and, at every pssEvery-th such read, /proc/PID/smaps_rollup (PSS),
// whose last readings are summed in between; /proc/PID/cmdline when the (pid, start time) pair is
// new (the row is cached) and, for `ray` and `driver` processes, at each full read.
// Bounded: at most maxProcesses processes and timeBudget per walk
// (the rest counted as skipped); a process that vanishes mid-read or a file that cannot be read
// is counted (vanished, unreadable), never guessed. Formulas: docs/daemon.md, "Process roles".
// Not thread-safe: the collector thread owns it.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/agent/process_roles.h"

namespace runplane::agent {

/// One role's memory in one walk, in bytes.
struct RoleUsage {
    std::uint64_t rssBytes = 0;          // Σ stat rss pages x page size, every process of the role
    std::uint64_t pssBytes = 0;          // Σ smaps_rollup Pss over pssReadable processes
    std::uint64_t swapBytes = 0;         // Σ status VmSwap over detailReadable processes
    std::uint64_t lockedBytes = 0;       // Σ status VmLck + VmPin over detailReadable processes
    std::uint64_t objectStoreBytes = 0;  // object_store rows: their /dev/shm files
    std::size_t processes = 0;
    std::size_t pssReadable = 0;
    std::size_t detailReadable = 0;  // status read (swap, locked)
    std::size_t objectStoreProcesses = 0;
    /// Processes of the role whose PSS or status could not be read (permissions, exited
    /// mid-walk): the role's PSS / swap / locked sums are then incomplete and are not sent.
    std::size_t unreadable = 0;
    bool detailed = false;  // status / smaps_rollup were read for this role (not for `other`)
};

struct RoleMemorySample {
    std::vector<RoleUsage> roles;  // index = RoleTable::roles()
    /// Rollout engines: the pid of each engine's topmost rollout process, and the RSS of its
    /// processes (an SGLang server's actor with its schedulers and detokenizer; a vLLM server).
    std::vector<std::pair<pid_t, std::uint64_t>> engines;
    std::size_t scanned = 0;   // processes measured (zombies and kernel threads included)
    std::size_t vanished = 0;  // listed, then gone before their stat could be read
    std::size_t skipped = 0;   // beyond maxProcesses or the time budget
    std::size_t reused = 0;    // `other` processes whose last RSS reading was reused (no read)
    double seconds = 0;        // the walk's wall time
};

struct RoleMemoryOptions {
    std::string procRoot = "/proc";
    std::size_t maxProcesses = 65536;
    std::chrono::milliseconds timeBudget{500};
    bool withPss = true;  // read smaps_rollup for the run's roles
    /// A known process is re-read in full (stat, status, smaps_rollup) every this many walks,
    /// staggered by pid; in between only its statm. New processes are read in full at once.
    unsigned refreshEvery = 10;
    /// A known process of `other` (not the run's, in the last walk) is not read between its full
    /// re-reads: its RSS is the one of its last stat (at most refreshEvery walks old). The walk's
    /// listing still drops it at once when it exits. false: its statm every walk.
    bool reuseOtherRss = true;
    /// smaps_rollup (PSS, a page-table walk: the dearest read of the walk) is read again at
    /// every this many full re-reads of a process (so PSS is at most refreshEvery × pssEvery
    /// walks old); the first read of a process, or of a process whose role changed, always
    /// reads it. 1: at every full re-read (the walk before 2026-12-06's third round).
    unsigned pssEvery = 3;
};

class RoleMemory {
  public:
    explicit RoleMemory(RoleTable table, RoleMemoryOptions options = {});

    /// One walk. `runPids`: the processes of the runs this daemon supervises (their unmatched
    /// processes are the `driver`).
    RoleMemorySample sample(const std::vector<pid_t>& runPids);

    const RoleTable& table() const { return m_table; }
    /// The role index of pid in the last walk; -1 if it was not seen.
    int roleOf(pid_t pid) const;
    /// The rollout engine (its topmost rollout process's pid) of pid in the last walk; 0 if none.
    pid_t engineOf(pid_t pid) const;
    /// Every process of a rollout engine in the last walk (engineOf(pid) != 0), ascending.
    std::vector<pid_t> enginePids() const;

  private:
    struct Known {
        std::uint64_t startTicks = 0;
        int rule = -1;  // the matching row, -1 none
        int role = -1;  // resolved in the last walk
        pid_t engine = 0;
        pid_t ppid = 0;              // from the last stat
        std::uint64_t rssPages = 0;  // the last RSS read (stat or statm)
        std::uint64_t epoch = 0;
        // The last status / smaps_rollup reading (the run's roles only).
        int detailRole = -1;
        bool statusOk = false, pssOk = false, storeOk = false;
        std::uint32_t detailReads = 0;  // full re-reads since smaps_rollup was last read
        std::uint64_t swapBytes = 0, lockedBytes = 0, pssBytes = 0, storeBytes = 0;
    };
    RoleTable m_table;
    RoleMemoryOptions m_options;
    std::unordered_map<pid_t, Known> m_known;
    std::uint64_t m_epoch = 0;
    long m_pageSize = 4096;
    int m_otherRole = -1;
    int m_driverRole = -1;
    int m_rolloutRole = -1;
    int m_rayRole = -1;
};

}  // namespace runplane::agent
