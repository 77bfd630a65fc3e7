#pragma once
// SimCluster (issue 20, docs/performance.md "Load"): N simulated runplaned nodes in one process,
// each a real gRPC server on 127.0.0.1 with its own port, serving the part of the Agent service
// a controller uses (GetNode, WatchTelemetry, AckTelemetry, ListRuns, TailLogs) with the
// daemon's semantics: per-node consecutive seqs, a spool incarnation, records kept until the
// watcher acknowledges them. One generator thread appends `series` samples per node at `hz`,
// stamped with the wall clock, whether or not anyone reads them, so a slow controller shows as
// a growing spool and a growing lag. Ingest lag of a sample = the time its AckTelemetry
// arrives (the controller acks only after the commit) - its timestamp.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runplane::bench {

struct SimOptions {
    int nodes = 8;
    double hz = 10;
    int series = 32;
    std::string runId;  // non-empty: the first 4 series of every node belong to this run
};

/// Lags and counters accumulated since the last take().
struct LagWindow {
    std::vector<float> lagMs;     // one per acknowledged sample
    std::uint64_t generated = 0;  // records appended
    std::uint64_t acked = 0;      // records acknowledged
    std::uint64_t backlog = 0;    // records held in all spools now (generated, not acked)
};

class SimNode;

class SimCluster {
  public:
    explicit SimCluster(SimOptions options);
    ~SimCluster();
    SimCluster(const SimCluster&) = delete;
    SimCluster& operator=(const SimCluster&) = delete;

    /// Starts every server; the error names the node that could not listen.
    std::string start();
    /// Starts / stops producing samples (the servers keep serving).
    void startGenerator();
    void stopGenerator();
    void shutdown();

    std::vector<std::string> addresses() const;
    std::vector<std::string> nodeIds() const;
    /// Records appended by node i (seqs 1..generated(i)).
    std::uint64_t generated(int node) const;
    /// Highest seq node i saw acknowledged.
    std::uint64_t acked(int node) const;
    /// Watch streams opened on node i (1 for a controller that never reconnected).
    int watchCalls(int node) const;
    const SimOptions& options() const { return m_options; }
    static std::string seriesName(int index);

    LagWindow take();
    void addLag(std::uint64_t count, const float* lags);  // called by the nodes

  private:
    void generate();
    SimOptions m_options;
    std::vector<std::unique_ptr<SimNode>> m_nodes;
    std::atomic<bool> m_generating{false};
    std::thread m_generator;
    mutable std::mutex m_lagMutex;
    LagWindow m_window;
};

}  // namespace runplane::bench
