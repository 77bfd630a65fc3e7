#pragma once
// The alert sender (issue #48, docs/alerts.md): reads the events the history has stored after
// its cursor, turns those a rule matches into deliveries (stored, with the cursor, in one
// transaction), and delivers them with retries, exponential back-off with jitter and Retry-After,
// until a destination accepts or the deadline passes (then an alert_failed event is stored). One
// sender at a time per history: the one holding the lease row sends, the others wait.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "backend/alerts/rules.h"
#include "common/result.h"
#include "db/history/alert_store.h"

namespace runplane::alerts {

struct SenderOptions {
    std::string historyPath;
    AlertRules rules;
    /// This sender's name in the lease row (default host:pid:random).
    std::string holder;
    std::int64_t leaseTtlNs = 30'000'000'000;  // a killed holder's lease lapses after this
    std::chrono::milliseconds poll{500};       // how often the history is looked at
    int eventsPerPass = 500;
    /// One line per notable thing (a delivery, a failure, the lease); never holds a secret.
    std::function<void(const std::string&)> onLog;
};

struct SenderStats {
    std::uint64_t sent = 0;
    std::uint64_t failed = 0;      // deadline passed or refused for good: alert_failed stored
    std::uint64_t suppressed = 0;  // rate limit, quiet period
    std::uint64_t attempts = 0;
    std::uint64_t queued = 0;  // deliveries this sender stored
    bool leaseHeld = false;
    std::string lastError;
};

class AlertSender {
  public:
    explicit AlertSender(SenderOptions options);
    ~AlertSender();
    AlertSender(const AlertSender&) = delete;
    AlertSender& operator=(const AlertSender&) = delete;

    /// Opens the history and starts the sending thread.
    Status start();
    /// Stops the thread (an attempt in flight finishes or times out) and gives the lease up.
    void stop();
    SenderStats stats() const;

    /// The back-off before attempt n+1 after n failed attempts: min(max, base * 2^(n-1)),
    /// jittered to [d/2, d]; a Retry-After longer than that wins.
    static std::int64_t backoffNs(const DeliverySettings& settings, int failedAttempts,
                                  std::optional<std::int64_t> retryAfterNs, double unitRandom);

  private:
    void loop();
    Status pass(std::int64_t& sleepNs);
    Status intake(std::int64_t now);
    Status deliverDue(std::int64_t now, std::int64_t& sleepNs);
    bool renewLease(std::int64_t now);
    void log(const std::string& line);

    SenderOptions m_options;
    std::vector<std::string> m_secrets;
    std::unique_ptr<db::AlertStore> m_store;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    SenderStats m_stats;
    std::int64_t m_leaseRenewedNs = 0;
    bool m_leaseHeld = false;
    bool m_leaseAsked = false;  // the lease's state has been logged once
    std::mt19937_64 m_random;
};

/// Unix time in ns.
std::int64_t unixNowNs();

}  // namespace runplane::alerts
