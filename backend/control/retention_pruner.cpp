#include "backend/control/retention_pruner.h"

namespace runplane::control {

RetentionPruner::RetentionPruner(PrunerOptions options) : m_options(std::move(options)) {}

RetentionPruner::~RetentionPruner() {
    stop();
}

void RetentionPruner::start() {
    std::lock_guard lock(m_mutex);
    if (m_thread.joinable() || m_options.historyPath.empty()) {
        return;
    }
    m_stop = false;
    m_thread = std::thread([this] { loop(); });
}

void RetentionPruner::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

db::PruneReport RetentionPruner::totals() const {
    std::lock_guard lock(m_mutex);
    return m_totals;
}

int RetentionPruner::prunes() const {
    std::lock_guard lock(m_mutex);
    return m_prunes;
}

void RetentionPruner::loop() {
    while (true) {
        auto history = db::History::open(m_options.historyPath);
        if (!history.ok()) {
            if (m_options.onError) {
                m_options.onError(history.error());
            }
        } else {
            db::PruneOptions prune;
            prune.batchRows = m_options.batchRows;
            // Between batches: give the write lock to ingest, and stop promptly when asked.
            prune.betweenBatches = [this] {
                std::unique_lock lock(m_mutex);
                return !m_wake.wait_for(lock, m_options.pause, [this] { return m_stop; });
            };
            auto report = (*history)->prune(prune);
            history->reset();
            if (!report.ok()) {
                if (m_options.onError) {
                    m_options.onError(report.error());
                }
            } else {
                {
                    std::lock_guard lock(m_mutex);
                    ++m_prunes;
                    m_totals.rawCutoffNs = report->rawCutoffNs;
                    m_totals.rollupCutoffNs = report->rollupCutoffNs;
                    m_totals.seriesPruned += report->seriesPruned;
                    m_totals.samplesDeleted += report->samplesDeleted;
                    m_totals.fineRollupsDeleted += report->fineRollupsDeleted;
                    m_totals.rollupsDeleted += report->rollupsDeleted;
                    m_totals.transactions += report->transactions;
                    if (m_prunes == 1) {
                        m_totals.bytesBefore = report->bytesBefore;
                    }
                    m_totals.bytesAfter = report->bytesAfter;
                    m_totals.freeBytesAfter = report->freeBytesAfter;
                    m_totals.complete = report->complete;
                }
                if (m_options.onReport && report->rowsDeleted() > 0) {
                    m_options.onReport(*report);
                }
            }
        }
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_for(lock, m_options.interval, [this] { return m_stop; })) {
            return;
        }
    }
}

}  // namespace runplane::control
