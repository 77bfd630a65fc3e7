#include "backend/agent/work_pool.h"

namespace runplane::agent {

WorkPool::WorkPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) {
        m_threads.emplace_back([this] {
            while (true) {
                std::function<void()> task;
                {
                    std::unique_lock lock(m_mutex);
                    m_cv.wait(lock, [this] { return m_stop || !m_queue.empty(); });
                    if (m_queue.empty()) {
                        return;
                    }
                    task = std::move(m_queue.front());
                    m_queue.pop_front();
                }
                task();
            }
        });
    }
}

WorkPool::~WorkPool() {
    shutdown();
}

void WorkPool::post(std::function<void()> task) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_stop) {
            m_queue.push_back(std::move(task));
            m_cv.notify_one();
            return;
        }
    }
    task();
}

void WorkPool::shutdown() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    for (auto& t : m_threads) {
        if (t.joinable()) {
            t.join();
        }
    }
    m_threads.clear();
}

}  // namespace runplane::agent
