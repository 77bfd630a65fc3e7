#include "backend/agent/proc_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace runplane::agent {

std::optional<std::string> readSmallFile(const std::string& path, std::size_t maxBytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    std::string out;
    char buf[4096];
    while (out.size() < maxBytes) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

std::optional<ProcStat> parseProcStat(const std::string& text) {
    // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    //  stime cutime cstime priority nice threads itrealvalue starttime vsize rss ..."
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open ||
        close + 2 >= text.size()) {
        return std::nullopt;
    }
    ProcStat s;
    s.pid = static_cast<pid_t>(std::strtol(text.c_str(), nullptr, 10));
    s.state = text[close + 2];
    // Fields after the state, numbered from 4 (ppid) as in proc(5).
    const char* p = text.c_str() + close + 3;
    std::uint64_t fields[22] = {};
    int field = 4;
    while (*p != '\0' && field <= 24) {
        char* end = nullptr;
        const long long v = std::strtoll(p, &end, 10);
        if (end == p) {
            break;
        }
        if (field - 4 < 22) {
            fields[field - 4] = static_cast<std::uint64_t>(v < 0 ? 0 : v);
        }
        p = end;
        ++field;
    }
    if (field <= 24) {
        return std::nullopt;
    }
    s.ppid = static_cast<pid_t>(fields[0]);
    s.pgrp = static_cast<pid_t>(fields[1]);
    s.session = static_cast<pid_t>(fields[2]);
    s.utimeTicks = fields[14 - 4];
    s.stimeTicks = fields[15 - 4];
    s.startTicks = fields[22 - 4];
    s.rssPages = fields[24 - 4];
    return s;
}

std::optional<ProcStat> readProcStat(pid_t pid) {
    auto text = readSmallFile("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text) {
        return std::nullopt;
    }
    return parseProcStat(*text);
}

bool processAlive(pid_t pid, std::uint64_t startTicks) {
    if (pid <= 0) {
        return false;
    }
    const auto st = readProcStat(pid);
    return st && st->state != 'Z' && st->state != 'X' && st->startTicks == startTicks;
}

std::vector<pid_t> listPids() {
    std::vector<pid_t> pids;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) {
        return pids;
    }
    while (dirent* e = ::readdir(dir)) {
        const char* n = e->d_name;
        if (*n < '1' || *n > '9') {
            continue;
        }
        char* end = nullptr;
        const long v = std::strtol(n, &end, 10);
        if (*end == '\0') {
            pids.push_back(static_cast<pid_t>(v));
        }
    }
    ::closedir(dir);
    return pids;
}

std::vector<ProcStat> runProcesses(pid_t session, pid_t pgrp, pid_t root, pid_t exclude) {
    std::vector<ProcStat> all;
    for (pid_t pid : listPids()) {
        if (auto st = readProcStat(pid); st && st->state != 'Z') {
            all.push_back(*st);
        }
    }
    std::unordered_set<pid_t> chosen;
    std::unordered_map<pid_t, std::vector<pid_t>> children;
    for (const auto& s : all) {
        children[s.ppid].push_back(s.pid);
        if ((session > 0 && s.session == session) || (pgrp > 0 && s.pgrp == pgrp)) {
            chosen.insert(s.pid);
        }
    }
    if (root > 0) {
        std::vector<pid_t> stack{root};
        while (!stack.empty()) {
            const pid_t p = stack.back();
            stack.pop_back();
            chosen.insert(p);
            auto it = children.find(p);
            if (it != children.end()) {
                for (pid_t c : it->second) {
                    if (c != root) {
                        stack.push_back(c);
                    }
                }
                children.erase(it);
            }
        }
    }
    chosen.erase(exclude);
    std::vector<ProcStat> out;
    for (const auto& s : all) {
        if (chosen.count(s.pid) != 0) {
            out.push_back(s);
        }
    }
    return out;
}

std::optional<std::vector<pid_t>> descendants(pid_t root) {
    std::vector<pid_t> out;
    std::vector<pid_t> stack{root};
    bool first = true;
    while (!stack.empty()) {
        const pid_t pid = stack.back();
        stack.pop_back();
        const std::string taskDir = "/proc/" + std::to_string(pid) + "/task";
        DIR* dir = ::opendir(taskDir.c_str());
        if (dir == nullptr) {
            if (first) {
                return std::nullopt;  // root is gone
            }
            continue;  // exited meanwhile
        }
        bool anyFile = false;
        while (dirent* e = ::readdir(dir)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') {
                continue;
            }
            auto children = readSmallFile(taskDir + "/" + e->d_name + "/children", 1 << 20);
            if (!children) {
                continue;
            }
            anyFile = true;
            const char* p = children->c_str();
            while (*p != '\0') {
                char* end = nullptr;
                const long child = std::strtol(p, &end, 10);
                if (end == p) {
                    break;
                }
                out.push_back(static_cast<pid_t>(child));
                stack.push_back(static_cast<pid_t>(child));
                p = end;
            }
        }
        ::closedir(dir);
        if (first && !anyFile) {
            return std::nullopt;  // no children files: CONFIG_PROC_CHILDREN is off
        }
        first = false;
    }
    return out;
}

std::vector<pid_t> runTree(pid_t supervisorPid, std::uint64_t supervisorStartTicks, pid_t childPid,
                           std::uint64_t childStartTicks) {
    const bool supervisorAlive = processAlive(supervisorPid, supervisorStartTicks);
    if (supervisorAlive) {
        if (auto d = descendants(supervisorPid)) {
            // Zombies waiting for the supervisor to reap them are not part of the live tree.
            std::vector<pid_t> live;
            for (pid_t p : *d) {
                if (auto st = readProcStat(p); st && st->state != 'Z') {
                    live.push_back(p);
                }
            }
            return live;
        }
    }
    const bool childAlive = processAlive(childPid, childStartTicks);
    const pid_t root = supervisorAlive ? supervisorPid : (childAlive ? childPid : 0);
    std::vector<pid_t> out;
    if (root == 0) {
        return out;
    }
    for (const auto& p :
         runProcesses(supervisorAlive ? supervisorPid : 0, 0, root, supervisorPid)) {
        out.push_back(p.pid);
    }
    return out;
}

std::optional<std::uint64_t> readPssBytes(pid_t pid) {
    auto text = readSmallFile("/proc/" + std::to_string(pid) + "/smaps_rollup", 8192);
    if (!text) {
        return std::nullopt;
    }
    const auto pos = text->find("\nPss:");
    if (pos == std::string::npos) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(std::strtoull(text->c_str() + pos + 5, nullptr, 10)) * 1024;
}

TreeMemory treeMemory(const std::vector<pid_t>& pids, bool withPss) {
    static const long pageSize = ::sysconf(_SC_PAGESIZE);
    TreeMemory m;
    for (pid_t pid : pids) {
        auto statm = readSmallFile("/proc/" + std::to_string(pid) + "/statm", 256);
        if (!statm) {
            continue;  // exited between the scan and now
        }
        char* end = nullptr;
        std::strtoull(statm->c_str(), &end, 10);  // size
        const auto resident = std::strtoull(end, nullptr, 10);
        m.rssBytes += resident * static_cast<std::uint64_t>(pageSize);
        ++m.processes;
        if (withPss) {
            if (auto pss = readPssBytes(pid)) {
                m.pssBytes += *pss;
                ++m.pssReadable;
            }
        }
    }
    return m;
}

}  // namespace runplane::agent
