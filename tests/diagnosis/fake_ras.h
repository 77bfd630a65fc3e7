#pragma once
// A RAS server for the tests: listens on 127.0.0.1 (port 0), speaks NCCL's RAS client protocol
// (CLIENT PROTOCOL 2 -> SERVER PROTOCOL 2, SET FORMAT json -> OK, VERBOSE STATUS -> the report,
// then close) and answers a recorded report; or never answers, to test the client's deadline.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace runplane::diagnosis::testing {

class FakeRas {
  public:
    enum class Mode { Answer, Silent, WrongProtocol };

    FakeRas(std::string report, Mode mode = Mode::Answer)
        : m_report(std::move(report)), m_mode(mode) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(m_listen, 64);
        socklen_t len = sizeof a;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~FakeRas() {
        m_stop = true;
        m_thread.join();
        ::close(m_listen);
    }
    FakeRas(const FakeRas&) = delete;
    FakeRas& operator=(const FakeRas&) = delete;

    std::uint16_t port() const { return m_port; }
    std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
    int connections() const { return m_connections; }
    /// Every line the clients sent, joined by '|'.
    std::string received() const {
        std::lock_guard lock(m_mutex);
        return m_received;
    }

  private:
    bool readLine(int fd, std::string& buffer, std::string& line) {
        for (;;) {
            const auto nl = buffer.find('\n');
            if (nl != std::string::npos) {
                line = buffer.substr(0, nl);
                buffer.erase(0, nl + 1);
                std::lock_guard lock(m_mutex);
                m_received += (m_received.empty() ? "" : "|") + line;
                return true;
            }
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) {
                if (m_stop) {
                    return false;
                }
                continue;
            }
            char chunk[4096];
            const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) {
                return false;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
    }
    void sendAll(int fd, const std::string& data) {
        std::size_t sent = 0;
        while (sent < data.size()) {
            const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                return;
            }
            sent += static_cast<std::size_t>(n);
        }
    }
    void serve() {
        while (!m_stop) {
            pollfd p{m_listen, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            const int fd = ::accept(m_listen, nullptr, nullptr);
            if (fd < 0) {
                continue;
            }
            ++m_connections;
            std::string buffer, line;
            if (m_mode == Mode::Silent) {
                while (!m_stop && readLine(fd, buffer, line)) {
                }
                ::close(fd);
                continue;
            }
            if (readLine(fd, buffer, line) && line == "CLIENT PROTOCOL 2") {
                sendAll(fd, m_mode == Mode::WrongProtocol ? "SERVER PROTOCOL 3\n"
                                                          : "SERVER PROTOCOL 2\n");
                while (readLine(fd, buffer, line)) {
                    if (line == "SET FORMAT json") {
                        sendAll(fd, "OK\n");
                    } else if (line == "VERBOSE STATUS" || line == "STATUS") {
                        sendAll(fd, m_report);
                        break;
                    }
                }
            }
            ::close(fd);
        }
    }

    std::string m_report;
    Mode m_mode;
    int m_listen = -1;
    std::uint16_t m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_connections{0};
    mutable std::mutex m_mutex;
    std::string m_received;
    std::thread m_thread;
};

}  // namespace runplane::diagnosis::testing
