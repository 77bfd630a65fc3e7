#include "common/metrics/metric_kind.h"

#include "common/telemetry/series.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace runplane::metrics {

namespace {

struct Name {
    std::string full;  // lower case
    std::string last;  // last '/' segment, lower case
    std::string unit;
};

bool has(const std::string& s, std::string_view part) {
    return s.find(part) != std::string::npos;
}
bool starts(const std::string& s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}
bool ends(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

using Matcher = bool (*)(const Name&);

struct Row {
    Rule rule;
    Matcher match;
};

// Order matters: the first match wins, so the specific shapes (…_time_ratio is a fraction, not a
// time; eval/<name>/response_len/… is tokens, not a score) come before the broad ones.
const std::vector<Row>& table() {
    static const std::vector<Row> rows = {
        {{"unit \"bytes\"; name ends in bytes or _gb; contains memory", Kind::Bytes,
          Direction::Lower},
         [](const Name& n) {
             return n.unit == telemetry::unit::kBytes || ends(n.full, "bytes") ||
                    ends(n.full, "_gb") || has(n.full, "memory");
         }},
        {{"contains ratio or frac (truncated_ratio, pg_clipfrac, wait_time_ratio)", Kind::Ratio,
          Direction::None},
         [](const Name& n) { return has(n.last, "ratio") || has(n.last, "frac"); }},
        {{"contains per_sec, per_s, tflops, mfu, throughput (perf/tokens_per_gpu_per_sec)",
          Kind::Rate, Direction::Higher},
         [](const Name& n) {
             return has(n.last, "per_sec") || ends(n.last, "per_s") || has(n.last, "tflops") ||
                    has(n.last, "mfu") || has(n.last, "throughput");
         }},
        {{"unit \"s\"; last segment time, or ends in _time / _seconds (perf/step_time, "
          "eval/<name>/time)",
          Kind::Time, Direction::Lower},
         [](const Name& n) {
             return n.unit == telemetry::unit::kSeconds || n.unit == "seconds" ||
                    n.last == "time" || ends(n.last, "_time") || ends(n.last, "_seconds") ||
                    ends(n.last, "elapsed");
         }},
        {{"contains response_len, prompt_len, seq_len or tokens (…/response_len/mean)",
          Kind::Tokens, Direction::None},
         [](const Name& n) {
             return has(n.full, "response_len") || has(n.full, "prompt_len") ||
                    has(n.full, "seq_len") || has(n.last, "tokens");
         }},
        {{"contains loss; a kl term (ppo_kl, kl_loss, opd_reverse_kl); abs_diff", Kind::Loss,
          Direction::Lower},
         [](const Name& n) {
             return has(n.last, "loss") || n.last == "kl" || ends(n.last, "_kl") ||
                    starts(n.last, "kl_") || has(n.last, "abs_diff");
         }},
        {{"contains entropy (lower is not better: collapse)", Kind::Loss, Direction::None},
         [](const Name& n) { return has(n.last, "entropy"); }},
        {{"contains count; num_… / …_num; step; batch_size", Kind::Count, Direction::None},
         [](const Name& n) {
             return has(n.full, "count") || starts(n.last, "num_") || ends(n.last, "_num") ||
                    n.last == "step" || ends(n.last, "batch_size");
         }},
        {{"eval/<name>, eval/<name>-pass@k; contains reward, acc, pass@, score", Kind::Score,
          Direction::Higher},
         [](const Name& n) {
             return starts(n.full, "eval/") || has(n.last, "reward") || has(n.last, "acc") ||
                    has(n.last, "pass@") || has(n.last, "score");
         }},
    };
    return rows;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

MetricInfo classify(std::string_view name, std::string_view unit) {
    Name n;
    n.full = lower(name);
    const std::size_t slash = n.full.rfind('/');
    n.last = slash == std::string::npos ? n.full : n.full.substr(slash + 1);
    n.unit = lower(unit);
    for (const Row& row : table()) {
        if (row.match(n)) {
            return MetricInfo{row.rule.kind, row.rule.direction};
        }
    }
    return MetricInfo{};
}

const KindOverride* findOverride(std::string_view name,
                                 const std::vector<KindOverride>& overrides) {
    const KindOverride* best = nullptr;
    std::size_t bestLength = 0;
    for (const KindOverride& o : overrides) {
        if (o.pattern == name) {
            return &o;  // an exact name wins
        }
        if (!o.pattern.empty() && o.pattern.back() == '*') {
            const std::string_view prefix(o.pattern.data(), o.pattern.size() - 1);
            if (name.substr(0, prefix.size()) == prefix &&
                (best == nullptr || prefix.size() > bestLength)) {
                best = &o;
                bestLength = prefix.size();
            }
        }
    }
    return best;
}

MetricInfo classify(std::string_view name, std::string_view unit,
                    const std::vector<KindOverride>& overrides) {
    if (const KindOverride* o = findOverride(name, overrides)) {
        return MetricInfo{o->kind, o->direction.value_or(defaultDirection(o->kind))};
    }
    return classify(name, unit);
}

Direction defaultDirection(Kind kind) {
    switch (kind) {
        case Kind::Score:
        case Kind::Rate:
            return Direction::Higher;
        case Kind::Loss:
        case Kind::Time:
        case Kind::Bytes:
            return Direction::Lower;
        default:
            return Direction::None;
    }
}

bool kindFromName(std::string_view name, Kind& out) {
    for (Kind k : {Kind::Score, Kind::Loss, Kind::Count, Kind::Time, Kind::Tokens, Kind::Bytes,
                   Kind::Rate, Kind::Ratio, Kind::Other}) {
        if (kindName(k) == name) {
            out = k;
            return true;
        }
    }
    return false;
}

bool directionFromName(std::string_view name, Direction& out) {
    for (Direction d : {Direction::Higher, Direction::Lower, Direction::None}) {
        if (directionName(d) == name) {
            out = d;
            return true;
        }
    }
    return false;
}

const std::vector<Rule>& rules() {
    static const std::vector<Rule> out = [] {
        std::vector<Rule> r;
        for (const Row& row : table()) {
            r.push_back(row.rule);
        }
        return r;
    }();
    return out;
}

std::string_view kindName(Kind kind) {
    switch (kind) {
        case Kind::Score:
            return "score";
        case Kind::Loss:
            return "loss";
        case Kind::Count:
            return "count";
        case Kind::Time:
            return "time";
        case Kind::Tokens:
            return "tokens";
        case Kind::Bytes:
            return "bytes";
        case Kind::Rate:
            return "rate";
        case Kind::Ratio:
            return "ratio";
        case Kind::Other:
            break;
    }
    return "other";
}

std::string_view directionName(Direction direction) {
    switch (direction) {
        case Direction::Higher:
            return "higher";
        case Direction::Lower:
            return "lower";
        case Direction::None:
            break;
    }
    return "none";
}

std::string_view axisLabel(Kind kind) {
    switch (kind) {
        case Kind::Time:
            return "seconds";
        case Kind::Rate:
            return "per second";
        case Kind::Ratio:
            return "fraction";
        case Kind::Other:
            return "value";
        default:
            return kindName(kind);
    }
}

bool better(Direction direction, double candidate, double incumbent) {
    if (direction == Direction::None || std::isnan(candidate)) {
        return false;
    }
    if (std::isnan(incumbent)) {
        return true;
    }
    return direction == Direction::Higher ? candidate > incumbent : candidate < incumbent;
}

std::string_view groupOf(std::string_view name) {
    std::size_t cut = name.find('/');
    if (cut == std::string_view::npos) {
        cut = name.find('.');
    }
    return cut == std::string_view::npos ? name : name.substr(0, cut);
}

std::string primaryEval(std::vector<std::string> names, const std::string& preferred,
                        const std::vector<KindOverride>& overrides) {
    if (!preferred.empty() && std::find(names.begin(), names.end(), preferred) != names.end()) {
        return preferred;
    }
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
        if (n.rfind("eval/", 0) == 0 && classify(n, {}, overrides).kind == Kind::Score) {
            return n;
        }
    }
    return {};
}

}  // namespace runplane::metrics
