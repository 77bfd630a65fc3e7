#pragma once
// SerialWorker: one background thread that runs jobs in order, for work the GUI thread must
// never do (database queries, file I/O, parsing). Jobs carry a key; posting a job under a key
// supersedes the pending one with the same key (it is skipped if it has not started) and makes
// any older result for that key stale, so only the newest answer reaches the GUI. Results are
// handed to a QObject on the GUI thread by a queued call, as values; if that object is gone, the
// result is dropped by Qt.
//
// Pattern taken from hotspot's JobTracker: job ids per key, stale results dropped on arrival.
//
// Ownership: owns its thread; the destructor discards pending jobs, waits for the running one
// and joins. Thread-safety: post()/isCurrent() may be called from any thread; jobs run on the
// worker thread, one at a time (so a resource opened by a job, e.g. a SQLite connection, is
// only ever used from that thread).

#include <QCoreApplication>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace runplane::gui {

class SerialWorker {
  public:
    SerialWorker();
    ~SerialWorker();
    SerialWorker(const SerialWorker&) = delete;
    SerialWorker& operator=(const SerialWorker&) = delete;

    /// Queues `job` under `key`; returns its id. A pending job with the same key is dropped.
    std::uint64_t post(const QString& key, std::function<void()> job);

    /// True while `id` is the newest job posted under `key`.
    bool isCurrent(const QString& key, std::uint64_t id) const;

    /// Runs `compute` on the worker thread and hands its value to `apply` on `context`'s thread
    /// (the GUI thread for a widget or model) unless a newer job under `key` was posted since.
    template <typename Compute, typename Apply>
    std::uint64_t run(const QString& key, QObject* context, Compute compute, Apply apply) {
        auto id = std::make_shared<std::uint64_t>(0);
        // The delivery is queued to the application object (alive for the whole program) and
        // checks the context there, on the GUI thread, so a context deleted meanwhile is safe.
        QPointer<QObject> guard(context);
        const std::uint64_t jobId =
            post(key, [latest = m_latest, key, id, guard, compute = std::move(compute),
                       apply = std::move(apply)]() mutable {
                auto value = compute();
                QObject* app = QCoreApplication::instance();
                if (app == nullptr) {
                    return;
                }
                QMetaObject::invokeMethod(
                    app,
                    [latest, key, id, guard, apply = std::move(apply),
                     value = std::move(value)]() mutable {
                        if (guard && latest->isCurrent(key, *id)) {
                            apply(std::move(value));
                        }
                    },
                    Qt::QueuedConnection);
            });
        *id = jobId;
        return jobId;
    }

    /// Number of jobs skipped because a newer one with the same key arrived first (tests).
    std::uint64_t supersededCount() const;
    /// Blocks the caller until every job posted so far has run (tests and shutdown only).
    void drain();

  private:
    // Newest job id per key; shared with queued deliveries so they never touch a dead worker.
    struct Latest {
        mutable std::mutex mutex;
        std::map<QString, std::uint64_t> ids;
        bool isCurrent(const QString& key, std::uint64_t id) const {
            std::lock_guard lock(mutex);
            const auto it = ids.find(key);
            return it != ids.end() && it->second == id;
        }
    };
    struct Job {
        QString key;
        std::uint64_t id;
        std::function<void()> fn;
    };
    void loop();

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<Job> m_queue;
    std::shared_ptr<Latest> m_latest = std::make_shared<Latest>();
    std::uint64_t m_nextId = 1;
    std::uint64_t m_superseded = 0;
    bool m_running = false;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace runplane::gui
