#include "tests/support/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace runplane::testing {
namespace {

sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    return a;
}

}  // namespace

TcpProxy::TcpProxy(std::string target) : m_target(std::move(target)) {
    m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (m_listen < 0 || ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(m_listen, 16) != 0 ||
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        return;
    }
    m_address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    m_acceptThread = std::thread([this] { acceptLoop(); });
}

TcpProxy::~TcpProxy() {
    m_stop = true;
    cut();
    if (m_listen >= 0) {
        ::shutdown(m_listen, SHUT_RDWR);
        ::close(m_listen);
    }
    if (m_acceptThread.joinable()) {
        m_acceptThread.join();
    }
    for (auto& t : m_threads) {
        t.join();
    }
}

void TcpProxy::cut() {
    m_refusing = true;
    std::lock_guard lock(m_mutex);
    for (int fd : m_sockets) {
        ::shutdown(fd, SHUT_RDWR);  // both relay directions see EOF/errors and end
    }
}

void TcpProxy::resume() {
    m_refusing = false;
}

void TcpProxy::acceptLoop() {
    const int port = std::stoi(m_target.substr(m_target.rfind(':') + 1));
    while (!m_stop) {
        pollfd p{m_listen, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) {
            continue;
        }
        const int client = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) {
            continue;
        }
        if (m_refusing) {
            ::close(client);  // the link is down: the connection dies at once
            continue;
        }
        const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a = loopback(port);
        if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(client);
            if (server >= 0) {
                ::close(server);
            }
            continue;
        }
        ++m_accepted;
        std::lock_guard lock(m_mutex);
        m_sockets.push_back(client);
        m_sockets.push_back(server);
        m_threads.emplace_back([this, client, server] { relay(client, server); });
    }
}

void TcpProxy::relay(int client, int server) {
    char buffer[16384];
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    bool open = true;
    while (open && !m_stop) {
        if (m_partitioned) {  // bytes wait in the kernel's buffers, as on a lossy link
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            continue;
        }
        if (::poll(fds, 2, 100) <= 0) {
            continue;
        }
        for (int k = 0; k < 2 && open; ++k) {
            if (fds[k].revents == 0) {
                continue;
            }
            const ssize_t n = ::read(fds[k].fd, buffer, sizeof buffer);
            if (n <= 0) {
                open = false;
                break;
            }
            for (ssize_t sent = 0; sent < n;) {
                // MSG_NOSIGNAL: a side the test cut is closed, and a write to it must end this
                // relay, not raise SIGPIPE in the whole test process.
                const ssize_t w =
                    ::send(fds[1 - k].fd, buffer + sent, std::size_t(n - sent), MSG_NOSIGNAL);
                if (w <= 0) {
                    open = false;
                    break;
                }
                sent += w;
            }
        }
    }
    std::lock_guard lock(m_mutex);
    for (int fd : {client, server}) {
        m_sockets.erase(std::remove(m_sockets.begin(), m_sockets.end(), fd), m_sockets.end());
        ::close(fd);
    }
}

}  // namespace runplane::testing
