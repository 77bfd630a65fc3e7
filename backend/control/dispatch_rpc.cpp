// The Ray RPCs (RayStart, RayStatus, RayStop) for dispatch. NodeClient does not carry them and is
// owned elsewhere, so this file opens its own channel with the same security rule: plaintext
// only to loopback, TLS when a root certificate is given, bearer token as metadata.
#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "backend/control/agent_channel.h"
#include "backend/control/dispatch.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::control {
namespace {

void prepare(grpc::ClientContext& context, const NodeClientOptions& options,
             std::chrono::milliseconds floor) {
    context.set_deadline(std::chrono::system_clock::now() + std::max(options.callTimeout, floor));
    if (!options.bearerToken.empty()) {
        context.AddMetadata("authorization", "Bearer " + options.bearerToken);
    }
}

RayCommandInfo convert(const v1::RayCommandResult& r) {
    RayCommandInfo out;
    out.exitCode = r.exit_code();
    out.output = r.output();
    out.argv.assign(r.argv().begin(), r.argv().end());
    return out;
}

Error rpcError(const std::string& address, const char* method, const grpc::Status& status) {
    return rpcFailure(address, method, static_cast<RpcCode>(status.error_code()),
                      status.error_message());
}

}  // namespace

Result<RayCommandInfo> rayStart(const std::string& address, const RayStartSpec& spec,
                                const NodeClientOptions& options) {
    auto stub = makeAgentStub(address, options);
    if (!stub) {
        return Error{stub.error()};
    }
    v1::RayStartRequest req;
    req.set_head(spec.head);
    req.set_node_ip(spec.nodeIp);
    req.set_port(spec.port);
    req.set_head_address(spec.headAddress);
    req.set_num_gpus(spec.numGpus);
    req.set_dashboard_port(spec.dashboardPort);
    for (const auto& [k, v] : spec.env) {
        (*req.mutable_env())[k] = v;
    }
    grpc::ClientContext context;
    prepare(context, options, std::chrono::seconds(130));
    v1::RayCommandResult resp;
    const grpc::Status st = (*stub)->RayStart(&context, req, &resp);
    if (!st.ok()) {
        return rpcError(address, "RayStart", st);
    }
    return convert(resp);
}

Result<RayClusterInfo> rayStatus(const std::string& address, const NodeClientOptions& options,
                                 bool rayletsOnly) {
    auto stub = makeAgentStub(address, options);
    if (!stub) {
        return Error{stub.error()};
    }
    grpc::ClientContext context;
    prepare(context, options, std::chrono::seconds(35));
    v1::RayClusterStatus resp;
    v1::RayStatusRequest req;
    req.set_raylets_only(rayletsOnly);
    const grpc::Status st = (*stub)->RayStatus(&context, req, &resp);
    if (!st.ok()) {
        return rpcError(address, "RayStatus", st);
    }
    RayClusterInfo out;
    out.reachable = resp.reachable();
    out.gpusTotal = resp.gpus_total();
    out.aliveNodes = resp.alive_nodes();
    out.rayVersion = resp.ray_version();
    out.raw = resp.raw();
    for (const auto& r : resp.local_raylets()) {
        out.localRaylets.push_back({r.pid(), r.gcs_address(), r.node_ip(), r.cluster_id()});
    }
    return out;
}

Result<RayCommandInfo> rayStop(const std::string& address, bool force,
                               const NodeClientOptions& options) {
    auto stub = makeAgentStub(address, options);
    if (!stub) {
        return Error{stub.error()};
    }
    v1::RayStopRequest req;
    req.set_force(force);
    grpc::ClientContext context;
    prepare(context, options, std::chrono::seconds(130));
    v1::RayCommandResult resp;
    const grpc::Status st = (*stub)->RayStop(&context, req, &resp);
    if (!st.ok()) {
        return rpcError(address, "RayStop", st);
    }
    return convert(resp);
}

}  // namespace runplane::control
