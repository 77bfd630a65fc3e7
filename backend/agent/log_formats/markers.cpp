// Progress markers: our `[runplane-phase] <phase>` marker, the frameworks' `Timer <name>
// start|end (elapsed: 81.3s)` lines (slime/observability/timer.py) and miles' `eval <id>
// skipped: <reason>`. Fixture: tests/agent/fixtures/logs/slime_step_timer_1136.log.
#include <cstdlib>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || c == '_' || c == '-' || (c >= '0' && c <= '9');
}

// The process a phase belongs to (a phase lane per rank): Ray's actor and pid, torchrun's rank.
void addProcess(const LineView& view, LogEvent& ev) {
    if (view.pid >= 0) {
        ev.attrs["pid"] = std::to_string(view.pid);
    }
    if (!view.actor.empty()) {
        ev.attrs["actor"] = std::string(view.actor);
    }
    if (view.rank >= 0) {
        ev.attrs["rank"] = std::to_string(view.rank);
    }
}

}  // namespace

bool recognizePhaseMarker(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = view.text;
    const auto p = logfmt::find(line, "[runplane-phase]");
    if (p == std::string_view::npos) {
        return false;
    }
    std::string_view rest = logfmt::trim(line.substr(p + 16));
    std::size_t n = 0;
    while (n < rest.size() && isNameChar(rest[n])) {
        ++n;
    }
    if (n == 0) {
        return false;
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::Phase, "phase " + std::string(rest.substr(0, n)));
    ev.attrs["phase"] = std::string(rest.substr(0, n));
    ev.attrs["source"] = "marker";
    addProcess(view, ev);
    out.events.push_back(std::move(ev));
    out.progress = true;
    return true;
}

bool recognizeTimer(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = view.text;
    const auto p = logfmt::find(line, "Timer ");
    if (p == std::string_view::npos) {
        return false;
    }
    std::string_view rest = line.substr(p + 6);
    const auto sp = rest.find(' ');
    if (sp == std::string_view::npos || sp == 0) {
        return false;
    }
    const std::string_view name = rest.substr(0, sp);
    const std::string_view tail = rest.substr(sp + 1);
    const bool start = tail.rfind("start", 0) == 0;
    const bool end = tail.rfind("end", 0) == 0;
    if (!start && !end) {
        return false;
    }
    out.progress = true;
    if (end) {
        double secs = 0;
        if (logfmt::numberAfter(tail, "elapsed: ", secs)) {
            out.metrics.push_back(LogMetric{"timer/" + std::string(name) + "_seconds", secs, -1});
        }
    }
    const std::string phase = phaseForTimer(name);
    if (!phase.empty()) {
        LogEvent ev = logfmt::makeEvent(LogEventKind::Phase,
                                        "timer " + std::string(name) + (start ? " start" : " end"));
        ev.attrs["phase"] = phase;
        ev.attrs["timer"] = std::string(name);
        ev.attrs["edge"] = start ? "start" : "end";
        ev.attrs["source"] = "timer";
        addProcess(view, ev);
        out.events.push_back(std::move(ev));
    }
    return true;
}

bool recognizeEvalSkipped(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = view.text;
    if (!out.metrics.empty() || !out.warning.empty()) {
        return false;
    }
    const auto p = logfmt::find(line, " skipped: ");
    if (p == std::string_view::npos) {
        return false;
    }
    const auto e = line.rfind("eval ", p);
    if (e == std::string_view::npos) {
        return false;
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::Info, std::string(logfmt::trim(line.substr(e))));
    ev.attrs["what"] = "eval_skipped";
    out.events.push_back(std::move(ev));
    return true;
}

}  // namespace runplane::agent
