// The collector's engine-metrics part (issue 42): every few seconds the /metrics ports of each
// running run's engines are looked for (the command lines of the processes in its tree,
// RUNPLANE_ENGINE_METRICS_PORTS in their environment, and the command lines and listening
// sockets of the engine processes the role walk found anywhere on the node); the scraper's thread
// fetches them at the report rate, and each report stores what came back as the run's engine/...
// series.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "backend/agent/collector.h"
#include "common/telemetry/series.h"

namespace runplane::agent {
namespace {

constexpr std::int64_t kDiscoveryPeriodNs = 5'000'000'000;
// The ports the socket scan of the engine processes (proc_sockets.h, SocketScanLimits' defaults:
// 4,096 fds read a process, 4 MiB of each table, 256 listening sockets) adds to the targets.
constexpr std::size_t kMaxSocketTargets = 128;
constexpr std::size_t kMaxProcFileBytes = 256 * 1024;

// A NUL-separated /proc file (cmdline, environ), bounded.
std::vector<std::string> procStrings(int pid, const char* file) {
    std::vector<std::string> out;
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + file, std::ios::binary);
    if (!in) {
        return out;
    }
    std::string data(kMaxProcFileBytes, '\0');
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<std::size_t>(in.gcount()));
    std::size_t start = 0;
    while (start < data.size()) {
        auto end = data.find('\0', start);
        if (end == std::string::npos) {
            end = data.size();
        }
        out.emplace_back(data, start, end - start);
        start = end + 1;
    }
    return out;
}

// RUNPLANE_ENGINE_METRICS_PORTS=30000,30001
void portsFromEnviron(int pid, std::set<int>& ports) {
    constexpr std::string_view kVar = "RUNPLANE_ENGINE_METRICS_PORTS=";
    for (const auto& kv : procStrings(pid, "environ")) {
        if (!kv.starts_with(kVar)) {
            continue;
        }
        std::string_view list = std::string_view(kv).substr(kVar.size());
        while (!list.empty()) {
            const auto comma = list.find(',');
            const std::string_view item = list.substr(0, comma);
            int port = 0;
            const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), port);
            if (ec == std::errc() && ptr == item.data() + item.size() && port > 0 && port < 65536) {
                ports.insert(port);
            }
            list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
    }
}

}  // namespace

void Collector::scrapeEngines(std::int64_t nowNs) {
    if (!m_engineScraper) {
        return;
    }
    if (nowNs - m_engineDiscoveryNs >= kDiscoveryPeriodNs || m_engineDiscoveryNs == 0) {
        m_engineDiscoveryNs = nowNs;
        std::vector<EngineScraper::Target> targets;
        std::set<int> taken;  // one run per port
        for (const auto& [id, track] : m_tracks) {
            if (track.ended) {
                continue;
            }
            std::set<int> ports;
            for (const int pid : track.pids) {
                for (const int p : enginePortsFromArgv(procStrings(pid, "cmdline"))) {
                    ports.insert(p);
                }
                portsFromEnviron(pid, ports);
            }
            for (const int p : ports) {
                if (taken.insert(p).second && targets.size() < 64) {
                    targets.push_back({id, p});
                }
            }
        }
        // The engines the role walk found on the node (SGLang / vLLM servers started by Ray or
        // by hand, outside any run's process tree): the ports of their own command lines. Their
        // series go to the one live run of this daemon, else to the node (run id "").
        if (m_roleMemory) {
            std::string owner;
            int live = 0;
            for (const auto& [id, track] : m_tracks) {
                if (!track.ended) {
                    owner = id;
                    ++live;
                }
            }
            if (live != 1) {
                owner.clear();
            }
            const std::vector<pid_t> enginePids = m_roleMemory->enginePids();
            for (const pid_t pid : enginePids) {
                for (const int p : enginePortsFromArgv(procStrings(pid, "cmdline"))) {
                    if (taken.insert(p).second && targets.size() < 64) {
                        targets.push_back({owner, p});
                    }
                }
            }
            // The ports the same processes listen on (proc_sockets.h): an engine whose HTTP
            // server a Ray actor started in-process or as a child, on a port chosen at run
            // time, names none. Each is probed once (EngineScraper) before it is scraped; a
            // port a command line named is not scanned again.
            std::size_t socketTargets = 0;
            for (const auto& l : m_engineSockets.scan(enginePids)) {
                const std::string host = connectAddressOf(l.socket);
                if (taken.count(l.socket.port) != 0) {
                    // A port a command line named: connect where it listens (`--host 10.0.0.5`
                    // binds no loopback address).
                    for (auto& t : targets) {
                        if (t.pid == 0 && t.port == l.socket.port && t.host.empty() &&
                            !host.empty() && host != "127.0.0.1") {
                            t.host = host;
                        }
                    }
                    continue;
                }
                if (host.empty() || socketTargets >= kMaxSocketTargets) {
                    continue;
                }
                taken.insert(l.socket.port);
                targets.push_back({owner, l.socket.port, host, l.pid});
                ++socketTargets;
            }
        }
        // The target list is logged when it changes (which port, found how).
        std::string described;
        for (const auto& t : targets) {
            described += (described.empty() ? "" : ", ") +
                         (t.host.empty() ? std::string("127.0.0.1") : t.host) + ":" +
                         std::to_string(t.port) +
                         (t.pid == 0 ? " (command line or environment)"
                                     : " (socket of pid " + std::to_string(t.pid) + ")");
        }
        if (described != m_engineTargetsLogged) {
            m_logger.info("engine metrics: targets: " + (described.empty() ? "none" : described));
            m_engineTargetsLogged = described;
        }
        const auto period = std::chrono::milliseconds(
            static_cast<std::int64_t>(1000.0 / std::max(reportHz(), 0.01)));
        m_engineScraper->setTargets(std::move(targets), period);
    }
    for (auto& scrape : m_engineScraper->take()) {
        if (!scrape.runId.empty() && m_tracks.count(scrape.runId) == 0) {
            continue;
        }
        for (const auto& m : scrape.metrics) {
            addSample(nowNs, scrape.runId, m.series, telemetry::unitOf(m.series), m.value, m.value,
                      m.value, m.step);
        }
    }
    for (const auto& p : m_engineScraper->takeProbes()) {
        const std::string where = "engine metrics: probe of pid " + std::to_string(p.pid) + " " +
                                  p.host + ":" + std::to_string(p.port) + ": ";
        m_logger.info(where + (p.metrics ? "an engine's /metrics, scraped"
                               : p.final
                                   ? "not an engine's /metrics (" + p.why + "), not probed again"
                                   : "silent (" + p.why + "), probed again later"));
    }
    // A port's failure is logged when it changes (an engine still starting is not news twice).
    for (const auto& [port, error] : m_engineScraper->lastErrors()) {
        auto& logged = m_engineErrorsLogged[port];
        if (logged != error) {
            if (!error.empty()) {
                m_logger.info("engine metrics: " + error);
            }
            logged = error;
        }
    }
}

}  // namespace runplane::agent
