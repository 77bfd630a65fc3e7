#pragma once
// The gRPC edge of runplaned: runplane.v1.Agent on the callback API. Unary calls that may block
// run on the WorkPool and finish from there; the two server streams (WatchTelemetry, TailLogs)
// have one reactor each, fed by the StreamPump; cancellation is handled in every reactor.
// grpc::Status exists only here: library results are mapped to status codes in this file.
//
// Ownership: references everything it serves; the Daemon owns all of it and outlives the server.

#include <memory>
#include <string>

#include "backend/agent/auth.h"
#include "backend/agent/collector.h"
#include "backend/agent/logger.h"
#include "backend/agent/node_info.h"
#include "backend/agent/run_manager.h"
#include "backend/agent/spool.h"
#include "backend/agent/stream_pump.h"
#include "backend/agent/work_pool.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::agent {

/// What the service needs, all owned elsewhere (by the Daemon).
struct AgentServiceDeps {
    std::string nodeId;
    Spool* spool = nullptr;
    RunManager* runs = nullptr;
    Collector* collector = nullptr;
    NodeInventory* inventory = nullptr;
    StreamPump* pump = nullptr;
    WorkPool* pool = nullptr;
    const Authenticator* auth = nullptr;
    Logger* logger = nullptr;
    std::size_t maxRecordsPerBatch = 500;
    bool gpuTelemetry = true;  // false: --no-gpu (a diagnosis and preflight then read no NVML)
    /// The daemon's role table (--role-table rows, then the built-in ones; null: built-in), for
    /// a diagnosis's last output per role.
    const RoleTable* roleTable = nullptr;
};

class AgentService final : public v1::Agent::CallbackService {
  public:
    explicit AgentService(AgentServiceDeps deps);

    grpc::ServerUnaryReactor* GetNode(grpc::CallbackServerContext* ctx,
                                      const v1::GetNodeRequest* request,
                                      v1::NodeInfo* response) override;
    grpc::ServerUnaryReactor* Preflight(grpc::CallbackServerContext* ctx,
                                        const v1::PreflightRequest* request,
                                        v1::PreflightReport* response) override;
    grpc::ServerUnaryReactor* StartRun(grpc::CallbackServerContext* ctx,
                                       const v1::StartRunRequest* request,
                                       v1::RunStatus* response) override;
    grpc::ServerUnaryReactor* StopRun(grpc::CallbackServerContext* ctx,
                                      const v1::StopRunRequest* request,
                                      v1::RunStatus* response) override;
    grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext* ctx,
                                       const v1::ListRunsRequest* request,
                                       v1::ListRunsResponse* response) override;
    grpc::ServerWriteReactor<v1::LogChunk>* TailLogs(grpc::CallbackServerContext* ctx,
                                                     const v1::TailLogsRequest* request) override;
    grpc::ServerWriteReactor<v1::TelemetryBatch>* WatchTelemetry(
        grpc::CallbackServerContext* ctx, const v1::WatchTelemetryRequest* request) override;
    grpc::ServerUnaryReactor* AckTelemetry(grpc::CallbackServerContext* ctx,
                                           const v1::AckTelemetryRequest* request,
                                           v1::AckTelemetryResponse* response) override;
    grpc::ServerUnaryReactor* ResolveNccl(grpc::CallbackServerContext* ctx,
                                          const v1::ResolveNcclRequest* request,
                                          v1::NcclResolution* response) override;
    grpc::ServerUnaryReactor* GetNcclUniqueId(grpc::CallbackServerContext* ctx,
                                              const v1::GetNcclUniqueIdRequest* request,
                                              v1::NcclUniqueId* response) override;
    grpc::ServerUnaryReactor* ProbeNccl(grpc::CallbackServerContext* ctx,
                                        const v1::NcclProbeRequest* request,
                                        v1::NcclProbeReport* response) override;
    grpc::ServerUnaryReactor* RayStart(grpc::CallbackServerContext* ctx,
                                       const v1::RayStartRequest* request,
                                       v1::RayCommandResult* response) override;
    grpc::ServerUnaryReactor* RayStatus(grpc::CallbackServerContext* ctx,
                                        const v1::RayStatusRequest* request,
                                        v1::RayClusterStatus* response) override;
    grpc::ServerUnaryReactor* RayStop(grpc::CallbackServerContext* ctx,
                                      const v1::RayStopRequest* request,
                                      v1::RayCommandResult* response) override;
    grpc::ServerUnaryReactor* Diagnose(grpc::CallbackServerContext* ctx,
                                       const v1::DiagnoseRequest* request,
                                       v1::DiagnoseReport* response) override;

  private:
    template <typename Fn>
    grpc::ServerUnaryReactor* unary(grpc::CallbackServerContext* ctx, const char* method, Fn fn);

    AgentServiceDeps m_deps;
    // Diagnoses take seconds (RAS, py-spy): their own threads, so RPCs on the pool never wait.
    std::unique_ptr<WorkPool> m_diagnosePool = std::make_unique<WorkPool>(2);
};

}  // namespace runplane::agent
