#include "backend/diagnosis/last_output.h"

#include <cctype>
#include <ctime>
#include <map>

namespace runplane::diagnosis {
namespace {

bool isDigits(std::string_view s) {
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
            return false;
        }
    }
    return !s.empty();
}

std::int64_t toInt(std::string_view s) {
    std::int64_t v = 0;
    for (char c : s) {
        v = v * 10 + (c - '0');
    }
    return v;
}

// Drops ANSI colour codes (Ray colours its prefixes) from the start of a line.
std::string_view skipAnsi(std::string_view s) {
    while (s.size() >= 2 && s[0] == '\x1b' && s[1] == '[') {
        const auto m = s.find('m');
        if (m == std::string_view::npos) {
            break;
        }
        s.remove_prefix(m + 1);
    }
    return s;
}

}  // namespace

LinePrefix linePrefix(std::string_view line) {
    LinePrefix p;
    std::string_view s = skipAnsi(line);
    if (!s.empty() && s[0] == '(') {
        const auto close = s.find(')');
        if (close != std::string_view::npos && close < 200) {
            std::string_view inner = s.substr(1, close - 1);
            const auto sp = inner.find_first_of(" ,");
            p.actor = std::string(inner.substr(0, sp));
            if (sp != std::string_view::npos) {
                std::string_view rest = inner.substr(sp);
                while (!rest.empty()) {
                    const auto comma = rest.find(',', 1);
                    std::string_view kv = rest.substr(0, comma);
                    while (!kv.empty() && (kv.front() == ' ' || kv.front() == ',')) {
                        kv.remove_prefix(1);
                    }
                    if (kv.rfind("pid=", 0) == 0 && isDigits(kv.substr(4))) {
                        p.pid = toInt(kv.substr(4));
                    } else if (kv.rfind("ip=", 0) == 0) {
                        p.ip = std::string(kv.substr(3));
                    }
                    if (comma == std::string_view::npos) {
                        break;
                    }
                    rest.remove_prefix(comma);
                }
            }
            // Only Ray's forms: `(Name pid=N, ip=X)`, `(raylet, ip=X)` or a bare `(raylet)`.
            const bool identifier =
                !p.actor.empty() && p.actor.find_first_not_of(
                                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_.:") == std::string::npos;
            if (!identifier || (sp != std::string_view::npos && p.pid < 0 && p.ip.empty())) {
                p = LinePrefix{};
            }
            if (!p.actor.empty()) {
                s = s.substr(close + 1);
                while (!s.empty() && s.front() == ' ') {
                    s.remove_prefix(1);
                }
                s = skipAnsi(s);
            }
        }
    }
    if (s.rfind("[rank", 0) == 0) {
        const auto end = s.find("]:");
        if (end != std::string_view::npos && isDigits(s.substr(5, end - 5))) {
            p.rank = toInt(s.substr(5, end - 5));
        }
    }
    return p;
}

std::int64_t lineTimeUnixNs(std::string_view line) {
    const std::string_view head = line.substr(0, 96);
    for (std::size_t i = 0; i + 19 <= head.size(); ++i) {
        const std::string_view c = head.substr(i, 19);
        if (!(isDigits(c.substr(0, 4)) && c[4] == '-' && isDigits(c.substr(5, 2)) && c[7] == '-' &&
              isDigits(c.substr(8, 2)) && (c[10] == ' ' || c[10] == 'T') &&
              isDigits(c.substr(11, 2)) && c[13] == ':' && isDigits(c.substr(14, 2)) &&
              c[16] == ':' && isDigits(c.substr(17, 2)))) {
            continue;
        }
        if (i > 0 && std::isdigit(static_cast<unsigned char>(head[i - 1])) != 0) {
            continue;
        }
        std::tm tm{};
        tm.tm_year = static_cast<int>(toInt(c.substr(0, 4))) - 1900;
        tm.tm_mon = static_cast<int>(toInt(c.substr(5, 2))) - 1;
        tm.tm_mday = static_cast<int>(toInt(c.substr(8, 2)));
        tm.tm_hour = static_cast<int>(toInt(c.substr(11, 2)));
        tm.tm_min = static_cast<int>(toInt(c.substr(14, 2)));
        tm.tm_sec = static_cast<int>(toInt(c.substr(17, 2)));
        tm.tm_isdst = -1;
        if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
            tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
            return 0;
        }
        const std::time_t t = std::mktime(&tm);
        return t < 0 ? 0 : static_cast<std::int64_t>(t) * 1000000000LL;
    }
    return 0;
}

std::vector<RoleOutput> lastOutputPerRole(const std::vector<StreamTail>& streams,
                                          const RoleOfPrefix& roleOf,
                                          const std::string& defaultRole) {
    std::vector<RoleOutput> out;
    std::map<std::string, std::size_t> index;
    for (const auto& stream : streams) {
        for (std::size_t i = 0; i < stream.lines.size(); ++i) {
            const std::string& line = stream.lines[i];
            if (line.empty()) {
                continue;
            }
            const LinePrefix prefix = linePrefix(line);
            std::string role = roleOf ? roleOf(prefix) : std::string();
            if (role.empty()) {
                role = defaultRole;
            }
            RoleOutput r;
            r.role = role;
            r.stream = stream.name;
            r.line = line;
            if (!prefix.actor.empty()) {
                r.source = prefix.actor +
                           (prefix.pid >= 0 ? " pid " + std::to_string(prefix.pid) : std::string());
            } else if (prefix.rank >= 0) {
                r.source = "rank " + std::to_string(prefix.rank);
            } else {
                r.source = "the run's own output";
            }
            r.tUnixNs = lineTimeUnixNs(line);
            if (r.tUnixNs > 0) {
                r.timeFrom = "line";
            } else if (i + 1 == stream.lines.size() && stream.lastWriteUnixNs > 0) {
                r.tUnixNs = stream.lastWriteUnixNs;
                r.timeFrom = "stream";
            }
            auto [it, fresh] = index.try_emplace(role, out.size());
            if (fresh) {
                out.push_back(std::move(r));
                continue;
            }
            RoleOutput& have = out[it->second];
            // Within a stream a later line is later; across streams compare known times.
            const bool sameStream = have.stream == r.stream;
            if (sameStream && r.tUnixNs == 0 && have.tUnixNs > 0) {
                // Printed after a line that carried its time: at most that long ago.
                r.tUnixNs = have.tUnixNs;
                r.timeFrom = "earlier_line";
            }
            if (sameStream || have.tUnixNs == 0 || (r.tUnixNs > 0 && r.tUnixNs >= have.tUnixNs)) {
                have = std::move(r);
            }
        }
    }
    return out;
}

std::string ageText(std::int64_t seconds) {
    if (seconds < 0) {
        seconds = 0;
    }
    if (seconds < 120) {
        return std::to_string(seconds) + " s";
    }
    if (seconds < 3600) {
        return std::to_string(seconds / 60) + " min";
    }
    return std::to_string(seconds / 3600) + " h " + std::to_string((seconds % 3600) / 60) + " min";
}

std::string lastOutputText(const std::vector<RoleOutput>& roles, std::int64_t nowNs) {
    std::string out;
    for (const auto& r : roles) {
        std::string line = r.line.size() > 80 ? r.line.substr(0, 77) + "..." : r.line;
        out += (out.empty() ? "" : "; ") + r.role + ": `" + line + "` ";
        if (r.tUnixNs <= 0) {
            out += "(time unknown)";
        } else {
            out += (r.timeFrom == "earlier_line" ? "at most " : "") +
                   ageText((nowNs - r.tUnixNs) / 1000000000LL) + " ago";
        }
    }
    return out;
}

nlohmann::json toJson(const std::vector<RoleOutput>& roles) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : roles) {
        a.push_back({{"role", r.role},
                     {"source", r.source},
                     {"stream", r.stream},
                     {"line", r.line},
                     {"t_unix_ns", r.tUnixNs},
                     {"time_from", r.timeFrom}});
    }
    return a;
}

std::vector<RoleOutput> roleOutputsFromJson(const nlohmann::json& j) {
    std::vector<RoleOutput> out;
    if (!j.is_array()) {
        return out;
    }
    for (const auto& e : j) {
        if (!e.is_object()) {
            continue;
        }
        RoleOutput r;
        r.role = e.value("role", std::string());
        r.source = e.value("source", std::string());
        r.stream = e.value("stream", std::string());
        r.line = e.value("line", std::string());
        r.tUnixNs = e.value("t_unix_ns", std::int64_t{0});
        r.timeFrom = e.value("time_from", std::string());
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace runplane::diagnosis
