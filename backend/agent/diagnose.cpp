// The daemon's collection for a diagnosis (diagnose.h). Runs on its own threads (the service's
// diagnosis pool), never on a gRPC reaction.
#include "backend/agent/diagnose.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>

#include "backend/agent/proc_tree.h"
#include "backend/agent/process_roles.h"
#include "backend/diagnosis/gpu_clocks.h"
#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/subprocess.h"

namespace runplane::agent {
namespace {

namespace dx = runplane::diagnosis;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::int64_t nowUnixNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

double monotonicSeconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::int64_t msSince(Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

std::string dirOfSelf() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

bool isExecutable(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

// A process's environment (NUL-separated), only the keys we read.
std::map<std::string, std::string> processEnv(pid_t pid) {
    static const char* keys[] = {"RANK",
                                 "LOCAL_RANK",
                                 "NCCL_RAS_ADDR",
                                 "NCCL_RAS_ENABLE",
                                 "TORCH_NCCL_TRACE_BUFFER_SIZE",
                                 "TORCH_NCCL_DUMP_ON_TIMEOUT",
                                 "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"};
    std::map<std::string, std::string> out;
    auto text = readSmallFile("/proc/" + std::to_string(pid) + "/environ", 1u << 20);
    if (!text) {
        return out;
    }
    std::size_t pos = 0;
    while (pos < text->size()) {
        auto end = text->find('\0', pos);
        if (end == std::string::npos) {
            end = text->size();
        }
        const std::string_view entry(text->data() + pos, end - pos);
        pos = end + 1;
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos) {
            continue;
        }
        const std::string key(entry.substr(0, eq));
        for (const char* k : keys) {
            if (key == k) {
                out[key] = std::string(entry.substr(eq + 1));
            }
        }
    }
    return out;
}

std::int64_t toInt(const std::map<std::string, std::string>& env, const char* key) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) {
        return -1;
    }
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    return (end != nullptr && *end == '\0' && v >= 0) ? v : -1;
}

std::string cmdlineOf(pid_t pid) {
    auto text = readSmallFile("/proc/" + std::to_string(pid) + "/cmdline", 4096);
    if (!text) {
        return {};
    }
    std::string s = *text;
    std::replace(s.begin(), s.end(), '\0', ' ');
    while (!s.empty() && s.back() == ' ') {
        s.pop_back();
    }
    return s.size() > 300 ? s.substr(0, 300) : s;
}

// The basename of /proc/PID/exe ("" when unreadable, e.g. another user's process).
std::string exeName(pid_t pid) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    return ec ? std::string() : exe.filename().string();
}

std::string firstLine(const std::string& text) {
    const auto nl = text.find('\n');
    std::string s = text.substr(0, nl);
    return s.size() > 300 ? s.substr(0, 300) : s;
}

// The last lines of a log file: reads at most the last `window` bytes, keeps at most `keep` lines.
std::vector<std::string> tailLines(const std::string& path, std::string& why, off_t window = 65536,
                                   std::size_t keep = dx::kOutputTailLines) {
    std::vector<std::string> out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        why = path + ": " + std::strerror(errno);
        return out;
    }
    const off_t size = ::lseek(fd, 0, SEEK_END);
    const off_t from = size > window ? size - window : 0;
    std::string data(static_cast<std::size_t>(size - from), '\0');
    const ssize_t n = ::pread(fd, data.data(), data.size(), from);
    ::close(fd);
    if (n < 0) {
        why = path + ": " + std::strerror(errno);
        return out;
    }
    data.resize(static_cast<std::size_t>(n));
    std::size_t pos = from > 0 ? data.find('\n') + 1 : 0;  // skip a partial first line
    while (pos < data.size()) {
        auto nl = data.find('\n', pos);
        if (nl == std::string::npos) {
            nl = data.size();
        }
        std::string line = data.substr(pos, nl - pos);
        // A progress bar rewrites its line with '\r': keep what was shown last.
        while (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (const auto cr = line.rfind('\r'); cr != std::string::npos) {
            line = line.substr(cr + 1);
        }
        if (line.size() > dx::kOutputLineBytes) {
            line = line.substr(0, dx::kOutputLineBytes) + "...";
        }
        out.push_back(std::move(line));
        pos = nl + 1;
    }
    if (out.size() > keep) {
        out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(keep));
    }
    return out;
}

std::string pySpyVersion(const std::string& path) {
    static std::mutex mutex;
    static std::map<std::string, std::string> cache;
    std::lock_guard lock(mutex);
    if (auto it = cache.find(path); it != cache.end()) {
        return it->second;
    }
    compute::ProcessSpec spec;
    spec.argv = {path, "--version"};
    spec.timeout = std::chrono::seconds(5);
    spec.maxOutputBytes = 4096;
    const auto r = compute::runProcess(spec);
    std::string v =
        r.succeeded() ? firstLine(r.out) : "py-spy (version unknown: " + r.describeEnd() + ")";
    cache[path] = v;
    return v;
}

dx::ProcessStacks stackOf(const std::string& pyspy, pid_t pid, const DiagnoseOptions& options) {
    dx::ProcessStacks out;
    out.pid = pid;
    compute::ProcessSpec spec;
    spec.argv = {pyspy, "dump", "--json", "--pid", std::to_string(pid)};
    if (options.nativeFrames) {
        spec.argv.push_back("--native");
    }
    spec.timeout = options.stackTimeout;
    spec.maxOutputBytes = 4u << 20;
    const auto r = compute::runProcess(spec);
    if (!r.succeeded()) {
        std::string detail = firstLine(r.err.empty() ? r.out : r.err);
        if (detail.find("Permission denied") != std::string::npos ||
            detail.find("Operation not permitted") != std::string::npos) {
            detail +=
                " (py-spy needs ptrace: the same user as the run, and "
                "kernel.yama.ptrace_scope <= 1 or CAP_SYS_PTRACE)";
        }
        out.error = "py-spy " + r.describeEnd() + (detail.empty() ? "" : ": " + detail);
        return out;
    }
    auto threads = dx::parsePySpyJson(r.out);
    if (!threads) {
        out.error = threads.error();
        return out;
    }
    if (threads->size() > dx::kMaxThreadsPerProcess) {
        threads->resize(dx::kMaxThreadsPerProcess);
    }
    for (auto& t : *threads) {
        if (t.frames.size() > dx::kMaxFramesPerThread) {
            t.frames.resize(dx::kMaxFramesPerThread);
        }
    }
    out.threads = std::move(*threads);
    return out;
}

void collectStacks(dx::NodeDiagnosis& node, const std::vector<pid_t>& pids,
                   const DiagnoseOptions& options) {
    const std::string bundle = options.bundleDir.empty() ? dirOfSelf() : options.bundleDir;
    const char* path = std::getenv("PATH");
    const PySpyLocation where = findPySpy(bundle, path ? path : "");
    if (where.path.empty()) {
        node.stacksMissing = where.why;
        return;
    }
    node.stackToolPath = where.path;
    node.stackToolSource = where.source;
    node.stackTool = pySpyVersion(where.path);
    node.nativeFrames = options.nativeFrames;
    std::vector<pid_t> targets;
    for (pid_t pid : pids) {
        const std::string exe = exeName(pid);
        if (!exe.empty() && exe.rfind("python", 0) != 0) {
            dx::ProcessStacks skipped;
            skipped.pid = pid;
            skipped.error = "not a Python process (" + exe + ")";
            node.stacks.push_back(std::move(skipped));
            continue;
        }
        if (targets.size() < dx::kMaxStackProcesses) {
            targets.push_back(pid);
        }
    }
    // Bounded parallelism: at most stackParallel py-spy processes at once.
    std::vector<dx::ProcessStacks> results(targets.size());
    const unsigned parallel = std::max(1u, options.stackParallel);
    for (std::size_t start = 0; start < targets.size(); start += parallel) {
        std::vector<std::future<dx::ProcessStacks>> batch;
        for (std::size_t i = start; i < targets.size() && i < start + parallel; ++i) {
            batch.push_back(std::async(
                std::launch::async, [&, i] { return stackOf(where.path, targets[i], options); }));
        }
        for (std::size_t k = 0; k < batch.size(); ++k) {
            results[start + k] = batch[k].get();
        }
    }
    for (auto& r : results) {
        node.stacks.push_back(std::move(r));
    }
    std::sort(node.stacks.begin(), node.stacks.end(),
              [](const dx::ProcessStacks& a, const dx::ProcessStacks& b) { return a.pid < b.pid; });
}

void collectGpus(dx::NodeDiagnosis& node, const std::vector<pid_t>& pids,
                 const DiagnoseOptions& options) {
    if (!options.gpuTelemetry) {
        node.gpusMissing = "the daemon runs with --no-gpu";
        return;
    }
    const compute::GpuSnapshot snap = compute::queryGpus();
    if (!snap.unavailableReason.empty()) {
        node.gpusMissing = snap.unavailableReason;
        return;
    }
    node.gpus = json::array();
    for (const auto& g : snap.gpus) {
        json runProcs = json::array();
        for (const auto& p : snap.processes) {
            if (p.gpuIndex == g.index &&
                std::find(pids.begin(), pids.end(), static_cast<pid_t>(p.pid)) != pids.end()) {
                runProcs.push_back({{"pid", p.pid}, {"used_bytes", p.usedBytes}});
            }
        }
        node.gpus.push_back(
            {{"index", g.index},
             {"name", g.name},
             {"uuid", g.uuid},
             {"pci_bus_id", g.pciBusId},
             {"memory_total_bytes", g.memoryTotalBytes},
             {"memory_used_bytes", g.memoryUsedBytes},
             {"utilization_percent", g.utilizationPercent},
             {"ecc_uncorrected", g.eccUncorrected},
             {"last_xid", g.lastXid},
             {"nvlink_replay_errors", g.nvlinkReplayErrors},
             {"sm_clock_mhz", g.smClockMHz},
             {"sm_clock_max_mhz", g.smClockMaxMHz},
             {"clock_event_reasons", g.clockEventReasons},
             {"clock_event_reason_names", dx::clockReasonNames(g.clockEventReasons)},
             {"temperature_c", g.temperatureC},
             {"error", g.error},
             {"run_processes", std::move(runProcs)}});
    }
}

void collectKernelLog(dx::NodeDiagnosis& node, std::int64_t runStartedUnixNs,
                      const DiagnoseOptions& options) {
    // Kernel records are stamped in seconds since boot; the run's start in Unix time.
    const double bootUnix = static_cast<double>(nowUnixNs()) / 1e9 - monotonicSeconds();
    double since = 0;
    if (runStartedUnixNs > 0) {
        since = static_cast<double>(runStartedUnixNs) / 1e9 - bootUnix -
                options.kernelWindowMarginSeconds;
    }
    auto read = dx::readKmsg(options.kmsgPath, std::max(0.0, since));
    if (read) {
        node.kernelLogSource = read->source;
        node.kernelLines = std::move(read->lines);
        node.kernelLogTruncated = read->truncated;
        return;
    }
    compute::ProcessSpec spec;
    spec.argv = {"dmesg"};
    spec.timeout = std::chrono::seconds(3);
    spec.maxOutputBytes = 8u << 20;
    const auto r = compute::runProcess(spec);
    if (r.succeeded()) {
        auto text = dx::filterDmesgText(r.out, std::max(0.0, since));
        node.kernelLogSource = "dmesg";
        node.kernelLines = std::move(text.lines);
        node.kernelLogTruncated = text.truncated;
        return;
    }
    node.kernelLogMissing = read.error() + "; dmesg: " + r.describeEnd() +
                            (r.err.empty() ? "" : ": " + firstLine(r.err));
}

void collectFlightRecorder(dx::NodeDiagnosis& node, const std::map<std::string, std::string>& env) {
    auto size = env.find("TORCH_NCCL_TRACE_BUFFER_SIZE");
    if (size == env.end() || size->second.empty() || size->second == "0") {
        node.flightRecorderMissing =
            "the run did not set TORCH_NCCL_TRACE_BUFFER_SIZE (PyTorch's Flight Recorder is off)";
        return;
    }
    auto prefixIt = env.find("TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
    const std::string prefix = prefixIt != env.end() && !prefixIt->second.empty()
                                   ? prefixIt->second
                                   : "/tmp/nccl_trace_rank_";
    const std::filesystem::path p(prefix);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    const std::string stem = p.filename().string();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        node.flightRecorderMissing = dir + ": " + std::strerror(errno);
        return;
    }
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(stem, 0) == 0 && node.flightRecorderFiles.size() < 64) {
            node.flightRecorderFiles.push_back(dir + "/" + name);
        }
    }
    ::closedir(d);
    std::sort(node.flightRecorderFiles.begin(), node.flightRecorderFiles.end());
    if (node.flightRecorderFiles.empty()) {
        node.flightRecorderMissing = "no dump at " + prefix +
                                     "* yet (PyTorch writes one on a collective timeout when "
                                     "TORCH_NCCL_DUMP_ON_TIMEOUT=1)";
    }
}

std::int64_t mtimeUnixNs(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return 0;
    }
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

// The role a table row gives a live process (its /proc/PID/cmdline and comm); "" when none.
std::string roleOfLiveProcess(const RoleTable& table, pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    auto cmdline = readSmallFile(dir + "/cmdline", 4096);
    auto comm = readSmallFile(dir + "/comm", 64);
    if (!cmdline) {
        return {};
    }
    std::string c = comm ? *comm : std::string();
    while (!c.empty() && c.back() == '\n') {
        c.pop_back();
    }
    const int rule = table.match(*cmdline, c);
    return rule < 0 ? std::string() : table.rules()[static_cast<std::size_t>(rule)].role;
}

// The table the memory-by-role walk uses for this run's processes (collector_roles.cpp): the
// run's own role_rows (StartRun), then the daemon's (--role-table rows, then the built-in ones).
RoleTable runRoleTable(const RunView& view, const RoleTable& daemonTable) {
    RoleTable table = RoleTable::parse("", "run rows").value();
    if (view.rolePlan && !view.rolePlan->roleRows.empty()) {
        // Checked at StartRun; a record edited since is left out, as the walk does.
        if (auto rows =
                RoleTable::parse(view.rolePlan->roleRows, "run " + view.runId + " role_rows")) {
            table.append(*rows);
        }
    }
    table.append(daemonTable);
    return table;
}

// Each role's last line (docs/diagnosis.md, "Last output per role"): a line's Ray prefix names
// its process; a live process of the run with that pid takes the role the table gives it, else
// the actor's title (`ray::Actor`) or Ray component (`raylet`) is matched by the same table;
// lines without a prefix are the run's own process's (its role by the table, else `driver`).
void collectRoleOutput(dx::NodeDiagnosis& node, const RunView& view, const std::vector<pid_t>& pids,
                       const RoleTable& table) {
    std::map<std::int64_t, std::string> liveRoles;
    auto roleOf = [&](const dx::LinePrefix& p) -> std::string {
        if (p.pid > 0 &&
            std::find(pids.begin(), pids.end(), static_cast<pid_t>(p.pid)) != pids.end()) {
            auto [it, fresh] = liveRoles.try_emplace(p.pid);
            if (fresh) {
                it->second = roleOfLiveProcess(table, static_cast<pid_t>(p.pid));
            }
            if (!it->second.empty()) {
                return it->second;
            }
        }
        if (p.actor.empty()) {
            return {};
        }
        const std::string title = "ray::" + p.actor;
        int rule = table.match(std::string_view(title.c_str(), title.size() + 1), "");
        if (rule < 0) {
            rule = table.match(std::string_view(p.actor.c_str(), p.actor.size() + 1), p.actor);
        }
        return rule < 0 ? std::string() : table.rules()[static_cast<std::size_t>(rule)].role;
    };
    std::string ownRole = view.childPid > 0 ? roleOfLiveProcess(table, view.childPid) : "";
    if (ownRole.empty()) {
        ownRole = std::string(kRoleDriver);
    }
    // A quiet role's last line may lie far behind a chatty one's: scan the last MiB of each
    // stream, not only the tail kept in the diagnosis.
    constexpr off_t kRoleWindow = 1 << 20;
    std::string why;
    std::vector<dx::StreamTail> streams = {
        {"stdout", tailLines(view.stdoutPath, why, kRoleWindow, SIZE_MAX),
         mtimeUnixNs(view.stdoutPath)},
        {"stderr", tailLines(view.stderrPath, why, kRoleWindow, SIZE_MAX),
         mtimeUnixNs(view.stderrPath)}};
    node.roleOutput = dx::lastOutputPerRole(streams, roleOf, ownRole);
}

}  // namespace

PySpyLocation findPySpy(const std::string& bundleDir, const std::string& pathVariable) {
    PySpyLocation out;
    if (!bundleDir.empty() && isExecutable(bundleDir + "/py-spy")) {
        out.path = bundleDir + "/py-spy";
        out.source = "bundle";
        return out;
    }
    std::size_t pos = 0;
    while (pos <= pathVariable.size()) {
        auto colon = pathVariable.find(':', pos);
        if (colon == std::string::npos) {
            colon = pathVariable.size();
        }
        const std::string dir = pathVariable.substr(pos, colon - pos);
        pos = colon + 1;
        if (!dir.empty() && isExecutable(dir + "/py-spy")) {
            out.path = dir + "/py-spy";
            out.source = "PATH";
            return out;
        }
    }
    out.why = "py-spy not found: not in the node bundle (" +
              (bundleDir.empty() ? std::string("?") : bundleDir) +
              "/py-spy) nor on the daemon's PATH (pip install py-spy, or ship it in the bundle)";
    return out;
}

Result<dx::NodeDiagnosis> diagnoseRun(RunManager& runs, const std::string& runId,
                                      const DiagnoseOptions& options) {
    const auto t0 = Clock::now();
    std::optional<RunView> view;
    for (auto& v : runs.views()) {
        if (v.runId == runId) {
            view = std::move(v);
        }
    }
    if (!view) {
        return Error{"run '" + runId + "' is not known on this node", ErrorCode::NotFound};
    }
    dx::NodeDiagnosis node;
    node.nodeId = options.nodeId;
    node.runId = runId;
    node.tUnixNs = nowUnixNs();
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) {
        node.hostname = host;
    }
    node.runState = v1::RunState_Name(view->status.state());

    // The run's own processes: the supervisor's descendants (never anything else).
    const std::vector<pid_t> pids = runTree(view->supervisorPid, view->supervisorStartTicks,
                                            view->childPid, view->childStartTicks);
    std::map<std::string, std::string> firstEnv;  // of the first process that sets each key
    for (pid_t pid : pids) {
        const auto env = processEnv(pid);
        for (const auto& [k, val] : env) {
            firstEnv.emplace(k, val);
        }
        node.processes.push_back(
            {pid, cmdlineOf(pid), toInt(env, "RANK"), toInt(env, "LOCAL_RANK")});
    }

    // RAS on its own thread, while the stacks are taken.
    std::future<void> ras;
    auto endpoint =
        dx::rasEndpoint(firstEnv.count("NCCL_RAS_ADDR") ? firstEnv["NCCL_RAS_ADDR"] : "");
    if (!endpoint) {
        node.rasMissing = endpoint.error();
    } else if (firstEnv.count("NCCL_RAS_ENABLE") && firstEnv["NCCL_RAS_ENABLE"] == "0") {
        node.rasMissing = "the run set NCCL_RAS_ENABLE=0";
    } else {
        node.rasEndpoint = endpoint->text();
        ras = std::async(std::launch::async, [&node, &options, e = *endpoint] {
            dx::RasClientOptions o;
            o.endpoint = e;
            o.timeout = options.rasTimeout;
            auto fetched = dx::fetchRasReport(o);
            if (fetched) {
                node.rasAvailable = true;
                node.ras = std::move(fetched->report);
                node.rasMs = fetched->took.count();
            } else {
                node.rasMissing = fetched.error();
            }
        });
    }
    if (pids.empty()) {
        node.stacksMissing = "the run has no live processes on this node (" + node.runState + ")";
    } else {
        collectStacks(node, pids, options);
    }
    collectGpus(node, pids, options);
    collectKernelLog(node, view->status.started_unix_ns(), options);
    std::string whyOut, whyErr;
    node.stdoutTail = tailLines(view->stdoutPath, whyOut);
    node.stderrTail = tailLines(view->stderrPath, whyErr);
    if (!whyOut.empty() && !whyErr.empty()) {
        node.outputMissing = whyOut + "; " + whyErr;
    }
    collectRoleOutput(
        node, *view, pids,
        runRoleTable(*view, options.roleTable ? *options.roleTable : RoleTable::builtin()));
    collectFlightRecorder(node, firstEnv);
    if (ras.valid()) {
        ras.get();
    }
    node.collectionMs = msSince(t0);
    return node;
}

}  // namespace runplane::agent
