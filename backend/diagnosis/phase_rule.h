#pragma once
// The phase-overrun trigger's rule (issue #44, docs/diagnosis.md "Triggers"): a phase of a run
// that lasts longer than max(3 x median, median + 10 min) of the same phase's earlier occurrences
// (in the run itself and in the same recipe's past runs; at least kMinPhaseSamples of them) is
// worth a diagnosis.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runplane::diagnosis {

inline constexpr std::size_t kMinPhaseSamples = 3;
inline constexpr double kPhaseFactor = 3.0;
inline constexpr double kPhaseMarginSeconds = 600.0;

/// One occurrence of a phase: from its phase event to the next phase event (or the run's end).
struct PhaseSpan {
    std::string phase;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;  // 0: still going
    double seconds() const { return static_cast<double>(endNs - startNs) / 1e9; }
};

/// The spans of a run from its phase events (time, phase name) in time order; the last span
/// ends at endNs (0: the run is still in it).
std::vector<PhaseSpan> phaseSpans(const std::vector<std::pair<std::int64_t, std::string>>& events,
                                  std::int64_t endNs);

/// The rule's numbers (the defaults above; a watch may lower the margin, e.g. for a short run).
struct PhaseRule {
    double factor = kPhaseFactor;
    double marginSeconds = kPhaseMarginSeconds;
    std::size_t minSamples = kMinPhaseSamples;
};

struct PhaseLimit {
    double medianSeconds = 0;  // the expected duration: the history's median, or the plan's
    double limitSeconds = 0;   // max(factor x median, median + margin)
    std::size_t samples = 0;   // earlier occurrences the median is of (fromPlan: fewer than needed)
    bool fromPlan = false;     // the recipe's analysis.phase_seconds gave the expected duration
};

/// The limit from past durations: max(factor x median, median + margin); nullopt with fewer than
/// rule.minSamples.
std::optional<PhaseLimit> phaseLimit(std::vector<double> pastSeconds, const PhaseRule& rule = {});

/// The limit from the plan's expected duration when the history has too few occurrences: the
/// same rule with the expected seconds as the median (fromPlan set, samples = how many the
/// history had). nullopt when expectedSeconds is not > 0.
std::optional<PhaseLimit> planPhaseLimit(double expectedSeconds, std::size_t samples,
                                         const PhaseRule& rule = {});

}  // namespace runplane::diagnosis
