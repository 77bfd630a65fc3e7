#include "tests/agent/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace runplane::agent::testing {

TempDir::TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "runplane-agent-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    m_path = made != nullptr ? made : "";
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::string daemonBinary() {
    const char* dir = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(dir != nullptr ? dir : ".") + "/backend/daemon/runplaned";
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

DaemonProcess::DaemonProcess(const std::string& stateDir, std::vector<std::string> extraArgs,
                             std::string listen, bool gpuTelemetry) {
    std::vector<std::string> args{daemonBinary(), "--listen", listen, "--state-dir", stateDir};
    if (!gpuTelemetry) {
        args.push_back("--no-gpu");
    }
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        m_error = "pipe failed";
        return;
    }
    m_stderrPath = stateDir + ".daemon-stderr." + std::to_string(::getpid()) + "." +
                   std::to_string(reinterpret_cast<std::uintptr_t>(this));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, m_stderrPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    const int rc = ::posix_spawn(&m_pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    m_stdout = out[0];
    if (rc != 0) {
        m_error = std::string("spawn ") + args[0] + ": " + std::strerror(rc);
        m_pid = -1;
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (m_buffer.find('\n') == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        pollfd p{m_stdout, POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) {
            break;
        }
        char buf[256];
        const ssize_t n = ::read(m_stdout, buf, sizeof(buf));
        if (n <= 0) {
            break;
        }
        m_buffer.append(buf, static_cast<std::size_t>(n));
    }
    const auto nl = m_buffer.find('\n');
    const std::string first = nl == std::string::npos ? m_buffer : m_buffer.substr(0, nl);
    const std::string prefix = "runplaned listening on ";
    if (first.rfind(prefix, 0) != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        m_error = "no listening line; stdout='" + first + "' stderr='" + stderrText() + "'";
        return;
    }
    m_address = first.substr(prefix.size());
    m_port = std::atoi(m_address.substr(m_address.rfind(':') + 1).c_str());
    m_buffer = nl == std::string::npos ? "" : m_buffer.substr(nl + 1);
}

DaemonProcess::~DaemonProcess() {
    if (m_pid > 0) {
        ::kill(m_pid, SIGTERM);
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        int st = 0;
        while (::waitpid(m_pid, &st, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > end) {
                ::kill(m_pid, SIGKILL);
                ::waitpid(m_pid, &st, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    if (m_stdout >= 0) {
        ::close(m_stdout);
    }
    if (!m_stderrPath.empty()) {
        ::unlink(m_stderrPath.c_str());
    }
}

std::string DaemonProcess::stdoutRest() {
    pollfd p{m_stdout, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0) {
        char buf[256];
        const ssize_t n = ::read(m_stdout, buf, sizeof(buf));
        if (n <= 0) {
            break;
        }
        m_buffer.append(buf, static_cast<std::size_t>(n));
    }
    return m_buffer;
}

std::string DaemonProcess::stderrText() const {
    return slurp(m_stderrPath);
}

void DaemonProcess::kill9() {
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);
        int st = 0;
        ::waitpid(m_pid, &st, 0);
        m_pid = -1;
    }
}

int DaemonProcess::terminate() {
    int st = -1;
    if (m_pid > 0) {
        ::kill(m_pid, SIGTERM);
        ::waitpid(m_pid, &st, 0);
        m_pid = -1;
    }
    return st;
}

std::unique_ptr<v1::Agent::Stub> DaemonProcess::stub() const {
    return v1::Agent::NewStub(grpc::CreateChannel(m_address, grpc::InsecureChannelCredentials()));
}

int runCommand(const std::vector<std::string>& args, std::string* output) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, out[1], 2);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof(buf))) > 0) {
        if (output != nullptr) {
            output->append(buf, static_cast<std::size_t>(n));
        }
    }
    ::close(out[0]);
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace runplane::agent::testing
