// runplaned's gRPC handlers (AgentService) on requests parsed from fuzzer bytes, served by a real
// grpc::Server with the real spool, run manager, collector, pump, pool and authenticator, and
// called through the server's in-process channel. Input: method byte, auth byte (0: the right
// token, 1: none, else a fuzzed token string), then the request message's protobuf bytes.
//
// Fuzzed: StartRun, StopRun, ListRuns, TailLogs, WatchTelemetry, AckTelemetry, GetNode. StartRun
// is checked in full (run id, argv, env, workdir confinement) but can never start anything: the
// run-record folder is replaced by a plain file, so the mkdir of a run's record fails. Not fuzzed:
// Preflight, ResolveNccl, the NCCL probes and the Ray calls, which run programs on the host.
// Two ended runs with 200 KB of argv each are re-attached at start, so ListRuns summarises
// (issue 41 item 9); seeds also give deep and NUL-carrying working directories (items 4, 10).
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "backend/agent/agent_service.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane;
using namespace runplane::agent;

namespace {

constexpr const char* kToken = "fuzz-token-0123456789";

// Server calls not yet torn down. gRPC frees a call's server side on its own threads after the
// client already has the status; an input that returned before that left more mallocs than frees,
// and libFuzzer then ran it again and did a full LeakSanitizer scan of the process (a fifth of
// the inputs, half the worker's time). Each input waits until its calls are gone instead.
struct InFlight {
    std::mutex mutex;
    std::condition_variable idle;
    int calls = 0;
};

InFlight& inFlight() {
    static InFlight* f = new InFlight();
    return *f;
}

// Lives as long as one server call (gRPC creates it with the call and deletes it at the end).
class CallCounter final : public grpc::experimental::Interceptor {
  public:
    CallCounter() {
        std::lock_guard lock(inFlight().mutex);
        ++inFlight().calls;
    }
    ~CallCounter() override {
        InFlight& f = inFlight();
        std::lock_guard lock(f.mutex);
        if (--f.calls == 0) {
            f.idle.notify_all();
        }
    }
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
        methods->Proceed();
    }
};

class CallCounterFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
  public:
    grpc::experimental::Interceptor* CreateServerInterceptor(
        grpc::experimental::ServerRpcInfo*) override {
        return new CallCounter();
    }
};

/// Until every server call has been torn down, at most 2 s (a stuck call is the next input's
/// problem, as it was before).
void waitForServerCalls() {
    InFlight& f = inFlight();
    std::unique_lock lock(f.mutex);
    f.idle.wait_for(lock, std::chrono::seconds(2), [&] { return f.calls == 0; });
}

constexpr int kPoolThreads = 2;

// A barrier both pool threads must reach: once they have, each has finished (and destroyed) the
// tasks it took before. The handlers finish unary calls and open watch cursors on the pool, so
// a task's last frees could otherwise come after the input.
struct PoolBarrier {
    std::mutex mutex;
    std::condition_variable changed;
    int arrived = 0;
    int left = 0;
};

PoolBarrier& poolBarrier() {
    static PoolBarrier* b = new PoolBarrier();
    return *b;
}

struct Daemon {
    NullLogger logger;
    std::unique_ptr<Spool> spool;
    std::unique_ptr<RunManager> runs;
    std::unique_ptr<Collector> collector;
    StreamPump pump;
    WorkPool pool{kPoolThreads};
    NodeInventory inventory{"fuzz-node", false};
    std::unique_ptr<Authenticator> auth;
    std::unique_ptr<AgentService> service;
    std::unique_ptr<grpc::Server> server;
    std::unique_ptr<v1::Agent::Stub> stub;

    Daemon() {
        fuzz::quietProtobuf();
        const std::string dir = runplane::fuzz::scratchDir("agent");
        std::filesystem::create_directories(dir + "/state");
        std::filesystem::create_directories(dir + "/runs");
        SpoolOptions so;
        so.path = dir + "/state/spool.sqlite";
        spool = require(Spool::open(so));
        std::vector<v1::TelemetryRecord> seed(3);
        for (auto& r : seed) {
            r.mutable_sample()->set_series("host/mem_used_bytes");
        }
        (void)spool->append(seed);
        RunManagerOptions ro;
        ro.stateDir = dir + "/state";
        ro.runRoot = dir + "/runs";
        ro.supervisorPath = dir + "/no-supervisor";
        // Two ended runs with large argv (issue 41 item 9), re-attached from their records, so
        // that ListRuns has something to summarise.
        for (const char* id : {"big-argv-1", "big-argv-2"}) {
            const std::string record = ro.stateDir + "/runs.d/" + id;
            std::filesystem::create_directories(record);
            std::string argv = "[\"/bin/true\"";
            for (int i = 0; i < 400; ++i) {
                argv += ",\"" + std::string(500, static_cast<char>('a' + i % 26)) + "\"";
            }
            std::ofstream(record + "/spec.json")
                << "{\"run_id\":\"" << id << "\",\"argv\":" << argv << "]}\n";
            std::ofstream(record + "/exit.json")
                << "{\"exit_code\":0,\"term_signal\":0,\"ended_unix_ns\":1}\n";
        }
        runs = require(RunManager::open(ro, logger));
        // No run can ever be created (see the file comment).
        std::filesystem::remove_all(ro.stateDir + "/runs.d");
        std::ofstream(ro.stateDir + "/runs.d") << "not a directory\n";
        CollectorOptions co;
        co.gpuTelemetry = false;
        collector = std::make_unique<Collector>(co, *spool, *runs, logger);
        AuthThrottleOptions throttle;
        throttle.maxFailures = 0;  // the fuzzer's wrong tokens must not lock it out
        auth = std::make_unique<Authenticator>(std::string(kToken), logger, throttle);
        AgentServiceDeps deps;
        deps.nodeId = "fuzz-node";
        deps.spool = spool.get();
        deps.runs = runs.get();
        deps.collector = collector.get();
        deps.inventory = &inventory;
        deps.pump = &pump;
        deps.pool = &pool;
        deps.auth = auth.get();
        deps.logger = &logger;
        service = std::make_unique<AgentService>(deps);
        grpc::ServerBuilder builder;
        builder.RegisterService(service.get());
        std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
            counters;
        counters.push_back(std::make_unique<CallCounterFactory>());
        builder.experimental().SetInterceptorCreators(std::move(counters));
        server = builder.BuildAndStart();
        if (!server) {
            std::abort();
        }
        stub = v1::Agent::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
    }
    template <typename T>
    static std::unique_ptr<T> require(Result<std::unique_ptr<T>> r) {
        if (!r.ok()) {
            std::abort();  // the fixture itself must come up
        }
        return std::move(*r);
    }
};

Daemon& daemon() {
    static Daemon* d = new Daemon();  // never destroyed: the server outlives every input
    return *d;
}

/// Until the pump has dropped the streams of finished watch and tail calls (it does so on its
/// next cycle, up to 100 ms later unless woken) and every pool thread is past the tasks it
/// took, at most 2 s each (a stuck one is the next input's problem).
void waitForBackgroundWork(Daemon& d) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (d.pump.size() > 0 && std::chrono::steady_clock::now() < deadline) {
        d.pump.wake();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    PoolBarrier& b = poolBarrier();
    {
        std::lock_guard lock(b.mutex);
        b.arrived = 0;
        b.left = 0;
    }
    for (int i = 0; i < kPoolThreads; ++i) {
        d.pool.post([&b] {
            std::unique_lock lock(b.mutex);
            ++b.arrived;
            b.changed.notify_all();
            b.changed.wait_for(lock, std::chrono::seconds(2),
                               [&] { return b.arrived >= kPoolThreads; });
            ++b.left;
            b.changed.notify_all();
        });
    }
    std::unique_lock lock(b.mutex);
    b.changed.wait_for(lock, std::chrono::seconds(2), [&] { return b.left >= kPoolThreads; });
}

void prepare(grpc::ClientContext& ctx, std::uint8_t auth, fuzz::ByteReader& in) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    if (auth == 0) {
        ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
    } else if (auth != 1) {
        std::string token = in.shortString();
        for (char& c : token) {
            // gRPC refuses metadata values outside printable ASCII before any handler runs
            c = static_cast<char>(0x20 + static_cast<unsigned char>(c) % 0x5f);
        }
        ctx.AddMetadata("authorization", token);
    }
}

template <typename Request, typename Response, typename Call>
void unary(std::uint8_t auth, fuzz::ByteReader& in, Call call) {
    grpc::ClientContext ctx;
    prepare(ctx, auth, in);
    Request request;
    if (!request.ParseFromString(in.rest())) {
        return;
    }
    Response response;
    (void)call(&ctx, request, &response);
}

template <typename Request, typename Message, typename Call>
void stream(std::uint8_t auth, fuzz::ByteReader& in, Call call) {
    grpc::ClientContext ctx;
    prepare(ctx, auth, in);
    Request request;
    if (!request.ParseFromString(in.rest())) {
        return;
    }
    auto reader = call(&ctx, request);
    // One message, then cancel: a watcher with nothing new gets its next batch only after the
    // 5 s heartbeat, so waiting for a second one ran every such input into the 2 s deadline
    // (18-38 inputs/s per worker). Cancelling mid-stream is a path worth fuzzing too.
    Message message;
    (void)reader->Read(&message);
    ctx.TryCancel();
    (void)reader->Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Daemon& d = daemon();
    auto* stub = d.stub.get();
    fuzz::ByteReader in(data, size);
    const std::uint8_t method = in.u8();
    const std::uint8_t auth = in.u8();
    switch (method % 7) {
        case 0:
            unary<v1::StartRunRequest, v1::RunStatus>(
                auth, in, [&](auto* c, auto& q, auto* r) { return stub->StartRun(c, q, r); });
            break;
        case 1:
            unary<v1::StopRunRequest, v1::RunStatus>(
                auth, in, [&](auto* c, auto& q, auto* r) { return stub->StopRun(c, q, r); });
            break;
        case 2:
            unary<v1::ListRunsRequest, v1::ListRunsResponse>(
                auth, in, [&](auto* c, auto& q, auto* r) { return stub->ListRuns(c, q, r); });
            break;
        case 3:
            stream<v1::TailLogsRequest, v1::LogChunk>(
                auth, in, [&](auto* c, auto& q) { return stub->TailLogs(c, q); });
            break;
        case 4:
            stream<v1::WatchTelemetryRequest, v1::TelemetryBatch>(
                auth, in, [&](auto* c, auto& q) { return stub->WatchTelemetry(c, q); });
            break;
        case 5:
            unary<v1::AckTelemetryRequest, v1::AckTelemetryResponse>(
                auth, in, [&](auto* c, auto& q, auto* r) { return stub->AckTelemetry(c, q, r); });
            break;
        default:
            unary<v1::GetNodeRequest, v1::NodeInfo>(
                auth, in, [&](auto* c, auto& q, auto* r) { return stub->GetNode(c, q, r); });
            break;
    }
    waitForServerCalls();
    waitForBackgroundWork(d);
    return 0;
}
