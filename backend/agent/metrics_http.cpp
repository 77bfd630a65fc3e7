#include "backend/agent/metrics_http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "backend/agent/node_info.h"
#include "backend/agent/proc_tree.h"
#include "common/build_info.h"

namespace runplane::agent {
namespace {

std::string escapeLabel(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

void metric(std::ostringstream& o, const char* name, const char* type, const char* help,
            double value, const std::string& labels = "") {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << (labels.empty() ? "" : "{" + labels + "}") << ' ' << value << '\n';
}

}  // namespace

std::string renderPrometheus(const CollectorSnapshot& s, const SpoolStats& spool,
                             const std::string& nodeId) {
    std::ostringstream o;
    o.precision(17);
    if (s.hostValid) {
        const auto& h = s.host;
        metric(o, "node_memory_MemTotal_bytes", "gauge", "Memory information field MemTotal_bytes.",
               static_cast<double>(h.totalBytes));
        metric(o, "node_memory_MemAvailable_bytes", "gauge",
               "Memory information field MemAvailable_bytes.",
               static_cast<double>(h.availableBytes));
        metric(o, "node_memory_MemFree_bytes", "gauge", "Memory information field MemFree_bytes.",
               static_cast<double>(h.freeBytes));
        metric(o, "node_memory_Cached_bytes", "gauge", "Memory information field Cached_bytes.",
               static_cast<double>(h.cachedBytes));
        metric(o, "node_memory_Buffers_bytes", "gauge", "Memory information field Buffers_bytes.",
               static_cast<double>(h.buffersBytes));
        metric(o, "node_memory_Shmem_bytes", "gauge", "Memory information field Shmem_bytes.",
               static_cast<double>(h.shmemBytes));
        metric(o, "node_memory_SwapTotal_bytes", "gauge",
               "Memory information field SwapTotal_bytes.", static_cast<double>(h.swapTotalBytes));
        metric(o, "node_memory_SwapFree_bytes", "gauge", "Memory information field SwapFree_bytes.",
               static_cast<double>(h.swapTotalBytes - h.swapUsedBytes));
        metric(o, "runplane_host_memory_used_bytes", "gauge", "MemTotal - MemAvailable.",
               static_cast<double>(h.usedBytes));
    }
    if (!s.gpus.empty()) {
        // DCGM exporter conventions: framebuffer in MiB, utilisation in percent.
        o << "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE "
             "DCGM_FI_DEV_FB_USED gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_FB_USED{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << g.usedBytes / (1024 * 1024) << '\n';
        }
        o << "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE "
             "DCGM_FI_DEV_FB_FREE gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_FB_FREE{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << (g.totalBytes - std::min(g.totalBytes, g.usedBytes)) / (1024 * 1024)
              << '\n';
        }
        o << "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL "
             "gauge\n";
        for (const auto& g : s.gpus) {
            o << "DCGM_FI_DEV_GPU_UTIL{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
              << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\"" << escapeLabel(nodeId)
              << "\"} " << g.utilPercent << '\n';
        }
        // Error counters, under the DCGM exporter's names (uncorrected ECC = double-bit volatile).
        const auto counter = [&](const char* name, const char* help, const char* type, auto valueOf,
                                 bool (*has)(const CollectorSnapshot::Gpu&)) {
            o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
            for (const auto& g : s.gpus) {
                if (has(g)) {
                    o << name << "{gpu=\"" << g.index << "\",UUID=\"" << escapeLabel(g.uuid)
                      << "\",modelName=\"" << escapeLabel(g.name) << "\",Hostname=\""
                      << escapeLabel(nodeId) << "\"} " << valueOf(g) << '\n';
                }
            }
        };
        counter(
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.",
            "counter", [](const CollectorSnapshot::Gpu& g) { return g.eccUncorrected; },
            [](const CollectorSnapshot::Gpu&) { return true; });
        counter(
            "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "gauge",
            [](const CollectorSnapshot::Gpu& g) { return g.lastXid; },
            [](const CollectorSnapshot::Gpu& g) { return g.lastXid >= 0; });
        counter(
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
            "Total number of NVLink retries (replay errors, all links).", "counter",
            [](const CollectorSnapshot::Gpu& g) { return g.nvlinkReplayErrors; },
            [](const CollectorSnapshot::Gpu& g) { return g.nvlinkReplayErrors >= 0; });
    }
    if (!s.runs.empty()) {
        o << "# HELP runplane_run_tree_rss_bytes Resident memory of a run's whole process tree.\n"
             "# TYPE runplane_run_tree_rss_bytes gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_tree_rss_bytes{run_id=\"" << escapeLabel(r.runId) << "\"} "
              << r.rssBytes << '\n';
        }
        o << "# HELP runplane_run_tree_pss_bytes Proportional set size of a run's process tree "
             "(where readable).\n"
             "# TYPE runplane_run_tree_pss_bytes gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_tree_pss_bytes{run_id=\"" << escapeLabel(r.runId) << "\"} "
              << r.pssBytes << '\n';
        }
        o << "# HELP runplane_run_state Run state (runplane.v1.RunState number).\n"
             "# TYPE runplane_run_state gauge\n";
        for (const auto& r : s.runs) {
            o << "runplane_run_state{run_id=\"" << escapeLabel(r.runId) << "\",state=\""
              << v1::RunState_Name(static_cast<v1::RunState>(r.state)) << "\"} " << r.state << '\n';
        }
    }
    metric(o, "runplane_spool_last_seq", "gauge", "Highest sequence number written to the spool.",
           static_cast<double>(spool.nextSeq - 1));
    metric(o, "runplane_spool_records", "gauge",
           "Records held in the spool (not yet acknowledged).", static_cast<double>(spool.records));
    metric(o, "runplane_spool_payload_bytes", "gauge", "Payload bytes held in the spool.",
           static_cast<double>(spool.payloadBytes));
    metric(o, "runplane_spool_dropped_records_total", "counter",
           "Records dropped by the spool size bound (each drop is an EVENT_GAP).",
           static_cast<double>(spool.droppedRecords));
    metric(o, "runplane_telemetry_report_hz", "gauge", "Current telemetry report rate.",
           s.reportHz);
    if (auto statm = readSmallFile("/proc/self/statm", 256)) {
        std::istringstream in(*statm);
        std::uint64_t size = 0, resident = 0;
        in >> size >> resident;
        metric(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               static_cast<double>(resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))));
    }
    metric(
        o, "runplane_daemon_info", "gauge", "runplaned version and node id.", 1,
        "version=\"" + std::string(daemonVersion()) + "\",node_id=\"" + escapeLabel(nodeId) + "\"");
    // The Prometheus convention for build identity (cf. prometheus_build_info).
    const BuildInfo& build = buildInfo();
    metric(o, "runplane_build_info", "gauge",
           "A metric with a constant '1' value labeled by version, commit and build date.", 1,
           "version=\"" + escapeLabel(build.version) + "\",commit=\"" + escapeLabel(build.commit) +
               "\",build_date=\"" + escapeLabel(build.date) + "\"");
    return o.str();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& host, int port,
                                                            std::function<std::string()> render,
                                                            Logger& logger) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Error{std::string("--metrics-listen: socket: ") + std::strerror(errno)};
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const std::string h = host == "localhost" ? "127.0.0.1" : host;
    if (::inet_pton(AF_INET, h.c_str(), &addr.sin_addr) != 1) {
        ::close(fd);
        return Error{"--metrics-listen: '" + host + "' is not an IPv4 loopback address"};
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 16) != 0) {
        const int err = errno;
        ::close(fd);
        return Error{"--metrics-listen " + host + ":" + std::to_string(port) + ": " +
                     std::strerror(err)};
    }
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    std::unique_ptr<MetricsServer> s(
        new MetricsServer(fd, ntohs(addr.sin_port), std::move(render), logger));
    return s;
}

MetricsServer::MetricsServer(int fd, int port, std::function<std::string()> render, Logger& logger)
    : m_fd(fd), m_port(port), m_render(std::move(render)), m_logger(logger) {
    if (::pipe2(m_wake, O_CLOEXEC) != 0) {
        m_wake[0] = m_wake[1] = -1;
    }
    m_thread = std::thread([this] { loop(); });
}

MetricsServer::~MetricsServer() {
    if (m_wake[1] >= 0) {
        [[maybe_unused]] auto n = ::write(m_wake[1], "x", 1);
    }
    if (m_thread.joinable()) {
        m_thread.join();
    }
    ::close(m_fd);
    ::close(m_wake[0]);
    ::close(m_wake[1]);
}

void MetricsServer::loop() {
    while (true) {
        pollfd fds[2] = {{m_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        const int client = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (client >= 0) {
            serve(client);
            ::close(client);
        }
    }
}

void MetricsServer::serve(int client) {
    // Read the request head (bounded in size and time).
    std::string req;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos &&
           req.size() < 8192) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            return;
        }
        pollfd p{client, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) {
            return;
        }
        char buf[1024];
        const ssize_t n = ::recv(client, buf, sizeof(buf), 0);
        if (n <= 0) {
            break;
        }
        req.append(buf, static_cast<std::size_t>(n));
    }
    std::string status = "200 OK", type = "text/plain; version=0.0.4; charset=utf-8", body;
    if (req.rfind("GET /metrics ", 0) == 0 || req.rfind("GET /metrics?", 0) == 0 ||
        req.rfind("GET /metrics\r", 0) == 0) {
        body = m_render();
    } else if (req.rfind("GET ", 0) == 0) {
        status = "404 Not Found";
        type = "text/plain";
        body = "runplaned: only /metrics is served here\n";
    } else {
        status = "405 Method Not Allowed";
        type = "text/plain";
        body = "runplaned: only GET /metrics\n";
    }
    const std::string head = "HTTP/1.0 " + status + "\r\nContent-Type: " + type +
                             "\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\nConnection: close\r\n\r\n";
    const std::string all = head + body;
    std::size_t sent = 0;
    while (sent < all.size()) {
        const ssize_t n = ::send(client, all.data() + sent, all.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            break;
        }
        sent += static_cast<std::size_t>(n);
    }
}

}  // namespace runplane::agent
