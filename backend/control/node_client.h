#pragma once
// NodeClient: the controller's connection to one runplaned. Unary calls with deadlines; every
// failure comes back as a human sentence naming the address (describeRpcError), never as a
// grpc::Status. No gRPC or protobuf type appears in this header.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/control/node_types.h"
#include "common/result.h"

namespace runplane::control {

/// How to reach a daemon.
struct NodeClientOptions {
    /// Deadline of each unary call.
    std::chrono::milliseconds callTimeout{5000};
    /// Bearer token sent as "authorization: Bearer <token>" (empty: none). Read from a file or
    /// $RUNPLANE_TOKEN by the caller (connection_flags), never taken from a command line.
    std::string bearerToken;
    /// PEM file with the CA that signed the daemon's certificate. Empty: plaintext, which is
    /// only allowed for loopback addresses (127.0.0.0/8, localhost, [::1]).
    std::string tlsRootCertFile;
    /// Client certificate and key (PEM) for mutual TLS; both or neither, and only with TLS.
    std::string tlsCertFile;
    std::string tlsKeyFile;
    /// Name to check the daemon's certificate against instead of the address's host (e.g. when
    /// connecting by IP to a certificate issued for a DNS name).
    std::string tlsServerName;
    /// The watcher's cursor name sent with WatchTelemetry and AckTelemetry (empty: "default").
    /// The daemon trims only what every live cursor acknowledged, so each watcher needs its own,
    /// stable across its restarts (see defaultConsumerName).
    std::string consumer;
};

/// "<role>-<16 hex of the history path's hash>@<hostname>": one cursor per watcher role and
/// history file on this machine (the GUI and a CLI `watch` into the same file get two).
std::string defaultConsumerName(const std::string& role, const std::string& historyPath);

/// gRPC status codes, numerically identical to grpc::StatusCode, so that the error mapping can
/// be used (and tested) without gRPC headers.
enum class RpcCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
};

/// Turns a failed call into one sentence for a human, e.g.
/// "cannot reach runplaned at 127.0.0.1:1: connection refused".
std::string describeRpcError(const std::string& address, const std::string& method, RpcCode code,
                             const std::string& grpcMessage);

/// What describeRpcError says for UNAUTHENTICATED and PERMISSION_DENIED.
inline constexpr const char* kAuthenticationFailed =
    "authentication failed (token or certificate refused)";
/// The ErrorCode of a failed call: Unauthenticated for UNAUTHENTICATED and PERMISSION_DENIED,
/// NotFound, AlreadyExists, InvalidArgument and Unavailable for theirs, else Unspecified.
ErrorCode errorCodeOf(RpcCode code);
/// describeRpcError's sentence with errorCodeOf's code: what every NodeClient call returns.
Error rpcFailure(const std::string& address, const std::string& method, RpcCode code,
                 const std::string& grpcMessage);

/// The error for a daemon that speaks another protocol version, e.g.
/// "daemon at 127.0.0.1:7070 speaks protocol v2, this controller speaks v1".
std::string describeProtocolMismatch(const std::string& address, std::uint32_t daemonVersion);

/// True for 127.0.0.0/8, "localhost" and [::1] host:port addresses.
bool isLoopbackAddress(const std::string& address);

/// Lets another thread cancel a streaming call (tailLogs, watchTelemetry) of a NodeClient.
/// Thread-safe. A cancel() before the call starts makes the call return at once; reset() re-arms
/// it for the next call.
class StreamCanceller {
  public:
    StreamCanceller();
    ~StreamCanceller();
    StreamCanceller(const StreamCanceller&) = delete;
    StreamCanceller& operator=(const StreamCanceller&) = delete;
    void cancel();
    void reset();
    bool cancelled() const;

    struct State;  // opaque; defined in node_client.cpp

  private:
    friend class NodeClient;
    std::unique_ptr<State> m_state;
};

/// A connection to one daemon. Owns a gRPC channel (connected lazily, reconnected by gRPC).
/// Thread-safe: any thread may call any method concurrently; each call blocks its caller for at
/// most options.callTimeout (streaming calls until they end or are cancelled), so GUI code calls
/// it from a worker thread.
class NodeClient {
  public:
    /// Validates the address ("host:port") and builds the channel; no network traffic yet.
    static Result<std::shared_ptr<NodeClient>> create(const std::string& address,
                                                      NodeClientOptions options = {});
    ~NodeClient();
    NodeClient(const NodeClient&) = delete;
    NodeClient& operator=(const NodeClient&) = delete;

    const std::string& address() const { return m_address; }
    const NodeClientOptions& options() const { return m_options; }

    /// Inventory. Fails with describeProtocolMismatch when the daemon is not protocol v1.
    Result<NodeSummary> getNode();
    Result<PreflightResult> preflight(const PreflightSpec& spec);
    Result<RunStatusInfo> startRun(const StartRunSpec& spec);
    Result<RunStatusInfo> stopRun(const RunId& runId, double graceSeconds);
    Result<std::vector<RunStatusInfo>> listRuns();
    /// Which libnccl a run with this environment would load, candidates in loader order.
    Result<std::vector<NcclLibrarySummary>> resolveNccl(
        const std::map<std::string, std::string>& env, const std::string& python);
    /// A fresh ncclUniqueId (raw bytes) whose bootstrap root the daemon keeps alive for the
    /// probe that follows.
    Result<std::string> ncclUniqueId();
    /// Runs the NCCL probe on the daemon's GPUs; the call may take `timeout` (a sweep is long).
    Result<NcclProbeSummary> probeNccl(const NcclProbeSpec& spec, std::chrono::seconds timeout);
    /// Acknowledges that everything through seq is committed; returns the daemon's trim point.
    Result<std::uint64_t> ackTelemetry(std::uint64_t committedThroughSeq);

    /// Streams a run's log from an offset, calling onChunk for each chunk on the caller's thread
    /// until eof, an error, onChunk returning false, or canceller->cancel(). No deadline when
    /// follow is set.
    Status tailLogs(const RunId& runId, LogStreamKind stream, std::uint64_t fromOffset, bool follow,
                    const std::function<bool(const LogChunkInfo&)>& onChunk,
                    StreamCanceller* canceller = nullptr);

    /// Streams telemetry from fromSeq (0 = oldest kept), calling onBatch on the caller's thread
    /// for each batch until the stream ends, an error, onBatch returning false, or
    /// canceller->cancel(). Returns OK when ended by onBatch or the canceller.
    /// spoolIncarnation (0 = any) is the spool fromSeq refers to; *code (when given) receives
    /// the gRPC code of a failure (OutOfRange: fromSeq beyond the spool's end;
    /// FailedPrecondition: the daemon's spool is another incarnation).
    Status watchTelemetry(std::uint64_t fromSeq, double sampleHz,
                          const std::function<bool(TelemetryBatchInfo&&)>& onBatch,
                          StreamCanceller* canceller = nullptr, std::uint64_t spoolIncarnation = 0,
                          RpcCode* code = nullptr);

  private:
    struct Channel;
    NodeClient(std::string address, NodeClientOptions options, std::unique_ptr<Channel> channel);
    std::string m_address;
    NodeClientOptions m_options;
    std::unique_ptr<Channel> m_channel;
};

}  // namespace runplane::control
