#include "backend/agent/role_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace runplane::agent {
namespace {

constexpr int kMaxDepth = 64;  // parent-chain walks stop here (a cycle or a very deep tree)

/// Reads up to size-1 bytes of dirfd/path into buf (NUL-terminated); -1 on error (errno set).
ssize_t readAt(int dirfd, const char* path, char* buf, std::size_t size) {
    const int fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    std::size_t total = 0;
    while (total + 1 < size) {
        const ssize_t n = ::read(fd, buf + total, size - 1 - total);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            errno = e;
            return -1;
        }
        if (n == 0) {
            break;
        }
        total += static_cast<std::size_t>(n);
    }
    ::close(fd);
    buf[total] = '\0';
    return static_cast<ssize_t>(total);
}

struct StatFields {
    pid_t ppid = 0;
    char state = '?';
    std::uint64_t startTicks = 0;
    std::uint64_t rssPages = 0;
    std::string_view comm;
};

/// "pid (comm) state ppid ... starttime(22) vsize(23) rss(24)"; the comm may hold spaces,
/// parentheses and any byte, so it ends at the last ')'.
bool parseStat(std::string_view text, StatFields& out) {
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
        close + 2 >= text.size()) {
        return false;
    }
    out.comm = text.substr(open + 1, close - open - 1);
    out.state = text[close + 2];
    const char* p = text.data() + close + 3;
    const char* end = text.data() + text.size();
    int field = 4;
    while (p < end && field <= 24) {
        while (p < end && *p == ' ') {
            ++p;
        }
        std::uint64_t v = 0;
        bool neg = false;
        if (p < end && *p == '-') {
            neg = true;
            ++p;
        }
        const char* start = p;
        while (p < end && *p >= '0' && *p <= '9') {
            v = v * 10 + static_cast<std::uint64_t>(*p - '0');
            ++p;
        }
        if (p == start) {
            return false;
        }
        if (neg) {
            v = 0;
        }
        if (field == 4) {
            out.ppid = static_cast<pid_t>(v);
        } else if (field == 22) {
            out.startTicks = v;
        } else if (field == 24) {
            out.rssPages = v;
        }
        ++field;
    }
    return field > 24;
}

/// The value in kB of a "Key:   123 kB" line of status / smaps_rollup, in bytes; false if the
/// key is absent.
bool kbField(std::string_view text, std::string_view key, std::uint64_t& bytes) {
    std::size_t pos = 0;
    while (true) {
        pos = text.find(key, pos);
        if (pos == std::string_view::npos) {
            return false;
        }
        if ((pos == 0 || text[pos - 1] == '\n') && pos + key.size() < text.size() &&
            text[pos + key.size()] == ':') {
            break;
        }
        pos += key.size();
    }
    const char* p = text.data() + pos + key.size() + 1;
    const char* end = text.data() + text.size();
    while (p < end && (*p == ' ' || *p == '\t')) {
        ++p;
    }
    std::uint64_t v = 0;
    const char* start = p;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + static_cast<std::uint64_t>(*p - '0');
        ++p;
    }
    if (p == start) {
        return false;
    }
    bytes = v * 1024;
    return true;
}

/// Ray's object store as `pid` maps it: the tmpfs files under /dev/shm (plasma…, unlinked) in
/// its /proc/PID/maps, each counted once at its allocated size (st_blocks of
/// /proc/PID/map_files/START-END): the pages every process wrote into the store, whoever
/// touched them (the raylet's own RssShmem counts only the pages it faulted in itself).
/// nullopt when there is no such mapping or map_files cannot be read (permissions).
std::optional<std::uint64_t> mappedShmBytes(int procFd, pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "%d/maps", static_cast<int>(pid));
    std::string maps(1u << 20, '\0');
    const ssize_t n = readAt(procFd, path, maps.data(), maps.size());
    if (n <= 0) {
        return std::nullopt;
    }
    maps.resize(static_cast<std::size_t>(n));
    std::vector<std::pair<dev_t, ino_t>> seen;
    std::uint64_t bytes = 0;
    bool any = false;
    std::size_t pos = 0;
    while (pos < maps.size()) {
        auto end = maps.find('\n', pos);
        if (end == std::string::npos) {
            end = maps.size();
        }
        const std::string_view line(maps.data() + pos, end - pos);
        pos = end + 1;
        const auto shm = line.find(" /dev/shm/");
        if (shm == std::string_view::npos) {
            continue;
        }
        const auto dash = line.find(' ');
        if (dash == std::string_view::npos || dash > 40) {
            continue;
        }
        char file[96];
        std::snprintf(file, sizeof file, "%d/map_files/%.*s", static_cast<int>(pid),
                      static_cast<int>(dash), line.data());
        struct stat st {};
        if (::fstatat(procFd, file, &st, 0) != 0) {
            return std::nullopt;  // map_files needs ptrace access: fall back to RssShmem
        }
        any = true;
        const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
        if (std::find(seen.begin(), seen.end(), id) == seen.end()) {
            seen.push_back(id);
            bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
        }
    }
    if (!any) {
        return std::nullopt;
    }
    return bytes;
}

}  // namespace

RoleMemory::RoleMemory(RoleTable table, RoleMemoryOptions options)
    : m_table(std::move(table)), m_options(std::move(options)) {
    const long ps = ::sysconf(_SC_PAGESIZE);
    m_pageSize = ps > 0 ? ps : 4096;
    m_otherRole = m_table.roleIndex(kRoleOther);
    m_driverRole = m_table.roleIndex(kRoleDriver);
    m_rolloutRole = m_table.roleIndex(kRoleRollout);
    m_rayRole = m_table.roleIndex(kRoleRay);
}

int RoleMemory::roleOf(pid_t pid) const {
    const auto it = m_known.find(pid);
    return it == m_known.end() || it->second.epoch != m_epoch ? -1 : it->second.role;
}

pid_t RoleMemory::engineOf(pid_t pid) const {
    const auto it = m_known.find(pid);
    return it == m_known.end() || it->second.epoch != m_epoch ? 0 : it->second.engine;
}

std::vector<pid_t> RoleMemory::enginePids() const {
    std::vector<pid_t> out;
    for (const auto& [pid, k] : m_known) {
        if (k.epoch == m_epoch && k.engine != 0) {
            out.push_back(pid);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

RoleMemorySample RoleMemory::sample(const std::vector<pid_t>& runPids) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const auto deadline = t0 + m_options.timeBudget;
    ++m_epoch;
    RoleMemorySample out;
    out.roles.resize(m_table.roles().size());

    const int procFd = ::open(m_options.procRoot.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procFd < 0) {
        out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        return out;
    }
    // 1. The pids (one directory scan), bounded.
    std::vector<pid_t> pids;
    if (DIR* dir = ::fdopendir(::dup(procFd))) {
        while (dirent* e = ::readdir(dir)) {
            const char* n = e->d_name;
            if (*n < '1' || *n > '9') {
                continue;
            }
            char* endp = nullptr;
            const long v = std::strtol(n, &endp, 10);
            if (*endp != '\0' || v <= 0 || v > 0x7fffffff) {
                continue;
            }
            if (pids.size() >= m_options.maxProcesses) {
                ++out.skipped;
                continue;
            }
            pids.push_back(static_cast<pid_t>(v));
        }
        ::closedir(dir);
    }

    // 2. stat of each (RSS, parent, start); the row of each new (pid, start).
    struct Entry {
        pid_t pid = 0;
        pid_t ppid = 0;
        std::uint64_t rssPages = 0;
        Known* known = nullptr;
        bool refreshed = false;  // stat was read this walk (status / smaps_rollup are due too)
    };
    std::vector<Entry> entries;
    entries.reserve(pids.size());
    char path[64];
    char buf[4096];
    std::string cmdline;
    const std::uint64_t every = std::max<std::uint64_t>(1, m_options.refreshEvery);
    const std::unordered_set<pid_t> inRun(runPids.begin(), runPids.end());
    for (std::size_t i = 0; i < pids.size(); ++i) {
        if ((i & 63) == 63 && Clock::now() > deadline) {
            out.skipped += pids.size() - i;
            break;
        }
        const pid_t pid = pids[i];
        // A process seen in the previous walk is re-read in full (stat: parent, start time) once
        // every `every` walks, staggered by pid; in between only its statm (RSS), as cheap as the
        // plain /proc walk the daemon did before.
        auto known = m_known.find(pid);
        const bool seen = known != m_known.end() && known->second.epoch + 1 == m_epoch;
        const bool refresh = !seen || (m_epoch + static_cast<std::uint64_t>(pid)) % every == 0;
        if (!refresh && m_options.reuseOtherRss && known->second.role == m_otherRole &&
            m_otherRole >= 0 && inRun.count(pid) == 0) {
            // Not the run's (`other` in the last walk, not in a run's tree): its RSS from its
            // last full read (at most `every` walks old); the listing above still drops it as
            // soon as it exits.
            ++out.scanned;
            ++out.reused;
            Known& k = known->second;
            k.epoch = m_epoch;
            k.role = -2;
            k.engine = 0;
            entries.push_back(Entry{pid, k.ppid, k.rssPages, &k, false});
            continue;
        }
        if (!refresh) {
            std::snprintf(path, sizeof path, "%d/statm", static_cast<int>(pid));
            const ssize_t n = readAt(procFd, path, buf, sizeof buf);
            char* end = nullptr;
            if (n <= 0) {
                ++out.vanished;
                continue;
            }
            std::strtoull(buf, &end, 10);  // size
            const std::uint64_t resident = std::strtoull(end, nullptr, 10);
            ++out.scanned;
            Known& k = known->second;
            k.rssPages = resident;
            k.epoch = m_epoch;
            k.role = -2;
            k.engine = 0;
            entries.push_back(Entry{pid, k.ppid, resident, &k, false});
            continue;
        }
        std::snprintf(path, sizeof path, "%d/stat", static_cast<int>(pid));
        const ssize_t n = readAt(procFd, path, buf, sizeof buf);
        StatFields st;
        if (n <= 0 || !parseStat(std::string_view(buf, static_cast<std::size_t>(n)), st)) {
            ++out.vanished;  // exited between the scan and now (or a stat we cannot parse)
            continue;
        }
        ++out.scanned;
        if (st.state == 'Z' || st.state == 'X') {
            continue;  // a zombie holds no memory
        }
        Known& k = m_known[pid];
        // Ray's pooled workers start as `ray::IDLE` and take an actor's title later
        // (setproctitle), and a run's launcher may `exec` its trainer (bash -c "exec -a TITLE
        // python ..."): same pid, same start time. A `ray` or `driver` process's command line is
        // matched again at each full read.
        const bool retitle = k.epoch != 0 && ((k.role == m_rayRole && m_rayRole >= 0) ||
                                              (k.role == m_driverRole && m_driverRole >= 0));
        if (k.epoch == 0 || k.startTicks != st.startTicks || retitle) {
            // New, or a recycled pid: read the command line once and match the rows.
            const std::string comm(st.comm);
            std::snprintf(path, sizeof path, "%d/cmdline", static_cast<int>(pid));
            const ssize_t c = readAt(procFd, path, buf, sizeof buf);
            cmdline.assign(buf, c > 0 ? static_cast<std::size_t>(c) : 0);
            k = Known{};
            k.startTicks = st.startTicks;
            k.rule = m_table.match(cmdline, comm);
        }
        k.ppid = st.ppid;
        k.rssPages = st.rssPages;
        k.epoch = m_epoch;
        k.role = -2;  // unresolved
        k.engine = 0;
        entries.push_back(Entry{pid, st.ppid, st.rssPages, &k, true});
    }

    // 3. Roles: the row's, else the parent's, else driver for a run's process, else other.
    std::unordered_map<pid_t, std::size_t> index;
    index.reserve(entries.size() * 2);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        index.emplace(entries[i].pid, i);
    }
    const auto& rules = m_table.rules();
    auto ownRole = [&](const Entry& e) {
        return e.known->rule >= 0
                   ? m_table.roleIndex(rules[static_cast<std::size_t>(e.known->rule)].role)
                   : -1;
    };
    std::vector<std::size_t> chain;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].known->role != -2) {
            continue;
        }
        // Walk up until a process whose role is known (resolved, or its own row).
        chain.clear();
        std::size_t cur = i;
        int role = -1;
        for (int depth = 0; depth < kMaxDepth; ++depth) {
            Entry& e = entries[cur];
            if (e.known->role != -2) {
                role = e.known->role;
                break;
            }
            const int own = ownRole(e);
            if (own >= 0) {
                e.known->role = own;
                role = own;
                break;
            }
            chain.push_back(cur);
            const auto parent = index.find(e.ppid);
            if (parent == index.end() || parent->second == cur) {
                break;
            }
            cur = parent->second;
        }
        // Each process of the chain takes the first inheriting role above it; without one, a
        // run's process is the driver and everything else is other.
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            Entry& e = entries[*it];
            if (e.known->role != -2) {
                role = e.known->role;
                continue;
            }
            if (role >= 0 && m_table.inherits(role)) {
                e.known->role = role;
            } else if (inRun.count(e.pid) != 0 && m_driverRole >= 0) {
                e.known->role = m_driverRole;
                role = m_driverRole;
            } else {
                e.known->role = m_otherRole;
                role = m_otherRole;
            }
        }
    }

    // 4. Engines: a rollout process's topmost rollout ancestor.
    std::unordered_map<pid_t, std::uint64_t> engineRss;
    if (m_rolloutRole >= 0) {
        for (auto& e : entries) {
            if (e.known->role != m_rolloutRole) {
                continue;
            }
            pid_t top = e.pid;
            std::size_t cur = index[e.pid];
            for (int depth = 0; depth < kMaxDepth; ++depth) {
                const auto parent = index.find(entries[cur].ppid);
                if (parent == index.end() || parent->second == cur ||
                    entries[parent->second].known->role != m_rolloutRole) {
                    break;
                }
                cur = parent->second;
                top = entries[cur].pid;
            }
            e.known->engine = top;
            engineRss[top] += e.rssPages * static_cast<std::uint64_t>(m_pageSize);
        }
    }
    out.engines.assign(engineRss.begin(), engineRss.end());
    std::sort(out.engines.begin(), out.engines.end());

    // 5. Memory per role: RSS for every process; status and PSS for the run's roles.
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        const int role = e.known->role;
        if (role < 0 || static_cast<std::size_t>(role) >= out.roles.size()) {
            continue;
        }
        RoleUsage& u = out.roles[static_cast<std::size_t>(role)];
        u.rssBytes += e.rssPages * static_cast<std::uint64_t>(m_pageSize);
        ++u.processes;
        if (role == m_otherRole) {
            continue;
        }
        u.detailed = true;
        Known& k = *e.known;
        // status and smaps_rollup with the full re-read (every `every` walks); the last values
        // in between. A process whose role changed is read again at once.
        if (e.refreshed || k.detailRole != role) {
            if (Clock::now() > deadline) {
                ++u.unreadable;  // out of time: counted, not guessed
                continue;
            }
            // PSS with every pssEvery-th full read (or a new role); the last reading between.
            const bool pssDue = k.detailRole != role || !k.pssOk ||
                                ++k.detailReads >= std::max(1U, m_options.pssEvery);
            k.detailRole = role;
            k.statusOk = k.storeOk = false;
            std::snprintf(path, sizeof path, "%d/status", static_cast<int>(e.pid));
            const ssize_t n = readAt(procFd, path, buf, sizeof buf);
            std::uint64_t lck = 0, pin = 0, shmem = 0;
            const std::string_view status(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
            if (n > 0 && kbField(status, "VmSwap", k.swapBytes)) {
                kbField(status, "VmLck", lck);
                kbField(status, "VmPin", pin);
                k.lockedBytes = lck + pin;
                k.statusOk = true;
                const int rule = k.rule;
                if (rule >= 0 && rules[static_cast<std::size_t>(rule)].objectStore) {
                    if (auto mapped = mappedShmBytes(procFd, e.pid)) {
                        k.storeBytes = *mapped;
                        k.storeOk = true;
                    } else if (kbField(status, "RssShmem", shmem)) {
                        k.storeBytes = shmem;
                        k.storeOk = true;
                    }
                }
            }
            if (m_options.withPss && pssDue) {
                k.detailReads = 0;
                std::snprintf(path, sizeof path, "%d/smaps_rollup", static_cast<int>(e.pid));
                const ssize_t m = readAt(procFd, path, buf, sizeof buf);
                k.pssOk = m > 0 && kbField(std::string_view(buf, static_cast<std::size_t>(m)),
                                           "Pss", k.pssBytes);
            }
        }
        if (k.statusOk) {
            u.swapBytes += k.swapBytes;
            u.lockedBytes += k.lockedBytes;
            ++u.detailReadable;
        }
        if (k.storeOk) {
            u.objectStoreBytes += k.storeBytes;
            ++u.objectStoreProcesses;
        }
        if (k.pssOk) {
            u.pssBytes += k.pssBytes;
            ++u.pssReadable;
        }
        if (!k.statusOk || (m_options.withPss && !k.pssOk)) {
            ++u.unreadable;  // permissions (ptrace access), or exited
        }
    }
    ::close(procFd);

    // Forget processes not seen in this walk.
    if (m_known.size() > entries.size() * 2 + 64) {
        for (auto it = m_known.begin(); it != m_known.end();) {
            it = it->second.epoch != m_epoch ? m_known.erase(it) : std::next(it);
        }
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
}

}  // namespace runplane::agent
