// The CSV / JSON-lines fallback (docs/imports.md, "CSV and JSON lines"): one row per logged
// step, a step column, a wall-time column (Unix seconds) and one column per metric.
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>

#include "db/imports/content_hash.h"
#include "db/imports/run_import.h"

namespace runplane::imports {
namespace {

/// Column / key names with a meaning of their own; every other column is a metric.
struct SpecialColumn {
    const char* name;
    bool isStep;  // else: wall time in Unix seconds
};
constexpr std::array<SpecialColumn, 6> kSpecial{{
    {"step", true},
    {"_step", true},  // W&B's exports
    {"global_step", true},
    {"wall_time", false},
    {"_timestamp", false},  // W&B's exports
    {"timestamp", false},
}};

const SpecialColumn* special(std::string_view name) {
    for (const auto& c : kSpecial) {
        if (name == c.name) {
            return &c;
        }
    }
    return nullptr;
}

/// The file's bytes, hashed; bounded (a CSV beyond 4 GiB is not a fallback any more).
Result<std::string> readFile(const std::string& path, ImportedRun& run) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{path + ": cannot open"};
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        return Error{path + ": read error"};
    }
    ContentHash hash;
    hash.update(bytes.data(), bytes.size());
    run.contentSha256 = hash.hex();
    return bytes;
}

std::optional<double> number(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    if (text.empty()) {
        return std::nullopt;
    }
    const std::string s(text);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// Unix seconds written in decimal ("1796553600.125") to ns exactly, without a double's rounding;
/// nullopt for other spellings (an exponent, nan), which take the double's nearest ns.
std::optional<std::int64_t> decimalSecondsToNs(std::string_view t) {
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) {
        t.remove_prefix(1);
    }
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) {
        t.remove_suffix(1);
    }
    const bool negative = !t.empty() && t.front() == '-';
    if (negative) {
        t.remove_prefix(1);
    }
    const std::size_t dot = t.find('.');
    const std::string_view whole = t.substr(0, dot);
    const std::string_view frac = dot == std::string_view::npos ? "" : t.substr(dot + 1);
    if (whole.empty() || whole.size() > 10) {
        return std::nullopt;
    }
    std::int64_t ns = 0;
    for (char c : whole) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        ns = ns * 10 + (c - '0');
    }
    std::int64_t fracNs = 0;
    std::int64_t scale = 100'000'000;
    for (char c : frac) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        fracNs += (c - '0') * scale;  // digits past the ns are dropped
        scale /= 10;
    }
    if (ns > 9'223'372'035) {  // past an int64 of ns (year 2262)
        return std::nullopt;
    }
    ns = ns * 1'000'000'000 + fracNs;
    return negative ? -ns : ns;
}

/// The text of the number a JSON line gives `key` at its top level, if it is spelled there once
/// (the parsed double would round it).
std::string_view rawNumber(std::string_view line, const std::string& key) {
    const std::string quoted = "\"" + key + "\"";
    const std::size_t k = line.find(quoted);
    if (k == std::string_view::npos || line.find(quoted, k + 1) != std::string_view::npos) {
        return {};
    }
    std::size_t at = line.find(':', k + quoted.size());
    if (at == std::string_view::npos) {
        return {};
    }
    ++at;
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) {
        ++at;
    }
    std::size_t end = at;
    while (end < line.size() && (std::isdigit(static_cast<unsigned char>(line[end])) != 0 ||
                                 line[end] == '.' || line[end] == '-')) {
        ++end;
    }
    return line.substr(at, end - at);
}

std::int64_t secondsToNs(double s) {
    const double ns = std::nearbyint(s * 1e9);
    return (ns > -9.2e18 && ns < 9.2e18) ? static_cast<std::int64_t>(ns) : 0;
}

/// Collects one row's cells into the run's series.
class Rows {
  public:
    explicit Rows(ImportedRun& run) : m_run(run) {}
    std::size_t seriesFor(const std::string& name) {
        auto [it, fresh] = m_index.try_emplace(name, m_run.series.size());
        if (fresh) {
            m_run.series.push_back(ImportedSeries{name, {}});
        }
        return it->second;
    }
    /// Time of a row: its wall time, else its step as seconds since the epoch, else its index.
    static std::int64_t timeOf(std::optional<double> wall, std::string_view wallText,
                               std::int64_t step, std::int64_t row) {
        if (wall) {
            const auto exact = decimalSecondsToNs(wallText);
            return exact ? *exact : secondsToNs(*wall);
        }
        return (step >= 0 ? step : row) * 1'000'000'000LL;
    }
    void add(std::size_t series, std::int64_t step, std::int64_t tNs, double v) {
        m_run.series[series].points.push_back(ImportedPoint{step, tNs, v});
    }

  private:
    ImportedRun& m_run;
    std::map<std::string, std::size_t> m_index;
};

/// One CSV record (RFC 4180 quoting) from `at`; false at a malformed one (an open quote).
bool csvRecord(const std::string& b, std::size_t& at, std::vector<std::string>& cells) {
    cells.clear();
    std::string cell;
    bool quoted = false;
    while (at < b.size()) {
        const char c = b[at];
        if (quoted) {
            if (c == '"') {
                if (at + 1 < b.size() && b[at + 1] == '"') {
                    cell += '"';
                    at += 2;
                    continue;
                }
                quoted = false;
            } else {
                cell += c;
            }
            ++at;
            continue;
        }
        if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            cells.push_back(std::move(cell));
            cell.clear();
        } else if (c == '\n') {
            ++at;
            break;
        } else if (c != '\r') {
            cell += c;
        }
        ++at;
    }
    if (quoted) {
        return false;
    }
    cells.push_back(std::move(cell));
    return true;
}

}  // namespace

Result<ImportedRun> readCsv(const ImportSource& source) {
    ImportedRun run;
    run.format = "csv";
    run.name = source.name;
    run.files = source.files;
    const std::string& path = source.files.at(0);
    auto bytes = readFile(path, run);
    if (!bytes.ok()) {
        return bytes.failure();
    }
    const std::string& b = *bytes;
    std::size_t at = 0;
    std::vector<std::string> header;
    if (!csvRecord(b, at, header) || (header.size() == 1 && header[0].empty())) {
        return Error{path + ": no header row (step, wall_time and metric names)"};
    }
    Rows rows(run);
    int stepCol = -1;
    int wallCol = -1;
    std::vector<std::optional<std::size_t>> seriesOfCol(header.size());
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (const SpecialColumn* s = special(header[i])) {
            (s->isStep ? stepCol : wallCol) = static_cast<int>(i);
        } else if (!header[i].empty()) {
            seriesOfCol[i] = rows.seriesFor(header[i]);
        }
    }
    std::vector<std::string> cells;
    std::int64_t line = 1;
    while (at < b.size()) {
        const std::size_t start = at;
        ++line;
        if (!csvRecord(b, at, cells)) {
            run.stopped = path + ": stopped at byte " + std::to_string(start) + " (line " +
                          std::to_string(line) + "): a quoted cell is not closed";
            break;
        }
        if (cells.size() == 1 && cells[0].empty()) {
            continue;  // a blank line
        }
        if (cells.size() != header.size()) {
            run.stopped = path + ": stopped at byte " + std::to_string(start) + " (line " +
                          std::to_string(line) + "): " + std::to_string(cells.size()) +
                          " cells where the header has " + std::to_string(header.size());
            break;
        }
        ++run.records;
        std::int64_t step = -1;
        if (stepCol >= 0) {
            if (auto v = number(cells[static_cast<std::size_t>(stepCol)])) {
                step = stepFromNumber(*v);
            }
        }
        std::optional<double> wall;
        std::string_view wallText;
        if (wallCol >= 0) {
            wallText = cells[static_cast<std::size_t>(wallCol)];
            wall = number(wallText);
        }
        const std::int64_t tNs = Rows::timeOf(wall, wallText, step, run.records - 1);
        for (std::size_t i = 0; i < cells.size(); ++i) {
            if (!seriesOfCol[i]) {
                continue;
            }
            if (auto v = number(cells[i])) {
                rows.add(*seriesOfCol[i], step, tNs, *v);
            } else if (!cells[i].empty()) {
                ++run.skippedValues;
            }
        }
    }
    run.extra["wall_time_column"] = wallCol >= 0 ? header[static_cast<std::size_t>(wallCol)] : "";
    return run;
}

Result<ImportedRun> readJsonLines(const ImportSource& source) {
    ImportedRun run;
    run.format = "jsonl";
    run.name = source.name;
    run.files = source.files;
    const std::string& path = source.files.at(0);
    auto bytes = readFile(path, run);
    if (!bytes.ok()) {
        return bytes.failure();
    }
    const std::string& b = *bytes;
    Rows rows(run);
    std::size_t at = 0;
    std::int64_t line = 0;
    while (at < b.size()) {
        const std::size_t start = at;
        std::size_t end = b.find('\n', at);
        const bool complete = end != std::string::npos;
        if (!complete) {
            end = b.size();
        }
        at = complete ? end + 1 : end;
        ++line;
        const std::string_view text(b.data() + start, end - start);
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) {
            continue;
        }
        nlohmann::json row = nlohmann::json::parse(text, nullptr, false);
        if (row.is_discarded() || !row.is_object()) {
            run.stopped = path + ": stopped at byte " + std::to_string(start) + " (line " +
                          std::to_string(line) +
                          "): " + (complete ? "not a JSON object" : "truncated last line");
            break;
        }
        ++run.records;
        std::int64_t step = -1;
        std::optional<double> wall;
        std::string_view wallText;
        for (const auto& [key, value] : row.items()) {
            if (const SpecialColumn* s = special(key); s != nullptr && value.is_number()) {
                if (s->isStep) {
                    step = value.is_number_integer() ? value.get<std::int64_t>()
                                                     : stepFromNumber(value.get<double>());
                } else {
                    wall = value.get<double>();
                    wallText = rawNumber(text, key);
                }
            }
        }
        const std::int64_t tNs = Rows::timeOf(wall, wallText, step, run.records - 1);
        // Metrics: numbers and booleans, nested objects flattened with '/'.
        std::function<void(const nlohmann::json&, const std::string&)> walk =
            [&](const nlohmann::json& obj, const std::string& prefix) {
                for (const auto& [key, value] : obj.items()) {
                    if (prefix.empty() && special(key) != nullptr) {
                        continue;
                    }
                    const std::string name = prefix.empty() ? key : prefix + "/" + key;
                    if (value.is_object()) {
                        walk(value, name);
                    } else if (value.is_number()) {
                        rows.add(rows.seriesFor(name), step, tNs, value.get<double>());
                    } else if (value.is_boolean()) {
                        rows.add(rows.seriesFor(name), step, tNs, value.get<bool>() ? 1.0 : 0.0);
                    } else if (!value.is_null()) {
                        ++run.skippedValues;
                    }
                }
            };
        walk(row, "");
    }
    return run;
}

}  // namespace runplane::imports
