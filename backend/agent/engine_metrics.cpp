// Inference engines' Prometheus metrics scraped into engine/... series (engine_metrics.h).
#include "backend/agent/engine_metrics.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

struct Gauge {
    std::string_view name;   // the engine's metric name (its source: docs/daemon.md)
    std::string_view field;  // the engine/... leaf, as the engines' log lines give it
};

// SGLang: python/sglang/srt/metrics/collector.py (docs/references/production_metrics.md);
// vLLM: vllm/engine/metrics.py (V0), vllm/v1/metrics/loggers.py (V1), docs "Production Metrics".
constexpr std::array<Gauge, 13> kGauges{{
    {"sglang:num_running_reqs", "running_requests"},
    {"sglang:num_queue_reqs", "queued_requests"},
    {"sglang:num_used_tokens", "kv_tokens"},
    {"sglang:token_usage", "kv_cache_usage"},
    {"sglang:gen_throughput", "gen_throughput"},
    {"sglang:cache_hit_rate", "cache_hit_rate"},
    {"vllm:num_requests_running", "running_requests"},
    {"vllm:num_requests_waiting", "queued_requests"},
    {"vllm:num_requests_swapped", "swapped_requests"},
    {"vllm:gpu_cache_usage_perc", "kv_cache_usage"},
    {"vllm:kv_cache_usage_perc", "kv_cache_usage"},
    {"vllm:cpu_cache_usage_perc", "cpu_kv_cache_usage"},
    {"vllm:gpu_prefix_cache_hit_rate", "prefix_cache_hit_rate"},
}};

// The labels that keep one engine's series apart, in the order they join the label.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kRankLabels{{
    {"engine", "engine"},
    {"dp_rank", "dp"},
    {"tp_rank", "tp"},
    {"pp_rank", "pp"},
}};

bool nameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool nameChar(char c) {
    return nameStart(c) || (c >= '0' && c <= '9');
}

bool parseValue(std::string_view tok, double& v) {
    if (tok == "NaN") {
        v = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (tok == "+Inf" || tok == "Inf") {
        v = std::numeric_limits<double>::infinity();
        return true;
    }
    if (tok == "-Inf") {
        v = -std::numeric_limits<double>::infinity();
        return true;
    }
    if (!tok.empty() && tok.front() == '+') {
        tok.remove_prefix(1);
    }
    const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    return ec == std::errc() && ptr == tok.data() + tok.size() && !tok.empty();
}

// One sample line; "" on success, else what was expected.
std::string parseLine(std::string_view s, PromSample& out) {
    std::size_t i = 0;
    if (i >= s.size() || !nameStart(s[i])) {
        return "expected a metric name";
    }
    while (i < s.size() && nameChar(s[i])) {
        ++i;
    }
    out.name = std::string(s.substr(0, i));
    if (i < s.size() && s[i] == '{') {
        ++i;
        while (true) {
            while (i < s.size() && s[i] == ' ') {
                ++i;
            }
            if (i < s.size() && s[i] == '}') {
                ++i;
                break;
            }
            const std::size_t k = i;
            while (i < s.size() && nameChar(s[i]) && s[i] != ':') {
                ++i;
            }
            if (i == k) {
                return "expected a label name at column " + std::to_string(i + 1);
            }
            const std::string key(s.substr(k, i - k));
            if (i >= s.size() || s[i] != '=') {
                return "expected '=' after label name at column " + std::to_string(i + 1);
            }
            if (++i >= s.size() || s[i] != '"') {
                return "expected '\"' at column " + std::to_string(i + 1);
            }
            ++i;
            std::string value;
            bool closed = false;
            while (i < s.size()) {
                const char c = s[i++];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\' && i < s.size()) {
                    const char e = s[i++];
                    value += e == 'n' ? '\n' : e;
                    continue;
                }
                value += c;
            }
            if (!closed) {
                return "unterminated label value";
            }
            if (out.labels.size() >= kMaxPromLabels) {
                return "more than " + std::to_string(kMaxPromLabels) + " labels";
            }
            out.labels[key] = std::move(value);
            if (i < s.size() && s[i] == ',') {
                ++i;
            }
        }
    }
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
        ++i;
    }
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') {
        ++j;
    }
    if (!parseValue(s.substr(i, j - i), out.value)) {
        return "expected a value at column " + std::to_string(i + 1);
    }
    return "";  // a timestamp may follow; it is not used
}

}  // namespace

std::vector<PromSample> parsePrometheusText(std::string_view text, std::size_t* skipped,
                                            std::string* firstError) {
    std::vector<PromSample> out;
    std::size_t bad = 0;
    std::size_t lineNo = 0;
    std::size_t start = 0;
    while (start < text.size() && out.size() < kMaxPromSamples) {
        auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            nl = text.size();
        }
        std::string_view line = text.substr(start, nl - start);
        start = nl + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        line = logfmt::trim(line);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        PromSample sample;
        const std::string why = parseLine(line, sample);
        if (!why.empty()) {
            if (bad++ == 0 && firstError != nullptr) {
                *firstError = "line " + std::to_string(lineNo) + ": " + why;
            }
            continue;
        }
        out.push_back(std::move(sample));
    }
    if (skipped != nullptr) {
        *skipped = bad;
    }
    return out;
}

std::vector<LogMetric> engineMetricsFromExposition(std::string_view text, int port) {
    std::vector<LogMetric> out;
    for (const auto& s : parsePrometheusText(text)) {
        const Gauge* g = nullptr;
        for (const auto& row : kGauges) {
            if (row.name == s.name) {
                g = &row;
                break;
            }
        }
        if (g == nullptr || !std::isfinite(s.value)) {
            continue;
        }
        std::string label = "port" + std::to_string(port);
        for (const auto& [key, part] : kRankLabels) {
            const auto it = s.labels.find(std::string(key));
            if (it == s.labels.end() || it->second.empty() || it->second.size() > 8 ||
                it->second.find_first_not_of("0123456789") != std::string::npos) {
                continue;
            }
            label += "." + std::string(part) + it->second;
        }
        out.push_back(LogMetric{engineSeries(label, g->field), s.value, -1});
    }
    return out;
}

std::vector<int> enginePortsFromArgv(const std::vector<std::string>& argv) {
    int defaultPort = 0;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.find("sglang.launch_server") != std::string::npos ||
            a.find("sglang/launch_server") != std::string::npos) {
            defaultPort = 30000;
        } else if (a.find("vllm.entrypoints") != std::string::npos ||
                   ((a == "vllm" || a.ends_with("/vllm")) && i + 1 < argv.size() &&
                    argv[i + 1] == "serve")) {
            defaultPort = 8000;
        }
    }
    if (defaultPort == 0) {
        return {};
    }
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string_view v;
        if (argv[i] == "--port" && i + 1 < argv.size()) {
            v = argv[i + 1];
        } else if (argv[i].starts_with("--port=")) {
            v = std::string_view(argv[i]).substr(7);
        } else {
            continue;
        }
        int port = 0;
        const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
        if (ec == std::errc() && ptr == v.data() + v.size() && port > 0 && port < 65536) {
            return {port};
        }
    }
    return {defaultPort};
}

Result<std::string> fetchMetrics(const std::string& host, int port, int timeoutMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    auto left = [&deadline] {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
        return static_cast<int>(std::max<long long>(ms, 0));
    };
    const std::string where = host + ":" + std::to_string(port) + "/metrics";
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
        return Error{where + ": not an IPv4 address"};
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Error{where + ": socket: " + std::strerror(errno)};
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    auto waitFor = [&](short events) -> bool {
        pollfd p{fd, events, 0};
        return ::poll(&p, 1, left()) == 1;
    };
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EINPROGRESS || !waitFor(POLLOUT)) {
            return Error{where + ": connect: " +
                         (errno == EINPROGRESS ? "timed out" : std::strerror(errno))};
        }
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            return Error{where + ": connect: " + std::strerror(err)};
        }
    }
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + host + ":" +
                                std::to_string(port) +
                                "\r\nAccept: text/plain\r\nConnection: close\r\n\r\n";
    std::size_t sent = 0;
    while (sent < request.size()) {
        const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EAGAIN && waitFor(POLLOUT)) {
            continue;
        } else {
            return Error{where + ": send failed"};
        }
    }
    std::string response;
    char buf[16384];
    while (true) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            response.append(buf, static_cast<std::size_t>(n));
            if (response.size() > kMaxScrapeBytes) {
                return Error{where + ": more than " + std::to_string(kMaxScrapeBytes) + " bytes"};
            }
            continue;
        }
        if (n == 0) {
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN && left() > 0 && waitFor(POLLIN)) {
            continue;
        }
        return Error{where + ": " + (errno == EAGAIN ? "timed out" : std::strerror(errno))};
    }
    const auto headerEnd = response.find("\r\n\r\n");
    if (!response.starts_with("HTTP/") || headerEnd == std::string::npos) {
        return Error{where + ": not an HTTP response"};
    }
    const auto sp = response.find(' ');
    if (sp == std::string::npos || response.compare(sp + 1, 3, "200") != 0) {
        return Error{where + ": " +
                     response.substr(0, std::min(response.find('\r'), std::size_t{80}))};
    }
    std::string head = response.substr(0, headerEnd);
    for (auto& c : head) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (head.find("transfer-encoding: chunked") != std::string::npos) {
        return Error{where + ": chunked response to an HTTP/1.0 request"};
    }
    return response.substr(headerEnd + 4);
}

bool isEngineExposition(std::string_view text) {
    for (const auto& sample : parsePrometheusText(text)) {
        if (sample.name.starts_with("sglang:") || sample.name.starts_with("vllm:")) {
            return true;
        }
    }
    return false;
}

EngineScraper::EngineScraper(std::string host, int timeoutMs, int probeTimeoutMs)
    : m_host(std::move(host)),
      m_timeoutMs(timeoutMs),
      m_probeTimeoutMs(probeTimeoutMs),
      m_thread([this] { loop(); }) {}

EngineScraper::~EngineScraper() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void EngineScraper::setTargets(std::vector<Target> targets, std::chrono::milliseconds period) {
    {
        std::lock_guard lock(m_mutex);
        m_targets = std::move(targets);
        m_period = std::max(period, std::chrono::milliseconds(100));
        // Verdicts live as long as their (pid, port) is a target: a closed port or an exited
        // process is forgotten, so the map stays as small as the target list.
        std::map<ProbeKey, Verdict> kept;
        for (const auto& t : m_targets) {
            if (t.pid == 0) {
                continue;
            }
            const ProbeKey key{t.pid, t.host.empty() ? m_host : t.host, t.port};
            const auto it = m_verdicts.find(key);
            if (it != m_verdicts.end()) {
                kept.insert(*it);
            }
        }
        m_verdicts = std::move(kept);
    }
    m_cv.notify_all();
}

std::vector<EngineScraper::Scrape> EngineScraper::take() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_results, {});
}

std::map<int, std::string> EngineScraper::lastErrors() const {
    std::lock_guard lock(m_mutex);
    return m_errors;
}

std::vector<EngineScraper::Probe> EngineScraper::takeProbes() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_probes, {});
}

std::size_t EngineScraper::probeCount() const {
    std::lock_guard lock(m_mutex);
    return m_probeCount;
}

void EngineScraper::loop() {
    using State = Verdict::State;
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        if (m_targets.empty()) {
            m_cv.wait(lock, [this] { return m_stop || !m_targets.empty(); });
            continue;
        }
        const auto started = std::chrono::steady_clock::now();
        const auto period = m_period;
        // What to fetch this round: every named port; of the ports the socket scan found, the
        // known endpoints and (at most kMaxProbesPerRound) those whose probe is due.
        struct Work {
            Target target;
            bool probe = false;
        };
        std::vector<Work> work;
        std::size_t probes = 0;
        for (const auto& t : m_targets) {
            if (t.pid == 0) {
                work.push_back({t, false});
                continue;
            }
            const Verdict& v =
                m_verdicts[ProbeKey{t.pid, t.host.empty() ? m_host : t.host, t.port}];
            if (v.state == State::Metrics) {
                work.push_back({t, false});
            } else if (v.state != State::NotMetrics && started >= v.next &&
                       probes < kMaxProbesPerRound) {
                work.push_back({t, true});
                ++probes;
            }
        }
        lock.unlock();
        std::vector<Scrape> results;
        std::map<int, std::string> errors;
        std::vector<Probe> probed;
        for (const auto& [t, probe] : work) {
            const std::string& host = t.host.empty() ? m_host : t.host;
            auto body = fetchMetrics(host, t.port, probe ? m_probeTimeoutMs : m_timeoutMs);
            if (probe) {
                Probe p{t.pid, host, t.port, false, true, ""};
                if (body && isEngineExposition(*body)) {
                    p.metrics = true;
                } else if (body) {
                    p.why = "HTTP /metrics without sglang: or vllm: samples";
                } else {
                    p.why = body.error();
                    p.final = !p.why.ends_with("timed out");
                }
                probed.push_back(p);
                if (!p.metrics) {
                    continue;
                }
            } else if (!body) {
                errors[t.port] = body.error();
                continue;
            }
            errors[t.port] = "";
            results.push_back(Scrape{t.runId, engineMetricsFromExposition(*body, t.port)});
        }
        lock.lock();
        const auto now = std::chrono::steady_clock::now();
        for (auto& p : probed) {
            Verdict& v = m_verdicts[ProbeKey{p.pid, p.host, p.port}];
            ++v.probes;
            if (p.metrics) {
                v.state = State::Metrics;
            } else if (p.final || v.probes >= kMaxSilentProbes) {
                v.state = State::NotMetrics;
                p.final = true;
            } else {
                v.state = State::Silent;
                v.next = now + std::chrono::seconds(60) * (1 << (v.probes - 1));
            }
            ++m_probeCount;
            if (m_probes.size() < 1024) {
                m_probes.push_back(std::move(p));
            }
        }
        for (auto& r : results) {
            if (m_results.size() < 4096) {
                m_results.push_back(std::move(r));
            }
        }
        for (auto& [port, e] : errors) {
            m_errors[port] = std::move(e);
        }
        m_cv.wait_until(lock, started + period, [this] { return m_stop; });
    }
}

}  // namespace runplane::agent
