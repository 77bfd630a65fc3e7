// Ray bring-up, launch on the head, teardown (docs/dispatch.md, "Bring-up"). The order is the
// one the frameworks document: head first, workers join it, wait until the cluster shows the
// expected GPU total, then start the launcher on the head only. A failure after the head was
// started rolls every touched node back with `ray stop --force`, so nothing is left half-started.
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "backend/control/dispatch.h"
#include "backend/control/dispatch_membership.h"
#include "backend/control/preflight_master_rank0.h"

namespace runplane::control {
namespace {

/// Collects events and forwards them to the caller's callback (always on the calling thread).
class EventLog {
  public:
    EventLog(std::vector<DispatchEvent>* sink, const DispatchCallback& cb)
        : m_sink(sink), m_cb(cb) {}
    void emit(DispatchStep step, const std::string& node, bool done, bool ok, double progress,
              std::string message) {
        DispatchEvent e{step, node, done, ok, progress, std::move(message)};
        if (done) {
            m_sink->push_back(e);  // progress records go to the callback only
        }
        if (m_cb) {
            m_cb(e);
        }
    }

  private:
    std::vector<DispatchEvent>* m_sink;
    const DispatchCallback& m_cb;
};

std::string hostOf(const std::string& address) {
    if (!address.empty() && address.front() == '[') {
        const auto close = address.find(']');
        return close == std::string::npos ? address : address.substr(1, close - 1);
    }
    const auto colon = address.rfind(':');
    return colon == std::string::npos ? address : address.substr(0, colon);
}

std::string nodeIpOf(const LaunchRequest& r, const std::string& address) {
    const auto it = r.nodeIps.find(address);
    return it != r.nodeIps.end() ? it->second : hostOf(address);
}

// The last meaningful line of a Ray command's output. The daemon ends a failed command's output
// with its own "[exit code N]" line; the exit code is reported separately, so the line before it
// (Ray's, or the script's, own reason) is the one worth showing.
std::string lastLine(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const auto end = std::min(text.find('\n', begin), text.size());
        std::string line = text.substr(begin, end - begin);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) {
            line.pop_back();
        }
        if (!line.empty()) {
            lines.push_back(std::move(line));
        }
        begin = end + 1;
    }
    if (lines.empty()) {
        return {};
    }
    const bool endMarker = lines.back().front() == '[' && lines.back().back() == ']';
    return endMarker && lines.size() > 1 ? lines[lines.size() - 2] : lines.back();
}

// True when something accepts a TCP connection on host:port within `timeout`, seen from the
// controller. A port that does not answer (closed, filtered, unroutable from here) reads false:
// then `ray start --head` itself fails (Ray finds the stranger's session in its GCS), with
// Ray's less telling assertion as the reason.
bool portAnswers(const std::string& host, std::uint32_t port, std::chrono::milliseconds timeout) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
        return false;
    }
    bool answered = false;
    for (const addrinfo* a = found; a != nullptr && !answered; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            answered = true;
        } else if (errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int err = 0;
            socklen_t len = sizeof err;
            answered = ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 &&
                       ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
        }
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return answered;
}

/// Outcome of one `ray start`: empty string = success, else the reason.
std::string describeStart(const Result<RayCommandInfo>& r) {
    if (!r) {
        return r.error();
    }
    if (r->exitCode != 0) {
        return "ray start exited with " + std::to_string(r->exitCode) + ": " + lastLine(r->output);
    }
    return {};
}

void rollback(const std::vector<std::string>& nodes, const NodeClientOptions& options,
              EventLog& log) {
    for (const auto& node : nodes) {
        const auto r = rayStop(node, true, options);
        const bool ok = r && r->exitCode == 0;
        log.emit(DispatchStep::Rollback, node, true, ok, 1.0,
                 ok ? "ray stop --force"
                    : "ray stop --force failed: " + (r ? lastLine(r->output) : r.error()));
    }
}

// One VerifyCluster event per node; "" when every node that shows raylets joined this head's GCS
// (and cluster id), else the first node's reason.
std::string verifyCluster(const LaunchRequest& r, const std::vector<std::string>& nodes,
                          const std::string& gcsAddress, EventLog& log) {
    std::vector<std::future<Result<RayClusterInfo>>> answers;
    for (const auto& node : nodes) {
        answers.push_back(
            std::async(std::launch::async, [&r, node] { return rayStatus(node, r.client, true); }));
    }
    std::vector<Result<RayClusterInfo>> status;
    for (auto& a : answers) {
        status.push_back(a.get());
    }
    std::string clusterId;  // the head's, from the head's own raylet
    if (status.front().ok()) {
        for (const auto& raylet : status.front()->localRaylets) {
            if (raylet.nodeIp == nodeIpOf(r, r.head)) {
                clusterId = raylet.clusterId;
            }
        }
    }
    std::string firstError;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string ip = nodeIpOf(r, nodes[i]);
        std::string why;
        std::string message;
        if (!status[i].ok()) {
            why = status[i].error();
        } else if (status[i]->localRaylets.empty()) {
            message =
                "not verified: this node's daemon sees no raylet (Ray in another PID namespace?)";
        } else {
            why = verifyJoined(status[i]->localRaylets, ip, gcsAddress, clusterId);
            message = "node " + ip + " joined the GCS at " + gcsAddress +
                      (clusterId.empty() ? std::string() : " (cluster " + clusterId + ")");
        }
        log.emit(DispatchStep::VerifyCluster, nodes[i], true, why.empty(), 1.0,
                 why.empty() ? message : why);
        if (!why.empty() && firstError.empty()) {
            firstError = "node " + nodes[i] + " is not in the cluster just brought up: " + why;
        }
    }
    return firstError;
}

}  // namespace

Result<std::map<std::string, std::string>> rayAuthEnv(const LaunchRequest& r) {
    if (r.rayAuthMode != "disabled" && r.rayAuthMode != "token") {
        return Error{"Ray auth mode: '" + r.rayAuthMode + "' is neither 'disabled' nor 'token'"};
    }
    if (r.rayAuthMode == "token" && r.rayAuthTokenPath.empty()) {
        return Error{"Ray auth mode 'token' needs the token file's path on the nodes"};
    }
    std::map<std::string, std::string> env{{"RAY_AUTH_MODE", r.rayAuthMode}};
    if (r.rayAuthMode == "token") {
        env["RAY_AUTH_TOKEN_PATH"] = r.rayAuthTokenPath;
    }
    return env;
}

std::map<std::string, std::string> multiNodeEnv(const LaunchRequest& r) {
    std::map<std::string, std::string> env = r.run.env;
    if (auto auth = rayAuthEnv(r)) {
        for (const auto& [k, v] : *auth) {
            env[k] = v;
        }
    }
    const std::string headIp = nodeIpOf(r, r.head);
    env["MASTER_ADDR"] = headIp;
    env["ACTOR_NUM_NODES"] = std::to_string(1 + r.workers.size());
    env["ACTOR_NUM_GPUS_PER_NODE"] = std::to_string(r.gpusPerNode);
    env["RAY_ADDRESS"] = headIp + ":" + std::to_string(r.rayPort);
    return env;
}

DispatchResult launchMultiNode(const LaunchRequest& r, const DispatchCallback& onEvent) {
    DispatchResult result;
    EventLog log(&result.events, onEvent);
    std::vector<std::string> all{r.head};
    all.insert(all.end(), r.workers.begin(), r.workers.end());
    const auto authEnv = rayAuthEnv(r);
    if (!authEnv) {
        result.error = authEnv.error();
        log.emit(DispatchStep::Preflight, "", true, false, 1.0, result.error);
        return result;
    }

    // 1. Preflight on every node; a FAIL blocks unless overridden (and then it is recorded).
    if (!r.skipPreflight) {
        log.emit(DispatchStep::Preflight, "", false, true, 0.0,
                 "asking " + std::to_string(all.size()) + " nodes");
        PreflightSpec spec = r.preflight;
        spec.multiNode = all.size() > 1 || spec.multiNode;
        if (spec.masterAddr.empty()) {
            spec.masterAddr = nodeIpOf(r, r.head);
        }
        if (spec.masterProbePort == 0) {
            spec.masterProbePort = daemonPortOf(r.head);  // the head is rank 0
        }
        std::vector<PreflightSpec> specs(all.size(), spec);
        for (std::size_t i = 0; i < specs.size() && i < r.plannedPeakHostBytesPerNode.size(); ++i) {
            specs[i].plannedPeakHostBytes = r.plannedPeakHostBytesPerNode[i];
        }
        result.preflight = preflightNodes(all, specs, r.client, r.requiredRayVersion);
        const auto failures = result.preflight.failures();
        if (!failures.empty() && !r.overridePreflight) {
            result.error = "preflight failed on " + std::to_string(failures.size()) +
                           " check(s); launch blocked (override with --override-preflight): " +
                           failures.front();
            log.emit(DispatchStep::Preflight, "", true, false, 1.0, result.error);
            return result;
        }
        if (!failures.empty()) {
            result.preflightOverridden = true;
            result.overriddenFailures = failures;
            log.emit(DispatchStep::Preflight, "", true, false, 1.0,
                     "preflight failed on " + std::to_string(failures.size()) +
                         " check(s); overridden by the user");
        } else {
            log.emit(DispatchStep::Preflight, "", true, true, 1.0, "every check passed or warned");
        }
    }

    // 2. Head. A head already part of a Ray cluster (a stale one, or another user's GCS on the
    // port) would make `ray start --head` fail or, worse, workers join the stranger: refuse.
    const std::string headIp = nodeIpOf(r, r.head);
    if (const auto before = rayStatus(r.head, r.client, /*rayletsOnly=*/true); before.ok()) {
        for (const auto& raylet : before->localRaylets) {
            const std::string portSuffix = ":" + std::to_string(r.rayPort);
            const bool samePort =
                raylet.gcsAddress.size() > portSuffix.size() &&
                raylet.gcsAddress.compare(raylet.gcsAddress.size() - portSuffix.size(),
                                          portSuffix.size(), portSuffix) == 0;
            if (raylet.nodeIp == headIp || samePort) {
                result.error = "head " + r.head + ": " + describeLocalRaylet(raylet, headIp);
                log.emit(DispatchStep::RayStartHead, r.head, true, false, 1.0, result.error);
                return result;
            }
        }
    }
    // A GCS this daemon cannot see (another container sharing the host's network, another user)
    // may hold the port: `ray start --head` would then connect to it and fail on an assertion,
    // and workers told this address would join the stranger. Refuse before touching anything.
    if (portAnswers(headIp, r.rayPort, std::chrono::milliseconds(1500))) {
        result.error = "head " + r.head + ": " + headIp + ":" + std::to_string(r.rayPort) +
                       " already answers (a foreign Ray GCS or another program holds the Ray " +
                       "port, outside what this node's daemon sees); stop it there or choose " +
                       "another Ray port (--ray-port)";
        log.emit(DispatchStep::RayStartHead, r.head, true, false, 1.0, result.error);
        return result;
    }
    RayStartSpec head;
    head.env = *authEnv;
    head.head = true;
    head.nodeIp = nodeIpOf(r, r.head);
    head.port = r.rayPort;
    head.numGpus = r.gpusPerNode;
    head.dashboardPort = r.dashboardPort;
    const std::string headErr = describeStart(rayStart(r.head, head, r.client));
    log.emit(DispatchStep::RayStartHead, r.head, true, headErr.empty(), 1.0,
             headErr.empty()
                 ? "ray start --head on " + head.nodeIp + ":" + std::to_string(r.rayPort)
                 : headErr);
    std::vector<std::string> touched{r.head};
    if (!headErr.empty()) {
        result.error = "head " + r.head + ": " + headErr;
        rollback(touched, r.client, log);
        return result;
    }

    // 3. Workers join, concurrently; events are emitted here in worker order.
    const std::string headAddress = head.nodeIp + ":" + std::to_string(r.rayPort);
    std::vector<std::future<std::string>> starts;
    for (const auto& w : r.workers) {
        RayStartSpec ws;
        ws.env = *authEnv;
        ws.nodeIp = nodeIpOf(r, w);
        ws.headAddress = headAddress;
        ws.numGpus = r.gpusPerNode;
        starts.push_back(std::async(
            std::launch::async, [w, ws, &r] { return describeStart(rayStart(w, ws, r.client)); }));
    }
    std::string firstWorkerErr;
    for (std::size_t i = 0; i < r.workers.size(); ++i) {
        const std::string err = starts[i].get();
        touched.push_back(r.workers[i]);  // a failed start may still have left processes behind
        log.emit(DispatchStep::RayStartWorker, r.workers[i], true, err.empty(), 1.0,
                 err.empty() ? "joined " + headAddress : err);
        if (!err.empty() && firstWorkerErr.empty()) {
            firstWorkerErr = "worker " + r.workers[i] + ": " + err;
        }
    }
    if (!firstWorkerErr.empty()) {
        result.error = firstWorkerErr;
        rollback(touched, r.client, log);
        return result;
    }

    // 4. Wait until the cluster reports the expected GPU total (or node count when no GPUs).
    const double expectedGpus =
        static_cast<double>(r.gpusPerNode) * static_cast<double>(all.size());
    const auto deadline = std::chrono::steady_clock::now() + r.clusterTimeout;
    std::string lastSeen = "no answer yet";
    bool ready = false;
    while (true) {
        const auto st = rayStatus(r.head, r.client);
        if (st && st->reachable) {
            const double have = r.gpusPerNode > 0 ? st->gpusTotal : st->aliveNodes;
            const double want = r.gpusPerNode > 0 ? expectedGpus : static_cast<double>(all.size());
            lastSeen = std::to_string(static_cast<long>(have)) + "/" +
                       std::to_string(static_cast<long>(want)) +
                       (r.gpusPerNode > 0 ? " GPUs" : " nodes") + ", " +
                       std::to_string(st->aliveNodes) + " nodes alive";
            log.emit(DispatchStep::WaitCluster, r.head, false, true,
                     want > 0 ? std::min(1.0, have / want) : 1.0, lastSeen);
            if (have >= want) {
                ready = true;
                break;
            }
        } else {
            lastSeen = st ? "ray status failed: " + lastLine(st->raw) : st.error();
            log.emit(DispatchStep::WaitCluster, r.head, false, true, 0.0, lastSeen);
        }
        if (std::chrono::steady_clock::now() + r.pollInterval > deadline) {
            break;
        }
        std::this_thread::sleep_for(r.pollInterval);
    }
    if (!ready) {
        result.error = "the Ray cluster did not reach the expected size within " +
                       std::to_string(r.clusterTimeout.count()) + " ms (last: " + lastSeen + ")";
        log.emit(DispatchStep::WaitCluster, r.head, true, false, 0.0, result.error);
        rollback(touched, r.client, log);
        return result;
    }
    log.emit(DispatchStep::WaitCluster, r.head, true, true, 1.0, "cluster ready: " + lastSeen);

    // 5. Prove who joined: every node's own daemon names the raylet on its host, and each must
    // have registered with this head's GCS (and its cluster id, where Ray passes one). A node
    // whose daemon sees no raylet at all (Ray in another PID namespace) is noted, not failed.
    if (const std::string err = verifyCluster(r, all, headAddress, log); !err.empty()) {
        result.error = err;
        rollback(touched, r.client, log);
        return result;
    }

    // 6. The launcher on the head only, with the multi-node environment.
    StartRunSpec run = r.run;
    run.role = RunRole::Head;
    run.env = multiNodeEnv(r);
    result.runEnv = run.env;
    if (run.runId.empty()) {
        run.runId = RunId{"dispatch-" +
                          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count())};
    }
    if (!r.plannedRolesPerNode.empty()) {
        run.plannedRoles = r.plannedRolesPerNode[0];
    }
    auto client = NodeClient::create(r.head, r.client);
    Result<RunStatusInfo> started =
        client ? (*client)->startRun(run) : Result<RunStatusInfo>(Error{client.error()});
    log.emit(DispatchStep::StartRun, r.head, true, started.ok(), 1.0,
             started ? "run " + run.runId.value() + " started on the head (pid " +
                           std::to_string(started->pid) + ")"
                     : started.error());
    if (!started) {
        result.error = "start run on head " + r.head + ": " + started.error();
        rollback(touched, r.client, log);
        return result;
    }
    result.headRun = *started;
    result.launched = true;

    // 7. Each worker's own plan by role, held by a run of the same id that only sleeps (the
    // launch stands either way; a worker that refuses is reported, its plan missing there).
    for (std::size_t i = 0; i < r.workers.size(); ++i) {
        if (i + 1 >= r.plannedRolesPerNode.size() || r.plannedRolesPerNode[i + 1].empty()) {
            continue;
        }
        StartRunSpec holder;
        holder.runId = run.runId;
        holder.role = RunRole::Worker;
        holder.argv = kPlanHolderArgv;
        holder.recipeYaml = run.recipeYaml;
        holder.plannedRoles = r.plannedRolesPerNode[i + 1];
        holder.roleRows = run.roleRows;
        auto wc = NodeClient::create(r.workers[i], r.client);
        Result<RunStatusInfo> held =
            wc ? (*wc)->startRun(holder) : Result<RunStatusInfo>(Error{wc.error()});
        log.emit(DispatchStep::StartRun, r.workers[i], true, held.ok(), 1.0,
                 held ? "the worker's plan by role (" + std::to_string(holder.plannedRoles.size()) +
                            " rows) held by run " + run.runId.value() + " (pid " +
                            std::to_string(held->pid) + ")"
                      : "the worker's plan by role was not sent: " + held.error());
    }
    return result;
}

StopResult stopMultiNode(const StopRequest& r, const DispatchCallback& onEvent) {
    StopResult result;
    EventLog log(&result.events, onEvent);
    auto fail = [&](const std::string& e) {
        result.ok = false;
        result.errors.push_back(e);
    };
    if (!r.runId.empty()) {
        NodeClientOptions opts = r.client;
        // StopRun waits for the grace period before SIGKILL; give the call that long.
        opts.callTimeout =
            std::max(opts.callTimeout,
                     std::chrono::milliseconds(static_cast<long>(r.graceSeconds * 1000) + 5000));
        auto stopClient = NodeClient::create(r.head, opts);
        auto st = stopClient ? (*stopClient)->stopRun(RunId{r.runId}, r.graceSeconds)
                             : Result<RunStatusInfo>(Error{stopClient.error()});
        log.emit(DispatchStep::StopRun, r.head, true, st.ok(), 1.0,
                 st ? "run " + r.runId + " " + toString(st->state) : st.error());
        if (!st) {
            fail("stop run on " + r.head + ": " + st.error());
        }
    }
    // A worker's plan holder (launchMultiNode step 7), where the worker has one.
    if (!r.runId.empty()) {
        for (const auto& w : r.workers) {
            auto wc = NodeClient::create(w, r.client);
            auto runs =
                wc ? (*wc)->listRuns() : Result<std::vector<RunStatusInfo>>(Error{wc.error()});
            if (!runs) {
                continue;  // an unreachable worker is reported by its ray stop below
            }
            const bool held = std::any_of(runs->begin(), runs->end(), [&](const auto& x) {
                return x.runId.value() == r.runId && x.role == RunRole::Worker &&
                       (x.state == NodeRunState::Starting || x.state == NodeRunState::Running);
            });
            if (!held) {
                continue;
            }
            auto st = (*wc)->stopRun(RunId{r.runId}, 0);
            log.emit(DispatchStep::StopRun, w, true, st.ok(), 1.0,
                     st ? "plan holder " + r.runId + " " + toString(st->state) : st.error());
            if (!st) {
                fail("stop plan holder on " + w + ": " + st.error());
            }
        }
    }
    // Workers first, then the head (the GCS lives there).
    std::vector<std::string> order = r.workers;
    order.push_back(r.head);
    for (const auto& node : order) {
        const auto st = rayStop(node, r.force, r.client);
        const bool ok = st && st->exitCode == 0;
        const std::string what = r.force ? "ray stop --force" : "ray stop";
        log.emit(DispatchStep::RayStop, node, true, ok, 1.0,
                 ok ? what : what + " failed: " + (st ? lastLine(st->output) : st.error()));
        if (!ok) {
            fail(node + ": " + what + " failed: " + (st ? lastLine(st->output) : st.error()));
        }
    }
    return result;
}

}  // namespace runplane::control
