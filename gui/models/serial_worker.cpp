#include "gui/models/serial_worker.h"

#include <algorithm>

namespace runplane::gui {

SerialWorker::SerialWorker() : m_thread([this] { loop(); }) {}

SerialWorker::~SerialWorker() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
    }
    m_wake.notify_all();
    m_thread.join();
}

std::uint64_t SerialWorker::post(const QString& key, std::function<void()> job) {
    std::uint64_t id = 0;
    {
        std::lock_guard lock(m_mutex);
        id = m_nextId++;
        {
            std::lock_guard latestLock(m_latest->mutex);
            m_latest->ids[key] = id;
        }
        const auto before = m_queue.size();
        m_queue.erase(std::remove_if(m_queue.begin(), m_queue.end(),
                                     [&](const Job& j) { return j.key == key; }),
                      m_queue.end());
        m_superseded += before - m_queue.size();
        m_queue.push_back(Job{key, id, std::move(job)});
    }
    m_wake.notify_one();
    return id;
}

bool SerialWorker::isCurrent(const QString& key, std::uint64_t id) const {
    return m_latest->isCurrent(key, id);
}

std::uint64_t SerialWorker::supersededCount() const {
    std::lock_guard lock(m_mutex);
    return m_superseded;
}

void SerialWorker::drain() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return (m_queue.empty() && !m_running) || m_stop; });
}

void SerialWorker::loop() {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
        if (m_stop) {
            break;
        }
        Job job = std::move(m_queue.front());
        m_queue.pop_front();
        m_running = true;
        lock.unlock();
        job.fn();
        job.fn = nullptr;  // destroy captures outside the lock
        lock.lock();
        m_running = false;
        if (m_queue.empty()) {
            m_idle.notify_all();
        }
    }
    m_running = false;
    m_idle.notify_all();
}

}  // namespace runplane::gui
