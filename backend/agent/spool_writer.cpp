#include "backend/agent/spool_writer.h"

#include <algorithm>

namespace runplane::agent {

SpoolWriter::SpoolWriter(Spool& spool, Logger& logger, SpoolWriterOptions options)
    : m_spool(spool), m_logger(logger), m_options(options) {
    m_options.maxBacklog = std::max<std::size_t>(m_options.maxBacklog, 1);
    m_options.batchRecords = std::max<std::size_t>(m_options.batchRecords, 1);
}

void SpoolWriter::add(std::vector<v1::TelemetryRecord>& records,
                      std::vector<std::pair<std::string, std::string>>& meta) {
    for (auto& r : records) {
        m_backlog.push_back(std::move(r));
    }
    records.clear();
    for (auto& [key, value] : meta) {
        auto it = std::find_if(m_meta.begin(), m_meta.end(),
                               // clang 14 cannot capture a structured binding itself
                               [&k = key](const auto& kv) { return kv.first == k; });
        if (it != m_meta.end()) {
            it->second = std::move(value);
        } else {
            m_meta.emplace_back(std::move(key), std::move(value));
        }
    }
    meta.clear();
    // Memory stays bounded however long the spool refuses writes; the loss becomes a gap event.
    while (m_backlog.size() > m_options.maxBacklog) {
        m_backlog.pop_front();
        ++m_dropped;
        ++m_droppedEver;
    }
}

bool SpoolWriter::flush(std::int64_t nowNs) {
    if (idle() || (m_retryAtNs != 0 && nowNs < m_retryAtNs)) {
        return false;
    }
    bool stored = false;
    if (m_dropped > 0) {
        // Stored before the backlog: the lost records were older than everything still held.
        auto gap =
            m_spool.appendGap(m_dropped, "spool unwritable for too long (in-memory backlog bound " +
                                             std::to_string(m_options.maxBacklog) + " records)");
        if (!gap) {
            failed(nowNs, gap.error());
            return stored;
        }
        m_logger.warn("spool: " + std::to_string(m_dropped) +
                      " records were dropped while the spool was unwritable; gap event seq " +
                      std::to_string(*gap));
        m_dropped = 0;
        stored = true;
    }
    const std::vector<std::pair<std::string, std::string>> noMeta;
    while (true) {
        const std::size_t n = std::min(m_options.batchRecords, m_backlog.size());
        const bool last = n == m_backlog.size();
        // Moved out, not copied (a deep copy of every record was a tenth of the daemon's time
        // at 2,000 log lines/s); moved back in front if the spool refuses them.
        m_batch.clear();
        m_batch.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            m_batch.push_back(std::move(m_backlog[i]));
        }
        m_backlog.erase(m_backlog.begin(), m_backlog.begin() + static_cast<std::ptrdiff_t>(n));
        // The persisted offsets go with the last batch: they claim every record before them.
        auto appended = m_spool.append(m_batch, last ? m_meta : noMeta);
        if (!appended) {
            for (auto it = m_batch.rbegin(); it != m_batch.rend(); ++it) {
                it->clear_seq();  // assigned again by the next attempt
                m_backlog.push_front(std::move(*it));
            }
            m_batch.clear();
            failed(nowNs, appended.error());
            return stored;
        }
        m_batch.clear();
        stored = stored || n > 0;
        if (last) {
            m_meta.clear();
            break;
        }
    }
    if (m_outageFailures > 0) {
        m_logger.info("spool append recovered after " + std::to_string(m_outageFailures) +
                      " failed attempts; " + std::to_string(m_droppedEver) +
                      " records dropped so far");
    }
    m_outageFailures = 0;
    m_failuresSinceLog = 0;
    m_retryAtNs = 0;
    return stored;
}

void SpoolWriter::failed(std::int64_t nowNs, const std::string& error) {
    // The failed transactions' frames sit in the WAL; give that space back before the retry.
    m_spool.reclaimWal();
    m_retryAtNs = nowNs + static_cast<std::int64_t>(m_options.retrySeconds * 1e9);
    m_lastError = error;
    if (++m_outageFailures == 1) {
        m_logger.error("spool append failed (will retry; repeats are summarized every " +
                       std::to_string(static_cast<long>(m_options.summarySeconds)) +
                       " s): " + error);
        m_lastLogNs = nowNs;
        m_failuresSinceLog = 0;
        return;
    }
    ++m_failuresSinceLog;
    if (nowNs - m_lastLogNs >= static_cast<std::int64_t>(m_options.summarySeconds * 1e9)) {
        m_logger.error("spool append still failing: " + std::to_string(m_failuresSinceLog) +
                       " more failures since the last report; backlog " +
                       std::to_string(m_backlog.size()) + " records, " +
                       std::to_string(m_droppedEver) + " dropped so far: " + error);
        m_lastLogNs = nowNs;
        m_failuresSinceLog = 0;
    }
}

}  // namespace runplane::agent
