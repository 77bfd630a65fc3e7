#include "backend/agent/stream_pump.h"

#include <chrono>

namespace runplane::agent {

StreamPump::StreamPump() : m_thread([this] { loop(); }) {}

StreamPump::~StreamPump() {
    stop();
}

void StreamPump::add(std::shared_ptr<PumpedStream> stream) {
    {
        std::lock_guard lock(m_mutex);
        m_streams.push_back(std::move(stream));
        m_woken = true;
    }
    m_cv.notify_one();
}

void StreamPump::wake() {
    {
        std::lock_guard lock(m_mutex);
        m_woken = true;
    }
    m_cv.notify_one();
}

void StreamPump::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

std::size_t StreamPump::size() const {
    std::lock_guard lock(m_mutex);
    return m_streams.size();
}

void StreamPump::loop() {
    while (true) {
        std::vector<std::shared_ptr<PumpedStream>> streams;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait_for(lock, std::chrono::milliseconds(100),
                          [this] { return m_stop || m_woken; });
            if (m_stop) {
                return;
            }
            m_woken = false;
            streams = m_streams;
        }
        std::vector<PumpedStream*> finished;
        for (auto& s : streams) {
            if (!s->pump()) {
                finished.push_back(s.get());
            }
        }
        if (!finished.empty()) {
            std::lock_guard lock(m_mutex);
            std::erase_if(m_streams, [&](const std::shared_ptr<PumpedStream>& s) {
                for (auto* f : finished) {
                    if (s.get() == f) {
                        return true;
                    }
                }
                return false;
            });
        }
    }
}

}  // namespace runplane::agent
