// verl's console logger (verl/utils/tracking.py, `step:N - key:value - key:value ...`), each
// `key:value` into the series `key` (verl's own names: actor/pg_loss, critic/score/mean, ...),
// step = N. A record whose last field has no `:value` was cut inside its key and continues on
// the next line (`incomplete`). Fixtures: tests/agent/fixtures/logs/verl_*.log.
#include <charconv>
#include <cmath>

#include "backend/agent/log_formats.h"

namespace runplane::agent {

bool recognizeVerlStep(const LineView& view, ParsedLogLine& out) {
    std::string_view text = logfmt::trim(view.body);
    if (!text.starts_with("step:")) {
        return false;
    }
    double stepValue = 0;
    std::size_t end = 0;
    // A step must fit the int64 it becomes (a huge one made the cast undefined: fuzz_log_line).
    if (!logfmt::numberAfter(text, "step:", stepValue, 0, &end) || !std::isfinite(stepValue) ||
        stepValue < 0 || stepValue > 9.0e15) {
        return false;
    }
    const auto step = static_cast<std::int64_t>(stepValue);
    std::string_view rest = text.substr(end);
    out.progress = true;
    while (!rest.empty()) {
        const auto sep = logfmt::find(rest, " - ");
        std::string_view piece = rest.substr(0, sep);
        const bool last = sep == std::string_view::npos;
        rest = last ? std::string_view() : rest.substr(sep + 3);
        piece = logfmt::trim(piece);
        if (piece.empty()) {
            continue;
        }
        const auto colon = piece.rfind(':');
        if (colon == std::string_view::npos || colon == 0) {
            if (last) {
                out.incomplete = true;  // cut inside the key
            }
            continue;
        }
        const std::string_view key = piece.substr(0, colon);
        const std::string_view val = piece.substr(colon + 1);
        double v = 0;
        const auto [ptr, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
        if (ec != std::errc() || ptr == val.data() || ptr != val.data() + val.size()) {
            continue;
        }
        if (key.find(' ') != std::string_view::npos) {
            continue;
        }
        out.metrics.push_back(LogMetric{std::string(key), v, step});
    }
    return true;
}

}  // namespace runplane::agent
