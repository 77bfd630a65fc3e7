// The phase-overrun rule (phase_rule.h).
#include "backend/diagnosis/phase_rule.h"

#include <algorithm>

namespace runplane::diagnosis {

std::vector<PhaseSpan> phaseSpans(const std::vector<std::pair<std::int64_t, std::string>>& events,
                                  std::int64_t endNs) {
    std::vector<PhaseSpan> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
        PhaseSpan s;
        s.phase = events[i].second;
        s.startNs = events[i].first;
        s.endNs = i + 1 < events.size() ? events[i + 1].first : endNs;
        if (s.phase == "done") {
            continue;  // the end marker, not a phase that takes time
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<PhaseLimit> phaseLimit(std::vector<double> past, const PhaseRule& rule) {
    if (past.empty() || past.size() < rule.minSamples) {
        return std::nullopt;
    }
    std::sort(past.begin(), past.end());
    const std::size_t n = past.size();
    const double median = n % 2 == 1 ? past[n / 2] : (past[n / 2 - 1] + past[n / 2]) / 2;
    PhaseLimit out;
    out.medianSeconds = median;
    out.limitSeconds = std::max(rule.factor * median, median + rule.marginSeconds);
    out.samples = n;
    return out;
}

std::optional<PhaseLimit> planPhaseLimit(double expectedSeconds, std::size_t samples,
                                         const PhaseRule& rule) {
    if (!(expectedSeconds > 0)) {
        return std::nullopt;
    }
    PhaseLimit out;
    out.medianSeconds = expectedSeconds;
    out.limitSeconds =
        std::max(rule.factor * expectedSeconds, expectedSeconds + rule.marginSeconds);
    out.samples = samples;
    out.fromPlan = true;
    return out;
}

}  // namespace runplane::diagnosis
