#include "backend/control/node_client.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "backend/control/bearer_token.h"
#include "backend/control/cluster_certs.h"
#include "backend/control/node_convert.h"
#include "common/credential_file.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::control {

struct NodeClient::Channel {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::Agent::Stub> stub;
};

struct StreamCanceller::State {
    std::mutex mutex;
    grpc::ClientContext* active = nullptr;
    bool cancelled = false;
};

StreamCanceller::StreamCanceller() : m_state(std::make_unique<State>()) {}
StreamCanceller::~StreamCanceller() = default;

void StreamCanceller::cancel() {
    std::lock_guard lock(m_state->mutex);
    m_state->cancelled = true;
    if (m_state->active) {
        m_state->active->TryCancel();
    }
}

void StreamCanceller::reset() {
    std::lock_guard lock(m_state->mutex);
    m_state->cancelled = false;
}

bool StreamCanceller::cancelled() const {
    std::lock_guard lock(m_state->mutex);
    return m_state->cancelled;
}

namespace {

Result<std::string> readFile(const std::string& path, const std::string& what) {
    // Regular files only, size-capped, never blocking on a FIFO (common/credential_file.h).
    auto text = readCredentialFile(path, kPemFileMaxBytes, "");
    if (!text) {
        return Error{text.error() + " (the " + what + ")"};
    }
    return text;
}

// A certificate outside its validity window fails the handshake with an opaque
// CERTIFICATE_VERIFY_FAILED; saying so up front names the file and the date.
Status checkCertificateTime(const std::string& path, const std::string& pem,
                            const std::string& what) {
    const std::string problem = certificateTimeProblem(pem);
    if (!problem.empty()) {
        return Error{path + ": the " + what + " " + problem};
    }
    return {};
}

Result<std::shared_ptr<grpc::ChannelCredentials>> tlsCredentials(const NodeClientOptions& o) {
    auto pem = readFile(o.tlsRootCertFile, "TLS root certificate");
    if (!pem.ok()) {
        return Error{pem.error()};
    }
    if (auto s = checkCertificateTime(o.tlsRootCertFile, *pem, "TLS root certificate"); !s.ok()) {
        return Error{s.error()};
    }
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = *pem;
    if (o.tlsCertFile.empty() != o.tlsKeyFile.empty()) {
        return Error{"--tls-cert and --tls-key must be given together (mutual TLS)"};
    }
    if (!o.tlsCertFile.empty()) {
        auto cert = readFile(o.tlsCertFile, "client certificate");
        auto key = readFile(o.tlsKeyFile, "client key");
        if (!cert.ok() || !key.ok()) {
            return Error{!cert.ok() ? cert.error() : key.error()};
        }
        if (auto s = checkCertificateTime(o.tlsCertFile, *cert, "client certificate"); !s.ok()) {
            return Error{s.error()};
        }
        ssl.pem_cert_chain = *cert;
        ssl.pem_private_key = *key;
    }
    return grpc::SslCredentials(ssl);
}

// Registers a streaming call's context with a canceller for its lifetime.
class CancelScope {
  public:
    CancelScope(StreamCanceller::State* state, grpc::ClientContext* context) : m_state(state) {
        if (m_state) {
            std::lock_guard lock(m_state->mutex);
            m_cancelledBefore = m_state->cancelled;
            m_state->active = context;
        }
    }
    ~CancelScope() {
        if (m_state) {
            std::lock_guard lock(m_state->mutex);
            m_state->active = nullptr;
        }
    }
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;
    bool cancelledBefore() const { return m_cancelledBefore; }
    bool cancelled() const {
        if (!m_state) {
            return false;
        }
        std::lock_guard lock(m_state->mutex);
        return m_state->cancelled;
    }

  private:
    StreamCanceller::State* m_state;
    bool m_cancelledBefore = false;
};

}  // namespace

Result<std::shared_ptr<NodeClient>> NodeClient::create(const std::string& address,
                                                       NodeClientOptions options) {
    const auto colon = address.rfind(':');
    if (address.empty() || colon == std::string::npos || colon == 0 ||
        colon + 1 == address.size()) {
        return Error{"'" + address + "' is not a daemon address; expected HOST:PORT"};
    }
    const std::string port = address.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
        std::stoi(port) == 0 || std::stoi(port) > 65535) {
        return Error{"'" + address + "': port must be a number in 1..65535"};
    }
    // A token gRPC cannot send would abort the process at the first call (issue 41).
    if (const std::string problem = bearerTokenProblem(options.bearerToken); !problem.empty()) {
        return Error{"bearer token: " + problem};
    }
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (!options.tlsRootCertFile.empty()) {
        auto tls = tlsCredentials(options);
        if (!tls.ok()) {
            return Error{tls.error()};
        }
        credentials = *tls;
    } else if (!options.tlsCertFile.empty() || !options.tlsServerName.empty()) {
        return Error{"--tls-cert/--tls-server-name need --tls-ca (the CA that signed the daemon)"};
    } else if (isLoopbackAddress(address)) {
        credentials = grpc::InsecureChannelCredentials();
    } else {
        return Error{"refusing a plaintext connection to " + address +
                     ": only loopback addresses may be reached without TLS "
                     "(give a TLS root certificate)"};
    }
    grpc::ChannelArguments args;
    // Reconnect quickly after a daemon restart; gRPC's default backoff grows to two minutes.
    // Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC core reads it as the *minimum connect timeout*
    // (how long one connection attempt, TCP + TLS + HTTP/2 settings, may take). At 100 ms every
    // set-up slower than that was cut ("tcp handshaker shutdown"), which on a busy controller
    // fanning out to 64 daemons lost most rows (docs/results/2026-12-06-preflight-64.md).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    // A telemetry stream that the controller does not read (its history writer is full) must
    // not pile up in this process: without BDP probing the stream's flow-control window stays
    // at gRPC's default (64 KiB), so the daemon's spool holds the rest (docs/performance.md).
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    if (!options.tlsServerName.empty()) {
        args.SetSslTargetNameOverride(options.tlsServerName);
    }
    auto channel = std::make_unique<Channel>();
    channel->channel = grpc::CreateCustomChannel(address, credentials, args);
    channel->stub = v1::Agent::NewStub(channel->channel);
    return std::shared_ptr<NodeClient>(
        new NodeClient(address, std::move(options), std::move(channel)));
}

NodeClient::NodeClient(std::string address, NodeClientOptions options,
                       std::unique_ptr<Channel> channel)
    : m_address(std::move(address)), m_options(std::move(options)), m_channel(std::move(channel)) {}

NodeClient::~NodeClient() = default;

namespace {

void prepare(grpc::ClientContext& context, const NodeClientOptions& options, bool deadline) {
    if (deadline) {
        context.set_deadline(std::chrono::system_clock::now() + options.callTimeout);
    }
    if (!options.bearerToken.empty()) {
        context.AddMetadata("authorization", "Bearer " + options.bearerToken);
    }
}

Error describe(const std::string& address, const char* method, const grpc::Status& status) {
    return rpcFailure(address, method, static_cast<RpcCode>(status.error_code()),
                      status.error_message());
}

}  // namespace

Result<NodeSummary> NodeClient::getNode() {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::NodeInfo info;
    const grpc::Status status = m_channel->stub->GetNode(&context, v1::GetNodeRequest(), &info);
    if (!status.ok()) {
        return describe(m_address, "GetNode", status);
    }
    if (info.protocol_version() != kProtocolVersion) {
        return Error{describeProtocolMismatch(m_address, info.protocol_version())};
    }
    return fromProto(info, m_address);
}

Result<std::string> NodeClient::ncclUniqueId() {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::NcclUniqueId id;
    const grpc::Status status =
        m_channel->stub->GetNcclUniqueId(&context, v1::GetNcclUniqueIdRequest(), &id);
    if (!status.ok()) {
        return describe(m_address, "GetNcclUniqueId", status);
    }
    return id.id();
}

Result<NcclProbeSummary> NodeClient::probeNccl(const NcclProbeSpec& spec,
                                               std::chrono::seconds timeout) {
    grpc::ClientContext context;
    prepare(context, m_options, false);
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::NcclProbeRequest request;
    for (const auto& c : spec.collectives) {
        request.add_collectives(c);
    }
    request.set_min_bytes(spec.minBytes);
    request.set_max_bytes(spec.maxBytes);
    request.set_warmup_iters(spec.warmupIters);
    request.set_iters(spec.iters);
    request.set_nccl_library(spec.ncclLibrary);
    request.set_unique_id(spec.uniqueId);
    request.set_world_size(spec.worldSize);
    request.set_first_rank(spec.firstRank);
    v1::NcclProbeReport report;
    const grpc::Status status = m_channel->stub->ProbeNccl(&context, request, &report);
    if (!status.ok()) {
        return describe(m_address, "ProbeNccl", status);
    }
    NcclProbeSummary out;
    out.ncclVersion = report.nccl_version();
    out.ranks = report.ranks();
    out.error = report.error();
    out.verdict = report.verdict();
    out.libraryPath = report.library_path();
    out.ncclEnv = {report.nccl_env().begin(), report.nccl_env().end()};
    out.rawJson = report.raw_json();
    for (const auto& r : report.results()) {
        out.rows.push_back(NcclProbeRowInfo{r.collective(), r.bytes(), r.time_us_p50(),
                                            r.time_us_p95(), r.algbw_gbps(), r.busbw_gbps(),
                                            r.correct()});
    }
    return out;
}

Result<PreflightResult> NodeClient::preflight(const PreflightSpec& spec) {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::PreflightReport report;
    const grpc::Status status = m_channel->stub->Preflight(&context, toProto(spec), &report);
    if (!status.ok()) {
        return describe(m_address, "Preflight", status);
    }
    return fromProto(report, m_address);
}

Result<RunStatusInfo> NodeClient::startRun(const StartRunSpec& spec) {
    if (spec.argv.empty()) {
        return Error{"StartRun to " + m_address + ": argv is empty"};
    }
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::RunStatus reply;
    const grpc::Status status = m_channel->stub->StartRun(&context, toProto(spec), &reply);
    if (!status.ok()) {
        return describe(m_address, "StartRun", status);
    }
    return fromProto(reply);
}

Result<RunStatusInfo> NodeClient::stopRun(const RunId& runId, double graceSeconds) {
    grpc::ClientContext context;
    // Stopping waits for the grace period on the daemon side.
    prepare(context, m_options, false);
    context.set_deadline(std::chrono::system_clock::now() + m_options.callTimeout +
                         std::chrono::milliseconds(static_cast<int>(graceSeconds * 1000) + 1000));
    v1::StopRunRequest request;
    request.set_run_id(runId.value());
    request.set_grace_seconds(graceSeconds);
    v1::RunStatus reply;
    const grpc::Status status = m_channel->stub->StopRun(&context, request, &reply);
    if (!status.ok()) {
        return describe(m_address, "StopRun", status);
    }
    return fromProto(reply);
}

Result<std::vector<RunStatusInfo>> NodeClient::listRuns() {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::ListRunsResponse reply;
    const grpc::Status status = m_channel->stub->ListRuns(&context, v1::ListRunsRequest(), &reply);
    if (!status.ok()) {
        return describe(m_address, "ListRuns", status);
    }
    std::vector<RunStatusInfo> runs;
    for (const auto& run : reply.runs()) {
        runs.push_back(fromProto(run));
    }
    return runs;
}

Result<std::vector<NcclLibrarySummary>> NodeClient::resolveNccl(
    const std::map<std::string, std::string>& env, const std::string& python) {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::ResolveNcclRequest request;
    request.mutable_env()->insert(env.begin(), env.end());
    request.set_python(python);
    v1::NcclResolution reply;
    const grpc::Status status = m_channel->stub->ResolveNccl(&context, request, &reply);
    if (!status.ok()) {
        return describe(m_address, "ResolveNccl", status);
    }
    std::vector<NcclLibrarySummary> out;
    for (const auto& library : reply.candidates()) {
        out.push_back(fromProto(library));
    }
    return out;
}

std::string defaultConsumerName(const std::string& role, const std::string& historyPath) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(historyPath, ec);
    const std::string key = ec ? historyPath : canonical.string();
    // FNV-1a 64: stable across runs and builds (std::hash is not promised to be).
    std::uint64_t h = 1469598103934665603ull;
    for (const unsigned char c : key) {
        h = (h ^ c) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    std::string name = role + "-" + hex + "@";
    for (const char c : std::string(host)) {
        // The daemon accepts printable ASCII without spaces or quotes.
        name += (c > 0x20 && c < 0x7f && c != '\'' && c != '"') ? c : '_';
    }
    return name.substr(0, 128);
}

Result<std::uint64_t> NodeClient::ackTelemetry(std::uint64_t committedThroughSeq) {
    grpc::ClientContext context;
    prepare(context, m_options, true);
    v1::AckTelemetryRequest request;
    request.set_committed_through_seq(committedThroughSeq);
    request.set_consumer(m_options.consumer);
    v1::AckTelemetryResponse reply;
    const grpc::Status status = m_channel->stub->AckTelemetry(&context, request, &reply);
    if (!status.ok()) {
        return describe(m_address, "AckTelemetry", status);
    }
    return reply.trimmed_through_seq();
}

Status NodeClient::tailLogs(const RunId& runId, LogStreamKind stream, std::uint64_t fromOffset,
                            bool follow, const std::function<bool(const LogChunkInfo&)>& onChunk,
                            StreamCanceller* canceller) {
    grpc::ClientContext context;
    prepare(context, m_options, !follow);
    CancelScope scope(canceller ? canceller->m_state.get() : nullptr, &context);
    if (scope.cancelledBefore()) {
        return {};
    }
    v1::TailLogsRequest request;
    request.set_run_id(runId.value());
    request.set_stream(stream == LogStreamKind::Stdout ? v1::LOG_STREAM_STDOUT
                                                       : v1::LOG_STREAM_STDERR);
    request.set_from_offset(fromOffset);
    request.set_follow(follow);
    auto reader = m_channel->stub->TailLogs(&context, request);
    v1::LogChunk chunk;
    bool stoppedByCaller = false;
    while (reader->Read(&chunk)) {
        LogChunkInfo info{chunk.offset(), chunk.data(), chunk.eof()};
        if (!onChunk(info) || info.eof) {
            stoppedByCaller = !info.eof;
            context.TryCancel();
            break;
        }
    }
    const grpc::Status status = reader->Finish();
    if (status.ok() || stoppedByCaller || scope.cancelled()) {
        return {};
    }
    // A cancel after eof is ours, not an error.
    if (status.error_code() == grpc::StatusCode::CANCELLED) {
        return {};
    }
    return describe(m_address, "TailLogs", status);
}

namespace {
// A telemetry stream that delivers nothing (no batch, no heartbeat: the daemon sends one every
// 5 s) for this long is cancelled and reported, so a silent network partition ends in a
// reconnect instead of a stream that waits forever (docs/reliability.md).
constexpr std::chrono::milliseconds kStreamIdleTimeout{15000};
}  // namespace

Status NodeClient::watchTelemetry(std::uint64_t fromSeq, double sampleHz,
                                  const std::function<bool(TelemetryBatchInfo&&)>& onBatch,
                                  StreamCanceller* canceller, std::uint64_t spoolIncarnation,
                                  RpcCode* code) {
    if (code != nullptr) {
        *code = RpcCode::Ok;
    }
    grpc::ClientContext context;
    prepare(context, m_options, false);
    CancelScope scope(canceller ? canceller->m_state.get() : nullptr, &context);
    if (scope.cancelledBefore()) {
        return {};
    }
    v1::WatchTelemetryRequest request;
    request.set_from_seq(fromSeq);
    request.set_sample_hz(sampleHz);
    request.set_spool_incarnation(spoolIncarnation);
    request.set_consumer(m_options.consumer);
    auto reader = m_channel->stub->WatchTelemetry(&context, request);
    // Watchdog: the daemon sends a heartbeat every 5 s, so a stream silent for
    // streamIdleTimeout is a dead link (a silent partition sends no FIN or RST).
    std::mutex idleMutex;
    std::condition_variable idleWake;
    auto lastMessage = std::chrono::steady_clock::now();
    bool inCallback = false;  // waiting on ourselves (the history writer) is not silence
    bool done = false;
    bool idle = false;
    std::thread watchdog([&] {
        std::unique_lock lock(idleMutex);
        while (!done) {
            const auto due = lastMessage + kStreamIdleTimeout;
            if (!inCallback && std::chrono::steady_clock::now() >= due) {
                idle = true;
                context.TryCancel();
                return;
            }
            // In the callback the clock restarts when it returns: look again a timeout later.
            idleWake.wait_until(
                lock, inCallback ? std::chrono::steady_clock::now() + kStreamIdleTimeout : due);
        }
    });
    v1::TelemetryBatch batch;
    bool stoppedByCaller = false;
    while (reader->Read(&batch)) {
        {
            std::lock_guard lock(idleMutex);
            lastMessage = std::chrono::steady_clock::now();
            inCallback = true;
        }
        const bool more = onBatch(fromProto(batch));
        {
            std::lock_guard lock(idleMutex);
            lastMessage = std::chrono::steady_clock::now();
            inCallback = false;
        }
        if (!more) {
            stoppedByCaller = true;
            context.TryCancel();
            break;
        }
    }
    {
        std::lock_guard lock(idleMutex);
        done = true;
    }
    idleWake.notify_all();
    watchdog.join();
    const grpc::Status status = reader->Finish();
    if (stoppedByCaller || scope.cancelled()) {
        return {};
    }
    if (idle) {
        return Error{"runplaned at " + m_address + " sent nothing (not even a heartbeat) for " +
                     std::to_string(kStreamIdleTimeout.count() / 1000) +
                     " s: the link is down or the daemon is frozen; reconnecting"};
    }
    if (status.ok()) {
        return Error{"runplaned at " + m_address + " ended the telemetry stream"};
    }
    if (code != nullptr) {
        *code = static_cast<RpcCode>(status.error_code());
    }
    return describe(m_address, "WatchTelemetry", status);
}

}  // namespace runplane::control
