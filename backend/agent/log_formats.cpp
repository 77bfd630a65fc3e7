// The table of log formats (one row per format) and the helpers the recognizers share.
#include "backend/agent/log_formats.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace runplane::agent {

// ONE table: the classifier (log_metrics.cpp) builds its RE2::Set from the triggers (matched on
// LineView::body, trimmed), in this order, and calls the recognizers of the rows whose trigger
// matched, in this order. Rows whose events ride on lines of other formats (NCCL, OOM, failures)
// keep the walk going.
const std::vector<LogFormat>& logFormats() {
    // Triggers are the formats' fixed words (cheap for the set's DFA); each recognizer checks
    // the exact shape itself and returns false when the line is not of its format.
    static const std::vector<LogFormat> kLogFormats = {
        // Metric records.
        {"slime_dict", R"(\d: \{)", recognizeSlimeDict, false},
        {"megatron_iteration", R"(iteration +\d)", recognizeMegatronIteration, false},
        {"megatron_timers", R"(^time \(ms\) \|)", recognizeMegatronTimers, false},
        {"sglang_batch", R"(batch[.,] )", recognizeSglangBatch, false},
        {"vllm_stats", R"(throughput: |cache usage: )", recognizeVllmStats, false},
        {"verl_step", R"(^step:\d)", recognizeVerlStep, false},
        {"slime_memory", R"(Memory-Usage )", recognizeSlimeMemoryUsage, false},
        {"json_line", R"(^\{)", recognizeJsonLine, false},
        // Phases and markers.
        {"phase_marker", R"(\[runplane-phase\])", recognizePhaseMarker, true},
        {"timer", R"(Timer )", recognizeTimer, true},
        {"eval_skipped", R"( skipped: )", recognizeEvalSkipped, true},
        {"megatron_bad_grad_norm", R"(Bad grad_norm)", recognizeMegatronBadGradNorm, true},
        // Failure events.
        {"cuda_oom", R"(out of memory)", recognizeCudaOom, true},
        {"ray_oom_task", R"(running low on memory)", recognizeRayOomTask, true},
        {"ray_oom_node", R"(Memory on the node)", recognizeRayOomNode, true},
        {"ray_oom_raylet", R"(killed due to memory pressure|Workers \(tasks /)",
         recognizeRayOomRaylet, true},
        {"host_oom_kernel", R"(Killed process )", recognizeHostOomKernel, true},
        {"host_oom_shell", R"(^Killed|^已杀死|^\*\*Killed\*\*|\d Killed +\S)",
         recognizeHostOomShell, true},
        {"host_oom_slurm", R"(oom-kill event\(s\)|oom_kill events? in)", recognizeHostOomSlurm,
         true},
        {"nccl", R"(NCCL|nccl|Bad address|Watchdog caught)", recognizeNccl, true},
        {"weight_sync_failure",
         R"(parameter online|update_weight|_weight_update|collective_rpc method failed)",
         recognizeWeightSyncFailure, true},
        {"batch_mismatch",
         R"(Not enough samples|Check batch related parameters|global train batch size \()",
         recognizeBatchMismatch, true},
    };
    return kLogFormats;
}

std::string engineLabel(const LineView& line) {
    std::string label;
    auto add = [&](std::string_view part) {
        if (!label.empty()) {
            label += '.';
        }
        label += part;
    };
    if (line.pid >= 0) {
        add("pid" + std::to_string(line.pid));
    }
    // SGLang's scheduler prefix: a `[...]` near the start of the body carries `DP6 TP6` (also
    // PP/EP); the first of up to 4 such groups within 256 bytes that names a rank (text pasted
    // before the prefix, sgl-project/sglang#36081, moves it right).
    const std::string_view body = line.body;
    std::size_t open = body.find('[');
    for (int group = 0; group < 4 && open != std::string_view::npos && open < 256;
         ++group, open = body.find('[', open + 1)) {
        const auto close = body.find(']', open);
        if (close != std::string_view::npos && close - open < 96) {
            const std::size_t before = label.size();
            std::string_view inside = body.substr(open + 1, close - open - 1);
            while (!inside.empty()) {
                const auto sp = inside.find(' ');
                const std::string_view tok = inside.substr(0, sp);
                inside = sp == std::string_view::npos ? std::string_view() : inside.substr(sp + 1);
                if (tok.size() >= 3 && tok.size() <= 8 &&
                    (tok.starts_with("DP") || tok.starts_with("TP") || tok.starts_with("PP") ||
                     tok.starts_with("EP") || tok.starts_with("CP"))) {
                    bool digits = true;
                    for (char c : tok.substr(2)) {
                        digits = digits && c >= '0' && c <= '9';
                    }
                    if (digits) {
                        std::string part(tok);
                        part[0] = static_cast<char>(part[0] - 'A' + 'a');
                        part[1] = static_cast<char>(part[1] - 'A' + 'a');
                        add(part);
                    }
                }
            }
            if (label.size() != before) {
                break;
            }
        }
    }
    // vLLM V1: `Engine 000: Avg prompt throughput ...`.
    if (const auto e = logfmt::find(body, "Engine "); e != std::string_view::npos) {
        std::size_t i = e + 7;
        std::size_t j = i;
        while (j < body.size() && j - i < 6 && body[j] >= '0' && body[j] <= '9') {
            ++j;
        }
        if (j > i && j < body.size() && body[j] == ':') {
            add("engine" + std::string(body.substr(i, j - i)));
        }
    }
    return label;
}

std::string engineSeries(const std::string& label, std::string_view field) {
    std::string series;  // one allocation (a metric of every engine line builds one)
    series.reserve(7 + label.size() + 1 + field.size());
    series += "engine/";
    if (!label.empty()) {
        series += label;
        series += '/';
    }
    series += field;
    return series;
}

namespace logfmt {

std::size_t find(std::string_view hay, std::string_view needle, std::size_t from) {
    if (from > hay.size()) {
        return std::string_view::npos;
    }
#if defined(__SSE2__)
    // 16 places at a time: where the needle's first byte and its last byte (n-1 further) both
    // occur, the bytes between are compared. glibc's memmem hashed every pair of bytes (about 5
    // instructions a byte, 8 % of classifying the benchmark corpus); this is under one.
    const std::size_t n = needle.size();
    if (n >= 2 && hay.size() - from >= n + 15) {
        const char* s = hay.data() + from;
        const std::size_t len = hay.size() - from;
        const __m128i first = _mm_set1_epi8(needle[0]);
        const __m128i last = _mm_set1_epi8(needle[n - 1]);
        std::size_t i = 0;
        for (; i + n + 15 <= len; i += 16) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + n - 1));
            auto mask = static_cast<unsigned>(_mm_movemask_epi8(
                _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last))));
            while (mask != 0) {
                const auto bit = static_cast<std::size_t>(__builtin_ctz(mask));
                if (std::memcmp(s + i + bit + 1, needle.data() + 1, n - 2) == 0) {
                    return from + i + bit;
                }
                mask &= mask - 1;
            }
        }
        const auto rest = hay.substr(from + i).find(needle);
        return rest == std::string_view::npos ? rest : from + i + rest;
    }
#endif
    return hay.find(needle, from);
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

bool numberAfter(std::string_view text, std::string_view label, double& value, std::size_t from,
                 std::size_t* end) {
    const auto p = find(text, label, from);
    if (p == std::string_view::npos) {
        return false;
    }
    std::size_t i = p + label.size();
    while (i < text.size() && text[i] == ' ') {
        ++i;
    }
    const char* first = text.data() + i;
    const char* last = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr == first) {
        return false;
    }
    if (end != nullptr) {
        *end = std::size_t(ptr - text.data());
    }
    return true;
}

bool parseSize(std::string_view s, double& bytes, std::size_t* used) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr == s.data() || !std::isfinite(v)) {
        return false;
    }
    std::size_t i = std::size_t(ptr - s.data());
    while (i < s.size() && s[i] == ' ') {
        ++i;
    }
    struct Unit {
        std::string_view name;
        double scale;
    };
    // Longest spellings first ("GiB" before "GB" before "B").
    static constexpr std::array<Unit, 11> kUnits{{{"bytes", 1.0},
                                                  {"TiB", 1099511627776.0},
                                                  {"GiB", 1073741824.0},
                                                  {"MiB", 1048576.0},
                                                  {"KiB", 1024.0},
                                                  {"TB", 1e12},
                                                  {"GB", 1e9},
                                                  {"MB", 1e6},
                                                  {"KB", 1e3},
                                                  {"kB", 1e3},
                                                  {"B", 1.0}}};
    for (const auto& u : kUnits) {
        if (s.substr(i).starts_with(u.name)) {
            bytes = v * u.scale;
            if (used != nullptr) {
                *used = i + u.name.size();
            }
            return true;
        }
    }
    return false;
}

std::string formatSize(double bytes) {
    static constexpr std::array<std::string_view, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t u = 0;
    while (bytes >= 1024.0 && u + 1 < kNames.size()) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f %s", bytes, std::string(kNames[u]).c_str());
    return buf;
}

std::string formatNumber(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
        return std::to_string(static_cast<long long>(v));
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

LogEvent makeEvent(LogEventKind kind, std::string message) {
    LogEvent ev;
    ev.kind = kind;
    ev.message = std::move(message);
    return ev;
}

}  // namespace logfmt

}  // namespace runplane::agent
