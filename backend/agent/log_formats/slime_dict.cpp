// slime / miles metric records: `<kw> <N>: {<python dict>}` (frameworks.md §5), several on one
// line when they were printed so. A dict that breaks at a bad spot keeps its keys up to that spot
// and says so in an EVENT_INFO (what = partial_record); one cut at its end is `incomplete`.
// Fixtures: tests/agent/fixtures/logs/slime_*.log.
#include <array>
#include <cmath>
#include <cstdlib>

#include "backend/agent/log_formats.h"
#include "backend/agent/python_literal.h"

namespace runplane::agent {
namespace {

constexpr std::array<std::string_view, 7> kKeywords = {"step", "critic-step", "rollout", "perf",
                                                       "eval", "multi_turn",  "passrate"};

bool isKeywordChar(char c) {
    return (c >= 'a' && c <= 'z') || c == '_' || c == '-';
}

void skipSpace(std::string_view s, std::size_t& i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
        ++i;
    }
}

struct Salvage {
    std::vector<std::pair<std::string, double>> flat;
    std::size_t badAt = 0;  // offset in the dict text of the bad spot
    std::string what;
};

// Reads `{k: v, ...}` entry by entry, stopping at the first entry that does not parse.
Salvage salvageDict(std::string_view dict) {
    Salvage s;
    std::size_t i = 1;  // after '{'
    while (true) {
        skipSpace(dict, i);
        if (i >= dict.size() || dict[i] == '}') {
            s.badAt = i;
            s.what = i >= dict.size() ? "end of text" : "";
            return s;
        }
        std::size_t used = 0;
        auto key = parsePythonLiteralPrefix(dict.substr(i), &used);
        if (!key || (key->kind != PyValue::Kind::String && !key->isNumeric())) {
            s.badAt = i;
            s.what = "a dict key";
            return s;
        }
        std::size_t j = i + used;
        skipSpace(dict, j);
        if (j >= dict.size() || dict[j] != ':') {
            s.badAt = j;
            s.what = "':' after a dict key";
            return s;
        }
        ++j;
        skipSpace(dict, j);
        auto value = parsePythonLiteralPrefix(dict.substr(j), &used);
        if (!value) {
            s.badAt = j;
            s.what = "a value";
            return s;
        }
        std::size_t k = j + used;
        skipSpace(dict, k);
        // A value is kept only when its end is certain: `,` or `}` follows it (a number cut by
        // the line's end, `0.12` of `0.125`, is not a value).
        if (k >= dict.size() || (dict[k] != ',' && dict[k] != '}')) {
            s.badAt = k;
            s.what = "',' or '}'";
            return s;
        }
        flattenNumeric(*value, key->keyText(), s.flat);
        i = dict[k] == ',' ? k + 1 : k;
    }
}

void addNanEvents(const std::vector<std::pair<std::string, double>>& flat, std::int64_t id,
                  ParsedLogLine& out) {
    for (const auto& [name, v] : flat) {
        if (!std::isfinite(v) && name.ends_with("loss")) {
            LogEvent ev =
                logfmt::makeEvent(LogEventKind::NanLoss, name + " is " + logfmt::formatNumber(v) +
                                                             " at step " + std::to_string(id));
            ev.attrs["series"] = name;
            ev.attrs["step"] = std::to_string(id);
            ev.attrs["value"] = logfmt::formatNumber(v);
            out.events.push_back(std::move(ev));
        }
    }
}

}  // namespace

bool recognizeSlimeDict(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = view.text;
    bool any = false;
    std::size_t search = 0;
    while (true) {
        const auto colon = logfmt::find(line, ": {", search);
        if (colon == std::string_view::npos) {
            return any;
        }
        search = colon + 1;
        std::size_t i = colon;
        while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9') {
            --i;
        }
        if (i == colon || i == 0 || line[i - 1] != ' ' || colon - i > 18) {
            continue;
        }
        const std::size_t digitsBegin = i;
        std::size_t k = i - 1;  // the space
        while (k > 0 && isKeywordChar(line[k - 1])) {
            --k;
        }
        const std::string_view keyword = line.substr(k, digitsBegin - 1 - k);
        if (k > 0 && line[k - 1] != ' ' && line[k - 1] != ']' && line[k - 1] != ')') {
            continue;
        }
        bool known = false;
        for (auto kw : kKeywords) {
            known = known || kw == keyword;
        }
        if (!known) {
            continue;
        }
        const std::int64_t id = std::strtoll(
            std::string(line.substr(digitsBegin, colon - digitsBegin)).c_str(), nullptr, 10);
        const std::size_t brace = colon + 2;
        std::size_t used = 0;
        auto value = parsePythonLiteralPrefix(line.substr(brace), &used);
        out.progress = true;
        any = true;
        const std::string record = std::string(keyword) + " " + std::to_string(id);
        if (value && value->kind == PyValue::Kind::Dict) {
            std::vector<std::pair<std::string, double>> flat;
            flattenNumeric(*value, "", flat);
            addNanEvents(flat, id, out);
            for (auto& [name, v] : flat) {
                out.metrics.push_back(LogMetric{std::move(name), v, id});
            }
            search = brace + used;
            continue;
        }
        // The dict does not parse: keep its entries up to the bad spot.
        Salvage s = salvageDict(line.substr(brace));
        const std::string& error = value ? std::string() : value.error();
        if (s.what == "end of text" || s.badAt + 1 >= line.size() - brace ||
            logfmt::find(error, "end of text") != std::string::npos ||
            logfmt::find(error, "unterminated") != std::string::npos) {
            out.incomplete = true;
        }
        const std::size_t column = brace + s.badAt + 1;
        out.warning = record + ": column " + std::to_string(column) + ": expected " +
                      (s.what.empty() ? std::string("'}'") : s.what) + " (kept " +
                      std::to_string(s.flat.size()) + " values before it)";
        addNanEvents(s.flat, id, out);
        LogEvent ev = logfmt::makeEvent(LogEventKind::Info, out.warning);
        ev.attrs["what"] = "partial_record";
        ev.attrs["format"] = "slime_dict";
        ev.attrs["record"] = record;
        ev.attrs["column"] = std::to_string(column);
        ev.attrs["kept"] = std::to_string(s.flat.size());
        out.events.push_back(std::move(ev));
        for (auto& [name, v] : s.flat) {
            out.metrics.push_back(LogMetric{std::move(name), v, id});
        }
        return true;  // the rest of the line is not trusted
    }
}

}  // namespace runplane::agent
