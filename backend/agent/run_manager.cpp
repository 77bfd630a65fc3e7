#include "backend/agent/run_manager.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "backend/agent/proc_tree.h"
#include "backend/agent/supervisor.h"
#include "backend/agent/workdir.h"
#include "common/clock.h"

extern char** environ;

namespace runplane::agent {
namespace {

bool fileExists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::optional<nlohmann::json> readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return std::nullopt;
    }
    return j;
}

// How long a status query waits for exit.json once the program is seen gone (the supervisor writes
// it right after reaping; a quick program must not be answered "running, is the disk full?").
constexpr std::chrono::milliseconds kExitRecordWait{1500};

// The first words the supervisor logs when exit.json cannot be written (supervisor.cpp, writeExit).
constexpr const char* kExitWriteRetrying = "retrying until it can be written";

// A small text file (supervisor.log), bounded: only its first 64 KiB are looked at.
std::string readFileText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text(64 * 1024, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return text;
}

std::string signalName(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// A name a shell and execve agree on: [A-Za-z_][A-Za-z0-9_]* ('A B', 'A=B', '1X' are refused).
Status validateEnvName(const std::string& name) {
    const auto word = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
               (c >= '0' && c <= '9');
    };
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name) {
        ok = ok && word(c);
    }
    if (!ok) {
        std::string shown;
        for (char c : name) {
            shown += c == '\0' ? std::string("\\0") : std::string(1, c);
        }
        return Error{"env: '" + shown +
                     "' is not a valid environment variable name (letters, digits and _, not "
                     "starting with a digit)"};
    }
    return {};
}

const char* stateName(v1::RunState s) {
    return v1::RunState_Name(s).c_str();
}

}  // namespace

RunManager::RunManager(RunManagerOptions options, Logger& logger)
    : m_options(std::move(options)),
      m_logger(logger),
      m_recordsDir(m_options.stateDir + "/runs.d") {}

Result<std::unique_ptr<RunManager>> RunManager::open(RunManagerOptions options, Logger& logger) {
    std::unique_ptr<RunManager> m(new RunManager(std::move(options), logger));
    if (Status s = makeDirectories(m->m_recordsDir, 0700); !s.ok()) {
        return Error{s.error()};
    }
    if (Status s = m->loadRecords(); !s.ok()) {
        return Error{s.error()};
    }
    return m;
}

Status RunManager::loadRecords() {
    DIR* d = ::opendir(m_recordsDir.c_str());
    if (d == nullptr) {
        return Error{m_recordsDir + ": " + std::strerror(errno)};
    }
    std::vector<std::string> ids;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != ".." && validateRunId(name).ok()) {
            ids.push_back(name);
        }
    }
    ::closedir(d);
    std::lock_guard lock(m_mutex);
    for (const auto& id : ids) {
        auto entry = loadEntry(id);
        if (!entry) {
            m_logger.warn("run record " + id + " skipped: " + entry.error());
            continue;
        }
        auto [it, inserted] = m_runs.emplace(id, std::move(*entry));
        const v1::RunStatus st = refresh(it->second);
        m_logger.info("re-attached run " + id + ": " + stateName(st.state()) +
                      (st.message().empty() ? "" : " (" + st.message() + ")"));
    }
    return {};
}

Result<RunManager::Entry> RunManager::loadEntry(const std::string& runId) {
    Entry e;
    e.runId = runId;
    e.dir = m_recordsDir + "/" + runId;
    auto spec = readJson(e.dir + "/" + kSpecFile);
    if (!spec) {
        return Error{e.dir + "/" + kSpecFile + ": missing or not JSON"};
    }
    try {
        e.argv = spec->at("argv").get<std::vector<std::string>>();
        e.role = static_cast<v1::RunRole>(spec->value("role", 0));
        e.sampleHz = spec->value("sample_hz", 0.0);
        e.createdNs = spec->value("created_unix_ns", std::int64_t{0});
        if (spec->contains("planned_roles") || spec->contains("role_rows")) {
            RunRolePlan plan;
            for (const auto& row : spec->value("planned_roles", nlohmann::json::array())) {
                plan.planned.push_back(
                    {row.at("role").get<std::string>(), row.at("phase").get<std::string>(),
                     row.at("bytes").get<double>(), row.value("components", std::string())});
            }
            plan.roleRows = spec->value("role_rows", std::string());
            if (Status s = validateRunRolePlan(plan); !s.ok()) {
                // The run itself is still re-attached; only its plan is left out.
                m_logger.warn(e.dir + "/" + kSpecFile + ": plan by role ignored: " + s.error());
            } else if (!plan.empty()) {
                e.rolePlan = std::make_shared<const RunRolePlan>(std::move(plan));
            }
        }
    } catch (const std::exception& ex) {
        return Error{e.dir + "/" + kSpecFile + ": " + ex.what()};
    }
    loadSupervisorInfo(e);
    return e;
}

bool RunManager::loadSupervisorInfo(Entry& e) {
    if (e.supervisorPid != 0) {
        return true;
    }
    auto info = readJson(e.dir + "/" + kSupervisorFile);
    if (!info) {
        return false;
    }
    try {
        e.supervisorPid = info->at("supervisor_pid").get<pid_t>();
        e.supervisorStartTicks = info->at("supervisor_start_ticks").get<std::uint64_t>();
        e.childPid = info->at("child_pid").get<pid_t>();
        e.childStartTicks = info->at("child_start_ticks").get<std::uint64_t>();
        e.startedNs = info->value("started_unix_ns", std::int64_t{0});
        e.execError = info->value("exec_error", std::string());
    } catch (const std::exception&) {
        e.supervisorPid = 0;
        return false;
    }
    return true;
}

v1::RunStatus RunManager::refresh(Entry& e) {
    if (e.final) {
        return *e.final;
    }
    v1::RunStatus st;
    st.set_run_id(e.runId);
    st.set_role(e.role);
    for (const auto& a : e.argv) {
        st.add_argv(a);
    }
    const bool haveSupervisor = loadSupervisorInfo(e);
    st.set_pid(e.childPid);
    st.set_started_unix_ns(e.startedNs != 0 ? e.startedNs : e.createdNs);

    auto readExit = [&]() -> bool {
        auto ex = readJson(e.dir + "/" + kExitFile);
        if (!ex) {
            return false;
        }
        const int code = ex->value("exit_code", -1);
        const int sig = ex->value("term_signal", 0);
        const std::string execError = ex->value("exec_error", std::string());
        st.set_exit_code(code);
        st.set_term_signal(sig);
        st.set_ended_unix_ns(ex->value("ended_unix_ns", std::int64_t{0}));
        if (!execError.empty()) {
            st.set_state(v1::RUN_STATE_FAILED);
            st.set_message("could not start: " + execError);
        } else if (fileExists(e.dir + "/" + kStopFile)) {
            st.set_state(v1::RUN_STATE_STOPPED);
            st.set_message(sig != 0
                               ? "stopped by StopRun (" + signalName(sig) + ")"
                               : "stopped by StopRun (exit code " + std::to_string(code) + ")");
        } else if (sig != 0) {
            st.set_state(v1::RUN_STATE_FAILED);
            st.set_message("killed by " + signalName(sig));
        } else if (code == 0) {
            st.set_state(v1::RUN_STATE_SUCCEEDED);
        } else {
            st.set_state(v1::RUN_STATE_FAILED);
            st.set_message("exit code " + std::to_string(code));
        }
        e.final = st;
        return true;
    };

    if (readExit()) {
        return st;
    }
    if (haveSupervisor && !e.execError.empty()) {
        // The program never started; the supervisor writes exit.json a moment later.
        st.set_state(v1::RUN_STATE_FAILED);
        st.set_exit_code(127);
        st.set_ended_unix_ns(e.startedNs);
        st.set_message("could not start: " + e.execError);
        e.final = st;
        return st;
    }
    if (!haveSupervisor) {
        if (clock::unixNowNs() - e.createdNs <
            static_cast<std::int64_t>(m_options.handshakeTimeoutSeconds * 1e9)) {
            st.set_state(v1::RUN_STATE_STARTING);
            return st;
        }
        st.set_state(v1::RUN_STATE_LOST);
        st.set_message("the supervisor never reported (see " + e.dir + "/" + kSupervisorLog + ")");
        return st;
    }
    if (processAlive(e.supervisorPid, e.supervisorStartTicks)) {
        st.set_state(v1::RUN_STATE_RUNNING);
        if (e.childPid != 0 && !processAlive(e.childPid, e.childStartTicks)) {
            // The supervisor writes exit.json within milliseconds of reaping the program: wait for
            // it (bounded) rather than answer "running" for a run that has just ended.
            const auto deadline = std::chrono::steady_clock::now() + kExitRecordWait;
            while (std::chrono::steady_clock::now() < deadline) {
                if (readExit()) {
                    return st;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            // Blame the disk only when the supervisor said a write failed.
            const bool writeFailed =
                readFileText(e.dir + "/" + kSupervisorLog).find(kExitWriteRetrying) !=
                std::string::npos;
            st.set_message(writeFailed ? "the run has ended; its supervisor cannot write the exit "
                                         "status (is the state disk full? see " +
                                             e.dir + "/" + kSupervisorLog + ")"
                                       : std::string("the run has ended; its supervisor is "
                                                     "recording the exit status"));
        }
        return st;
    }
    // The supervisor is gone: it may have written exit.json just before exiting.
    if (readExit()) {
        return st;
    }
    if (processAlive(e.childPid, e.childStartTicks)) {
        st.set_state(v1::RUN_STATE_RUNNING);
        st.set_message(
            "the supervisor vanished; the run is alive but its exit status will not be "
            "recorded");
        return st;
    }
    st.set_state(v1::RUN_STATE_LOST);
    st.set_message(
        "the supervisor and the run vanished without an exit record (killed "
        "externally, or the node rebooted)");
    return st;
}

Result<v1::RunStatus> RunManager::start(const v1::StartRunRequest& request) {
    constexpr ErrorCode kInvalid = ErrorCode::InvalidArgument;
    if (Status s = validateRunId(request.run_id()); !s.ok()) {
        return Error{s.error(), kInvalid};
    }
    if (request.argv_size() == 0) {
        return Error{"argv: empty; give the program and its arguments (executed without a shell)",
                     kInvalid};
    }
    for (int i = 0; i < request.argv_size(); ++i) {
        if (request.argv(i).find('\0') != std::string::npos) {
            return Error{"argv[" + std::to_string(i) + "] contains a NUL byte", kInvalid};
        }
    }
    if (request.argv(0).empty()) {
        return Error{"argv[0]: empty program name", kInvalid};
    }
    for (const auto& [k, v] : request.env()) {
        if (Status s = validateEnvName(k); !s.ok()) {
            return Error{s.error(), kInvalid};
        }
        if (v.find('\0') != std::string::npos) {
            return Error{"env: the value of '" + k + "' contains a NUL byte", kInvalid};
        }
    }
    auto rolePlan = runRolePlanOf(request);
    if (!rolePlan) {
        return Error{rolePlan.error(), kInvalid};
    }
    std::lock_guard lock(m_mutex);
    if (auto it = m_runs.find(request.run_id()); it != m_runs.end()) {
        const std::vector<std::string> argv(request.argv().begin(), request.argv().end());
        if (argv != it->second.argv) {
            return Error{"run_id '" + request.run_id() +
                             "' already exists on this node with a different argv",
                         ErrorCode::AlreadyExists};
        }
        return refresh(it->second);
    }
    auto workdir = confineWorkdir(m_options.runRoot, request.workdir(), request.run_id());
    if (!workdir) {
        return Error{workdir.error(), kInvalid};  // outside the run root, or cannot be made
    }
    Entry e;
    e.runId = request.run_id();
    e.dir = m_recordsDir + "/" + e.runId;
    e.argv.assign(request.argv().begin(), request.argv().end());
    e.role = request.role();
    e.sampleHz = request.sample_hz();
    if (!rolePlan->empty()) {
        e.rolePlan = std::make_shared<const RunRolePlan>(std::move(*rolePlan));
    }
    e.createdNs = clock::unixNowNs();
    if (::mkdir(e.dir.c_str(), 0700) != 0) {
        return Error{e.dir + ": " + std::strerror(errno)};
    }
    // The run's environment: the daemon's own, overlaid with the request's, plus the run id.
    nlohmann::json env = nlohmann::json::object();
    for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
        const std::string kv = *p;
        const auto eq = kv.find('=');
        if (eq != std::string::npos && kv.rfind("RUNPLANE_TOKEN", 0) != 0) {
            env[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
    }
    for (const auto& [k, v] : request.env()) {
        env[k] = v;
    }
    env["RUNPLANE_RUN_ID"] = e.runId;
    nlohmann::json spec;
    spec["run_id"] = e.runId;
    spec["argv"] = e.argv;
    spec["env"] = env;
    spec["workdir"] = *workdir;
    spec["role"] = static_cast<int>(e.role);
    spec["sample_hz"] = e.sampleHz;
    spec["created_unix_ns"] = e.createdNs;
    if (e.rolePlan) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& row : e.rolePlan->planned) {
            rows.push_back({{"role", row.role},
                            {"phase", row.phase},
                            {"bytes", row.bytes},
                            {"components", row.components}});
        }
        spec["planned_roles"] = rows;
        spec["role_rows"] = e.rolePlan->roleRows;
    }
    if (Status s = writeFileAtomic(e.dir + "/" + kSpecFile, spec.dump(1) + "\n", 0600); !s.ok()) {
        return Error{s.error()};
    }
    if (!request.recipe_yaml().empty()) {
        (void)writeFileAtomic(e.dir + "/recipe.yaml", request.recipe_yaml(), 0640);
    }
    auto [it, inserted] = m_runs.emplace(e.runId, std::move(e));
    auto spawned = spawn(it->second);
    if (!spawned) {
        // Keep the record: the failure is part of the run's history, and the id stays taken.
        nlohmann::json ex;
        ex["exit_code"] = 127;
        ex["term_signal"] = 0;
        ex["ended_unix_ns"] = clock::unixNowNs();
        ex["exec_error"] = spawned.error();
        (void)writeFileAtomic(it->second.dir + "/" + kExitFile, ex.dump() + "\n");
        m_logger.error("run " + it->first + ": " + spawned.error());
        return refresh(it->second);
    }
    m_logger.info("run " + it->first + " started: pid " + std::to_string(it->second.childPid) +
                  ", supervisor " + std::to_string(it->second.supervisorPid));
    return spawned;
}

Result<v1::RunStatus> RunManager::spawn(Entry& e) {
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) {
        return Error{std::string("pipe: ") + std::strerror(errno)};
    }
    const std::string supLog = e.dir + "/" + kSupervisorLog;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, supLog.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0640);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::string a0 = "runplane-supervisor", a1 = "--record-dir", a2 = e.dir, a3 = "--handshake-fd",
                a4 = "3";
    char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
    pid_t pid = 0;
    const int rc =
        ::posix_spawn(&pid, m_options.supervisorPath.c_str(), &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(pipefd[1]);
    if (rc != 0) {
        ::close(pipefd[0]);
        return Error{"cannot start the supervisor " + m_options.supervisorPath + ": " +
                     std::strerror(rc)};
    }
    // The supervisor's first process exits right after its double fork.
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    std::string reply;
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<int>(m_options.handshakeTimeoutSeconds * 1000));
    while (reply.find('\n') == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        const int pr = ::poll(&p, 1, static_cast<int>(left));
        if (pr < 0 && errno == EINTR) {
            continue;
        }
        if (pr <= 0) {
            break;
        }
        char buf[512];
        const ssize_t n = ::read(pipefd[0], buf, sizeof(buf));
        if (n <= 0) {
            break;
        }
        reply.append(buf, static_cast<std::size_t>(n));
    }
    ::close(pipefd[0]);
    if (reply.rfind("ok ", 0) != 0) {
        if (reply.rfind("error ", 0) == 0) {
            std::string msg = reply.substr(6);
            while (!msg.empty() && msg.back() == '\n') {
                msg.pop_back();
            }
            return Error{"supervisor: " + msg};
        }
        return Error{"the supervisor did not report within " +
                     std::to_string(m_options.handshakeTimeoutSeconds) + " s (see " + supLog + ")"};
    }
    if (!loadSupervisorInfo(e)) {
        return Error{"supervisor reported success but " + e.dir + "/" + kSupervisorFile +
                     " is unreadable"};
    }
    return refresh(e);
}

std::vector<pid_t> RunManager::treeOf(const Entry& e) {
    return runTree(e.supervisorPid, e.supervisorStartTicks, e.childPid, e.childStartTicks);
}

Result<v1::RunStatus> RunManager::stop(const std::string& runId, double graceSeconds) {
    Entry snapshot;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_runs.find(runId);
        if (it == m_runs.end()) {
            return Error{"run_id '" + runId + "': no such run on this node", ErrorCode::NotFound};
        }
        const v1::RunStatus st = refresh(it->second);
        if (it->second.final) {
            return st;
        }
        if (it->second.supervisorPid == 0) {
            return Error{"run_id '" + runId + "' is still starting; retry StopRun",
                         ErrorCode::Unavailable};
        }
        if (!fileExists(it->second.dir + "/" + kStopFile)) {
            (void)writeFileAtomic(it->second.dir + "/" + kStopFile,
                                  std::to_string(clock::unixNowNs()) + "\n");
        }
        snapshot = it->second;
    }
    if (graceSeconds <= 0) {
        graceSeconds = m_options.defaultGraceSeconds;
    }
    auto signalTree = [&](int sig) {
        const auto pids = treeOf(snapshot);
        if (processAlive(snapshot.childPid, snapshot.childStartTicks)) {
            ::kill(-snapshot.childPid, sig);  // the run's process group
        }
        for (pid_t p : pids) {
            ::kill(p, sig);
        }
        return pids.size();
    };
    const std::size_t initial = signalTree(SIGTERM);
    m_logger.info("StopRun " + runId + ": SIGTERM to " + std::to_string(initial) +
                  " processes, grace " + std::to_string(graceSeconds) + " s");
    const auto graceEnd = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(graceSeconds * 1000));
    while (std::chrono::steady_clock::now() < graceEnd && !treeOf(snapshot).empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!treeOf(snapshot).empty()) {
        const std::size_t n = signalTree(SIGKILL);
        m_logger.warn("StopRun " + runId + ": grace over, SIGKILL to " + std::to_string(n) +
                      " processes");
        const auto killEnd = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < killEnd && !treeOf(snapshot).empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            signalTree(SIGKILL);
        }
    }
    // Give the supervisor a moment to record the exit status.
    const auto exitEnd = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < exitEnd &&
           !fileExists(snapshot.dir + "/" + kExitFile) &&
           processAlive(snapshot.supervisorPid, snapshot.supervisorStartTicks)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status(runId);
}

Result<v1::RunStatus> RunManager::status(const std::string& runId) {
    std::lock_guard lock(m_mutex);
    auto it = m_runs.find(runId);
    if (it == m_runs.end()) {
        return Error{"run_id '" + runId + "': no such run on this node", ErrorCode::NotFound};
    }
    return refresh(it->second);
}

std::vector<v1::RunStatus> RunManager::list() {
    std::lock_guard lock(m_mutex);
    std::vector<v1::RunStatus> out;
    for (auto& [id, e] : m_runs) {
        out.push_back(refresh(e));
    }
    return out;
}

std::vector<RunView> RunManager::views() {
    std::lock_guard lock(m_mutex);
    std::vector<RunView> out;
    for (auto& [id, e] : m_runs) {
        RunView v;
        v.runId = id;
        v.stdoutPath = e.dir + "/" + kStdoutFile;
        v.stderrPath = e.dir + "/" + kStderrFile;
        v.status = refresh(e);
        v.supervisorPid = e.supervisorPid;
        v.supervisorStartTicks = e.supervisorStartTicks;
        v.childPid = e.childPid;
        v.childStartTicks = e.childStartTicks;
        v.sampleHz = e.sampleHz;
        v.rolePlan = e.rolePlan;
        out.push_back(std::move(v));
    }
    return out;
}

Result<std::string> RunManager::logPath(const std::string& runId, v1::LogStream stream) {
    std::lock_guard lock(m_mutex);
    auto it = m_runs.find(runId);
    if (it == m_runs.end()) {
        return Error{"run_id '" + runId + "': no such run on this node", ErrorCode::NotFound};
    }
    return it->second.dir + "/" + (stream == v1::LOG_STREAM_STDERR ? kStderrFile : kStdoutFile);
}

}  // namespace runplane::agent
