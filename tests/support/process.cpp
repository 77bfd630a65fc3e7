#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace runplane::testing {

namespace {
std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

std::string builtBinary(const std::string& relative) {
    const char* dir = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(dir && *dir ? dir : RUNPLANE_TEST_BINARY_DIR) + "/" + relative;
}

std::string sourceDir() {
    const char* dir = std::getenv("RUNPLANE_SOURCE_DIR");
    return dir && *dir ? std::string(dir) : std::string(RUNPLANE_TEST_SOURCE_DIR);
}

Child::Child(Child&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_exit(other.m_exit),
      m_stdout(std::move(other.m_stdout)),
      m_stderr(std::move(other.m_stderr)) {}

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        if (m_pid > 0 && !m_exit) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
        m_pid = std::exchange(other.m_pid, -1);
        m_exit = other.m_exit;
        m_stdout = std::move(other.m_stdout);
        m_stderr = std::move(other.m_stderr);
    }
    return *this;
}

Child::~Child() {
    if (m_pid > 0 && !m_exit) {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
}

Child Child::spawn(const std::vector<std::string>& argv, const std::string& stdoutFile,
                   const std::string& stderrFile, const std::vector<std::string>& env) {
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const int out = ::open(stdoutFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(stderrFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0 || err < 0) {
        throw std::runtime_error("cannot create " + stdoutFile + " / " + stderrFile);
    }
    // The environment is made before the fork: between fork and exec a child of a threaded test
    // may only make async-signal-safe calls (setenv could wait forever on a malloc lock).
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv = *e;
        const std::string key = kv.substr(0, kv.find('=') + 1);
        const bool overridden = std::any_of(env.begin(), env.end(), [&](const std::string& o) {
            return o.compare(0, key.size(), key) == 0;
        });
        if (!overridden) {
            environment.push_back(kv);
        }
    }
    environment.insert(environment.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (const auto& kv : environment) {
        envp.push_back(const_cast<char*>(kv.c_str()));
    }
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err, STDERR_FILENO);
        const int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, STDIN_FILENO);
        ::setpgid(0, 0);  // its own group: a test's kill never reaches the test runner
        ::execve(args[0], args.data(), envp.data());
        ::_exit(127);
    }
    ::close(out);
    ::close(err);
    Child child;
    child.m_pid = pid;
    child.m_stdout = stdoutFile;
    child.m_stderr = stderrFile;
    return child;
}

bool Child::running() {
    if (m_pid <= 0 || m_exit) {
        return false;
    }
    int status = 0;
    const pid_t done = ::waitpid(m_pid, &status, WNOHANG);
    if (done == m_pid) {
        m_exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
    }
    return true;
}

void Child::kill(int signal) {
    if (m_pid > 0 && !m_exit) {
        ::kill(m_pid, signal);
    }
}

std::optional<int> Child::wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return m_exit;
}

std::string Child::stdoutText() const {
    return readFile(m_stdout);
}
std::string Child::stderrText() const {
    return readFile(m_stderr);
}

std::string awaitListening(Child& child, std::chrono::milliseconds timeout, std::string* error) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string prefix = "runplaned listening on ";
    while (true) {
        // Whether it runs is asked before its output is read, so that a daemon found exited
        // has written all it will: its last words are in the error.
        const bool alive = child.running();
        const std::string out = child.stdoutText();
        const auto at = out.find(prefix);
        const auto eol = out.find('\n', at == std::string::npos ? 0 : at);
        if (at != std::string::npos && eol != std::string::npos) {
            return out.substr(at + prefix.size(), eol - at - prefix.size());
        }
        if (!alive || std::chrono::steady_clock::now() >= deadline) {
            *error = std::string("runplaned did not report its address (") +
                     (alive ? "timed out" : "exited") + "); stdout='" + out + "' stderr='" +
                     child.stderrText() + "'";
            return "";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

Daemon::Daemon(std::string stateDir, std::string nodeId, double sampleHz)
    : m_stateDir(std::move(stateDir)), m_nodeId(std::move(nodeId)), m_sampleHz(sampleHz) {}

std::string Daemon::start() {
    ++m_starts;
    std::filesystem::create_directories(m_stateDir);
    const std::string tag = m_stateDir + "/daemon-" + std::to_string(m_starts);
    std::vector<std::string> argv{
        m_binary.empty() ? builtBinary("backend/daemon/runplaned") : m_binary,
        "--listen",
        "127.0.0.1:" + std::to_string(m_port),
        "--state-dir",
        m_stateDir,
        "--run-root",
        m_stateDir + "/runs",
        "--sample-hz",
        std::to_string(m_sampleHz),
        "--node-id",
        m_nodeId,
        "--no-gpu"};
    argv.insert(argv.end(), m_extraArgs.begin(), m_extraArgs.end());
    m_child = Child::spawn(argv, tag + ".out", tag + ".err", m_env);
    m_address = awaitListening(m_child, std::chrono::seconds(20), &m_error);
    if (!m_address.empty()) {
        m_port = std::stoi(m_address.substr(m_address.rfind(':') + 1));
    }
    return m_address;
}

void Daemon::kill9() {
    m_child.kill(SIGKILL);
    m_child.wait(std::chrono::seconds(10));
}

void Daemon::stop() {
    m_child.kill(SIGTERM);
    if (!m_child.wait(std::chrono::seconds(10))) {
        kill9();
    }
}

CtlResult runCtl(const std::vector<std::string>& args, const std::string& scratchDir,
                 std::chrono::milliseconds timeout) {
    static int counter = 0;
    const std::string tag = scratchDir + "/ctl-" + std::to_string(++counter);
    std::vector<std::string> argv{builtBinary("backend/cli/runplanectl")};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child = Child::spawn(argv, tag + ".out", tag + ".err");
    CtlResult result;
    auto code = child.wait(timeout);
    if (!code) {
        child.kill(SIGKILL);
        code = child.wait(std::chrono::seconds(5));
    }
    result.exitCode = code.value_or(-1);
    result.out = child.stdoutText();
    result.err = child.stderrText();
    return result;
}

}  // namespace runplane::testing
