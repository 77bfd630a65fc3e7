#pragma once
// The collector's way into the spool when the disk may be full: records wait in a bounded
// in-memory backlog until the spool accepts them, are written in bounded batches (a long outage
// never turns into one ever larger transaction), and past the bound the oldest are dropped and
// replaced by one EVENT_GAP (count and seq range) so consumers see the loss. After a failed
// write the WAL is checkpointed and truncated; failures are logged once, then summarized at most
// every summarySeconds, and the recovery is logged. docs/reliability.md lists the promises.
//
// Thread-safety: none; the collector thread owns it.

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "backend/agent/logger.h"
#include "backend/agent/spool.h"

namespace runplane::agent {

struct SpoolWriterOptions {
    std::size_t maxBacklog = 100'000;  // records held in memory while the spool refuses them
    std::size_t batchRecords = 2048;   // records per transaction
    double retrySeconds = 0.5;         // no new attempt sooner than this after a failure
    double summarySeconds = 30;        // at most one "still failing" line per this long
};

/// See the file comment.
class SpoolWriter {
  public:
    SpoolWriter(Spool& spool, Logger& logger, SpoolWriterOptions options = {});

    /// Queues records (moved from `records`, which is left empty) and persisted key/values (a
    /// later value for a key replaces the earlier one). They are committed with the last batch.
    void add(std::vector<v1::TelemetryRecord>& records,
             std::vector<std::pair<std::string, std::string>>& meta);

    /// Writes as much of the backlog as the spool takes. Returns true when anything was stored.
    bool flush(std::int64_t nowNs);

    bool idle() const { return m_backlog.empty() && m_meta.empty() && m_dropped == 0; }
    std::size_t backlog() const { return m_backlog.size(); }
    std::uint64_t droppedEver() const { return m_droppedEver; }

  private:
    void failed(std::int64_t nowNs, const std::string& error);

    Spool& m_spool;
    Logger& m_logger;
    SpoolWriterOptions m_options;
    std::deque<v1::TelemetryRecord> m_backlog;
    std::vector<v1::TelemetryRecord> m_batch;  // the transaction being written
    std::vector<std::pair<std::string, std::string>> m_meta;
    std::uint64_t m_dropped = 0;  // dropped from the backlog, gap event not yet stored
    std::uint64_t m_droppedEver = 0;
    std::int64_t m_retryAtNs = 0;
    // Failure log state: failures since the first (or the last summary), and in this outage.
    std::uint64_t m_failuresSinceLog = 0, m_outageFailures = 0;
    std::int64_t m_lastLogNs = 0;
    std::string m_lastError;
};

}  // namespace runplane::agent
