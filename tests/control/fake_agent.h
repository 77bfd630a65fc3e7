#pragma once
// A scripted Agent service on 127.0.0.1 (port 0) for the control unit tests: it lets a test
// play daemons that cannot be produced with the real runplaned (another protocol version, a
// sequence hole, a redelivery below from_seq). The integration tests use the real daemon.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::testing {

class FakeAgent final : public v1::Agent::Service {
  public:
    FakeAgent();
    ~FakeAgent() override;

    /// Starts serving on 127.0.0.1 with a free port; returns "127.0.0.1:PORT".
    std::string start();
    void shutdown();

    // Script.
    void setProtocolVersion(std::uint32_t version);
    void setNodeId(const std::string& nodeId);
    /// Records the next WatchTelemetry call sends (those with seq >= from_seq, unless
    /// ignoreFromSeq), in batches of batchSize, then ends the stream with OK.
    void setRecords(std::vector<v1::TelemetryRecord> records, std::size_t batchSize);
    void setOldestKept(std::uint64_t seq);
    void setIgnoreFromSeq(bool ignore);

    // Observations.
    std::vector<std::uint64_t> fromSeqs() const;
    std::uint64_t lastAck() const;
    int watchCalls() const;

    grpc::Status GetNode(grpc::ServerContext*, const v1::GetNodeRequest*,
                         v1::NodeInfo* reply) override;
    grpc::Status WatchTelemetry(grpc::ServerContext*, const v1::WatchTelemetryRequest* request,
                                grpc::ServerWriter<v1::TelemetryBatch>* writer) override;
    grpc::Status AckTelemetry(grpc::ServerContext*, const v1::AckTelemetryRequest* request,
                              v1::AckTelemetryResponse* reply) override;

  private:
    mutable std::mutex m_mutex;
    std::unique_ptr<grpc::Server> m_server;
    std::uint32_t m_protocolVersion = 1;
    std::string m_nodeId = "fake-node";
    std::vector<v1::TelemetryRecord> m_records;
    std::size_t m_batchSize = 10;
    std::uint64_t m_oldestKept = 0;
    bool m_ignoreFromSeq = false;
    std::vector<std::uint64_t> m_fromSeqs;
    std::uint64_t m_lastAck = 0;
};

/// A sample record for scripts.
v1::TelemetryRecord sampleRecord(std::uint64_t seq, const std::string& series, double value);

}  // namespace runplane::testing
