#include "backend/agent/supervisor.h"
#include "common/build_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "backend/agent/proc_tree.h"
#include "backend/agent/workdir.h"
#include "common/clock.h"

namespace runplane::agent {
namespace {

void say(int fd, const std::string& text) {
    if (fd >= 0) {
        const std::string line = text + "\n";
        [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
    }
}

// Closes every descriptor above 2 except `keep` (the daemon's sockets and files must not leak
// into runs).
void closeInheritedFds(int keep) {
    std::vector<int> fds;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        const int self = ::dirfd(d);
        while (dirent* e = ::readdir(d)) {
            const int fd = std::atoi(e->d_name);
            if (fd > 2 && fd != keep && fd != self) {
                fds.push_back(fd);
            }
        }
        ::closedir(d);
    }
    for (int fd : fds) {
        ::close(fd);
    }
}

std::string findExecutable(const std::string& argv0, const std::string& pathVar) {
    if (argv0.find('/') != std::string::npos) {
        return argv0;
    }
    std::size_t pos = 0;
    while (pos <= pathVar.size()) {
        std::size_t next = pathVar.find(':', pos);
        if (next == std::string::npos) {
            next = pathVar.size();
        }
        std::string dir = pathVar.substr(pos, next - pos);
        pos = next + 1;
        if (dir.empty()) {
            dir = ".";
        }
        const std::string candidate = dir + "/" + argv0;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

// The space of supervisor.json and exit.json is reserved before the program starts: a run that
// fills the disk (or a disk that fills meanwhile) must not cost the run its identity or its exit
// status. A reservation is overwritten in place (no new blocks), trimmed and renamed.
constexpr std::size_t kReserveBytes = 4096;
constexpr std::size_t kMaxExecErrorBytes = 2048;

std::string reservePath(const std::string& dir, const char* file) {
    return dir + "/" + file + ".reserve";
}

bool writeAll(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n =
            ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Real bytes, not a hole (a sparse file would need blocks when overwritten). -1 on failure.
int reserveSpace(const std::string& dir, const char* file) {
    const std::string path = reservePath(dir, file);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) {
        return -1;
    }
    if (!writeAll(fd, std::string(kReserveBytes, ' ')) || ::fsync(fd) != 0) {
        ::close(fd);
        ::unlink(path.c_str());
        return -1;
    }
    return fd;
}

// Writes `content` as dir/file through its reservation (closed here); without one, or if that
// fails, the ordinary atomic write.
Status writeReserved(const std::string& dir, const char* file, int& fd,
                     const std::string& content) {
    Status s = Error{"no reserved space"};
    if (fd >= 0 && content.size() <= kReserveBytes) {
        if (!writeAll(fd, content) || ::ftruncate(fd, static_cast<off_t>(content.size())) != 0 ||
            ::fsync(fd) != 0) {
            s = Error{reservePath(dir, file) + ": " + std::strerror(errno)};
        } else if (::rename(reservePath(dir, file).c_str(), (dir + "/" + file).c_str()) != 0) {
            s = Error{dir + "/" + file + ": " + std::strerror(errno)};
        } else {
            s = {};
        }
    }
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
    if (!s.ok()) {
        s = writeFileAtomic(dir + "/" + file, content);
    }
    ::unlink(reservePath(dir, file).c_str());
    return s;
}

// Never gives up while the supervisor lives: the daemon reports the run as running until the
// status is on disk, then reports the true status (never daemon_lost for a full disk).
void writeExit(const std::string& dir, int& reserveFd, int exitCode, int termSignal,
               std::string execError) {
    nlohmann::json j;
    j["exit_code"] = exitCode;
    j["term_signal"] = termSignal;
    j["ended_unix_ns"] = clock::unixNowNs();
    if (!execError.empty()) {
        if (execError.size() > kMaxExecErrorBytes) {
            execError.resize(kMaxExecErrorBytes);
        }
        j["exec_error"] = execError;
    }
    const std::string content = j.dump() + "\n";
    int delayMs = 100;
    for (int attempt = 0;; ++attempt) {
        const Status s = writeReserved(dir, kExitFile, reserveFd, content);
        if (s.ok()) {
            break;
        }
        if (attempt == 0) {
            std::fprintf(stderr, "runplane-supervisor: %s (retrying until it can be written)\n",
                         s.error().c_str());
        }
        ::usleep(static_cast<useconds_t>(delayMs) * 1000);
        delayMs = std::min(delayMs * 2, 5000);
    }
}

}  // namespace

int supervisorMain(int argc, char** argv) {
    if (runplane::printVersionIfAsked(argc, argv, "runplane-supervisor")) {
        return 0;
    }
    std::string dir;
    int handshake = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--record-dir") {
            dir = argv[i + 1];
        } else if (flag == "--handshake-fd") {
            handshake = std::atoi(argv[i + 1]);
        } else {
            std::fprintf(stderr, "runplane-supervisor: unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    if (dir.empty()) {
        std::fprintf(stderr, "usage: runplane-supervisor --record-dir DIR [--handshake-fd N]\n");
        return 2;
    }
    closeInheritedFds(handshake);

    nlohmann::json spec;
    {
        std::ifstream in(dir + "/" + kSpecFile);
        spec = nlohmann::json::parse(in, nullptr, false);
        if (spec.is_discarded() || !spec.is_object() || !spec.contains("argv")) {
            say(handshake, "error " + dir + "/" + kSpecFile + ": unreadable or not a run spec");
            return 2;
        }
    }
    std::vector<std::string> args;
    std::vector<std::string> envStrings;
    std::string pathVar = "/usr/local/bin:/usr/bin:/bin";
    std::string workdir;
    try {
        args = spec.at("argv").get<std::vector<std::string>>();
        if (spec.contains("env")) {
            for (auto& [k, v] : spec.at("env").items()) {
                envStrings.push_back(k + "=" + v.get<std::string>());
                if (k == "PATH") {
                    pathVar = v.get<std::string>();
                }
            }
        }
        workdir = spec.value("workdir", std::string("/"));
    } catch (const std::exception& e) {
        say(handshake, "error " + dir + "/" + kSpecFile + ": " + e.what());
        return 2;
    }
    const std::string stdoutPath = dir + "/" + kStdoutFile;
    const std::string stderrPath = dir + "/" + kStderrFile;
    if (args.empty()) {
        say(handshake, "error argv is empty");
        return 2;
    }

    // Double fork: the intermediate exits at once (the daemon reaps it), so this process is
    // re-parented to init (or the nearest subreaper) and survives the daemon.
    const pid_t first = ::fork();
    if (first < 0) {
        say(handshake, std::string("error fork: ") + std::strerror(errno));
        return 1;
    }
    if (first > 0) {
        ::_exit(0);
    }
    ::setsid();
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    ::signal(SIGQUIT, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);

    const int out = ::open(stdoutPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    const int err = ::open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || err < 0 || devnull < 0) {
        say(handshake, "error cannot open log files in " + dir + ": " + std::strerror(errno));
        return 1;
    }
    const std::string exe = findExecutable(args[0], pathVar);
    // -1: the disk is full already (the writes are retried then).
    int infoReserve = reserveSpace(dir, kSupervisorFile);
    int exitReserve = reserveSpace(dir, kExitFile);

    // Everything the child needs is prepared before fork: between fork and execve only
    // async-signal-safe calls are made.
    std::vector<char*> cargv;
    for (auto& a : args) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    std::vector<char*> cenv;
    for (auto& e : envStrings) {
        cenv.push_back(e.data());
    }
    cenv.push_back(nullptr);

    int execPipe[2];
    if (::pipe2(execPipe, O_CLOEXEC) != 0) {
        say(handshake, std::string("error pipe: ") + std::strerror(errno));
        return 1;
    }
    const pid_t child = ::fork();
    if (child < 0) {
        say(handshake, std::string("error fork: ") + std::strerror(errno));
        return 1;
    }
    if (child == 0) {
        ::setpgid(0, 0);
        for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPIPE}) {
            ::signal(sig, SIG_DFL);
        }
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::dup2(devnull, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        if (handshake >= 0) {
            ::close(handshake);
        }
        int code = 0;
        if (::chdir(workdir.c_str()) != 0) {
            code = errno;
        } else if (exe.empty()) {
            code = ENOENT;
        } else {
            ::execve(exe.c_str(), cargv.data(), cenv.data());
            code = errno;
        }
        [[maybe_unused]] auto n = ::write(execPipe[1], &code, sizeof(code));
        ::_exit(127);
    }
    ::setpgid(child, child);  // also from here, so the group exists before anyone signals it
    ::close(execPipe[1]);
    int execErrno = 0;
    ssize_t got;
    do {
        got = ::read(execPipe[0], &execErrno, sizeof(execErrno));
    } while (got < 0 && errno == EINTR);
    ::close(execPipe[0]);
    if (got != static_cast<ssize_t>(sizeof(execErrno))) {
        execErrno = 0;  // EOF: execve succeeded (the pipe closed on exec)
    }

    std::string execError;
    if (execErrno != 0) {
        execError = (exe.empty() ? args[0] : exe) + ": " + std::strerror(execErrno);
        if (execErrno == ENOENT && exe.empty()) {
            execError = args[0] + ": not found on PATH=" + pathVar;
        } else if (::access(workdir.c_str(), X_OK) != 0) {
            execError = "workdir " + workdir + ": " + std::strerror(execErrno);
        }
    }
    const auto selfStat = readProcStat(::getpid());
    const auto childStat = readProcStat(child);
    nlohmann::json info;
    info["supervisor_pid"] = ::getpid();
    info["supervisor_start_ticks"] = selfStat ? selfStat->startTicks : 0;
    info["child_pid"] = child;
    info["child_start_ticks"] = childStat ? childStat->startTicks : 0;
    info["started_unix_ns"] = clock::unixNowNs();
    if (!execError.empty()) {
        info["exec_error"] = execError;
    }
    if (Status s = writeReserved(dir, kSupervisorFile, infoReserve, info.dump() + "\n"); !s.ok()) {
        say(handshake, "error " + s.error());
        ::unlink(reservePath(dir, kExitFile).c_str());
        ::kill(child, SIGKILL);
        return 1;
    }
    say(handshake, "ok " + std::to_string(::getpid()) + " " + std::to_string(child));
    if (handshake >= 0) {
        ::close(handshake);
    }
    // From here on the supervisor's own stderr (supervisor.log) is the only diagnostics channel.

    bool mainDone = false;
    while (true) {
        int status = 0;
        const pid_t w = ::waitpid(-1, &status, 0);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;  // ECHILD: nothing left (orphans re-parented to us are reaped too)
        }
        if (w == child && !mainDone) {
            mainDone = true;
            if (!execError.empty()) {
                writeExit(dir, exitReserve, 127, 0, execError);
            } else if (WIFSIGNALED(status)) {
                writeExit(dir, exitReserve, 128 + WTERMSIG(status), WTERMSIG(status), "");
            } else {
                writeExit(dir, exitReserve, WEXITSTATUS(status), 0, "");
            }
        }
    }
    if (!mainDone) {
        writeExit(dir, exitReserve, 127, 0, "run process vanished without an exit status");
    }
    return 0;
}

}  // namespace runplane::agent
