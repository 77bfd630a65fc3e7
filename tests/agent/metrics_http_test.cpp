// The daemon's own HTTP/1.1 server for /metrics (metrics_http.h), spoken to over raw sockets so
// that every byte of the protocol is checked: keep-alive, HEAD, 404/405, limits, Connection:
// close, basic auth, idle kept-alive connections served side by side with a new client, and
// (issue 41) hundreds of idle or slow connections not delaying a scrape. The HTTPS side
// is covered against a real daemon by stock_tools_test.cpp (issue 21).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "backend/agent/logger.h"
#include "backend/agent/metrics_http.h"

namespace runplane::agent {
namespace {

class Client {
  public:
    explicit Client(int port) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    }
    ~Client() { ::close(m_fd); }
    bool connected() const { return m_connected; }
    int fd() const { return m_fd; }
    void send(const std::string& bytes) {
        ASSERT_EQ(::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(bytes.size()));
    }
    // One response: the head, then exactly Content-Length body bytes (none after HEAD).
    std::string response(bool head = false) {
        while (m_in.find("\r\n\r\n") == std::string::npos) {
            if (!readMore()) {
                return std::exchange(m_in, "");
            }
        }
        const auto end = m_in.find("\r\n\r\n") + 4;
        std::size_t length = 0;
        const auto at = m_in.find("Content-Length: ");
        if (at != std::string::npos && at < end) {
            length = std::stoul(m_in.substr(at + 16));
        }
        const std::size_t total = end + (head ? 0 : length);
        while (m_in.size() < total && readMore()) {
        }
        std::string r = m_in.substr(0, total);
        m_in.erase(0, total);
        return r;
    }
    // True when the server closed the connection (read returns 0) within `ms`.
    bool closedWithin(int ms) {
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) {
            return false;
        }
        char c;
        return ::recv(m_fd, &c, 1, 0) == 0;
    }

  private:
    bool readMore() {
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, 5000) <= 0) {
            return false;
        }
        char buf[4096];
        const ssize_t n = ::recv(m_fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            return false;
        }
        m_in.append(buf, static_cast<std::size_t>(n));
        return true;
    }
    int m_fd;
    bool m_connected = false;
    std::string m_in;
};

struct Server {
    NullLogger logger;
    std::atomic<int> renders{0};
    std::unique_ptr<MetricsServer> server;
    explicit Server(MetricsWebConfig web = {}) {
        MetricsServerOptions o;
        o.host = "127.0.0.1";
        o.web = std::move(web);
        auto s = MetricsServer::start(
            o,
            [this] {
                ++renders;
                return std::string("# TYPE up gauge\nup 1\n");
            },
            logger);
        EXPECT_TRUE(s.ok()) << s.error();
        if (s.ok()) {
            server = std::move(*s);
        }
    }
    int port() const { return server->port(); }
};

TEST(MetricsHttp, KeepAliveServesSeveralScrapesOnOneConnection) {
    Server s;
    ASSERT_TRUE(s.server);
    EXPECT_FALSE(s.server->tls());
    Client c(s.port());
    ASSERT_TRUE(c.connected());
    for (int i = 0; i < 3; ++i) {
        c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        const std::string r = c.response();
        EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
        EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
                  std::string::npos);
        EXPECT_NE(r.find("Connection: keep-alive\r\n"), std::string::npos) << r;
        EXPECT_NE(r.find("\r\n\r\n# TYPE up gauge\nup 1\n"), std::string::npos) << r;
    }
    EXPECT_EQ(s.renders.load(), 3);
    // Connection: close is honoured: the answer says so and the server closes.
    c.send("GET /metrics?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_NE(c.response().find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(c.closedWithin(2000));
}

TEST(MetricsHttp, HeadOtherPathsAndMethods) {
    Server s;
    ASSERT_TRUE(s.server);
    Client c(s.port());
    ASSERT_TRUE(c.connected());
    c.send("HEAD /metrics HTTP/1.1\r\n\r\n");
    std::string r = c.response(true);
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("Content-Length: 21\r\n"), std::string::npos) << r;  // the GET body's
    EXPECT_EQ(r.find("up 1"), std::string::npos) << "HEAD has no body";
    c.send("GET /other HTTP/1.1\r\n\r\n");
    r = c.response();
    EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("only /metrics is served here"), std::string::npos);
    c.send("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
    r = c.response();
    EXPECT_EQ(r.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos);
    // The body was consumed: the connection still serves the next request.
    c.send("GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(c.response().rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
}

TEST(MetricsHttp, Http10ClosesAfterTheResponse) {
    Server s;
    ASSERT_TRUE(s.server);
    Client c(s.port());
    c.send("GET /metrics HTTP/1.0\r\n\r\n");
    const std::string r = c.response();
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(c.closedWithin(2000));
}

TEST(MetricsHttp, MalformedAndOversizedRequestsAreRefusedAndClosed) {
    Server s;
    ASSERT_TRUE(s.server);
    {
        Client c(s.port());
        c.send("NOT-HTTP\r\n\r\n");
        EXPECT_EQ(c.response().rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u);
        EXPECT_TRUE(c.closedWithin(2000));
    }
    {
        Client c(s.port());
        c.send("GET /metrics HTTP/1.1\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n");
        EXPECT_EQ(c.response().rfind("HTTP/1.1 431 ", 0), 0u);
        EXPECT_TRUE(c.closedWithin(2000));
    }
    {
        Client c(s.port());
        c.send("POST /metrics HTTP/1.1\r\nContent-Length: 100000\r\n\r\n");
        EXPECT_EQ(c.response().rfind("HTTP/1.1 413 ", 0), 0u);
        EXPECT_TRUE(c.closedWithin(2000));
    }
    EXPECT_EQ(s.renders.load(), 0);
}

TEST(MetricsHttp, AnIdleKeptAliveConnectionDoesNotDelayANewClient) {
    Server s;
    ASSERT_TRUE(s.server);
    Client first(s.port());
    first.send("GET /metrics HTTP/1.1\r\n\r\n");
    ASSERT_EQ(first.response().rfind("HTTP/1.1 200 OK", 0), 0u);
    // `first` stays open and idle; a second scraper is served at once, side by side.
    const auto t0 = std::chrono::steady_clock::now();
    Client second(s.port());
    second.send("GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(second.response().rfind("HTTP/1.1 200 OK", 0), 0u);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
    // ... and the first still serves its next request.
    first.send("GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(first.response().rfind("HTTP/1.1 200 OK", 0), 0u);
}

// Issue 41 item 2: 500 idle or slow connections made every scrape time out (20 s), six idle ones
// delayed the next by 10 s, all before authentication. Now every connection is served side by
// side with a deadline for its request, and the caps evict the oldest waiting connection.
TEST(MetricsHttp, RedTeam41_IdleAndSlowConnectionsDoNotBlockAScrape) {
    MetricsWebConfig web;
    web.bearerTokenFile = "token";
    web.bearerToken = "token-0123456789abcdef";
    Server s(web);
    ASSERT_TRUE(s.server);
    std::vector<std::unique_ptr<Client>> idle;
    for (int i = 0; i < 500; ++i) {
        idle.push_back(std::make_unique<Client>(s.port()));
        ASSERT_TRUE(idle.back()->connected());
        if (i % 2 == 0) {
            idle.back()->send("GET /metrics HTTP/1.1\r\nHost:");  // slow: never finishes
        }
    }
    for (int round = 0; round < 3; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        Client scraper(s.port());
        scraper.send(
            "GET /metrics HTTP/1.1\r\nAuthorization: Bearer token-0123456789abcdef\r\n\r\n");
        const std::string r = scraper.response();
        EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000))
            << "round " << round;
    }
    // The cap per peer (16) closed the oldest waiting connections to make room: the first idle
    // socket is gone, not held until its deadline.
    {
        pollfd p{idle.front()->fd(), POLLIN, 0};
        char c;
        EXPECT_TRUE(::poll(&p, 1, 100) > 0 && ::recv(idle.front()->fd(), &c, 1, 0) <= 0)
            << "the oldest idle connection was closed for the newer ones";
    }
    // A slow sender is closed by its request deadline (5 s), however it trickles.
    Client slow(s.port());
    const auto t0 = std::chrono::steady_clock::now();
    bool closed = false;
    for (int i = 0; i < 40 && !closed; ++i) {
        closed = ::send(slow.fd(), "X", 1, MSG_NOSIGNAL) < 0;
        pollfd p{slow.fd(), POLLIN, 0};
        char c;
        // Closed: end of stream, or a reset (the server drops what it had not read).
        closed = closed || (::poll(&p, 1, 250) > 0 && ::recv(slow.fd(), &c, 1, 0) <= 0);
    }
    EXPECT_TRUE(closed);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(7000));
}

TEST(MetricsHttp, CredentialsAreCheckedBeforeRouting) {
    MetricsWebConfig web;
    // A bearer token (basic auth goes through the same gate, MetricsAuth::allowed).
    web.bearerTokenFile = "token";
    web.bearerToken = "token-0123456789abcdef";
    Server s(web);
    ASSERT_TRUE(s.server);
    Client c(s.port());
    c.send("GET /other HTTP/1.1\r\n\r\n");
    std::string r = c.response();
    EXPECT_EQ(r.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("WWW-Authenticate: Basic realm=\"runplaned metrics\"\r\n"), std::string::npos);
    c.send("GET /metrics HTTP/1.1\r\nAuthorization: Bearer wrong-token-000000000\r\n\r\n");
    EXPECT_EQ(c.response().rfind("HTTP/1.1 401 ", 0), 0u);
    c.send("GET /metrics HTTP/1.1\r\nauthorization:  Bearer token-0123456789abcdef \r\n\r\n");
    r = c.response();
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_EQ(s.renders.load(), 1);
}

TEST(MetricsHttp, APortInUseIsAnErrorNamingTheFlag) {
    Server s;
    ASSERT_TRUE(s.server);
    NullLogger logger;
    MetricsServerOptions o;
    o.host = "127.0.0.1";
    o.port = s.port();
    auto again = MetricsServer::start(
        o, [] { return std::string(); }, logger);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().find("--metrics-listen 127.0.0.1:" + std::to_string(s.port())),
              std::string::npos)
        << again.error();
}

TEST(MetricsHttp, StopsPromptlyWithAClientConnected) {
    auto s = std::make_unique<Server>();
    ASSERT_TRUE(s->server);
    Client c(s->port());
    c.send("GET /metrics HTTP/1.1\r\n");  // an unfinished request: the server waits for more
    ::usleep(100 * 1000);
    const auto t0 = std::chrono::steady_clock::now();
    s.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace runplane::agent
