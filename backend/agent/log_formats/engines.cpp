// Inference-engine stat lines, each field into an `engine/...` series with the engine's label
// (engineLabel: Ray pid, SGLang DP/TP ranks, vLLM engine id). Several records printed on one
// physical line are each read. Fixtures: tests/agent/fixtures/logs/sglang_*.log, vllm_*.log.
//
// SGLang scheduler: `Prefill batch. #new-seq: 1, #new-token: 2062, #cached-token: 0, cache hit
// rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0` and `Decode batch. #running-req:
// 5, #token: 20800, token usage: 0.29, cuda graph: True, gen throughput (token/s): 144.95,
// #queue-req: 0` (also `batch,`). vLLM: V0 `Avg prompt throughput: 0.0 tokens/s, Avg generation
// throughput: 44.9 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache
// usage: 82.1%, CPU KV cache usage: 0.0%`, V1 `Engine 000: ... Waiting: 43 reqs, ... Prefix
// cache hit rate: 0.0%`. Percentages become fractions 0..1.
#include <array>
#include <charconv>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

struct Field {
    std::string_view key;   // as printed, before ": "
    std::string_view name;  // series leaf
};

// SGLang's keys (python/sglang/srt/managers/scheduler_metrics_mixin.py prints them).
constexpr std::array<Field, 21> kSglang{{
    {"#running-req", "running_requests"},
    {"#queue-req", "queued_requests"},
    {"#token", "kv_tokens"},
    {"token usage", "kv_cache_usage"},
    {"full token usage", "full_kv_cache_usage"},
    {"swa token usage", "swa_kv_cache_usage"},
    {"gen throughput (token/s)", "gen_throughput"},
    {"input throughput (token/s)", "input_throughput"},
    {"#new-seq", "prefill_new_seqs"},
    {"#new-token", "prefill_tokens"},
    {"#cached-token", "prefill_cached_tokens"},
    {"cache hit rate", "cache_hit_rate"},
    {"#pending-token", "pending_tokens"},
    {"accept len", "spec_accept_length"},
    {"accept length", "spec_accept_length"},
    {"accept rate", "spec_accept_rate"},  // speculative decoding (sgl-project/sgl-kernel-npu#608)
    {"#inflight-req", "inflight_requests"},
    // Hybrid models (radixark/miles#308): full and SWA pools, Mamba state slots.
    {"#full token", "full_kv_tokens"},
    {"#swa token", "swa_kv_tokens"},
    {"mamba num", "mamba_slots"},
    {"mamba usage", "mamba_usage"},
}};

// vLLM's keys (vllm/engine/metrics.py for V0, vllm/v1/metrics/loggers.py for V1).
constexpr std::array<Field, 9> kVllm{{
    {"Avg prompt throughput", "prompt_throughput"},
    {"Avg generation throughput", "gen_throughput"},
    {"Running", "running_requests"},
    {"Waiting", "queued_requests"},
    {"Pending", "queued_requests"},
    {"Swapped", "swapped_requests"},
    {"GPU KV cache usage", "kv_cache_usage"},
    {"CPU KV cache usage", "cpu_kv_cache_usage"},
    {"Prefix cache hit rate", "prefix_cache_hit_rate"},
}};

template <std::size_t N>
const Field* findField(const std::array<Field, N>& table, std::string_view key) {
    for (const auto& f : table) {
        if (f.key == key) {
            return &f;
        }
    }
    return nullptr;
}

// Reads `key: value[%| unit], key: value, ...` of one record; returns how many values it kept.
template <std::size_t N>
int readPairs(std::string_view record, const std::array<Field, N>& table, const std::string& label,
              ParsedLogLine& out) {
    int kept = 0;
    while (!record.empty()) {
        const auto comma = logfmt::find(record, ", ");
        std::string_view piece = logfmt::trim(record.substr(0, comma));
        record = comma == std::string_view::npos ? std::string_view() : record.substr(comma + 2);
        const auto colon = piece.rfind(": ");
        if (colon == std::string_view::npos) {
            continue;
        }
        const std::string_view key = logfmt::trim(piece.substr(0, colon));
        const Field* f = findField(table, key);
        if (f == nullptr) {
            continue;
        }
        std::string_view val = piece.substr(colon + 2);
        double v = 0;
        const auto [ptr, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
        if (ec != std::errc() || ptr == val.data()) {
            continue;
        }
        const bool percent = ptr < val.data() + val.size() && *ptr == '%';
        if (percent) {
            v /= 100.0;
        }
        out.metrics.push_back(LogMetric{engineSeries(label, f->name), v, -1});
        ++kept;
    }
    return kept;
}

// The offsets where a record starts (any of `marks`), in order.
template <std::size_t N>
std::vector<std::size_t> recordStarts(std::string_view text,
                                      const std::array<std::string_view, N>& marks) {
    std::vector<std::size_t> starts;
    std::size_t from = 0;
    while (true) {
        std::size_t best = std::string_view::npos;
        std::size_t len = 0;
        for (auto m : marks) {
            const auto p = logfmt::find(text, m, from);
            if (p < best) {
                best = p;
                len = m.size();
            }
        }
        if (best == std::string_view::npos) {
            return starts;
        }
        starts.push_back(best);
        from = best + len;
    }
}

}  // namespace

bool recognizeSglangBatch(const LineView& view, ParsedLogLine& out) {
    static constexpr std::array<std::string_view, 4> kMarks{"Prefill batch.", "Prefill batch,",
                                                            "Decode batch.", "Decode batch,"};
    const std::string_view body = view.body;
    const auto starts = recordStarts(body, kMarks);
    if (starts.empty()) {
        return false;
    }
    const std::string label = engineLabel(view);
    int kept = 0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const std::size_t begin = starts[i] + 14;  // past "Decode batch." / "Prefill batch."
        const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : body.size();
        std::string_view record = body.substr(std::min(begin, end), end - std::min(begin, end));
        // A following record's own `[time TP0] ` prefix is not a field.
        kept += readPairs(record, kSglang, label, out);
    }
    if (kept == 0) {
        return false;
    }
    out.progress = true;
    return true;
}

bool recognizeVllmStats(const LineView& view, ParsedLogLine& out) {
    static constexpr std::array<std::string_view, 1> kMarks{"Avg prompt throughput: "};
    const std::string_view body = view.body;
    auto starts = recordStarts(body, kMarks);
    if (starts.empty()) {
        // Older lines without the prompt figure start at the generation throughput or usage.
        const auto g = logfmt::find(body, "Avg generation throughput: ");
        const auto u = logfmt::find(body, "GPU KV cache usage: ");
        const auto s = std::min(g, u);
        if (s == std::string_view::npos) {
            return false;
        }
        starts.push_back(s);
    }
    const std::string label = engineLabel(view);
    int kept = 0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : body.size();
        kept += readPairs(body.substr(starts[i], end - starts[i]), kVllm, label, out);
    }
    if (kept == 0) {
        return false;
    }
    out.progress = true;
    return true;
}

}  // namespace runplane::agent
