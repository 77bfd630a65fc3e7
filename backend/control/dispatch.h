#pragma once
// Multi-node dispatch (issue 11, docs/dispatch.md): preflight fanned out to every node's daemon
// at once and assembled into one node x check table; Ray bring-up in the order the frameworks
// prescribe (head `ray start --head`, workers join, wait for the cluster's GPU total), the launch
// on the head with the multi-node environment, and teardown (StopRun, then `ray stop` on every
// node). Every step is reported as a DispatchEvent through a callback and kept in the result.
// No gRPC or protobuf type appears here; the recipe is turned into a DispatchSpec by the caller
// (the CLI), so this library does not depend on the planner.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backend/control/node_client.h"
#include "backend/control/node_types.h"

namespace runplane::control {

/// One node's row of the preflight table. reachable=false is a "daemon lost" row whose only
/// check ("daemon") is a FAIL carrying the RPC error.
struct PreflightRow {
    std::string address;
    std::string hostname;
    bool reachable = false;
    std::string error;
    ErrorCode errorCode = ErrorCode::Unspecified;  // Unauthenticated: the daemon refused us
    std::vector<PreflightCheckInfo> checks;
    std::vector<std::string> gpuUuids;            // as the daemon reported them (gpu.distinct)
    std::vector<std::string> addresses;           // its interface addresses (multi-node)
    std::vector<std::string> masterAddrResolved;  // MASTER_ADDR as resolved on it
    /// The check with this id (first of several, e.g. path.exists), or nullptr.
    const PreflightCheckInfo* find(const std::string& id) const;
    /// Worst status among the checks with this id (Unspecified when none).
    CheckState worst(const std::string& id) const;
};

/// The assembled table: one row per node (in the order asked) plus the cross-node checks the
/// controller computes from the rows (ray.same_version). Plain value.
struct PreflightTable {
    std::vector<PreflightRow> rows;
    std::vector<PreflightCheckInfo> clusterChecks;
    /// Check ids in first-seen order (the table's columns).
    std::vector<std::string> checkIds() const;
    bool anyFail() const;
    /// "ADDRESS: CHECK: message" for every FAIL (cluster checks as "cluster: ...").
    std::vector<std::string> failures() const;
};

/// Asks every node's daemon concurrently (one thread per node, each call bounded by
/// options.callTimeout) and assembles the table. Never throws; an unreachable daemon becomes a
/// "daemon lost" row. requiredRayVersion (may be empty) is checked against every node.
PreflightTable preflightAll(const std::vector<std::string>& addresses, const PreflightSpec& spec,
                            const NodeClientOptions& options,
                            const std::string& requiredRayVersion = {});
/// As preflightAll, one spec per node (specs[i] for addresses[i]; e.g. the planner's host-memory
/// peak differs per node). Sizes must match; a missing spec is a FAIL row, not a crash.
PreflightTable preflightNodes(const std::vector<std::string>& addresses,
                              const std::vector<PreflightSpec>& specs,
                              const NodeClientOptions& options,
                              const std::string& requiredRayVersion = {});

/// The version in a `ray --version` sentence ("…: ray, version 2.40.0" -> "2.40.0"), or "".
std::string rayVersionFromMessage(const std::string& message);

/// Human table (one line per node, one column per check, then the non-PASS details).
std::string formatPreflightTable(const PreflightTable& table);
/// JSON document {"nodes":[...],"cluster":[...],"fail":bool}.
std::string preflightTableToJson(const PreflightTable& table);

enum class DispatchStep {
    Preflight,
    RayStartHead,
    RayStartWorker,
    WaitCluster,
    VerifyCluster,
    StartRun,
    StopRun,
    RayStop,
    Rollback
};
/// "preflight", "ray_start_head", "ray_start_worker", "wait_cluster", "start_run",
/// "verify_cluster", "stop_run", "ray_stop", "rollback".
const char* toString(DispatchStep step);

/// One step's progress or outcome. done=false records are progress (e.g. the GPU total while
/// waiting, progress in [0,1]); done=true records end the step for that node with ok.
struct DispatchEvent {
    DispatchStep step = DispatchStep::Preflight;
    std::string node;  // address, "" for cluster-wide
    bool done = true;
    bool ok = true;
    double progress = 1.0;
    std::string message;
};
using DispatchCallback = std::function<void(const DispatchEvent&)>;

/// What a launch needs. Node IPs for Ray default to the host part of each daemon address.
struct LaunchRequest {
    std::string head;                            // daemon address HOST:PORT
    std::vector<std::string> workers;            // daemon addresses
    std::map<std::string, std::string> nodeIps;  // address -> IP given to Ray (optional)
    std::uint32_t gpusPerNode = 0;  // declared to Ray with --num-gpus and expected in the total
    std::uint32_t rayPort = 6379;
    std::uint32_t dashboardPort = 0;
    /// Ray's token authentication (Ray >= 2.52), set explicitly on every node and in the run's
    /// environment: left to Ray, a head enables it only because ~/.ray/auth_token exists there
    /// (which any local `ray.init()` of Ray 2.60 writes), and workers without it cannot join.
    /// "disabled" or "token"; for "token", rayAuthTokenPath names the token file on every node.
    std::string rayAuthMode = "disabled";
    std::string rayAuthTokenPath;
    std::chrono::milliseconds clusterTimeout{std::chrono::seconds(120)};
    std::chrono::milliseconds pollInterval{std::chrono::milliseconds(500)};
    PreflightSpec preflight;
    /// The planner's host-memory peak per node, head first (overrides preflight's when given).
    std::vector<std::uint64_t> plannedPeakHostBytesPerNode;
    std::string requiredRayVersion;
    bool skipPreflight = false;      // for callers that ran preflightAll themselves
    bool overridePreflight = false;  // launch despite FAIL rows; recorded in the result
    StartRunSpec run;                // argv/env/workdir/recipe of the launcher; role is set to Head
    /// Each node's own plan by role (issue 43), head first; the head's replaces run.plannedRoles
    /// when given. A worker with rows gets a plan-holder run of the same id (role Worker, argv
    /// kPlanHolderArgv) carrying its rows and run.roleRows, so its daemon reports its own plan
    /// beside what it measures; stopMultiNode stops it (docs/dispatch.md, "Plan on workers").
    std::vector<std::vector<StartRunSpec::PlannedRole>> plannedRolesPerNode;
    NodeClientOptions client;
};

/// The outcome. When the launch was refused or failed, launched=false and error says why, and
/// every node that had been brought up was rolled back (RayStop --force).
struct DispatchResult {
    bool launched = false;
    std::string error;
    PreflightTable preflight;
    bool preflightOverridden = false;
    std::vector<std::string> overriddenFailures;  // the FAIL rows the override accepted
    std::map<std::string, std::string> runEnv;    // the multi-node environment given to the run
    RunStatusInfo headRun;
    std::vector<DispatchEvent> events;
};

/// What a worker's plan-holder run executes: nothing but a sleep that lasts until StopRun.
inline const std::vector<std::string> kPlanHolderArgv{"/bin/sh", "-c", "exec sleep infinity"};

/// Preflight (unless skipped), Ray bring-up, wait for the GPU total, StartRun(role head), then
/// each worker's plan holder (when plannedRolesPerNode gives it rows).
DispatchResult launchMultiNode(const LaunchRequest& request, const DispatchCallback& onEvent = {});

/// The multi-node environment of the run: the recipe's env plus MASTER_ADDR, ACTOR_NUM_NODES,
/// ACTOR_NUM_GPUS_PER_NODE, RAY_ADDRESS (what the request's env sets itself wins for none of
/// these: the cluster decides them).
std::map<std::string, std::string> multiNodeEnv(const LaunchRequest& request);

/// RAY_AUTH_MODE (and RAY_AUTH_TOKEN_PATH) for every `ray` command of the launch; an error for a
/// mode other than "disabled" or "token", or token mode without a token path.
Result<std::map<std::string, std::string>> rayAuthEnv(const LaunchRequest& request);

struct StopRequest {
    std::string head;
    std::vector<std::string> workers;
    std::string runId;  // empty: only tear Ray down
    double graceSeconds = 10;
    bool force = false;  // `ray stop --force`
    NodeClientOptions client;
};

struct StopResult {
    bool ok = true;  // every step succeeded
    std::vector<std::string> errors;
    std::vector<DispatchEvent> events;
};

/// StopRun on the head, then RayStop on every node (head last); keeps going past failures.
StopResult stopMultiNode(const StopRequest& request, const DispatchCallback& onEvent = {});

/// Ray RPCs on one daemon (NodeClient does not carry them). Plain results; errors as sentences.
struct RayCommandInfo {
    int exitCode = 0;
    std::string output;
    std::vector<std::string> argv;
};
/// A raylet the answering node's process table shows: the cluster that node really joined.
struct RayletIdentity {
    int pid = 0;
    std::string gcsAddress;  // HOST:PORT
    std::string nodeIp;
    std::string clusterId;  // "" where the Ray version does not pass one
};
struct RayClusterInfo {
    bool reachable = false;
    double gpusTotal = 0;
    std::uint32_t aliveNodes = 0;
    std::string rayVersion;
    std::string raw;
    std::vector<RayletIdentity> localRaylets;
};

/// Whether node `nodeIp` belongs to the cluster whose GCS is `gcsAddress` (and, when known, whose
/// id is `clusterId`), judged from the raylets its own daemon sees. "" when it does, else why not,
/// naming what it joined instead (issue 47: a worker that joined a stranger's GCS).
std::string verifyJoined(const std::vector<RayletIdentity>& raylets, const std::string& nodeIp,
                         const std::string& gcsAddress, const std::string& clusterId);
struct RayStartSpec {
    bool head = false;
    std::string nodeIp;
    std::uint32_t port = 0;
    std::string headAddress;
    std::uint32_t numGpus = 0;
    std::uint32_t dashboardPort = 0;
    std::map<std::string, std::string> env;
};
/// Each call opens its own channel; deadline = max(options.callTimeout, the daemon's own limit
/// for the command: 130 s for start/stop, 35 s for status).
Result<RayCommandInfo> rayStart(const std::string& address, const RayStartSpec& spec,
                                const NodeClientOptions& options);
/// `ray status` on the node, plus the raylets its process table shows; with rayletsOnly, only
/// those (no Python start: what bring-up uses to check who joined).
Result<RayClusterInfo> rayStatus(const std::string& address, const NodeClientOptions& options,
                                 bool rayletsOnly = false);
Result<RayCommandInfo> rayStop(const std::string& address, bool force,
                               const NodeClientOptions& options);

}  // namespace runplane::control
