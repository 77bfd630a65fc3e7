#include "compute/gpu/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace runplane::compute {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> cStrings(const std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    pointers.reserve(strings.size() + 1);
    for (const auto& s : strings) {
        pointers.push_back(const_cast<char*>(s.c_str()));
    }
    pointers.push_back(nullptr);
    return pointers;
}

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Spawns spec.argv with stdin from /dev/null, stdout to outFd and stderr to errFd (or /dev/null
// when errFd < 0), in a new process group. Returns the pid or -errno.
int spawnChild(const ProcessSpec& spec, int outFd, int errFd, std::string& error) {
    if (spec.argv.empty() || spec.argv.front().empty()) {
        error = "empty command";
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outFd, 1);
    if (errFd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, errFd, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    auto argv = cStrings(spec.argv);
    std::vector<std::string> envStrings = spec.env ? *spec.env : currentEnvironment();
    auto envp = cStrings(envStrings);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        error = "cannot start " + spec.argv.front() + ": " + std::strerror(rc);
        return -1;
    }
    return pid;
}

int waitForExit(int pid, int& status) {
    while (true) {
        const pid_t done = ::waitpid(pid, &status, 0);
        if (done >= 0 || errno != EINTR) {
            return done;
        }
    }
}

}  // namespace

std::vector<std::string> currentEnvironment() {
    std::vector<std::string> env;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        env.emplace_back(*entry);
    }
    return env;
}

void killProcessGroup(int pid) {
    if (pid <= 0) {
        return;
    }
    ::kill(-pid, SIGKILL);
    int status = 0;
    waitForExit(pid, status);
}

std::string ProcessResult::describeEnd() const {
    if (!spawnError.empty())
        return spawnError;
    if (timedOut)
        return "timed out and was killed";
    if (termSignal != 0) {
        return "killed by signal " + std::to_string(termSignal) + " (" + strsignal(termSignal) +
               ")";
    }
    return "exit code " + std::to_string(exitCode);
}

ProcessResult runProcess(const ProcessSpec& spec) {
    ProcessResult result;
    int outPipe[2] = {-1, -1};
    int errPipe[2] = {-1, -1};
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        result.spawnError = std::string("pipe: ") + std::strerror(errno);
        closeFd(outPipe[0]);
        closeFd(outPipe[1]);
        return result;
    }
    const int pid = spawnChild(spec, outPipe[1], errPipe[1], result.spawnError);
    closeFd(outPipe[1]);
    closeFd(errPipe[1]);
    if (pid < 0) {
        closeFd(outPipe[0]);
        closeFd(errPipe[0]);
        return result;
    }

    const auto deadline = Clock::now() + spec.timeout;
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    char buffer[65536];
    while (open > 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            result.timedOut = true;
            break;
        }
        const int ready = ::poll(fds, 2, static_cast<int>(left));
        if (ready < 0 && errno != EINTR) {
            break;
        }
        for (int k = 0; k < 2 && ready > 0; ++k) {
            if (fds[k].fd < 0 || fds[k].revents == 0)
                continue;
            const ssize_t n = ::read(fds[k].fd, buffer, sizeof buffer);
            if (n > 0) {
                const std::size_t room = spec.maxOutputBytes > sinks[k]->size()
                                             ? spec.maxOutputBytes - sinks[k]->size()
                                             : 0;
                sinks[k]->append(buffer, std::min(room, static_cast<std::size_t>(n)));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(fds[k].fd);
                fds[k].fd = -1;
                --open;
            }
        }
    }
    for (auto& fd : fds) {
        if (fd.fd >= 0)
            ::close(fd.fd);
    }
    if (result.timedOut) {
        ::kill(-pid, SIGKILL);
    }
    int status = 0;
    if (waitForExit(pid, status) < 0) {
        result.spawnError = std::string("waitpid: ") + std::strerror(errno);
        return result;
    }
    if (!result.timedOut) {
        if (WIFEXITED(status)) {
            result.exitCode = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            result.termSignal = WTERMSIG(status);
        }
    }
    return result;
}

SpawnedProcess::~SpawnedProcess() {
    closeFd(m_outFd);
    if (m_pid > 0) {
        killProcessGroup(m_pid);
    }
}

std::optional<std::string> SpawnedProcess::start(const ProcessSpec& spec) {
    int outPipe[2] = {-1, -1};
    if (::pipe2(outPipe, O_CLOEXEC) != 0) {
        return std::string("pipe: ") + std::strerror(errno);
    }
    std::string error;
    const int pid = spawnChild(spec, outPipe[1], -1, error);
    closeFd(outPipe[1]);
    if (pid < 0) {
        closeFd(outPipe[0]);
        return error;
    }
    m_pid = pid;
    m_outFd = outPipe[0];
    return std::nullopt;
}

std::optional<std::string> SpawnedProcess::readLine(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    char buffer[4096];
    while (true) {
        const auto newline = m_buffer.find('\n');
        if (newline != std::string::npos) {
            std::string line = m_buffer.substr(0, newline);
            m_buffer.erase(0, newline + 1);
            return line;
        }
        if (m_outFd < 0)
            return std::nullopt;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0)
            return std::nullopt;
        pollfd fd{m_outFd, POLLIN, 0};
        const int ready = ::poll(&fd, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return std::nullopt;
        const ssize_t n = ::read(m_outFd, buffer, sizeof buffer);
        if (n > 0) {
            m_buffer.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            closeFd(m_outFd);
        }
    }
}

int SpawnedProcess::release() {
    closeFd(m_outFd);
    const int pid = m_pid;
    m_pid = -1;
    return pid;
}

}  // namespace runplane::compute
