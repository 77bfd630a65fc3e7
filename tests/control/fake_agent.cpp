#include "tests/control/fake_agent.h"

namespace runplane::testing {

FakeAgent::FakeAgent() = default;
FakeAgent::~FakeAgent() {
    shutdown();
}

std::string FakeAgent::start() {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(this);
    m_server = builder.BuildAndStart();
    return "127.0.0.1:" + std::to_string(port);
}

void FakeAgent::shutdown() {
    if (m_server) {
        m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
        m_server->Wait();
        m_server.reset();
    }
}

void FakeAgent::setProtocolVersion(std::uint32_t version) {
    std::lock_guard lock(m_mutex);
    m_protocolVersion = version;
}
void FakeAgent::setNodeId(const std::string& nodeId) {
    std::lock_guard lock(m_mutex);
    m_nodeId = nodeId;
}
void FakeAgent::setRecords(std::vector<v1::TelemetryRecord> records, std::size_t batchSize) {
    std::lock_guard lock(m_mutex);
    m_records = std::move(records);
    m_batchSize = batchSize;
}
void FakeAgent::setOldestKept(std::uint64_t seq) {
    std::lock_guard lock(m_mutex);
    m_oldestKept = seq;
}
void FakeAgent::setIgnoreFromSeq(bool ignore) {
    std::lock_guard lock(m_mutex);
    m_ignoreFromSeq = ignore;
}
std::vector<std::uint64_t> FakeAgent::fromSeqs() const {
    std::lock_guard lock(m_mutex);
    return m_fromSeqs;
}
std::uint64_t FakeAgent::lastAck() const {
    std::lock_guard lock(m_mutex);
    return m_lastAck;
}
int FakeAgent::watchCalls() const {
    std::lock_guard lock(m_mutex);
    return static_cast<int>(m_fromSeqs.size());
}

grpc::Status FakeAgent::GetNode(grpc::ServerContext*, const v1::GetNodeRequest*,
                                v1::NodeInfo* reply) {
    std::lock_guard lock(m_mutex);
    reply->set_hostname("fakehost");
    reply->set_cpu_arch("x86_64");
    reply->set_cpu_cores(2);
    reply->set_protocol_version(m_protocolVersion);
    reply->set_node_id(m_nodeId);
    reply->set_daemon_version("fake");
    return grpc::Status::OK;
}

grpc::Status FakeAgent::WatchTelemetry(grpc::ServerContext* context,
                                       const v1::WatchTelemetryRequest* request,
                                       grpc::ServerWriter<v1::TelemetryBatch>* writer) {
    std::vector<v1::TelemetryRecord> send;
    std::size_t batchSize = 1;
    std::uint64_t oldest = 0;
    std::string nodeId;
    {
        std::lock_guard lock(m_mutex);
        m_fromSeqs.push_back(request->from_seq());
        for (const auto& record : m_records) {
            if (m_ignoreFromSeq || record.seq() >= request->from_seq()) {
                send.push_back(record);
            }
        }
        batchSize = std::max<std::size_t>(1, m_batchSize);
        oldest = m_oldestKept;
        nodeId = m_nodeId;
    }
    v1::TelemetryBatch batch;
    batch.set_node_id(nodeId);
    batch.set_oldest_kept_seq(oldest);
    if (send.empty()) {
        writer->Write(batch);
    }
    for (std::size_t i = 0; i < send.size(); ++i) {
        *batch.add_records() = send[i];
        if (batch.records_size() == static_cast<int>(batchSize) || i + 1 == send.size()) {
            if (context->IsCancelled() || !writer->Write(batch)) {
                return grpc::Status::CANCELLED;
            }
            batch.clear_records();
        }
    }
    return grpc::Status::OK;
}

grpc::Status FakeAgent::AckTelemetry(grpc::ServerContext*, const v1::AckTelemetryRequest* request,
                                     v1::AckTelemetryResponse* reply) {
    std::lock_guard lock(m_mutex);
    m_lastAck = request->committed_through_seq();
    reply->set_trimmed_through_seq(m_lastAck);
    return grpc::Status::OK;
}

v1::TelemetryRecord sampleRecord(std::uint64_t seq, const std::string& series, double value) {
    v1::TelemetryRecord record;
    record.set_seq(seq);
    record.set_t_unix_ns(static_cast<std::int64_t>(seq) * 1'000'000'000);
    auto* sample = record.mutable_sample();
    sample->set_series(series);
    sample->set_value(value);
    sample->set_min(value);
    sample->set_max(value);
    sample->set_step(-1);
    return record;
}

}  // namespace runplane::testing
