#pragma once
// Inference engines' own Prometheus metrics (issue #42): SGLang (`--enable-metrics`) and vLLM
// serve `/metrics` in the Prometheus text exposition format on their API port. The daemon finds
// the ports from the command lines of the processes in each run's tree (`--port N`; the
// engines' defaults 30000 / 8000 where the engine's command line names none) and from the run's
// environment (`RUNPLANE_ENGINE_METRICS_PORTS=30000,30001`), and from the listening sockets of
// the node's engine processes (proc_sockets.h; each such port probed once), scrapes them at its
// report rate and stores a chosen set of gauges as `engine/port<P>[.dp<D>][.tp<T>]/<field>`
// series of the run, with the same field names the engines' log lines give
// (log_formats/engines.cpp), so the log lines are the fallback for the same series.
// docs/daemon.md "Engine metrics".

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/agent/log_metrics.h"
#include "common/result.h"

namespace runplane::agent {

/// One sample of the text exposition format: `name{label="v",...} value [timestamp]`.
struct PromSample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

/// Parses the text exposition format (comments, HELP/TYPE lines, label escapes, NaN/+Inf/-Inf,
/// optional timestamps). A malformed line is skipped and counted in *skipped; the first one is
/// named in *firstError ("line 12: expected '=' after label name"). Bounded: at most
/// kMaxSamples samples and kMaxLabels labels a sample.
std::vector<PromSample> parsePrometheusText(std::string_view text, std::size_t* skipped = nullptr,
                                            std::string* firstError = nullptr);
constexpr std::size_t kMaxPromSamples = 100'000;
constexpr std::size_t kMaxPromLabels = 32;

/// The chosen gauges of one scrape as engine/<label>/<field> metrics (step -1). `port` goes
/// first in the label; the sample's dp_rank / tp_rank / pp_rank / engine labels follow.
std::vector<LogMetric> engineMetricsFromExposition(std::string_view text, int port);

/// The /metrics ports an engine command line names: `--port N` / `--port=N` of an SGLang or vLLM
/// server (`sglang.launch_server`, `vllm serve`, `vllm.entrypoints...`), else its default port;
/// empty for any other command line.
std::vector<int> enginePortsFromArgv(const std::vector<std::string>& argv);

/// True when an exposition holds a sample named `sglang:...` or `vllm:...` (an engine's /metrics,
/// not some other HTTP server's).
bool isEngineExposition(std::string_view text);

/// GET http://host:port/metrics with a deadline; the body of a 200, else an error naming why.
/// Bounded: at most kMaxScrapeBytes are read.
Result<std::string> fetchMetrics(const std::string& host, int port, int timeoutMs);
constexpr std::size_t kMaxScrapeBytes = 8 << 20;

/// Scrapes targets on its own thread (a slow engine never holds up the collector): set the
/// targets, take what the last scrapes gave.
class EngineScraper {
  public:
    struct Target {
        std::string runId;
        int port = 0;
        std::string host{};  // "" = the scraper's host
        /// Non-zero: a port the socket scan found listening in this engine process
        /// (proc_sockets.h), not a port an engine's command line names. It is probed first
        /// (probeTimeoutMs) and scraped only if it answers /metrics with `sglang:` or `vllm:`
        /// names; the verdict is kept per (pid, port) while the target stays.
        pid_t pid = 0;
    };
    struct Scrape {
        std::string runId;
        std::vector<LogMetric> metrics;
    };
    /// A probe's verdict, for the daemon's log (takeProbes).
    struct Probe {
        pid_t pid = 0;
        std::string host;
        int port = 0;
        bool metrics = false;  // an engine's /metrics: scraped from now on
        bool final = true;     // false: silent (timed out), probed again later
        std::string why;       // what it answered when not an engine's /metrics
    };
    explicit EngineScraper(std::string host = "127.0.0.1", int timeoutMs = 1000,
                           int probeTimeoutMs = 250);
    ~EngineScraper();
    EngineScraper(const EngineScraper&) = delete;
    EngineScraper& operator=(const EngineScraper&) = delete;

    /// Replaces the targets; `period` is the time between two scrapes of the same target.
    void setTargets(std::vector<Target> targets, std::chrono::milliseconds period);
    /// The scrapes finished since the last call.
    std::vector<Scrape> take();
    /// Per port, the last failure ("" after a success); for the daemon's log.
    std::map<int, std::string> lastErrors() const;
    /// The probes finished since the last call.
    std::vector<Probe> takeProbes();
    /// Probes since the start (each one connection to a port found by the socket scan).
    std::size_t probeCount() const;

    /// A silent port (the probe timed out) is probed again after 60 s, 120 s, then given up.
    static constexpr int kMaxSilentProbes = 3;
    /// At most this many probes a round, so that scrapes of known endpoints go on.
    static constexpr std::size_t kMaxProbesPerRound = 16;

  private:
    struct Verdict {
        enum class State { Unknown, Metrics, NotMetrics, Silent } state = State::Unknown;
        int probes = 0;
        std::chrono::steady_clock::time_point next{};
    };
    using ProbeKey = std::tuple<pid_t, std::string, int>;
    void loop();
    std::string m_host;
    int m_timeoutMs;
    int m_probeTimeoutMs;
    std::map<ProbeKey, Verdict> m_verdicts;  // under m_mutex; pruned to the targets'
    std::vector<Probe> m_probes;
    std::size_t m_probeCount = 0;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    std::vector<Target> m_targets;
    std::chrono::milliseconds m_period{1000};
    std::vector<Scrape> m_results;
    std::map<int, std::string> m_errors;
    std::thread m_thread;
};

}  // namespace runplane::agent
