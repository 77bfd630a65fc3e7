#pragma once
// /metrics on --metrics-listen, so existing Grafana dashboards can scrape nodes: the text is
// prometheus_exposition.h's. Served by a small HTTP/1.1 server of our own on one thread that
// multiplexes every connection with poll (GET and HEAD of /metrics, keep-alive, OpenSSL for
// HTTPS; per-request deadlines and connection caps, so idle or slow clients never delay a
// scrape, docs/daemon.md): no HTTP library is linked into the daemon,
// and OpenSSL is touched only when the web config asks for TLS (docs/performance.md, "Daemon
// beside node_exporter").
// Off loopback the endpoint needs a web config (metrics_web_config.h): HTTPS and basic auth, a
// bearer token or client certificates.
//
// Thread-safety: MetricsServer owns its threads; the render function is called on its worker.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/logger.h"
#include "backend/agent/metrics_web_config.h"
#include "common/result.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace runplane::agent {

struct MetricsServerOptions {
    std::string host;
    int port = 0;  // 0 = pick one
    MetricsWebConfig web;
};

class MetricsServer {
  public:
    /// Binds host:port and starts serving.
    static Result<std::unique_ptr<MetricsServer>> start(const MetricsServerOptions& options,
                                                        std::function<std::string()> render,
                                                        Logger& logger);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;
    int port() const { return m_port; }
    bool tls() const { return m_ssl != nullptr; }

  private:
    struct Connection;
    MetricsServer(int listenFd, int stopFd, int port, SSL_CTX* ssl,
                  std::function<std::string()> render, std::shared_ptr<MetricsAuth> auth,
                  Logger& logger);
    void serve();
    void acceptAll(std::vector<std::unique_ptr<Connection>>& conns, std::uint64_t& accepted);
    void closeConnection(Connection& c);
    /// Drives `c` as far as its socket allows now; marks it dead when it is to be closed.
    void step(Connection& c);
    bool readAvailable(Connection& c);
    bool writeAvailable(Connection& c);
    /// A whole request in c's buffer: consumed, its response put into c.out.
    bool takeRequest(Connection& c);

    int m_listenFd;
    int m_stopFd;  // eventfd: the destructor wakes the serving thread
    int m_port;
    SSL_CTX* m_ssl;  // null: plain HTTP
    std::function<std::string()> m_render;
    std::shared_ptr<MetricsAuth> m_auth;
    Logger& m_logger;
    std::uint64_t m_evicted = 0;  // connections closed for room since the last log line
    std::chrono::steady_clock::time_point m_lastEvictionLog{};
    std::thread m_thread;
};

}  // namespace runplane::agent
