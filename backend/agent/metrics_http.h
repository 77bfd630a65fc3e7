#pragma once
// Prometheus text exposition (format 0.0.4) on --metrics-listen: a tiny HTTP/1.0 responder that
// serves GET /metrics on loopback, one connection at a time, so existing Grafana dashboards can
// scrape nodes. Host series use node_exporter's names, GPU series DCGM exporter's (docs/daemon.md).
//
// Thread-safety: MetricsServer owns one thread; the render function is called on it.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "backend/agent/collector.h"
#include "backend/agent/logger.h"
#include "backend/agent/spool.h"
#include "backend/common/result.h"

namespace runplane::agent {

/// The exposition text for one scrape.
std::string renderPrometheus(const CollectorSnapshot& snapshot, const SpoolStats& spool,
                             const std::string& nodeId);

class MetricsServer {
  public:
    /// Binds host:port (port 0 = pick one) and starts serving.
    static Result<std::unique_ptr<MetricsServer>> start(const std::string& host, int port,
                                                        std::function<std::string()> render,
                                                        Logger& logger);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;
    int port() const { return m_port; }

  private:
    MetricsServer(int fd, int port, std::function<std::string()> render, Logger& logger);
    void loop();
    void serve(int client);

    int m_fd;
    int m_port;
    int m_wake[2] = {-1, -1};
    std::function<std::string()> m_render;
    Logger& m_logger;
    std::thread m_thread;
};

}  // namespace runplane::agent
