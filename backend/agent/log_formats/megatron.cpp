// Megatron-LM's training log (megatron/training/training.py, training_log):
// ` iteration      122/  250000 | consumed samples: 124928 | elapsed time per iteration (ms):
// 86545.2 | learning rate: 9.150E-06 | ... | lm loss: 2.504220E+00 | loss scale: 1.0 | grad norm:
// 0.231 | number of skipped iterations:   0 | number of nan iterations:   0 |`. Every `key: value`
// field becomes `megatron/<key>` (lower case, non-alphanumerics as `_`, `(ms)` as `_ms`; a unit
// printed after the value, `21392.5 ms`, is appended the same way), step = the iteration. A
// record that does not end with `|` continues on the next line (`incomplete`). A nan step (no
// `lm loss`, `number of nan iterations` > 0, or a non-finite loss) is a nan_loss event, a skipped
// one a skipped_iteration event; `***WARNING*** Bad grad_norm detected (grad_norm=nan)` (printed
// before the step it skips) is a nan_loss event. Fixtures:
// tests/agent/fixtures/logs/megatron_*.log.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

std::string seriesKey(std::string_view key, std::string_view unit) {
    std::string out;
    bool underscore = false;
    for (char c : key) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        const bool upper = c >= 'A' && c <= 'Z';
        if (alnum || upper) {
            if (underscore && !out.empty()) {
                out += '_';
            }
            underscore = false;
            out += upper ? static_cast<char>(c - 'A' + 'a') : c;
        } else {
            underscore = true;
        }
    }
    if (!unit.empty()) {
        std::string u;
        for (char c : unit) {
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                u += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
            }
        }
        if (!u.empty() && !out.ends_with("_" + u)) {
            out += "_" + u;
        }
    }
    return out;
}

// "nan", "inf", "-inf" as Megatron prints them, or a number.
bool parseValue(std::string_view s, double& v, std::size_t& used) {
    if (s.starts_with("nan") || s.starts_with("NaN")) {
        v = std::nan("");
        used = 3;
        return true;
    }
    if (s.starts_with("inf") || s.starts_with("-inf")) {
        v = s[0] == '-' ? -INFINITY : INFINITY;
        used = s[0] == '-' ? 4 : 3;
        return true;
    }
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr == s.data()) {
        return false;
    }
    used = std::size_t(ptr - s.data());
    return true;
}

}  // namespace

bool recognizeMegatronIteration(const LineView& view, ParsedLogLine& out) {
    const std::string_view text = view.body;
    const auto it = logfmt::find(text, "iteration");
    if (it == std::string_view::npos) {
        return false;
    }
    std::size_t i = it + 9;
    while (i < text.size() && text[i] == ' ') {
        ++i;
    }
    double iter = 0;
    double total = 0;
    std::size_t used = 0;
    // An iteration is a step number: a finite value that fits the step's int64 (a huge one would
    // make the cast below undefined; found by fuzz_log_line under UBSan).
    if (!parseValue(text.substr(i), iter, used) || !std::isfinite(iter) || iter < 0 ||
        iter > 9.0e15) {
        return false;
    }
    i += used;
    while (i < text.size() && text[i] == ' ') {
        ++i;
    }
    if (i >= text.size() || text[i] != '/') {
        return false;
    }
    ++i;
    while (i < text.size() && text[i] == ' ') {
        ++i;
    }
    if (!parseValue(text.substr(i), total, used) || !std::isfinite(total)) {
        return false;
    }
    i += used;
    const auto step = static_cast<std::int64_t>(iter);
    out.progress = true;
    out.metrics.push_back(LogMetric{"megatron/iteration", iter, step});
    out.metrics.push_back(LogMetric{"megatron/train_iters", total, step});
    std::string_view rest = text.substr(i);
    const std::string_view trimmed = logfmt::trim(rest);
    if (trimmed.empty() || trimmed.back() != '|') {
        out.incomplete = true;
    }
    bool hasLoss = false;
    double nanIters = 0;
    double skipped = 0;
    double lossValue = 0;
    std::string lossKey;
    while (!rest.empty()) {
        const auto bar = rest.find('|');
        std::string_view piece = logfmt::trim(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
        const auto colon = piece.find(':');
        if (colon == std::string_view::npos) {
            continue;
        }
        const std::string_view key = logfmt::trim(piece.substr(0, colon));
        std::string_view val = logfmt::trim(piece.substr(colon + 1));
        double v = 0;
        if (key.empty() || !parseValue(val, v, used)) {
            continue;
        }
        const std::string_view unit = logfmt::trim(val.substr(used));
        if (bar == std::string_view::npos && out.incomplete) {
            continue;  // the last field of a cut record: its number may be cut too
        }
        // A trailing word is a unit (`ms`, `s`, `GB`); anything longer is not this format.
        if (unit.size() > 8 || unit.find(' ') != std::string_view::npos) {
            continue;
        }
        const std::string name = "megatron/" + seriesKey(key, unit);
        out.metrics.push_back(LogMetric{name, v, step});
        if (name.ends_with("loss") && name != "megatron/loss_scale") {
            hasLoss = true;
            if (!std::isfinite(v)) {
                lossKey = std::string(key);
                lossValue = v;
            }
        } else if (name == "megatron/number_of_nan_iterations") {
            nanIters = v;
        } else if (name == "megatron/number_of_skipped_iterations") {
            skipped = v;
        }
    }
    const std::string iterText = std::to_string(step);
    if (!lossKey.empty() || nanIters > 0) {
        LogEvent ev = logfmt::makeEvent(
            LogEventKind::NanLoss,
            !lossKey.empty()
                ? lossKey + " is " + logfmt::formatNumber(lossValue) + " at iteration " + iterText
                : logfmt::formatNumber(nanIters) + " nan iterations at iteration " + iterText);
        ev.attrs["iteration"] = iterText;
        ev.attrs["format"] = "megatron";
        if (nanIters > 0) {
            ev.attrs["nan_iterations"] = logfmt::formatNumber(nanIters);
        }
        out.events.push_back(std::move(ev));
    }
    if (skipped > 0) {
        LogEvent ev =
            logfmt::makeEvent(LogEventKind::SkippedIteration,
                              logfmt::formatNumber(skipped) + " skipped iterations at iteration " +
                                  iterText + (hasLoss ? "" : " (no loss reported)"));
        ev.attrs["iteration"] = iterText;
        ev.attrs["skipped_iterations"] = logfmt::formatNumber(skipped);
        ev.attrs["format"] = "megatron";
        out.events.push_back(std::move(ev));
    }
    return true;
}

// Megatron-LM's timers, printed after an iteration record (megatron/core/timers.py, the
// `max` option): `time (ms) | forward-compute: 193.77 | backward-compute: 73.02 | ... |
// batch-generator: 25.27` (NVIDIA/nccl#743), each into `megatron/timers/<name>_ms` (the timer's
// own name, lower case, other characters `_`), no step (the line names none). A record whose
// last field has no value yet was cut and continues on the next line.
bool recognizeMegatronTimers(const LineView& view, ParsedLogLine& out) {
    std::string_view text = logfmt::trim(view.body);
    if (!text.starts_with("time (ms)")) {
        return false;
    }
    std::string_view rest = text.substr(9);
    if (rest.empty() || logfmt::trim(rest).front() != '|') {
        return false;
    }
    int kept = 0;
    while (!rest.empty()) {
        const auto bar = rest.find('|');
        const std::string_view piece = logfmt::trim(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
        const auto colon = piece.rfind(": ");
        if (colon == std::string_view::npos) {
            continue;
        }
        const std::string_view key = logfmt::trim(piece.substr(0, colon));
        const std::string_view val = logfmt::trim(piece.substr(colon + 2));
        double v = 0;
        std::size_t used = 0;
        if (key.empty() || !parseValue(val, v, used) || used != val.size() || !std::isfinite(v)) {
            continue;
        }
        out.metrics.push_back(LogMetric{"megatron/timers/" + seriesKey(key, "ms"), v, -1});
        ++kept;
    }
    if (kept == 0) {
        return false;
    }
    out.progress = true;
    return true;
}

bool recognizeMegatronBadGradNorm(const LineView& view, ParsedLogLine& out) {
    const std::string_view text = view.body;
    if (logfmt::find(text, "Bad grad_norm detected") == std::string_view::npos) {
        return false;
    }
    const auto p = logfmt::find(text, "grad_norm=");
    std::string value = "?";
    if (p != std::string_view::npos) {
        const auto close = text.find(')', p);
        value = std::string(text.substr(p + 10, std::min<std::size_t>(close, p + 40) - p - 10));
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::NanLoss, "bad grad_norm (" + value + ")");
    ev.attrs["grad_norm"] = value;
    ev.attrs["format"] = "megatron";
    ev.attrs["what"] = "bad_grad_norm";
    out.events.push_back(std::move(ev));
    return true;
}

}  // namespace runplane::agent
