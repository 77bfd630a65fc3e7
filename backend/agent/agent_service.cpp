// One file on purpose (~650 lines): every RPC handler of runplane.v1.Agent, each a short
// authenticate-validate-post-to-pool step over the same deps; the two streaming reactors are the
// only long parts and share its helpers.
#include "backend/agent/agent_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "backend/agent/diagnose.h"
#include "backend/agent/preflight.h"
#include "backend/agent/ray_control.h"
#include "compute/gpu/nccl_probe.h"

namespace runplane::agent {
namespace {

constexpr std::size_t kLogChunkBytes = 64u << 10;
constexpr auto kHeartbeat = std::chrono::seconds(5);

grpc::Status invalid(const std::string& message) {
    return {grpc::StatusCode::INVALID_ARGUMENT, message};
}

// Cursor names are stored and logged: bounded, printable, no quotes to confuse a log reader.
std::string invalidConsumer(const std::string& name) {
    if (name.size() > 128) {
        return "consumer: " + std::to_string(name.size()) +
               " characters; a watcher cursor name has at most 128";
    }
    for (const char c : name) {
        if (c < 0x21 || c > 0x7e || c == '\'' || c == '"') {
            return "consumer: only printable ASCII without spaces or quotes is allowed";
        }
    }
    return {};
}

bool isFinal(v1::RunState s) {
    return s == v1::RUN_STATE_SUCCEEDED || s == v1::RUN_STATE_FAILED ||
           s == v1::RUN_STATE_STOPPED || s == v1::RUN_STATE_LOST;
}

// A server stream refused before it started (authentication).
template <typename T>
class RefusedWriter final : public grpc::ServerWriteReactor<T> {
  public:
    explicit RefusedWriter(const grpc::Status& status) { this->Finish(status); }
    void OnDone() override { delete this; }
};

// ------------------------------------------------------------------ WatchTelemetry
//
// The reactor (owned by gRPC until OnDone) and its shared state (also held by the pump). The
// state's mutex is never held while calling into gRPC, because gRPC may run a reaction inline.
class WatchReactor;

struct WatchState final : PumpedStream {
    std::mutex mutex;
    WatchReactor* reactor = nullptr;
    bool writing = false;
    bool finishing = false;
    bool done = false;
    bool cancelled = false;
    bool sentFirst = false;
    std::uint64_t nextSeq = 0;
    std::chrono::steady_clock::time_point lastSend{};
    v1::TelemetryBatch batch;
    Spool* spool = nullptr;
    Logger* logger = nullptr;
    std::string nodeId;
    std::size_t maxRecords = 500;

    bool pump() override;
};

class WatchReactor final : public grpc::ServerWriteReactor<v1::TelemetryBatch> {
  public:
    WatchReactor(std::shared_ptr<WatchState> state, Collector* collector, StreamPump* pump)
        : m_state(std::move(state)), m_collector(collector), m_pump(pump) {
        m_rateKey = "watch:" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
    }
    void start(double hz) {
        if (hz > 0) {
            m_collector->requestRate(m_rateKey, hz);
        }
        m_pump->add(m_state);
    }
    void OnWriteDone(bool ok) override {
        bool finish = false;
        {
            std::lock_guard lock(m_state->mutex);
            m_state->writing = false;
            if ((!ok || m_state->cancelled) && !m_state->finishing) {
                m_state->finishing = true;
                finish = true;
            }
        }
        if (finish) {
            Finish(grpc::Status::CANCELLED);
        } else {
            m_pump->wake();
        }
    }
    void OnCancel() override {
        bool finish = false;
        {
            std::lock_guard lock(m_state->mutex);
            m_state->cancelled = true;
            if (!m_state->writing && !m_state->finishing) {
                m_state->finishing = true;
                finish = true;
            }
        }
        if (finish) {
            Finish(grpc::Status::CANCELLED);
        }
    }
    void OnDone() override {
        m_collector->releaseRate(m_rateKey);
        {
            std::lock_guard lock(m_state->mutex);
            m_state->done = true;
            m_state->reactor = nullptr;
        }
        delete this;
    }

  private:
    std::shared_ptr<WatchState> m_state;
    Collector* m_collector;
    StreamPump* m_pump;
    std::string m_rateKey;
};

bool WatchState::pump() {
    {
        std::lock_guard lock(mutex);
        if (done) {
            return false;
        }
        if (writing || finishing || cancelled) {
            return true;
        }
    }
    // Only the pump thread touches nextSeq and batch while no write is in flight.
    const SpoolStats stats = spool->stats();
    const bool haveNew = stats.nextSeq > nextSeq;
    const auto now = std::chrono::steady_clock::now();
    if (!haveNew && sentFirst && now - lastSend < kHeartbeat) {
        return true;
    }
    batch.Clear();
    batch.set_node_id(nodeId);
    batch.set_spool_incarnation(spool->incarnation());
    grpc::Status endStatus = grpc::Status::OK;
    bool end = false;
    if (haveNew) {
        // A client that is behind what was trimmed or dropped resumes at the oldest kept record;
        // the gap is visible from oldest_kept_seq (and the EVENT_GAP the spool wrote).
        auto records = spool->read(nextSeq, maxRecords);
        if (!records) {
            logger->error("WatchTelemetry: " + records.error());
            endStatus = grpc::Status(grpc::StatusCode::DATA_LOSS, records.error());
            end = true;
        } else {
            for (auto& r : *records) {
                nextSeq = r.seq() + 1;
                if (r.has_event() && r.event().kind() == v1::EVENT_GAP &&
                    r.event().attrs().count("why") != 0 &&
                    r.event().attrs().at("why") == "unreadable_record") {
                    logger->warn("WatchTelemetry: " + r.event().message());
                }
                *batch.add_records() = std::move(r);
            }
            if (records->empty()) {
                nextSeq = stats.nextSeq;  // everything before was trimmed
            }
        }
    }
    batch.set_oldest_kept_seq(spool->stats().oldestKeptSeq);
    WatchReactor* r = nullptr;
    {
        std::lock_guard lock(mutex);
        if (done || cancelled || finishing || reactor == nullptr) {
            return !done;
        }
        r = reactor;
        if (end) {
            finishing = true;
        } else {
            writing = true;
        }
    }
    if (end) {
        r->Finish(endStatus);
        return true;
    }
    sentFirst = true;
    lastSend = now;
    r->StartWrite(&batch);
    return true;
}

// ------------------------------------------------------------------ TailLogs

class TailReactor;

struct TailState final : PumpedStream {
    std::mutex mutex;
    TailReactor* reactor = nullptr;
    bool writing = false;
    bool finishing = false;
    bool finishAfterWrite = false;
    bool done = false;
    bool cancelled = false;
    std::string runId;
    std::string path;
    std::uint64_t offset = 0;
    bool follow = false;
    RunManager* runs = nullptr;
    v1::LogChunk chunk;

    bool pump() override;
};

class TailReactor final : public grpc::ServerWriteReactor<v1::LogChunk> {
  public:
    TailReactor(std::shared_ptr<TailState> state, StreamPump* pump)
        : m_state(std::move(state)), m_pump(pump) {}
    void start() { m_pump->add(m_state); }
    void OnWriteDone(bool ok) override {
        bool finish = false;
        grpc::Status status = grpc::Status::OK;
        {
            std::lock_guard lock(m_state->mutex);
            m_state->writing = false;
            if (m_state->finishing) {
                return;
            }
            if (!ok || m_state->cancelled) {
                status = grpc::Status::CANCELLED;
                finish = true;
            } else if (m_state->finishAfterWrite) {
                finish = true;
            }
            m_state->finishing = finish;
        }
        if (finish) {
            Finish(status);
        } else {
            m_pump->wake();
        }
    }
    void OnCancel() override {
        bool finish = false;
        {
            std::lock_guard lock(m_state->mutex);
            m_state->cancelled = true;
            if (!m_state->writing && !m_state->finishing) {
                m_state->finishing = true;
                finish = true;
            }
        }
        if (finish) {
            Finish(grpc::Status::CANCELLED);
        }
    }
    void OnDone() override {
        {
            std::lock_guard lock(m_state->mutex);
            m_state->done = true;
            m_state->reactor = nullptr;
        }
        delete this;
    }

  private:
    std::shared_ptr<TailState> m_state;
    StreamPump* m_pump;
};

bool TailState::pump() {
    {
        std::lock_guard lock(mutex);
        if (done) {
            return false;
        }
        if (writing || finishing || cancelled) {
            return true;
        }
    }
    // Decide "ended" before reading, so bytes written before the end are never missed.
    auto st = runs->status(runId);
    const bool ended = !st || isFinal(st->state());
    chunk.Clear();
    chunk.set_offset(offset);
    std::string data(kLogChunkBytes, '\0');
    ssize_t n = 0;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = ::pread(fd, data.data(), data.size(), static_cast<off_t>(offset));
        ::close(fd);
    }
    bool last = false;
    if (n > 0) {
        data.resize(static_cast<std::size_t>(n));
        chunk.set_data(std::move(data));
        offset += static_cast<std::uint64_t>(n);
    } else if (ended || !follow) {
        chunk.set_eof(ended);
        last = true;
    } else {
        return true;  // following: nothing new yet
    }
    TailReactor* r = nullptr;
    {
        std::lock_guard lock(mutex);
        if (done || cancelled || finishing || reactor == nullptr) {
            return !done;
        }
        r = reactor;
        writing = true;
        finishAfterWrite = last;
    }
    r->StartWrite(&chunk);
    return true;
}

// ListRuns bounds (docs/protocol.md, "ListRuns"): one run's argv, and all argv in one reply.
constexpr std::size_t kListArgvBytes = 4096;
constexpr std::size_t kListArgvCount = 64;
constexpr std::size_t kListRunsArgvBytes = 1u << 20;

// Keeps whole arguments while they fit (the first one is cut at a character boundary if it
// alone is too long) and ends a cut argv with one element saying what was left out.
void summarizeArgv(v1::RunStatus& run, std::size_t maxBytes, std::size_t maxCount) {
    const int total = run.argv_size();
    std::size_t bytes = 0;
    int kept = 0;
    bool cutFirst = false;
    while (kept < total && static_cast<std::size_t>(kept) < maxCount) {
        const std::size_t size = run.argv(kept).size();
        if (bytes + size > maxBytes) {
            if (kept == 0) {
                std::string* first = run.mutable_argv(0);
                std::size_t cut = maxBytes;
                while (cut > 0 && (static_cast<unsigned char>((*first)[cut]) & 0xC0) == 0x80) {
                    --cut;  // never split a UTF-8 sequence: the reply must stay valid
                }
                first->resize(cut);
                cutFirst = true;
                kept = 1;
            }
            break;
        }
        bytes += size;
        ++kept;
    }
    if (kept == total && !cutFirst) {
        return;
    }
    std::uint64_t hidden = 0;
    for (int i = kept; i < total; ++i) {
        hidden += run.argv(i).size();
    }
    run.mutable_argv()->DeleteSubrange(kept, total - kept);
    run.add_argv("... (argv summarised: " + std::to_string(total - kept) + " more of " +
                 std::to_string(total) + " arguments, " + std::to_string(hidden) +
                 " bytes, not shown" + (cutFirst ? "; argv[0] cut" : "") +
                 "; the run keeps its full argv)");
}

grpc::Status mapRunError(const Error& error) {
    switch (error.code) {
        case ErrorCode::NotFound:
            return {grpc::StatusCode::NOT_FOUND, error.message};
        case ErrorCode::AlreadyExists:
            return {grpc::StatusCode::ALREADY_EXISTS, error.message};
        case ErrorCode::Unavailable:
            return {grpc::StatusCode::UNAVAILABLE, error.message};
        case ErrorCode::InvalidArgument:
            return invalid(error.message);
        default:
            return {grpc::StatusCode::INTERNAL, error.message};
    }
}

std::mutex gLeaseMutex;
std::unique_ptr<compute::NcclUniqueIdLease> gLease;

}  // namespace

AgentService::AgentService(AgentServiceDeps deps) : m_deps(std::move(deps)) {}

template <typename Fn>
grpc::ServerUnaryReactor* AgentService::unary(grpc::CallbackServerContext* ctx, const char* method,
                                              Fn fn) {
    auto* reactor = ctx->DefaultReactor();
    const grpc::Status auth = m_deps.auth->check(ctx, method);
    if (!auth.ok()) {
        reactor->Finish(auth);
        return reactor;
    }
    m_deps.pool->post([reactor, fn = std::move(fn)]() mutable { reactor->Finish(fn()); });
    return reactor;
}

grpc::ServerUnaryReactor* AgentService::GetNode(grpc::CallbackServerContext* ctx,
                                                const v1::GetNodeRequest*, v1::NodeInfo* response) {
    return unary(ctx, "GetNode", [this, response] {
        *response = m_deps.inventory->collect();
        response->set_spool_incarnation(m_deps.spool->incarnation());
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::Preflight(grpc::CallbackServerContext* ctx,
                                                  const v1::PreflightRequest* request,
                                                  v1::PreflightReport* response) {
    return unary(ctx, "Preflight", [this, request, response] {
        *response = runPreflight(*request, PreflightEnvironment::system(m_deps.gpuTelemetry));
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::StartRun(grpc::CallbackServerContext* ctx,
                                                 const v1::StartRunRequest* request,
                                                 v1::RunStatus* response) {
    return unary(ctx, "StartRun", [this, request, response] {
        auto st = m_deps.runs->start(*request);
        if (!st) {
            m_deps.logger->warn("StartRun " + request->run_id() + " refused: " + st.error());
            return mapRunError(st.failure());
        }
        *response = *st;
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::StopRun(grpc::CallbackServerContext* ctx,
                                                const v1::StopRunRequest* request,
                                                v1::RunStatus* response) {
    return unary(ctx, "StopRun", [this, request, response] {
        auto st = m_deps.runs->stop(request->run_id(), request->grace_seconds());
        if (!st) {
            return mapRunError(st.failure());
        }
        *response = *st;
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::ListRuns(grpc::CallbackServerContext* ctx,
                                                 const v1::ListRunsRequest*,
                                                 v1::ListRunsResponse* response) {
    return unary(ctx, "ListRuns", [this, response] {
        // Every run, each argv summarised, and past kListRunsArgvBytes of argv in one reply the
        // rest of the runs carry only a marker: a reply stays far below a client's 4 MB limit.
        std::size_t argvBytes = 0;
        for (auto& r : m_deps.runs->list()) {
            summarizeArgv(r, kListArgvBytes, kListArgvCount);
            std::size_t size = 0;
            for (const auto& a : r.argv()) {
                size += a.size();
            }
            if (argvBytes + size > kListRunsArgvBytes) {
                const int total = r.argv_size();
                r.clear_argv();
                r.add_argv("... (argv not shown: this ListRuns reply already carries " +
                           std::to_string(argvBytes) + " bytes of argv; " + std::to_string(total) +
                           " elements)");
                size = r.argv(0).size();
            }
            argvBytes += size;
            *response->add_runs() = std::move(r);
        }
        return grpc::Status::OK;
    });
}

grpc::ServerWriteReactor<v1::LogChunk>* AgentService::TailLogs(grpc::CallbackServerContext* ctx,
                                                               const v1::TailLogsRequest* request) {
    if (grpc::Status auth = m_deps.auth->check(ctx, "TailLogs"); !auth.ok()) {
        return new RefusedWriter<v1::LogChunk>(auth);
    }
    auto path = m_deps.runs->logPath(request->run_id(), request->stream());
    if (!path) {
        return new RefusedWriter<v1::LogChunk>(mapRunError(path.failure()));
    }
    auto state = std::make_shared<TailState>();
    state->runId = request->run_id();
    state->path = *path;
    state->offset = request->from_offset();
    state->follow = request->follow();
    state->runs = m_deps.runs;
    auto* reactor = new TailReactor(state, m_deps.pump);
    state->reactor = reactor;
    reactor->start();
    return reactor;
}

grpc::ServerWriteReactor<v1::TelemetryBatch>* AgentService::WatchTelemetry(
    grpc::CallbackServerContext* ctx, const v1::WatchTelemetryRequest* request) {
    if (grpc::Status auth = m_deps.auth->check(ctx, "WatchTelemetry"); !auth.ok()) {
        return new RefusedWriter<v1::TelemetryBatch>(auth);
    }
    // Written so that NaN fails too (every comparison with NaN is false).
    if (!(request->sample_hz() >= 0 && request->sample_hz() <= 10)) {
        return new RefusedWriter<v1::TelemetryBatch>(
            invalid("sample_hz: " + std::to_string(request->sample_hz()) +
                    " is outside 0..10 (0 = the daemon's default)"));
    }
    if (std::string why = invalidConsumer(request->consumer()); !why.empty()) {
        return new RefusedWriter<v1::TelemetryBatch>(invalid(why));
    }
    const std::uint64_t incarnation = m_deps.spool->incarnation();
    if (request->spool_incarnation() != 0 && request->spool_incarnation() != incarnation) {
        return new RefusedWriter<v1::TelemetryBatch>(grpc::Status(
            grpc::StatusCode::FAILED_PRECONDITION,
            "from_seq " + std::to_string(request->from_seq()) + " refers to spool incarnation " +
                std::to_string(request->spool_incarnation()) + ", but node " + m_deps.nodeId +
                " now has spool incarnation " + std::to_string(incarnation) +
                " (its state directory was replaced; start again from seq 0)"));
    }
    const SpoolStats stats = m_deps.spool->stats();
    if (request->from_seq() > stats.nextSeq) {
        return new RefusedWriter<v1::TelemetryBatch>(grpc::Status(
            grpc::StatusCode::OUT_OF_RANGE,
            "from_seq " + std::to_string(request->from_seq()) +
                " is beyond the next sequence number " + std::to_string(stats.nextSeq) +
                " of node " + m_deps.nodeId + " (was its state directory replaced?)"));
    }
    // The cursor holds this watcher's records from here on (a small SQLite write: the pool's).
    m_deps.pool->post([spool = m_deps.spool, logger = m_deps.logger, consumer = request->consumer(),
                       from = request->from_seq()] {
        if (Status s = spool->openCursor(consumer, from); !s.ok()) {
            logger->warn("watcher cursor '" + consumer + "': " + s.error());
        }
    });
    auto state = std::make_shared<WatchState>();
    state->spool = m_deps.spool;
    state->logger = m_deps.logger;
    state->nodeId = m_deps.nodeId;
    state->maxRecords = m_deps.maxRecordsPerBatch;
    state->nextSeq = request->from_seq();
    auto* reactor = new WatchReactor(state, m_deps.collector, m_deps.pump);
    state->reactor = reactor;
    reactor->start(request->sample_hz());
    return reactor;
}

grpc::ServerUnaryReactor* AgentService::AckTelemetry(grpc::CallbackServerContext* ctx,
                                                     const v1::AckTelemetryRequest* request,
                                                     v1::AckTelemetryResponse* response) {
    return unary(ctx, "AckTelemetry", [this, request, response] {
        if (std::string why = invalidConsumer(request->consumer()); !why.empty()) {
            return invalid(why);
        }
        auto trimmed =
            m_deps.spool->acknowledge(request->consumer(), request->committed_through_seq());
        if (!trimmed) {
            return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, trimmed.error());
        }
        response->set_trimmed_through_seq(*trimmed);
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::ResolveNccl(grpc::CallbackServerContext* ctx,
                                                    const v1::ResolveNcclRequest* request,
                                                    v1::NcclResolution* response) {
    return unary(ctx, "ResolveNccl", [request, response] {
        std::vector<std::pair<std::string, std::string>> env(request->env().begin(),
                                                             request->env().end());
        if (env.empty()) {
            env.emplace_back("PATH", "/usr/local/bin:/usr/bin:/bin");
        }
        for (auto& lib : NodeInventory::resolveNccl(env, request->python())) {
            *response->add_candidates() = std::move(lib);
        }
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::GetNcclUniqueId(grpc::CallbackServerContext* ctx,
                                                        const v1::GetNcclUniqueIdRequest*,
                                                        v1::NcclUniqueId* response) {
    return unary(ctx, "GetNcclUniqueId", [response] {
        // The lease keeps NCCL's bootstrap root alive for the probe that follows; one at a time.
        auto lease =
            compute::createNcclUniqueId(compute::NcclProbeConfig{}, std::chrono::seconds(900));
        if (!lease) {
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, lease.error());
        }
        const auto& id = (*lease)->id();
        response->set_id(std::string(id.begin(), id.end()));
        std::lock_guard lock(gLeaseMutex);
        gLease = std::move(*lease);
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::ProbeNccl(grpc::CallbackServerContext* ctx,
                                                  const v1::NcclProbeRequest* request,
                                                  v1::NcclProbeReport* response) {
    return unary(ctx, "ProbeNccl", [request, response] {
        compute::NcclProbeConfig cfg;
        if (request->collectives_size() > 0) {
            cfg.collectives.assign(request->collectives().begin(), request->collectives().end());
        }
        if (request->min_bytes() > 0) {
            cfg.minBytes = request->min_bytes();
        }
        if (request->max_bytes() > 0) {
            cfg.maxBytes = request->max_bytes();
        }
        if (cfg.minBytes > cfg.maxBytes) {
            return invalid("min_bytes is larger than max_bytes");
        }
        if (request->warmup_iters() > 0) {
            cfg.warmupIters = request->warmup_iters();
        }
        if (request->iters() > 0) {
            cfg.iters = request->iters();
        }
        cfg.uniqueId.assign(request->unique_id().begin(), request->unique_id().end());
        cfg.worldSize = request->world_size();
        cfg.firstRank = request->first_rank();
        cfg.ncclLibrary = request->nccl_library();
        auto outcome = compute::runNcclProbe(cfg);
        if (!outcome) {
            response->set_error(outcome.error());
            response->set_verdict("unavailable: " + outcome.error());
            return grpc::Status::OK;
        }
        response->set_nccl_version(outcome->ncclVersion);
        response->set_ranks(outcome->ranks);
        response->set_library_path(outcome->ncclLibraryPath);
        for (const auto& [k, v] : outcome->ncclEnv) {
            (*response->mutable_nccl_env())[k] = v;
        }
        response->set_raw_json(outcome->rawJson);
        response->set_verdict(outcome->verdict);
        if (!outcome->unavailableReason.empty()) {
            response->set_error(outcome->unavailableReason);
            if (outcome->verdict.empty()) {
                response->set_verdict("unavailable: " + outcome->unavailableReason);
            }
        }
        for (const auto& row : outcome->rows) {
            auto* r = response->add_results();
            r->set_collective(row.collective);
            r->set_bytes(row.bytes);
            r->set_time_us_p50(row.timeUsP50);
            r->set_time_us_p95(row.timeUsP95);
            r->set_algbw_gbps(row.algbwGBps);
            r->set_busbw_gbps(row.busbwGBps);
            r->set_correct(row.correct);
        }
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::RayStart(grpc::CallbackServerContext* ctx,
                                                 const v1::RayStartRequest* request,
                                                 v1::RayCommandResult* response) {
    return unary(ctx, "RayStart", [request, response] {
        auto r = rayStart(*request);
        if (!r) {
            return invalid(r.error());
        }
        *response = *r;
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::RayStatus(grpc::CallbackServerContext* ctx,
                                                  const v1::RayStatusRequest* request,
                                                  v1::RayClusterStatus* response) {
    const bool rayletsOnly = request->raylets_only();
    return unary(ctx, "RayStatus", [response, rayletsOnly] {
        if (rayletsOnly) {
            readLocalRaylets("/proc", response);
        } else {
            *response = rayStatus();
        }
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::RayStop(grpc::CallbackServerContext* ctx,
                                                const v1::RayStopRequest* request,
                                                v1::RayCommandResult* response) {
    return unary(ctx, "RayStop", [request, response] {
        *response = rayStop(*request);
        return grpc::Status::OK;
    });
}

grpc::ServerUnaryReactor* AgentService::Diagnose(grpc::CallbackServerContext* ctx,
                                                 const v1::DiagnoseRequest* request,
                                                 v1::DiagnoseReport* response) {
    auto* reactor = ctx->DefaultReactor();
    if (grpc::Status auth = m_deps.auth->check(ctx, "Diagnose"); !auth.ok()) {
        reactor->Finish(auth);
        return reactor;
    }
    m_diagnosePool->post([this, reactor, request, response] {
        DiagnoseOptions options;
        options.nodeId = m_deps.nodeId;
        options.gpuTelemetry = m_deps.gpuTelemetry;
        options.roleTable = m_deps.roleTable;
        options.nativeFrames = request->native();
        if (request->timeout_ms() > 0) {
            options.rasTimeout = options.stackTimeout =
                std::chrono::milliseconds(std::min<std::uint32_t>(request->timeout_ms(), 60000));
        }
        auto node = diagnoseRun(*m_deps.runs, request->run_id(), options);
        if (!node) {
            reactor->Finish(mapRunError(node.failure()));
            return;
        }
        response->set_node_id(m_deps.nodeId);
        response->set_json(
            toJson(*node).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        reactor->Finish(grpc::Status::OK);
    });
    return reactor;
}

}  // namespace runplane::agent
