// slime's and miles' GPU memory report (slime/utils/memory_utils.py), printed around offload,
// onload and weight updates: `[Rank 0] Memory-Usage before update_weights: {'gpu': '0',
// 'total_GB': 79.11, 'free_GB': 60.0, 'used_GB': 19.11, 'allocated_GB': 23.99, 'reserved_GB':
// 25.04}`. Each numeric key becomes `memory/rank<R>/<key>` (the framework's key, GB as printed;
// `memory/<key>` when the line names no rank); the string 'gpu' is the device and not a value.
// Fixtures: tests/agent/fixtures/logs/slime_memory_timer_1305.log.
#include <charconv>

#include "backend/agent/log_formats.h"
#include "backend/agent/python_literal.h"

namespace runplane::agent {

bool recognizeSlimeMemoryUsage(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.body;
    const auto at = logfmt::find(t, "Memory-Usage ");
    if (at == std::string_view::npos) {
        return false;
    }
    const auto open = logfmt::find(t, ": {", at);
    if (open == std::string_view::npos || open - at > 200) {
        return false;
    }
    // The rank: `[Rank 0] ` right before the words.
    std::string prefix = "memory/";
    if (const auto r = logfmt::find(t.substr(0, at), "[Rank "); r != std::string_view::npos) {
        const std::string_view digits = t.substr(r + 6);
        std::int64_t rank = -1;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
        if (ec == std::errc() && ptr != digits.data() && rank >= 0) {
            prefix += "rank" + std::to_string(rank) + "/";
        }
    }
    std::size_t used = 0;
    auto parsed = parsePythonLiteralPrefix(t.substr(open + 2), &used);
    if (!parsed.ok() || parsed->kind != PyValue::Kind::Dict) {
        return false;
    }
    for (const auto& [key, value] : parsed->entries) {
        if (key.kind != PyValue::Kind::String || !value.isNumeric() ||
            value.kind == PyValue::Kind::Bool) {
            continue;
        }
        out.metrics.push_back(LogMetric{prefix + key.text, value.asDouble(), -1});
    }
    return !out.metrics.empty();
}

}  // namespace runplane::agent
