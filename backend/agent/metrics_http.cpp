#include "backend/agent/metrics_http.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <unistd.h>

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

// The Prometheus client libraries' process collector: CPU seconds and start time from
// /proc/self/stat (fields 14, 15 and 22, in clock ticks; start is relative to /proc/stat btime).
void appendProcessMetrics(std::ostringstream& o) {
    const auto stat = readSmallFile("/proc/self/stat", 4096);
    const auto procStat = readSmallFile("/proc/stat", 1 << 20);
    if (!stat) {
        return;
    }
    // The command name (field 2) may hold spaces; the fields after it start past the last ')'.
    const auto close = stat->rfind(')');
    if (close == std::string::npos) {
        return;
    }
    std::istringstream in(stat->substr(close + 2));
    std::string field;
    double utime = 0, stime = 0, start = 0;
    for (int i = 3; i <= 22 && in >> field; ++i) {
        if (i == 14) {
            utime = std::strtod(field.c_str(), nullptr);
        } else if (i == 15) {
            stime = std::strtod(field.c_str(), nullptr);
        } else if (i == 22) {
            start = std::strtod(field.c_str(), nullptr);
        }
    }
    const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    metric(o, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.", (utime + stime) / ticks);
    if (procStat) {
        const auto at = procStat->find("\nbtime ");
        if (at != std::string::npos) {
            const double btime = std::strtod(procStat->c_str() + at + 7, nullptr);
            metric(o, "process_start_time_seconds", "gauge",
                   "Start time of the process since unix epoch in seconds.", btime + start / ticks);
        }
    }
}

// PEM text (read before the daemon dropped root) into the TLS context: the first certificate is
// the server's, the rest its chain.
std::unique_ptr<BIO, decltype(&BIO_free)> memoryBio(const std::string& pem) {
    return {BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free};
}

bool useCertificateChain(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    X509* leaf = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (leaf == nullptr) {
        return false;
    }
    const bool ok = SSL_CTX_use_certificate(&ctx, leaf) == 1;
    X509_free(leaf);
    while (X509* chain = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        SSL_CTX_add0_chain_cert(&ctx, chain);  // takes ownership
    }
    ERR_clear_error();  // the loop ends on an expected "no start line"
    return ok;
}

bool usePrivateKey(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (key == nullptr) {
        return false;
    }
    const bool ok = SSL_CTX_use_PrivateKey(&ctx, key) == 1 && SSL_CTX_check_private_key(&ctx) == 1;
    EVP_PKEY_free(key);
    return ok;
}

bool addClientCas(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    X509_STORE* store = SSL_CTX_get_cert_store(&ctx);
    int added = 0;
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        added += X509_STORE_add_cert(store, ca) == 1 ? 1 : 0;
        X509_free(ca);
    }
    ERR_clear_error();
    return added > 0;
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
    appendProcessMetrics(o);
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

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const MetricsServerOptions& options,
                                                            std::function<std::string()> render,
                                                            Logger& logger) {
    std::unique_ptr<httplib::Server> server;
    const MetricsWebConfig& web = options.web;
    if (web.tls()) {
        std::string sslError;
        auto ssl = std::make_unique<httplib::SSLServer>([&web, &sslError](SSL_CTX& ctx) {
            // TLS 1.2 is the floor, as for the gRPC port (docs/security.md).
            SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
            if (!useCertificateChain(ctx, web.certPem)) {
                sslError =
                    "tls_server_config.cert_file " + web.certFile + ": not a PEM certificate";
                return false;
            }
            if (!usePrivateKey(ctx, web.keyPem)) {
                sslError = "tls_server_config.key_file " + web.keyFile +
                           ": not the private key of cert_file " + web.certFile;
                return false;
            }
            if (!web.clientCaPem.empty()) {
                if (!addClientCas(ctx, web.clientCaPem)) {
                    sslError = "tls_server_config.client_ca_file " + web.clientCaFile +
                               ": not a PEM certificate bundle";
                    return false;
                }
                SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                                   nullptr);
            }
            return true;
        });
        if (!ssl->is_valid()) {
            return Error{"--metrics-web-config: " +
                         (sslError.empty() ? std::string("cannot set up TLS") : sslError)};
        }
        server = std::move(ssl);
    } else {
        server = std::make_unique<httplib::Server>();
    }
    // One worker: a scrape is cheap, and every pool thread costs the node resident memory.
    server->new_task_queue = [] { return new httplib::ThreadPool(1); };
    server->set_read_timeout(2, 0);
    server->set_write_timeout(5, 0);
    server->set_keep_alive_max_count(100);
    server->set_payload_max_length(8192);
    auto auth = std::make_shared<MetricsAuth>(web.basicAuthUsers, web.bearerToken);
    server->set_pre_routing_handler(
        [auth, &logger](const httplib::Request& req, httplib::Response& res) {
            if (auth->allowed(req.get_header_value("Authorization"))) {
                return httplib::Server::HandlerResponse::Unhandled;
            }
            res.status = 401;
            res.set_header("WWW-Authenticate", "Basic realm=\"runplaned metrics\"");
            res.set_content("runplaned: /metrics needs credentials (basic auth or bearer token)\n",
                            "text/plain");
            logger.warn("refused /metrics scrape from " + req.remote_addr + ": " +
                        (req.has_header("Authorization") ? "wrong credentials" : "no credentials"));
            return httplib::Server::HandlerResponse::Handled;
        });
    server->Get("/metrics", [render](const httplib::Request&, httplib::Response& res) {
        res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server->set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.status == 404) {
            res.set_content("runplaned: only /metrics is served here\n", "text/plain");
        }
    });
    const std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
    int port = options.port;
    if (port == 0) {
        port = server->bind_to_any_port(host);
    } else if (!server->bind_to_port(host, port)) {
        port = -1;
    }
    if (port <= 0) {
        return Error{"--metrics-listen " + options.host + ":" + std::to_string(options.port) +
                     ": cannot listen (address in use or not local?)"};
    }
    std::unique_ptr<MetricsServer> s(new MetricsServer(std::move(server), port, web.tls()));
    return s;
}

MetricsServer::MetricsServer(std::unique_ptr<httplib::Server> server, int port, bool tls)
    : m_server(std::move(server)), m_port(port), m_tls(tls) {
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
    m_server->stop();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

}  // namespace runplane::agent
