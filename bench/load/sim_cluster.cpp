#include "bench/load/sim_cluster.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>

#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::bench {

namespace {

std::int64_t unixNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string numbered(const char* prefix, int i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%03d", prefix, i);
    return buf;
}

constexpr std::size_t kMaxRecordsPerBatch = 500;  // the daemon's default (agent_service.h)
constexpr int kRunSeries = 4;                     // series 1..4 belong to the run, if any

struct Record {
    std::uint64_t seq;
    std::int64_t tNs;
    int series;
    std::int64_t tick;
};

}  // namespace

class SimNode final : public v1::Agent::Service {
  public:
    SimNode(SimCluster* cluster, int index)
        : m_cluster(cluster),
          m_index(index),
          m_nodeId(numbered("sim-node-", index)),
          m_incarnation(0x5100000000ULL + static_cast<std::uint64_t>(index) + 1) {}

    std::string start() {
        grpc::ServerBuilder builder;
        int port = 0;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(this);
        // One completion queue per node: 256 servers must not each start a poller per core.
        builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
        builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
        builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
        m_server = builder.BuildAndStart();
        if (!m_server || port == 0) {
            return "simulated node " + std::to_string(m_index) + " cannot listen on 127.0.0.1";
        }
        m_address = "127.0.0.1:" + std::to_string(port);
        return {};
    }

    void shutdown() {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_cv.notify_all();
        if (m_server) {
            m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
            m_server.reset();
        }
    }

    void append(std::int64_t tNs, std::int64_t tick, int series) {
        {
            std::lock_guard lock(m_mutex);
            for (int s = 0; s < series; ++s) {
                m_spool.push_back(Record{m_nextSeq++, tNs, s, tick});
            }
        }
        m_cv.notify_all();
    }

    const std::string& address() const { return m_address; }
    const std::string& nodeId() const { return m_nodeId; }
    std::uint64_t generated() const {
        std::lock_guard lock(m_mutex);
        return m_nextSeq - 1;
    }
    std::uint64_t acked() const {
        std::lock_guard lock(m_mutex);
        return m_acked;
    }
    std::uint64_t held() const {
        std::lock_guard lock(m_mutex);
        return m_spool.size();
    }
    int watchCalls() const { return m_watchCalls.load(); }

    grpc::Status GetNode(grpc::ServerContext*, const v1::GetNodeRequest*,
                         v1::NodeInfo* reply) override {
        reply->set_hostname(numbered("sim-", m_index));
        reply->set_cpu_arch("x86_64");
        reply->set_cpu_cores(2);
        reply->set_host_ram_bytes(1ULL << 40);
        reply->set_kernel("bench_load");
        reply->set_gpus_unavailable_reason("simulated node (bench/load)");
        reply->set_daemon_version("bench_load");
        reply->set_protocol_version(1);
        reply->set_node_id(m_nodeId);
        reply->set_spool_incarnation(m_incarnation);
        return grpc::Status::OK;
    }

    grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest*,
                          v1::ListRunsResponse*) override {
        return grpc::Status::OK;  // the run is the bench's, recorded in the history by it
    }

    grpc::Status TailLogs(grpc::ServerContext*, const v1::TailLogsRequest*,
                          grpc::ServerWriter<v1::LogChunk>* writer) override {
        v1::LogChunk chunk;
        chunk.set_eof(true);  // a simulated run prints nothing
        writer->Write(chunk);
        return grpc::Status::OK;
    }

    grpc::Status WatchTelemetry(grpc::ServerContext* ctx, const v1::WatchTelemetryRequest* request,
                                grpc::ServerWriter<v1::TelemetryBatch>* writer) override {
        ++m_watchCalls;
        if (request->spool_incarnation() != 0 && request->spool_incarnation() != m_incarnation) {
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "another spool incarnation");
        }
        std::uint64_t next = request->from_seq();
        {
            std::lock_guard lock(m_mutex);
            if (next > m_nextSeq) {
                return grpc::Status(
                    grpc::StatusCode::OUT_OF_RANGE,
                    "from_seq " + std::to_string(next) + " is beyond " + std::to_string(m_nextSeq));
            }
            const std::uint64_t oldest = m_spool.empty() ? m_nextSeq : m_spool.front().seq;
            next = std::max(next, oldest);
        }
        v1::TelemetryBatch batch;
        while (!ctx->IsCancelled()) {
            batch.Clear();
            batch.set_node_id(m_nodeId);
            batch.set_spool_incarnation(m_incarnation);
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait_for(lock, std::chrono::milliseconds(200),
                              [&] { return m_stopping || m_nextSeq > next; });
                if (m_stopping) {
                    break;
                }
                if (m_nextSeq <= next) {
                    continue;
                }
                const std::uint64_t oldest = m_spool.empty() ? m_nextSeq : m_spool.front().seq;
                next = std::max(next, oldest);
                batch.set_oldest_kept_seq(oldest);
                for (std::size_t i = next - oldest;
                     i < m_spool.size() &&
                     static_cast<std::size_t>(batch.records_size()) < kMaxRecordsPerBatch;
                     ++i) {
                    fill(m_spool[i], batch.add_records());
                }
                next += static_cast<std::uint64_t>(batch.records_size());
            }
            if (!writer->Write(batch)) {
                break;
            }
        }
        return grpc::Status::OK;
    }

    grpc::Status AckTelemetry(grpc::ServerContext*, const v1::AckTelemetryRequest* request,
                              v1::AckTelemetryResponse* reply) override {
        const std::int64_t now = unixNowNs();
        std::vector<float> lags;
        {
            std::lock_guard lock(m_mutex);
            const std::uint64_t through = request->committed_through_seq();
            if (through >= m_nextSeq) {
                return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "ack beyond the spool");
            }
            // One watcher per node in this bench: what it committed can be trimmed.
            while (!m_spool.empty() && m_spool.front().seq <= through) {
                if (m_spool.front().seq > m_acked) {
                    lags.push_back(static_cast<float>(now - m_spool.front().tNs) * 1e-6F);
                }
                m_spool.pop_front();
            }
            m_acked = std::max(m_acked, through);
            reply->set_trimmed_through_seq(m_acked);
        }
        m_cluster->addLag(lags.size(), lags.data());
        return grpc::Status::OK;
    }

  private:
    void fill(const Record& r, v1::TelemetryRecord* out) const {
        out->set_seq(r.seq);
        out->set_t_unix_ns(r.tNs);
        const bool inRun =
            !m_cluster->options().runId.empty() && r.series >= 1 && r.series <= kRunSeries;
        if (inRun) {
            out->set_run_id(m_cluster->options().runId);
        }
        v1::Sample* s = out->mutable_sample();
        s->set_series(SimCluster::seriesName(r.series));
        // A slow wave per series and node: plots have something to draw.
        const double v =
            (r.series == 0 ? 6.0e11 : 100.0) *
            (1.0 + 0.1 * static_cast<double>((r.tick + m_index * 7 + r.series) % 50) / 50.0);
        s->set_value(v);
        s->set_min(v * 0.99);
        s->set_max(v * 1.01);
        s->set_step(inRun ? r.tick : -1);
    }

    SimCluster* m_cluster;
    int m_index;
    std::string m_nodeId;
    std::uint64_t m_incarnation;
    std::string m_address;
    std::unique_ptr<grpc::Server> m_server;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Record> m_spool;
    std::uint64_t m_nextSeq = 1;
    std::uint64_t m_acked = 0;
    bool m_stopping = false;
    std::atomic<int> m_watchCalls{0};
};

SimCluster::SimCluster(SimOptions options) : m_options(std::move(options)) {}

SimCluster::~SimCluster() {
    shutdown();
}

std::string SimCluster::seriesName(int index) {
    static const char* const kNames[] = {"host.mem.used_bytes", "train/loss", "train/reward",
                                         "perf/tokens_per_s", "eval/score"};
    if (index < 5) {
        return kNames[index];
    }
    return numbered("load.s", index);
}

std::string SimCluster::start() {
    for (int i = 0; i < m_options.nodes; ++i) {
        m_nodes.push_back(std::make_unique<SimNode>(this, i));
        if (std::string error = m_nodes.back()->start(); !error.empty()) {
            return error;
        }
    }
    return {};
}

void SimCluster::startGenerator() {
    if (m_generating.exchange(true)) {
        return;
    }
    m_generator = std::thread([this] { generate(); });
}

void SimCluster::stopGenerator() {
    m_generating = false;
    if (m_generator.joinable()) {
        m_generator.join();
    }
}

void SimCluster::shutdown() {
    stopGenerator();
    for (auto& node : m_nodes) {
        node->shutdown();
    }
}

void SimCluster::generate() {
    // Ticks on an absolute schedule: a late tick is caught up, never dropped, so the rate holds.
    const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / m_options.hz));
    auto due = std::chrono::steady_clock::now();
    std::int64_t tick = 0;
    while (m_generating) {
        const std::int64_t t = unixNowNs();
        for (auto& node : m_nodes) {
            node->append(t, tick, m_options.series);
        }
        {
            std::lock_guard lock(m_lagMutex);
            m_window.generated += static_cast<std::uint64_t>(m_options.series) * m_nodes.size();
        }
        ++tick;
        due += period;
        std::this_thread::sleep_until(due);
    }
}

std::vector<std::string> SimCluster::addresses() const {
    std::vector<std::string> out;
    for (const auto& node : m_nodes) {
        out.push_back(node->address());
    }
    return out;
}

std::vector<std::string> SimCluster::nodeIds() const {
    std::vector<std::string> out;
    for (const auto& node : m_nodes) {
        out.push_back(node->nodeId());
    }
    return out;
}

std::uint64_t SimCluster::generated(int node) const {
    return m_nodes.at(static_cast<std::size_t>(node))->generated();
}

std::uint64_t SimCluster::acked(int node) const {
    return m_nodes.at(static_cast<std::size_t>(node))->acked();
}

int SimCluster::watchCalls(int node) const {
    return m_nodes.at(static_cast<std::size_t>(node))->watchCalls();
}

void SimCluster::addLag(std::uint64_t count, const float* lags) {
    std::lock_guard lock(m_lagMutex);
    m_window.lagMs.insert(m_window.lagMs.end(), lags, lags + count);
    m_window.acked += count;
}

LagWindow SimCluster::take() {
    std::uint64_t backlog = 0;
    for (const auto& node : m_nodes) {
        backlog += node->held();
    }
    std::lock_guard lock(m_lagMutex);
    LagWindow out = std::move(m_window);
    m_window = LagWindow{};
    out.backlog = backlog;
    return out;
}

}  // namespace runplane::bench
