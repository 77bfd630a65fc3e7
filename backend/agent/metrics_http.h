#pragma once
// Prometheus text exposition (format 0.0.4) on --metrics-listen, served by cpp-httplib with one
// worker thread, so existing Grafana dashboards can scrape nodes. Host series use node_exporter's
// names, GPU series DCGM exporter's, the process series the client libraries' (docs/daemon.md).
// Off loopback the endpoint needs a web config (metrics_web_config.h): HTTPS and basic auth, a
// bearer token or client certificates.
//
// Thread-safety: MetricsServer owns its threads; the render function is called on its worker.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "backend/agent/collector.h"
#include "backend/agent/logger.h"
#include "backend/agent/metrics_web_config.h"
#include "backend/agent/spool.h"
#include "common/result.h"

namespace httplib {
class Server;
}

namespace runplane::agent {

/// The exposition text for one scrape.
std::string renderPrometheus(const CollectorSnapshot& snapshot, const SpoolStats& spool,
                             const std::string& nodeId);

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
    bool tls() const { return m_tls; }

  private:
    MetricsServer(std::unique_ptr<httplib::Server> server, int port, bool tls);

    std::unique_ptr<httplib::Server> m_server;
    int m_port;
    bool m_tls;
    std::thread m_thread;
};

}  // namespace runplane::agent
