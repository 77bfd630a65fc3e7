#pragma once
// What a metric series is: its kind (score, loss, count, time, tokens, bytes, rate, ratio, other)
// and which direction is better. One table for the GUI (Runs, Compare, plots, the headless
// reports) and the CLI (`runplanectl runs`), from slime/miles naming (docs/gui.md has the table).
// Qt-free and header-light so runplanectl links it without Qt.

#include <optional>
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

/// A recipe's override of the table (analysis.metric_kinds, docs/recipe.md): `pattern` is a
/// series name, or a prefix when it ends in '*' ("eval/custom/*"); direction unset = the kind's
/// default (defaultDirection).
struct KindOverride {
    std::string pattern;
    Kind kind = Kind::Other;
    std::optional<Direction> direction;
    bool operator==(const KindOverride&) const = default;
};

/// Classifies a series by name (and its stored unit, which wins for "bytes" / "s").
/// First matching rule of rules() wins; nothing matched: Other / None.
MetricInfo classify(std::string_view name, std::string_view unit = {});
/// As classify, but an override whose pattern matches wins over the unit and the table: an exact
/// name beats every prefix, a longer prefix beats a shorter one.
MetricInfo classify(std::string_view name, std::string_view unit,
                    const std::vector<KindOverride>& overrides);
/// The override that applies to `name` (exact, else the longest '*' prefix), or nullptr.
const KindOverride* findOverride(std::string_view name, const std::vector<KindOverride>& overrides);

/// The direction a kind has unless told otherwise: score and rate higher; loss, time and bytes
/// lower; count, tokens, ratio and other none.
Direction defaultDirection(Kind kind);
/// Inverse of kindName / directionName; false for an unknown name.
bool kindFromName(std::string_view name, Kind& out);
bool directionFromName(std::string_view name, Direction& out);

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

/// The run's primary eval metric among `names`: `preferred` (the recipe's
/// analysis.primary_metric) when it is one of them, else the first score-kind "eval/*" series
/// (kinds after `overrides`) in lexicographic order; "" when there is none.
std::string primaryEval(std::vector<std::string> names, const std::string& preferred = {},
                        const std::vector<KindOverride>& overrides = {});

/// One row of the classification table, for docs and tests.
struct Rule {
    std::string_view pattern;  // what is matched, in words
    Kind kind;
    Direction direction;
};
const std::vector<Rule>& rules();

}  // namespace runplane::metrics
