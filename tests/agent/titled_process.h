#pragma once
// Real processes with a chosen title for the role tests (issue 43): `exec -a TITLE` puts the
// title in argv[0] of /proc/PID/cmdline, where Python's setproctitle and Ray write theirs; each
// process can hold a known number of written (resident) bytes.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/agent/process_roles.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent::testing {

/// A process group started through bash (so `exec -a` sets titles), killed whole at the end.
class Group {
  public:
    explicit Group(const std::string& script, const std::vector<std::string>& prefix = {}) {
        m_pid = ::fork();
        if (m_pid == 0) {
            ::setpgid(0, 0);
            std::vector<std::string> argv = prefix;
            argv.insert(argv.end(), {"/bin/bash", "-c", script});
            std::vector<char*> cargv;
            for (auto& a : argv) {
                cargv.push_back(a.data());
            }
            cargv.push_back(nullptr);
            ::execv(cargv[0], cargv.data());
            ::_exit(127);
        }
        ::setpgid(m_pid, m_pid);
    }
    ~Group() {
        ::kill(-m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
    pid_t pid() const { return m_pid; }

  private:
    pid_t m_pid = -1;
};

/// A Python program that writes argv[1] MiB (so the pages are resident), creates the file
/// argv[2] once they are, and sleeps. Written into `dir`; returns its path.
inline std::string writeHolder(const std::string& dir) {
    const std::string path = dir + "/hold.py";
    std::ofstream(path) << "import sys, time\n"
                           "b = bytearray(b'\\x01') * (int(sys.argv[1]) << 20)\n"
                           "open(sys.argv[2], 'w').close()\n"
                           "time.sleep(300)\n";
    return path;
}

/// The interpreter itself (sys.executable), not a wrapper on PATH such as a pyenv shim, which
/// would exec it again under its own argv[0] and lose the title.
inline const std::string& realPython() {
    static const std::string path = [] {
        std::string out;
        runCommand({"/usr/bin/env", "python3", "-c", "import sys; print(sys.executable)"}, &out);
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
            out.pop_back();
        }
        return out.empty() ? std::string("python3") : out;
    }();
    return path;
}

/// `exec -a "TITLE" PYTHON HOLD MIB FLAG` (double quotes: it may sit inside a single-quoted
/// bash -c script).
inline std::string holder(const std::string& hold, const std::string& title, int mib,
                          const std::string& flag) {
    return "exec -a \"" + title + "\" " + realPython() + " " + hold + " " + std::to_string(mib) +
           " " + flag;
}

inline std::vector<pid_t> childrenOf(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.empty() || name[0] < '1' || name[0] > '9') {
            continue;
        }
        std::ifstream stat(e.path() / "stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const auto close = text.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        std::istringstream in(text.substr(close + 2));
        std::string state;
        long ppid = 0;
        in >> state >> ppid;
        if (ppid == parent) {
            out.push_back(static_cast<pid_t>(std::stol(name)));
        }
    }
    return out;
}

inline std::string titleOfPid(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return std::string(titleOf(text));
}

inline pid_t findTitled(pid_t parent, const std::string& title) {
    for (pid_t c : childrenOf(parent)) {
        if (titleOfPid(c) == title) {
            return c;
        }
    }
    return 0;
}

inline bool waitFiles(const std::vector<std::string>& files) {
    return waitFor(
        [&] {
            for (const auto& f : files) {
                if (!std::filesystem::exists(f)) {
                    return false;
                }
            }
            return true;
        },
        std::chrono::seconds(30));
}

inline std::uint64_t rssOf(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/statm");
    std::uint64_t size = 0, resident = 0;
    f >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace runplane::agent::testing
