#include "backend/agent/log_metrics.h"

#include <array>
#include <charconv>
#include <cstdlib>

#include "backend/agent/python_literal.h"

namespace runplane::agent {
namespace {

// `<keyword> <id>: {...}` line kinds (frameworks.md §5).
constexpr std::array<std::string_view, 7> kMetricKeywords = {
    "step", "critic-step", "rollout", "perf", "eval", "multi_turn", "passrate"};

// Substrings that mark an NCCL error (as opposed to a warning).
constexpr std::array<std::string_view, 9> kNcclErrorMarks = {
    "ncclSystemError",
    "ncclInternalError",
    "ncclUnhandledCudaError",
    "ncclInvalidUsage",
    "ncclRemoteError",
    "ncclInvalidArgument",
    "Bad address",
    "Watchdog caught collective operation timeout",
    "NCCL communicator was aborted"};

/// A JSON line's step: its integer part, or -1 (unknown) when it is NaN or beyond int64_t
/// (1e21 or a huge Python int: the plain cast is undefined behaviour; found by fuzz_log_line).
std::int64_t stepOf(double value) {
    constexpr double kTwoPow63 = 9223372036854775808.0;  // the first double past INT64_MAX
    return value >= -kTwoPow63 && value < kTwoPow63 ? static_cast<std::int64_t>(value) : -1;
}

std::string stripAnsi(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
            i += 2;
            while (i < line.size() && !((line[i] >= '@' && line[i] <= '~'))) {
                ++i;
            }
            continue;
        }
        out += line[i];
    }
    return out;
}

bool isKeywordChar(char c) {
    return (c >= 'a' && c <= 'z') || c == '_' || c == '-';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

// Removes a leading Ray actor prefix "(Name pid=123) " or "(Name pid=123, ip=10.0.0.1) ".
std::string_view stripRayPrefix(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '(') {
        const auto close = s.find(") ");
        if (close != std::string_view::npos &&
            s.substr(0, close).find("pid=") != std::string_view::npos) {
            return trim(s.substr(close + 2));
        }
    }
    return s;
}

// The metric-line form: finds "<kw> <N>: {" and parses the dict. Returns true when the line had
// that form (even if the payload failed to parse: then out.warning is set).
bool parseMetricLine(std::string_view line, ParsedLogLine& out) {
    std::size_t search = 0;
    while (true) {
        const auto colon = line.find(": {", search);
        if (colon == std::string_view::npos) {
            return false;
        }
        search = colon + 1;
        std::size_t i = colon;
        while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9') {
            --i;
        }
        if (i == colon || i == 0 || line[i - 1] != ' ') {
            continue;
        }
        const std::size_t digitsBegin = i;
        std::size_t k = i - 1;  // the space
        while (k > 0 && isKeywordChar(line[k - 1])) {
            --k;
        }
        const std::string_view keyword = line.substr(k, digitsBegin - 1 - k);
        if (k > 0 && line[k - 1] != ' ' && line[k - 1] != ']' && line[k - 1] != ')') {
            continue;
        }
        bool known = false;
        for (auto kw : kMetricKeywords) {
            known = known || kw == keyword;
        }
        if (!known) {
            continue;
        }
        const std::int64_t id = std::strtoll(
            std::string(line.substr(digitsBegin, colon - digitsBegin)).c_str(), nullptr, 10);
        const std::size_t brace = colon + 2;
        std::size_t used = 0;
        auto value = parsePythonLiteralPrefix(line.substr(brace), &used);
        out.progress = true;
        if (!value) {
            // Columns are reported relative to the whole line.
            const auto& msg = value.error();
            std::size_t col = 0;
            if (msg.rfind("column ", 0) == 0) {
                col = std::strtoull(msg.c_str() + 7, nullptr, 10);
                out.warning = std::string(keyword) + " " + std::to_string(id) + ": column " +
                              std::to_string(col + brace) + msg.substr(msg.find(':'));
            } else {
                out.warning = msg;
            }
            return true;
        }
        std::vector<std::pair<std::string, double>> flat;
        flattenNumeric(*value, "", flat);
        for (auto& [name, v] : flat) {
            out.metrics.push_back(LogMetric{std::move(name), v, id});
        }
        return true;
    }
}

// JSON lines: {"metric": "train/loss", "value": 0.1, "step": 3}, the smoke workload's
// {"kind": "step", "id": 3, "metrics": {...}}, or a flat {"train/loss": 0.1, "step": 3}.
bool parseJsonLine(std::string_view line, ParsedLogLine& out) {
    if (line.size() < 2 || line.front() != '{' || line.back() != '}') {
        return false;
    }
    auto value = parsePythonLiteral(line);
    if (!value || value->kind != PyValue::Kind::Dict) {
        return false;
    }
    const PyValue* metricName = nullptr;
    const PyValue* metricValue = nullptr;
    const PyValue* metrics = nullptr;
    std::int64_t step = -1;
    for (const auto& [k, v] : value->entries) {
        if (k.kind != PyValue::Kind::String) {
            continue;
        }
        const std::string& key = k.text;
        if ((key == "step" || key == "_step" || key == "id" || key == "global_step" ||
             key == "iteration") &&
            (v.kind == PyValue::Kind::Int || v.kind == PyValue::Kind::Float)) {
            step = stepOf(v.asDouble());
        } else if ((key == "metric" || key == "name") && v.kind == PyValue::Kind::String) {
            metricName = &v;
        } else if (key == "value" && v.isNumeric()) {
            metricValue = &v;
        } else if (key == "metrics" && v.kind == PyValue::Kind::Dict) {
            metrics = &v;
        }
    }
    std::vector<std::pair<std::string, double>> flat;
    if (metricName != nullptr && metricValue != nullptr) {
        flat.emplace_back(metricName->text, metricValue->asDouble());
    } else if (metrics != nullptr) {
        flattenNumeric(*metrics, "", flat);
    } else {
        for (const auto& [k, v] : value->entries) {
            if (k.kind == PyValue::Kind::String &&
                (k.text == "step" || k.text == "_step" || k.text == "id" ||
                 k.text == "global_step" || k.text == "iteration" || k.text == "_timestamp" ||
                 k.text == "_runtime")) {
                continue;
            }
            flattenNumeric(v, k.keyText(), flat);
        }
    }
    if (flat.empty()) {
        return false;
    }
    for (auto& [name, v] : flat) {
        out.metrics.push_back(LogMetric{std::move(name), v, step});
    }
    out.progress = true;
    return true;
}

void parseMarkers(std::string_view line, ParsedLogLine& out) {
    if (const auto p = line.find("[runplane-phase]"); p != std::string_view::npos) {
        std::string_view rest = trim(line.substr(p + 16));
        std::size_t n = 0;
        while (n < rest.size() && (isKeywordChar(rest[n]) || (rest[n] >= '0' && rest[n] <= '9'))) {
            ++n;
        }
        if (n > 0) {
            LogEvent ev;
            ev.kind = LogEventKind::Phase;
            ev.attrs["phase"] = std::string(rest.substr(0, n));
            ev.attrs["source"] = "marker";
            ev.message = "phase " + ev.attrs["phase"];
            out.events.push_back(std::move(ev));
            out.progress = true;
        }
    }
    if (const auto p = line.find("Timer "); p != std::string_view::npos) {
        std::string_view rest = line.substr(p + 6);
        const auto sp = rest.find(' ');
        if (sp != std::string_view::npos && sp > 0) {
            const std::string_view name = rest.substr(0, sp);
            const std::string_view tail = rest.substr(sp + 1);
            const bool start = tail.rfind("start", 0) == 0;
            const bool end = tail.rfind("end", 0) == 0;
            if (start || end) {
                out.progress = true;
                const std::string phase = phaseForTimer(name);
                if (end) {
                    if (const auto e = tail.find("elapsed: "); e != std::string_view::npos) {
                        const double secs =
                            std::strtod(std::string(tail.substr(e + 9)).c_str(), nullptr);
                        out.metrics.push_back(
                            LogMetric{"timer/" + std::string(name) + "_seconds", secs, -1});
                    }
                }
                if (!phase.empty()) {
                    LogEvent ev;
                    ev.kind = LogEventKind::Phase;
                    ev.attrs["phase"] = phase;
                    ev.attrs["timer"] = std::string(name);
                    ev.attrs["edge"] = start ? "start" : "end";
                    ev.attrs["source"] = "timer";
                    ev.message = "timer " + std::string(name) + (start ? " start" : " end");
                    out.events.push_back(std::move(ev));
                }
            }
        }
    }
    if (line.find("NCCL") != std::string_view::npos ||
        line.find("nccl") != std::string_view::npos ||
        line.find("Bad address") != std::string_view::npos ||
        line.find("Watchdog") != std::string_view::npos) {
        for (auto mark : kNcclErrorMarks) {
            if (line.find(mark) != std::string_view::npos) {
                LogEvent ev;
                ev.kind = LogEventKind::NcclError;
                ev.attrs["match"] = std::string(mark);
                ev.message = std::string(trim(line.substr(0, 1024)));
                out.events.push_back(std::move(ev));
                return;
            }
        }
        if (line.find("NCCL WARN") != std::string_view::npos) {
            LogEvent ev;
            ev.kind = LogEventKind::NcclWarning;
            ev.attrs["match"] = "NCCL WARN";
            ev.message = std::string(trim(line.substr(0, 1024)));
            out.events.push_back(std::move(ev));
        }
    }
}

/// The number right after `label` in `line` (spaces skipped), or false. `%` is accepted as a
/// suffix by the caller.
bool numberAfter(std::string_view line, std::string_view label, double& value,
                 std::size_t* end = nullptr) {
    const auto p = line.find(label);
    if (p == std::string_view::npos) {
        return false;
    }
    std::size_t i = p + label.size();
    while (i < line.size() && line[i] == ' ') {
        ++i;
    }
    const char* first = line.data() + i;
    const char* last = line.data() + line.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr == first) {
        return false;
    }
    if (end != nullptr) {
        *end = std::size_t(ptr - line.data());
    }
    return true;
}

/// Engine-side scheduler lines (SGLang's `Decode batch. #running-req: 39, #token: 12345, token
/// usage: 0.45, ... gen throughput (token/s): 1855.00, #queue-req: 0` and its `Prefill batch.`
/// twin; vLLM's `Avg prompt throughput: 120.3 tokens/s, Avg generation throughput: 1855.2
/// tokens/s, Running: 39 reqs, Waiting: 0 reqs, GPU KV cache usage: 45.2%`, `Pending:` in older
/// versions). KV-cache usage is a fraction 0..1 for both engines.
bool parseEngineLine(std::string_view line, ParsedLogLine& out) {
    const bool sglang = line.find("Decode batch") != std::string_view::npos ||
                        line.find("Prefill batch") != std::string_view::npos;
    const bool vllm = line.find("Avg generation throughput:") != std::string_view::npos ||
                      line.find("GPU KV cache usage:") != std::string_view::npos;
    if (!sglang && !vllm) {
        return false;
    }
    const std::size_t before = out.metrics.size();
    auto add = [&](std::string_view label, const char* series, double scale = 1.0) {
        double v = 0;
        if (numberAfter(line, label, v)) {
            out.metrics.push_back(LogMetric{series, v * scale, -1});
        }
    };
    if (sglang) {
        add("#running-req:", "engine/running_requests");
        add("#queue-req:", "engine/queued_requests");
        add("#token:", "engine/kv_tokens");
        add("token usage:", "engine/kv_cache_usage");
        add("gen throughput (token/s):", "engine/gen_throughput");
        add("#new-token:", "engine/prefill_tokens");
    } else {
        add("Avg prompt throughput:", "engine/prompt_throughput");
        add("Avg generation throughput:", "engine/gen_throughput");
        add("Running:", "engine/running_requests");
        add("Waiting:", "engine/queued_requests");
        add("Pending:", "engine/queued_requests");
        add("GPU KV cache usage:", "engine/kv_cache_usage", 0.01);
    }
    if (out.metrics.size() == before) {
        return false;
    }
    out.progress = true;
    return true;
}

}  // namespace

std::string phaseForTimer(std::string_view timer) {
    if (timer == "update_weights" || timer == "update_weights_implementation" ||
        timer == "weight_sync") {
        return "weight_sync";
    }
    if (timer == "actor_train" || timer == "train" || timer == "critic_train") {
        return "train";
    }
    if (timer == "generate" || timer == "rollout" || timer == "rollout_generate") {
        return "rollout";
    }
    if (timer == "eval" || timer == "eval_rollout") {
        return "eval";
    }
    if (timer == "load" || timer == "load_checkpoint" || timer == "wake_up") {
        return "load";
    }
    return "";
}

ParsedLogLine parseLogLine(std::string_view rawLine) {
    ParsedLogLine out;
    std::string cleaned;
    std::string_view line = rawLine;
    if (line.find('\x1b') != std::string_view::npos) {
        cleaned = stripAnsi(line);
        line = cleaned;
    }
    if (line.size() > (1u << 20)) {
        out.warning = "line longer than 1 MiB ignored";
        return out;
    }
    const std::string_view body = stripRayPrefix(line);
    if (!parseMetricLine(line, out) && !parseEngineLine(body, out)) {
        parseJsonLine(body, out);
    }
    if (out.metrics.empty() && out.warning.empty()) {
        if (const auto p = line.find(" skipped: "); p != std::string_view::npos) {
            const auto e = line.rfind("eval ", p);
            if (e != std::string_view::npos) {
                LogEvent ev;
                ev.kind = LogEventKind::Info;
                ev.message = std::string(trim(line.substr(e)));
                ev.attrs["what"] = "eval_skipped";
                out.events.push_back(std::move(ev));
            }
        }
    }
    parseMarkers(line, out);
    return out;
}

}  // namespace runplane::agent
