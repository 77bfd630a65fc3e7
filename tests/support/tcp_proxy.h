#pragma once
// A loopback TCP relay for "cut the connection" tests: listens on 127.0.0.1:0 and forwards each
// accepted connection to a target address. cut() closes every relayed connection at once and
// refuses new ones until resume(): what a broken network link looks like to both ends.
// partition() is the silent kind: connections stay open but no byte moves either way (no FIN,
// no RST, as when a switch drops packets) until heal(), when the held bytes flow on intact.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runplane::testing {

class TcpProxy {
  public:
    /// target: "127.0.0.1:PORT" (IPv4 loopback only).
    explicit TcpProxy(std::string target);
    ~TcpProxy();
    TcpProxy(const TcpProxy&) = delete;
    TcpProxy& operator=(const TcpProxy&) = delete;

    /// "127.0.0.1:PORT" to connect to instead of the target; empty when it could not listen.
    const std::string& address() const { return m_address; }
    void cut();
    void resume();
    void partition() { m_partitioned = true; }
    void heal() { m_partitioned = false; }
    int connectionsAccepted() const { return m_accepted.load(); }

  private:
    void acceptLoop();
    void relay(int client, int server);

    std::string m_target;
    std::string m_address;
    int m_listen = -1;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_refusing{false};
    std::atomic<bool> m_partitioned{false};
    std::atomic<int> m_accepted{0};
    std::mutex m_mutex;
    std::vector<int> m_sockets;  // every open relayed socket (both ends)
    std::vector<std::thread> m_threads;
    std::thread m_acceptThread;
};

}  // namespace runplane::testing
