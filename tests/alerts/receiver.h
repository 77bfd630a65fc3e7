#pragma once
// A real HTTP receiver on 127.0.0.1 (cpp-httplib's server, port 0) for the alert tests: it
// records every request and answers as a script says (status, Retry-After, a hold).

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runplane::testing {

struct ReceivedRequest {
    std::string path;
    std::string body;
    std::string idempotencyKey;
    std::string authorization;
    std::chrono::steady_clock::time_point at;
    int answered = 0;  // the status the receiver answered
};

struct Answer {
    int status = 200;
    std::string body = "ok";
    std::string retryAfter;  // Retry-After header when not empty
};

class Receiver {
  public:
    /// script(n, request) gives the answer to the n-th request (0-based); default 200 "ok".
    explicit Receiver(std::function<Answer(int, const ReceivedRequest&)> script = {})
        : m_script(std::move(script)) {
        m_server.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
            ReceivedRequest r;
            r.path = req.path;
            r.body = req.body;
            r.idempotencyKey = req.get_header_value("Idempotency-Key");
            r.authorization = req.get_header_value("Authorization");
            r.at = std::chrono::steady_clock::now();
            int n = 0;
            {
                std::lock_guard lock(m_mutex);
                n = m_count++;
            }
            const Answer a = m_script ? m_script(n, r) : Answer{};
            res.status = a.status;
            if (!a.retryAfter.empty()) {
                res.set_header("Retry-After", a.retryAfter);
            }
            res.set_content(a.body, "text/plain");
            r.answered = a.status;
            std::lock_guard lock(m_mutex);
            m_requests.push_back(std::move(r));
            m_changed.notify_all();
        });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        while (!m_server.is_running()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    ~Receiver() {
        m_server.stop();
        m_thread.join();
    }
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(m_port) + path;
    }
    std::vector<ReceivedRequest> requests() const {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }
    int arrived() const {
        std::lock_guard lock(m_mutex);
        return m_count;
    }

  private:
    std::function<Answer(int, const ReceivedRequest&)> m_script;
    httplib::Server m_server;
    int m_port = 0;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<ReceivedRequest> m_requests;
    int m_count = 0;
};

}  // namespace runplane::testing
