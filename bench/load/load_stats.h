#pragma once
// Figures of bench_load: per-second rows, whole-run percentiles, the RSS slope, and the
// read-back of the history (lost / duplicated samples). Formulas in docs/performance.md "Load".

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/load/sim_cluster.h"

namespace runplane::bench {

struct LoadParams {
    int nodes = 0;
    double hz = 0;
    int series = 0;
    int seconds = 0;
    std::string controller;
};

struct Verification {
    std::uint64_t expected = 0;         // samples generated
    std::uint64_t stored = 0;           // distinct samples read back
    std::uint64_t lost = 0;             // expected - distinct stored
    std::uint64_t duplicated = 0;       // rows read back - distinct
    std::uint64_t cursorsBehind = 0;    // nodes whose ingest cursor is not the last seq
    std::uint64_t missingBelowAck = 0;  // acknowledged (committed) but not read back: real loss
    double seconds = 0;
    std::string error;
};

/// Reads every series of every node back through the public History API.
Verification verifyHistory(const std::string& historyPath, const std::vector<std::string>& nodeIds,
                           const std::vector<std::uint64_t>& generated,
                           const std::vector<std::uint64_t>& acked, int series,
                           const std::string& runId);

class LoadStats {
  public:
    explicit LoadStats(LoadParams params);
    void addSecond(int second, LagWindow window, long rssKiB, std::vector<double> readerMs,
                   std::vector<nlohmann::json> gui);
    void addDrain(LagWindow window, std::vector<double> readerMs, std::vector<nlohmann::json> gui);
    int guiLines() const { return static_cast<int>(m_gui.size()); }
    /// The latest per-second row (null before the first second).
    nlohmann::json lastSecond() const {
        return m_seconds.empty() ? nlohmann::json() : m_seconds.back();
    }
    nlohmann::json report(bool drained, double drainSeconds, long rssEndKiB, int childExit,
                          const Verification& verified, const std::vector<int>& watchCalls,
                          std::uint64_t readerFailures, const std::string& readerError) const;

  private:
    void addLags(const std::vector<float>& lags);
    double lagPercentile(double p) const;
    LoadParams m_params;
    std::vector<std::uint64_t> m_lagHistogram;  // 1 ms bins; the last one holds everything above
    std::uint64_t m_lagCount = 0;
    float m_lagMax = 0;
    std::vector<nlohmann::json> m_seconds;
    std::vector<double> m_rssMiB;  // per second
    std::vector<double> m_reader;
    std::vector<nlohmann::json> m_gui;
    std::uint64_t m_stored = 0, m_generated = 0, m_backlogMax = 0, m_backlogEnd = 0;
};

}  // namespace runplane::bench
