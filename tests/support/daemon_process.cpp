#include "tests/support/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

extern char** environ;

namespace runplane::testing {

TempDir::TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    char* made = ::mkdtemp(tmpl.data());
    m_path = made != nullptr ? made : "";
}

namespace {

// argv of a process, NUL-separated as /proc gives it ("" when it is gone).
std::vector<std::string> processArgv(const std::filesystem::path& procDir) {
    const std::string raw = readFile((procDir / "cmdline").string());
    std::vector<std::string> args;
    std::size_t begin = 0;
    while (begin < raw.size()) {
        const std::size_t end = raw.find('\0', begin);
        args.push_back(
            raw.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
        begin = end == std::string::npos ? raw.size() : end + 1;
    }
    return args;
}

int parentPid(const std::filesystem::path& procDir) {
    const std::string stat = readFile((procDir / "stat").string());
    const auto close = stat.rfind(')');
    int ppid = 0;
    char state = 0;
    if (close != std::string::npos &&
        std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) {
        return 0;
    }
    return ppid;
}

// A run's supervisor outlives a daemon killed by a test (by design: it waits for a daemon to
// collect its run's exit status, and ignores SIGTERM). Once the test's directory goes, nothing
// ever will: kill the supervisors recording under it and their runs' process groups.
void sweepSupervisors(const std::string& dir) {
    if (dir.empty()) {
        return;
    }
    std::error_code ec;
    std::vector<int> supervisors;
    std::vector<std::pair<int, int>> parents;  // pid, ppid
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        const int pid = std::atoi(name.c_str());
        parents.emplace_back(pid, parentPid(entry.path()));
        const auto args = processArgv(entry.path());
        if (args.size() >= 3 &&
            std::filesystem::path(args[0]).filename() == "runplane-supervisor" &&
            args[1] == "--record-dir" && args[2].rfind(dir + "/", 0) == 0) {
            supervisors.push_back(pid);
        }
    }
    for (const int supervisor : supervisors) {
        for (const auto& [pid, ppid] : parents) {
            if (ppid == supervisor) {
                ::kill(-pid, SIGKILL);  // the run leads its own process group
                ::kill(pid, SIGKILL);
            }
        }
        ::kill(supervisor, SIGKILL);
    }
}

}  // namespace

TempDir::~TempDir() {
    sweepSupervisors(m_path);
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int runCommand(const std::vector<std::string>& args, std::string* output) {
    std::vector<char*> argv;
    for (const auto& a : args) {
        argv.push_back(const_cast<char*>(a.c_str()));
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

DaemonProcess::DaemonProcess(std::string stateDir, std::vector<std::string> args,
                             std::string listen, bool gpuTelemetry)
    : DaemonProcess(DaemonSpec{
          std::move(stateDir), std::move(args), std::move(listen), gpuTelemetry, {}, {}}) {}

DaemonProcess::DaemonProcess(DaemonSpec spec) {
    const std::string binary = builtBinary("backend/daemon/runplaned");
    if (!std::filesystem::exists(binary)) {
        m_error = binary + " does not exist (build the runplaned target)";
        return;
    }
    std::vector<std::string> argv{binary, "--listen", spec.listen, "--state-dir", spec.stateDir};
    if (!spec.gpuTelemetry) {
        argv.push_back("--no-gpu");
    }
    argv.insert(argv.end(), spec.args.begin(), spec.args.end());
    argv.insert(argv.begin(), spec.wrapper.begin(), spec.wrapper.end());
    // Several daemons may use one state dir in turn (a restart): each start has its own files.
    static std::atomic<int> starts{0};
    const std::string tag =
        spec.stateDir + ".daemon-" + std::to_string(::getpid()) + "-" + std::to_string(++starts);
    try {
        m_child = Child::spawn(argv, tag + ".out", tag + ".err", spec.env);
    } catch (const std::exception& e) {
        m_error = e.what();
        return;
    }
    m_address = awaitListening(m_child, std::chrono::seconds(20), &m_error);
    if (!m_address.empty()) {
        m_port = std::atoi(m_address.substr(m_address.rfind(':') + 1).c_str());
    }
}

DaemonProcess::~DaemonProcess() {
    m_child.kill(SIGTERM);
    if (!m_child.wait(std::chrono::seconds(5))) {
        kill9();
    }
}

std::string DaemonProcess::stdoutRest() const {
    const std::string out = m_child.stdoutText();
    const auto eol = out.find('\n');
    return eol == std::string::npos ? std::string() : out.substr(eol + 1);
}

std::string DaemonProcess::stderrText() const {
    return m_child.stderrText();
}

void DaemonProcess::kill9() {
    m_child.kill(SIGKILL);
    m_child.wait(std::chrono::seconds(10));
}

int DaemonProcess::terminate() {
    m_child.kill(SIGTERM);
    return m_child.wait(std::chrono::seconds(30)).value_or(-1);
}

}  // namespace runplane::testing
