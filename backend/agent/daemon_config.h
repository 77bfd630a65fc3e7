#pragma once
// runplaned's configuration (command-line flags, docs/daemon.md) and its security rules.

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace runplane::agent {

/// Every flag of runplaned. Plain value type.
struct DaemonConfig {
    std::string listen = "127.0.0.1:7070";        // --listen HOST:PORT (port 0 = pick one)
    std::string stateDir;                         // --state-dir (default ~/.local/state/runplane)
    std::string runRoot;                          // --run-root (default <state-dir>/runs)
    double sampleHz = 1.0;                        // --sample-hz (max 10)
    std::uint64_t spoolMaxBytes = 256ull << 20;   // --spool-max-mb
    std::uint64_t spoolBacklogRecords = 100'000;  // --spool-backlog-records (disk full)
    std::string tlsCert, tlsKey, tlsClientCa;     // --tls-cert --tls-key --tls-client-ca
    std::string tokenFile;                        // --token-file
    bool requireTls = false;                      // --require-tls: the rule applies on loopback
    std::string metricsListen;                    // --metrics-listen HOST:PORT ("" = off)
    std::string metricsWebConfig;                 // --metrics-web-config FILE (TLS, auth)
    int authMaxFailures = 10;                     // --auth-max-failures per minute (0 = off)
    std::string user;                             // --user: drop root to this account
    double stallSeconds = 600;                    // --stall-seconds (0 = off)
    std::uint64_t memAlarmBytes = 0;              // --mem-alarm-bytes (0 = off)
    double memAlarmSeconds = 60;                  // --mem-alarm-seconds
    std::string nodeId;                           // --node-id (default hostname)
    std::string supervisorPath;                   // --supervisor (default next to runplaned)
    std::uint64_t maxRequestBytes = 4ull << 20;   // --max-request-bytes
    double stopGraceSeconds = 10;                 // --stop-grace-seconds (StopRun default)
    bool gpuTelemetry = true;                     // --no-gpu turns it off
    std::string roleTable;                        // --role-table FILE: extra process-role rows
    bool roleMemory = true;                       // --no-role-memory turns the role walk off
    bool engineMetrics = true;                    // --no-engine-metrics: no /metrics scrapes
    std::string kernelLog = "auto";               // --kernel-log auto|off|FILE (host OOM kills)
    std::string meminfo = "/proc/meminfo";        // --meminfo FILE (host memory readings)
    unsigned workThreads = 4;
    std::string logLevel = "info";   // --log-level debug|info|warn|error
    std::string logFormat = "auto";  // --log-format auto|text|journald
};

/// Parses argv; errors name the flag ("--sample-hz: 20 is above the maximum of 10").
/// `--help` yields an Error whose message is the usage text and sets *helpShown.
Result<DaemonConfig> parseDaemonArgs(int argc, char** argv, bool* helpShown);

/// Splits "HOST:PORT" / "[v6]:PORT"; error names the flag.
struct HostPort {
    std::string host;
    int port = 0;
};
Result<HostPort> parseHostPort(const std::string& text, const std::string& flag);

/// True for 127.0.0.0/8, ::1, "localhost".
bool isLoopbackHost(const std::string& host);

/// The security rule: loopback needs nothing (unless --require-tls); any other address needs
/// --tls-cert and --tls-key, and --token-file or --tls-client-ca. Also checks that the named files
/// are readable. /metrics off loopback needs --metrics-web-config (its TLS and credentials are
/// checked when it is loaded, metrics_web_config.h).
Status checkSecurity(const DaemonConfig& config);

/// Reads the bearer token (first line, trimmed; at least 16 characters). Error names the file.
Result<std::string> readTokenFile(const std::string& path);

}  // namespace runplane::agent
