// CLI11 is included here only (heavy header).
#include <arpa/inet.h>
#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "backend/agent/daemon_config.h"
#include "backend/agent/logger.h"
#include "backend/agent/process_roles.h"
#include "common/build_info.h"
#include "common/credential_file.h"

namespace runplane::agent {
namespace {

std::string defaultStateDir() {
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
        return std::string(xdg) + "/runplane";
    }
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') {
        if (passwd* pw = ::getpwuid(::getuid())) {
            home = pw->pw_dir;
        }
    }
    return std::string(home != nullptr ? home : "/tmp") + "/.local/state/runplane";
}

bool readable(const std::string& path) {
    return ::access(path.c_str(), R_OK) == 0;
}

}  // namespace

Result<HostPort> parseHostPort(const std::string& text, const std::string& flag) {
    HostPort hp;
    std::string portText;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return Error{flag + ": '" + text + "' is not [IPv6]:PORT"};
        }
        hp.host = text.substr(1, close - 1);
        portText = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0) {
            return Error{flag + ": '" + text + "' is not HOST:PORT"};
        }
        hp.host = text.substr(0, colon);
        portText = text.substr(colon + 1);
    }
    char* end = nullptr;
    const long port = std::strtol(portText.c_str(), &end, 10);
    if (portText.empty() || *end != '\0' || port < 0 || port > 65535) {
        return Error{flag + ": port '" + portText + "' is not a number in 0..65535"};
    }
    hp.port = static_cast<int>(port);
    return hp;
}

bool isLoopbackHost(const std::string& host) {
    if (host == "localhost" || host == "::1") {
        return true;
    }
    in_addr a{};
    if (::inet_pton(AF_INET, host.c_str(), &a) == 1) {
        return (ntohl(a.s_addr) >> 24) == 127;
    }
    return false;
}

Result<std::string> readTokenFile(const std::string& path) {
    // Regular files only, at most 4 KiB, never blocking on a FIFO (common/credential_file.h).
    auto text = readCredentialFile(path, kTokenFileMaxBytes, "--token-file");
    if (!text) {
        return text.failure();
    }
    std::string token = text->substr(0, text->find('\n'));
    while (!token.empty() &&
           (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) {
        token.pop_back();
    }
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
        token.erase(0, 1);
    }
    if (token.size() < 16) {
        return Error{"--token-file " + path + ": the token must be at least 16 characters (got " +
                     std::to_string(token.size()) + ")"};
    }
    return token;
}

Status checkSecurity(const DaemonConfig& c) {
    auto hp = parseHostPort(c.listen, "--listen");
    if (!hp) {
        return Error{hp.error()};
    }
    if (!c.tlsCert.empty() != !c.tlsKey.empty()) {
        return Error{"--tls-cert and --tls-key must be given together"};
    }
    for (const auto& [flag, path] : {std::pair<std::string, std::string>{"--tls-cert", c.tlsCert},
                                     {"--tls-key", c.tlsKey},
                                     {"--tls-client-ca", c.tlsClientCa},
                                     {"--token-file", c.tokenFile}}) {
        if (!path.empty() && !readable(path)) {
            return Error{flag + " " + path + ": not readable"};
        }
    }
    if (!c.tlsClientCa.empty() && c.tlsCert.empty()) {
        return Error{"--tls-client-ca needs --tls-cert and --tls-key (mutual TLS)"};
    }
    if (!isLoopbackHost(hp->host) || c.requireTls) {
        const std::string why = c.requireTls && isLoopbackHost(hp->host)
                                    ? " with --require-tls"
                                    : " is not a loopback address";
        if (c.tlsCert.empty()) {
            return Error{"--listen " + c.listen + why +
                         ": refusing to serve without TLS. Give "
                         "--tls-cert and --tls-key, plus --token-file or --tls-client-ca "
                         "(see docs/daemon.md, Security)"};
        }
        if (c.tokenFile.empty() && c.tlsClientCa.empty()) {
            return Error{"--listen " + c.listen + why +
                         ": TLS alone is not enough, callers must "
                         "authenticate. Give --token-file (bearer token) or --tls-client-ca "
                         "(client certificates)"};
        }
    }
    if (!c.metricsListen.empty()) {
        auto mp = parseHostPort(c.metricsListen, "--metrics-listen");
        if (!mp) {
            return Error{mp.error()};
        }
        if (!isLoopbackHost(mp->host) && c.metricsWebConfig.empty()) {
            return Error{"--metrics-listen " + c.metricsListen +
                         " is not a loopback address: refusing to serve /metrics without TLS "
                         "and credentials. Give --metrics-web-config FILE (tls_server_config plus "
                         "basic_auth_users, bearer_token_file or client_ca_file; docs/daemon.md)"};
        }
    }
    if (!c.metricsWebConfig.empty() && c.metricsListen.empty()) {
        return Error{"--metrics-web-config needs --metrics-listen"};
    }
    return {};
}

Result<DaemonConfig> parseDaemonArgs(int argc, char** argv, bool* helpShown) {
    DaemonConfig c;
    double spoolMb = static_cast<double>(c.spoolMaxBytes) / (1 << 20);
    std::string memAlarm;
    bool noGpu = false;
    CLI::App app{"runplaned: the Runplane node daemon (docs/daemon.md)", "runplaned"};
    app.add_option("--listen", c.listen, "gRPC listen address HOST:PORT (port 0: pick one)")
        ->capture_default_str();
    app.add_option("--state-dir", c.stateDir,
                   "spool and run records (default ~/.local/state/runplane)");
    app.add_option("--run-root", c.runRoot,
                   "confined run working directories (default <state-dir>/runs)");
    app.add_option("--sample-hz", c.sampleHz, "telemetry report rate, 0 < hz <= 10")
        ->capture_default_str();
    app.add_option("--spool-max-mb", spoolMb, "bound on the spool's stored records, MiB")
        ->capture_default_str();
    app.add_option("--spool-backlog-records", c.spoolBacklogRecords,
                   "records held in memory while the spool cannot be written (disk full); "
                   "beyond this the oldest are dropped and a gap event says so")
        ->capture_default_str();
    app.add_option("--tls-cert", c.tlsCert, "server certificate (PEM)");
    app.add_option("--tls-key", c.tlsKey, "server private key (PEM)");
    app.add_option("--tls-client-ca", c.tlsClientCa,
                   "CA bundle for client certificates (mutual TLS)");
    app.add_option("--token-file", c.tokenFile, "file holding the bearer token callers must send");
    app.add_flag("--require-tls", c.requireTls,
                 "demand TLS and authentication even on loopback (tests, shared hosts)");
    app.add_option("--metrics-listen", c.metricsListen,
                   "Prometheus /metrics on HOST:PORT (off loopback: needs --metrics-web-config)");
    app.add_option("--metrics-web-config", c.metricsWebConfig,
                   "exporter-toolkit style web config for /metrics: TLS, basic auth, bearer token");
    app.add_option("--auth-max-failures", c.authMaxFailures,
                   "failed authentications per peer host per minute before a lockout (0: off)")
        ->capture_default_str();
    app.add_option("--user", c.user,
                   "started as root: run as this user after reading credentials (default: "
                   "'runplane' if it exists)");
    app.add_option("--stall-seconds", c.stallSeconds,
                   "EVENT_STALL after this long without a progress line (0 = off)")
        ->capture_default_str();
    app.add_option(
        "--mem-alarm-bytes", memAlarm,
        "EVENT_MEMORY_ALARM when host used memory exceeds this (0 = off; suffixes K M G T)");
    app.add_option("--mem-alarm-seconds", c.memAlarmSeconds, "... for at least this long")
        ->capture_default_str();
    app.add_option("--node-id", c.nodeId, "node identity (default: hostname)");
    app.add_option("--role-table", c.roleTable,
                   "extra process-role rows (ROLE title|cmdline|comm GLOB), tried before the "
                   "built-in ones (docs/daemon.md, \"Process roles\")");
    bool noRoleMemory = false;
    app.add_flag("--no-role-memory", noRoleMemory,
                 "do not walk the process table for memory by role");
    bool noEngineMetrics = false;
    app.add_flag("--no-engine-metrics", noEngineMetrics,
                 "do not scrape the inference engines' /metrics found in the runs");
    app.add_option("--kernel-log", c.kernelLog,
                   "where host OOM kills of the runs' processes are read: auto (/dev/kmsg, else "
                   "syslog(2)), off, or a file the kernel log is written to (docs/daemon.md, "
                   "\"Kernel log\")")
        ->capture_default_str();
    app.add_option("--meminfo", c.meminfo,
                   "where host memory is read (a container's LXCFS view, a test's file)")
        ->capture_default_str();
    app.add_option("--supervisor", c.supervisorPath,
                   "runplane-supervisor executable (default: next to runplaned)");
    app.add_option("--max-request-bytes", c.maxRequestBytes, "largest request accepted")
        ->capture_default_str();
    app.add_option("--stop-grace-seconds", c.stopGraceSeconds,
                   "StopRun grace period when the request gives none")
        ->capture_default_str();
    app.add_flag("--no-gpu", noGpu, "do not query NVML");
    app.add_option("--log-level", c.logLevel, "debug, info, warn or error")->capture_default_str();
    app.add_option("--log-format", c.logFormat,
                   "text, journald (<N> priority prefixes, no timestamp) or auto (journald when "
                   "stderr is the systemd journal)")
        ->capture_default_str();
    app.set_version_flag("--version", versionLine("runplaned"));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        if (helpShown != nullptr) {
            *helpShown = true;
        }
        return Error{app.help()};
    } catch (const CLI::CallForVersion&) {
        if (helpShown != nullptr) {
            *helpShown = true;
        }
        return Error{versionLine("runplaned") + "\n"};
    } catch (const CLI::ParseError& e) {
        return Error{std::string(e.what())};
    }
    if (!(c.sampleHz > 0) || c.sampleHz > 10) {
        std::ostringstream s;
        s << "--sample-hz: " << c.sampleHz << " is outside 0 < hz <= 10";
        return Error{s.str()};
    }
    if (!(spoolMb >= 1)) {
        return Error{"--spool-max-mb: must be at least 1"};
    }
    c.spoolMaxBytes = static_cast<std::uint64_t>(spoolMb * (1 << 20));
    if (c.spoolBacklogRecords < 1) {
        return Error{"--spool-backlog-records: must be at least 1"};
    }
    if (!memAlarm.empty()) {
        char* end = nullptr;
        const double v = std::strtod(memAlarm.c_str(), &end);
        double mult = 1;
        const std::string suffix = end;
        if (suffix == "K" || suffix == "KiB") {
            mult = 1024.0;
        } else if (suffix == "M" || suffix == "MiB") {
            mult = 1024.0 * 1024;
        } else if (suffix == "G" || suffix == "GiB") {
            mult = 1024.0 * 1024 * 1024;
        } else if (suffix == "T" || suffix == "TiB") {
            mult = 1024.0 * 1024 * 1024 * 1024;
        } else if (suffix == "GB") {
            mult = 1e9;
        } else if (!suffix.empty()) {
            return Error{"--mem-alarm-bytes: '" + memAlarm + "' is not a byte count (e.g. 750GB)"};
        }
        if (end == memAlarm.c_str() || v < 0) {
            return Error{"--mem-alarm-bytes: '" + memAlarm + "' is not a byte count (e.g. 750GB)"};
        }
        c.memAlarmBytes = static_cast<std::uint64_t>(v * mult);
    }
    if (c.memAlarmSeconds < 0 || c.stallSeconds < 0) {
        return Error{"--mem-alarm-seconds and --stall-seconds must not be negative"};
    }
    if (c.maxRequestBytes < 1024 || c.maxRequestBytes > (1ull << 30)) {
        return Error{"--max-request-bytes: must be within 1 KiB .. 1 GiB"};
    }
    if (auto level = parseLogLevel(c.logLevel); !level) {
        return Error{level.error()};
    }
    if (auto format = parseLogFormat(c.logFormat); !format) {
        return Error{format.error()};
    }
    if (c.authMaxFailures < 0 || c.authMaxFailures > 100000) {
        return Error{"--auth-max-failures: must be within 0 .. 100000"};
    }
    c.gpuTelemetry = !noGpu;
    c.roleMemory = !noRoleMemory;
    c.engineMetrics = !noEngineMetrics;
    if (!c.roleTable.empty()) {
        if (auto table = RoleTable::load(c.roleTable); !table) {
            return Error{"--role-table: " + table.error()};
        }
    }
    if (c.stateDir.empty()) {
        c.stateDir = defaultStateDir();
    }
    if (c.runRoot.empty()) {
        c.runRoot = c.stateDir + "/runs";
    }
    if (c.nodeId.empty()) {
        char host[256] = {};
        ::gethostname(host, sizeof(host) - 1);
        c.nodeId = host;
    }
    return c;
}

}  // namespace runplane::agent
