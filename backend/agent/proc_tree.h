#pragma once
// Process-table helpers over /proc: identity that survives pid reuse (pid + start time), the
// set of processes that belong to a run (its session, its process group and every descendant),
// and their memory (RSS from statm, PSS from smaps_rollup where readable).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runplane::agent {

/// The fields of /proc/PID/stat the daemon needs.
struct ProcStat {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgrp = 0;
    pid_t session = 0;
    char state = '?';
    std::uint64_t startTicks = 0;  // field 22: start time since boot, in clock ticks
    std::uint64_t utimeTicks = 0;
    std::uint64_t stimeTicks = 0;
    std::uint64_t rssPages = 0;
};

/// Parses one /proc/PID/stat line (the comm may contain spaces and parentheses).
std::optional<ProcStat> parseProcStat(const std::string& text);
/// Reads /proc/PID/stat; nullopt when the process is gone.
std::optional<ProcStat> readProcStat(pid_t pid);

/// True when a process with this pid exists, is not a zombie, and started at startTicks
/// (so a recycled pid is never mistaken for the original process).
bool processAlive(pid_t pid, std::uint64_t startTicks);

/// Every live pid in /proc (one directory scan).
std::vector<pid_t> listPids();

/// The processes of a run: every process in session `session` (except `exclude`), in process
/// group `pgrp`, or descending from `root`. Any of the three may be 0 (= not used).
std::vector<ProcStat> runProcesses(pid_t session, pid_t pgrp, pid_t root, pid_t exclude);

/// Every descendant of `root` (not root itself), found through /proc/PID/task/TID/children, so
/// the cost grows with the tree, not with the process table. nullopt when root is gone or the
/// kernel lacks CONFIG_PROC_CHILDREN (callers then fall back to runProcesses).
std::optional<std::vector<pid_t>> descendants(pid_t root);

/// The processes of one run. The supervisor is a child subreaper, so every orphan of the run (even
/// one that called setsid) is re-parented to it: while it lives, its descendants are the whole
/// tree (cheap walk). Without it, a full scan finds the child's descendants. The supervisor
/// itself is never included. Identities are checked against start times (pid reuse).
std::vector<pid_t> runTree(pid_t supervisorPid, std::uint64_t supervisorStartTicks, pid_t childPid,
                           std::uint64_t childStartTicks);

/// Memory of a set of processes, in bytes. pssBytes is summed only over processes whose
/// smaps_rollup could be read; pssReadable counts them.
struct TreeMemory {
    std::uint64_t rssBytes = 0;
    std::uint64_t pssBytes = 0;
    std::size_t processes = 0;
    std::size_t pssReadable = 0;
};

/// RSS of each pid from /proc/PID/statm (resident pages x page size); PSS when withPss.
TreeMemory treeMemory(const std::vector<pid_t>& pids, bool withPss);

/// "Pss:" of /proc/PID/smaps_rollup in bytes; nullopt when unreadable (permissions, old kernel).
std::optional<std::uint64_t> readPssBytes(pid_t pid);

/// Reads a whole small file; nullopt on any error.
std::optional<std::string> readSmallFile(const std::string& path, std::size_t maxBytes = 65536);

}  // namespace runplane::agent
