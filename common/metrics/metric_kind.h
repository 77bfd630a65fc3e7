#pragma once
// What a metric series is: its kind (score, loss, count, time, tokens, bytes, rate, ratio, other)
// and which direction is better. One table for the GUI (Runs, Compare, plots, the headless
// reports) and the CLI (`runplanectl runs`), from slime/miles naming (docs/gui.md has the table).
// Qt-free and header-light so runplanectl links it without Qt.

#include <string>
#include <string_view>
#include <vector>

namespace runplane::metrics {

enum class Kind { Score, Loss, Count, Time, Tokens, Bytes, Rate, Ratio, Other };
enum class Direction { Higher, Lower, None };

struct MetricInfo {
    Kind kind = Kind::Other;
    Direction direction = Direction::None;
};

/// Classifies a series by name (and its stored unit, which wins for "bytes" / "s").
/// First matching rule of rules() wins; nothing matched: Other / None.
MetricInfo classify(std::string_view name, std::string_view unit = {});

/// "score", "loss", ... (the spelling in docs/gui.md and `runplanectl runs --json`).
std::string_view kindName(Kind kind);
/// "higher", "lower", "none".
std::string_view directionName(Direction direction);
/// Axis label of a kind: "score", "loss", "count", "seconds", "tokens", "bytes", "per second",
/// "fraction", "value".
std::string_view axisLabel(Kind kind);

/// True when `candidate` is strictly better than `incumbent` under `direction` (never for None;
/// NaN is never better, and anything finite beats a NaN incumbent).
bool better(Direction direction, double candidate, double incumbent);

/// The panel group of a series, as W&B groups its automatic panels: the text before the first
/// '/' ("eval/gsm8k/time" -> "eval"), or before the first '.' for sampled telemetry
/// ("host.mem.used_bytes" -> "host"); the whole name when it has neither.
std::string_view groupOf(std::string_view name);

/// The run's primary eval metric among `names`: the first score-kind "eval/*" series in
/// lexicographic order; "" when there is none.
std::string primaryEval(std::vector<std::string> names);

/// One row of the classification table, for docs and tests.
struct Rule {
    std::string_view pattern;  // what is matched, in words
    Kind kind;
    Direction direction;
};
const std::vector<Rule>& rules();

}  // namespace runplane::metrics
