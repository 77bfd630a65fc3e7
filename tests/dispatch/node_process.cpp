#include "tests/dispatch/node_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace runplane::dispatch_testing {

ScratchDir::ScratchDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "runplane-dispatch-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    m_path = made != nullptr ? made : "";
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

NodeProcess::NodeProcess(const std::string& stateDir, const std::string& nodeId,
                         const std::string& listen, const std::map<std::string, std::string>& env) {
    const char* bin = std::getenv("RUNPLANE_BINARY_DIR");
    std::vector<std::string> args{
        std::string(bin != nullptr ? bin : ".") + "/backend/daemon/runplaned",
        "--listen",
        listen,
        "--state-dir",
        stateDir,
        "--node-id",
        nodeId,
        "--no-gpu"};
    std::vector<std::string> envStrings;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv = *e;
        if (env.find(kv.substr(0, kv.find('='))) == env.end()) {
            envStrings.push_back(kv);
        }
    }
    for (const auto& [k, v] : env) {
        envStrings.push_back(k + "=" + v);
    }
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : envStrings) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        m_error = "pipe failed";
        return;
    }
    const std::string errPath = stateDir + ".stderr";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int rc = ::posix_spawn(&m_pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        m_pid = -1;
        m_error = "spawn " + args[0] + ": " + std::strerror(rc);
        return;
    }
    std::string buffer;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (buffer.find('\n') == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        pollfd p{out[0], POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) {
            break;
        }
        char buf[256];
        const ssize_t n = ::read(out[0], buf, sizeof(buf));
        if (n <= 0) {
            break;
        }
        buffer.append(buf, static_cast<std::size_t>(n));
    }
    m_stdout = out[0];  // kept open: a closed pipe would SIGPIPE the daemon's later output
    const std::string prefix = "runplaned listening on ";
    const std::string first = buffer.substr(0, buffer.find('\n'));
    if (first.rfind(prefix, 0) != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        m_error = "no listening line; stdout='" + first + "' stderr='" + readFile(errPath) + "'";
        return;
    }
    m_address = first.substr(prefix.size());
}

NodeProcess::~NodeProcess() {
    if (m_stdout >= 0) {
        ::close(m_stdout);
    }
    if (m_pid <= 0) {
        return;
    }
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

void NodeProcess::kill9() {
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);  // nothing reads stdout any more, which is fine once it is dead
        int st = 0;
        ::waitpid(m_pid, &st, 0);
        m_pid = -1;
    }
}

}  // namespace runplane::dispatch_testing
