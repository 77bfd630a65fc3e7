#pragma once
// RetentionPruner: applies the history's retention policy online (issue #23). A thread that
// prunes once at start and then every interval, on its own History connection, in small
// batches with a pause between them, so telemetry ingest on other connections waits for at most
// one batch. Used by the Controller (GUI) and `runplanectl watch`. docs/history.md, "Retention".

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "db/history/history.h"

namespace runplane::control {

struct PrunerOptions {
    std::string historyPath;
    std::chrono::milliseconds interval = std::chrono::hours(1);
    int batchRows = 2000;
    std::chrono::milliseconds pause = std::chrono::milliseconds(20);  // between batches
    /// Called on the pruner thread after each prune that deleted something, or failed.
    std::function<void(const db::PruneReport&)> onReport;
    std::function<void(const std::string&)> onError;
};

class RetentionPruner {
  public:
    explicit RetentionPruner(PrunerOptions options);
    ~RetentionPruner();  // stop()
    RetentionPruner(const RetentionPruner&) = delete;
    RetentionPruner& operator=(const RetentionPruner&) = delete;

    void start();
    /// Stops between two batches (what was committed stays) and joins the thread.
    void stop();
    /// Totals over every prune so far.
    db::PruneReport totals() const;
    int prunes() const;

  private:
    void loop();
    PrunerOptions m_options;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    db::PruneReport m_totals;
    int m_prunes = 0;
    std::thread m_thread;
};

}  // namespace runplane::control
