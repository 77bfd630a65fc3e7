#pragma once
// Prometheus text exposition (format 0.0.4) of one collector snapshot, served on
// --metrics-listen by MetricsServer (metrics_http.h). Host series use node_exporter's names, GPU
// series DCGM exporter's, the process series the client libraries' (docs/daemon.md).

#include <string>

#include "backend/agent/collector.h"
#include "backend/agent/spool.h"

namespace runplane::agent {

/// The exposition text for one scrape.
std::string renderPrometheus(const CollectorSnapshot& snapshot, const SpoolStats& spool,
                             const std::string& nodeId);

}  // namespace runplane::agent
