#include "backend/alerts/rules.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/redact.h"

namespace runplane::alerts {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::pair<Level, const char*>, 4> kLevels{{{Level::Info, "info"},
                                                                {Level::Warning, "warning"},
                                                                {Level::Error, "error"},
                                                                {Level::Critical, "critical"}}};

constexpr std::array<std::pair<DestinationKind, const char*>, 4> kKinds{
    {{DestinationKind::Slack, "slack"},
     {DestinationKind::Discord, "discord"},
     {DestinationKind::Webhook, "webhook"},
     {DestinationKind::Command, "command"}}};

// The run states a rule may name: the history's spelling (runs.status).
constexpr std::array<const char*, 5> kRunStates{"running", "finished", "failed", "stopped",
                                                "daemon_lost"};

constexpr std::size_t kMaxFileBytes = 1u << 20;
constexpr std::size_t kMaxSecretBytes = 8192;

std::string where(const std::string& file, const YAML::Mark& mark) {
    // yaml-cpp counts from 0; editors count from 1.
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Errors are thrown inside the parser only, and caught at its one entry point.
struct ParseError {
    std::string message;
};

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& field,
                       const std::string& what) {
    throw ParseError{where(file, node.Mark()) + ": " + field + ": " + what};
}

void checkKeys(const std::string& file, const YAML::Node& map, const std::string& context,
               const std::vector<std::string>& allowed) {
    for (const auto& item : map) {
        const std::string key = item.first.Scalar();
        bool known = false;
        for (const auto& a : allowed) {
            known = known || a == key;
        }
        if (!known) {
            std::string list;
            for (const auto& a : allowed) {
                list += (list.empty() ? "" : ", ") + a;
            }
            fail(file, item.first, context + key, "unknown key (expected " + list + ")");
        }
    }
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node.IsScalar() || node.Scalar().empty()) {
        fail(file, node, field, "must be a non-empty string");
    }
    return node.Scalar();
}

std::vector<std::string> stringList(const std::string& file, const YAML::Node& node,
                                    const std::string& field) {
    std::vector<std::string> out;
    if (node.IsScalar()) {
        out.push_back(scalar(file, node, field));
        return out;
    }
    if (!node.IsSequence()) {
        fail(file, node, field, "must be a string or a list of strings");
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
        out.push_back(scalar(file, node[i], field + "[" + std::to_string(i) + "]"));
    }
    return out;
}

std::int64_t duration(const std::string& file, const YAML::Node& node, const std::string& field) {
    const auto d = node.IsScalar() ? parseDuration(node.Scalar()) : std::nullopt;
    if (!d || *d <= 0) {
        fail(file, node, field, "must be a duration such as 30s, 10m, 2h or 1d");
    }
    return *d;
}

std::string expandHome(const std::string& path, const fs::path& base) {
    fs::path p = path;
    if (path.rfind("~/", 0) == 0 && std::getenv("HOME")) {
        p = fs::path(std::getenv("HOME")) / path.substr(2);
    }
    return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

std::string trimmed(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.pop_back();
    }
    std::size_t start = 0;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) {
        ++start;
    }
    return text.substr(start);
}

// A secret given as `<key>`, `<key>_file` or `<key>_env` in map (at most one of them).
std::string secret(const std::string& file, const YAML::Node& map, const std::string& context,
                   const std::string& key, bool fileIsPrivate, const fs::path& base) {
    const YAML::Node inlineValue = map[key];
    const YAML::Node fromFile = map[key + "_file"];
    const YAML::Node fromEnv = map[key + "_env"];
    const int given = (inlineValue ? 1 : 0) + (fromFile ? 1 : 0) + (fromEnv ? 1 : 0);
    if (given > 1) {
        fail(file, map, context + key,
             "give one of " + key + ", " + key + "_file, " + key + "_env");
    }
    if (inlineValue) {
        if (!fileIsPrivate) {
            fail(file, inlineValue, context + key,
                 "a secret written inline, but the rules file is readable by group or others; "
                 "chmod 600 " +
                     file + ", or use " + key + "_file / " + key + "_env");
        }
        return scalar(file, inlineValue, context + key);
    }
    if (fromFile) {
        const std::string path = expandHome(scalar(file, fromFile, context + key + "_file"), base);
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            fail(file, fromFile, context + key + "_file", "cannot read " + path);
        }
        std::string value(kMaxSecretBytes + 1, '\0');
        in.read(value.data(), static_cast<std::streamsize>(value.size()));
        value.resize(static_cast<std::size_t>(in.gcount()));
        if (value.size() > kMaxSecretBytes) {
            fail(file, fromFile, context + key + "_file", path + " is larger than 8 KiB");
        }
        value = trimmed(value);
        if (value.empty()) {
            fail(file, fromFile, context + key + "_file", path + " is empty");
        }
        return value;
    }
    if (fromEnv) {
        const std::string name = scalar(file, fromEnv, context + key + "_env");
        const char* value = std::getenv(name.c_str());
        if (value == nullptr || *value == '\0') {
            fail(file, fromEnv, context + key + "_env",
                 "the environment variable " + name + " is not set");
        }
        return trimmed(value);
    }
    return {};
}

void checkUrl(const std::string& file, const YAML::Node& map, const std::string& field,
              const std::string& url) {
    // The URL itself is never shown: it is a secret.
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
        fail(file, map, field, "the URL must begin with http:// or https://");
    }
}

Destination parseDestination(const std::string& file, const YAML::Node& n, std::size_t i,
                             bool fileIsPrivate, const fs::path& base) {
    const std::string context = "destinations[" + std::to_string(i) + "].";
    if (!n.IsMap()) {
        fail(file, n, context.substr(0, context.size() - 1), "must be a mapping {name, type, ...}");
    }
    checkKeys(file, n, context,
              {"name", "type", "url", "url_file", "url_env", "token", "token_file", "token_env",
               "argv", "timeout"});
    Destination d;
    d.where = where(file, n.Mark());
    if (!n["name"]) {
        fail(file, n, context + "name", "missing");
    }
    d.name = scalar(file, n["name"], context + "name");
    if (!n["type"]) {
        fail(file, n, context + "type", "missing (slack, discord, webhook or command)");
    }
    const std::string type = scalar(file, n["type"], context + "type");
    bool known = false;
    for (const auto& [kind, name] : kKinds) {
        if (type == name) {
            d.kind = kind;
            known = true;
        }
    }
    if (!known) {
        fail(file, n["type"], context + "type",
             "'" + type + "' is not one of slack, discord, webhook, command");
    }
    if (d.kind == DestinationKind::Command) {
        for (const char* key : {"url", "url_file", "url_env", "token", "token_file", "token_env"}) {
            if (n[key]) {
                fail(file, n[key], context + key, "a command destination takes argv, not a URL");
            }
        }
        if (!n["argv"]) {
            fail(file, n, context + "argv", "missing: the command and its arguments, as a list");
        }
        if (!n["argv"].IsSequence() || n["argv"].size() == 0) {
            fail(file, n["argv"], context + "argv", "must be a non-empty list (no shell is used)");
        }
        d.argv = stringList(file, n["argv"], context + "argv");
    } else {
        if (n["argv"]) {
            fail(file, n["argv"], context + "argv", "only a command destination takes argv");
        }
        d.url = secret(file, n, context, "url", fileIsPrivate, base);
        if (d.url.empty()) {
            fail(file, n, context + "url", "missing: give url_file, url_env or url");
        }
        checkUrl(file, n, context + "url", d.url);
        if (d.kind == DestinationKind::Webhook) {
            d.token = secret(file, n, context, "token", fileIsPrivate, base);
        } else {
            for (const char* key : {"token", "token_file", "token_env"}) {
                if (n[key]) {
                    fail(file, n[key], context + key,
                         "only a webhook destination takes a token (Slack and Discord webhook "
                         "URLs carry theirs)");
                }
            }
        }
    }
    if (n["timeout"]) {
        d.timeoutSeconds =
            static_cast<double>(duration(file, n["timeout"], context + "timeout")) / 1e9;
    }
    return d;
}

Rule parseRule(const std::string& file, const YAML::Node& n, std::size_t i,
               const AlertRules& rules) {
    const std::string context = "rules[" + std::to_string(i) + "].";
    if (!n.IsMap()) {
        fail(file, n, context.substr(0, context.size() - 1), "must be a mapping {name, to, ...}");
    }
    checkKeys(file, n, context,
              {"name", "events", "run_states", "runs", "nodes", "min_level", "rate_limit", "quiet",
               "to"});
    Rule r;
    r.where = where(file, n.Mark());
    r.name = n["name"] ? scalar(file, n["name"], context + "name") : "rule" + std::to_string(i + 1);
    if (n["events"]) {
        r.events = stringList(file, n["events"], context + "events");
        for (std::size_t k = 0; k < r.events.size(); ++k) {
            const std::string& kind = r.events[k];
            bool word = !kind.empty();
            for (char c : kind) {
                word = word && (std::islower(static_cast<unsigned char>(c)) ||
                                std::isdigit(static_cast<unsigned char>(c)) || c == '_');
            }
            if (!word) {
                const YAML::Node at = n["events"].IsSequence() ? n["events"][k] : n["events"];
                fail(file, at, context + "events",
                     "'" + kind + "' is not an event kind name (lower case, digits, _)");
            }
        }
    }
    if (n["run_states"]) {
        r.runStates = stringList(file, n["run_states"], context + "run_states");
        for (std::size_t k = 0; k < r.runStates.size(); ++k) {
            bool known = false;
            for (const char* s : kRunStates) {
                known = known || r.runStates[k] == s;
            }
            if (!known) {
                const YAML::Node at =
                    n["run_states"].IsSequence() ? n["run_states"][k] : n["run_states"];
                fail(file, at, context + "run_states",
                     "'" + r.runStates[k] +
                         "' is not one of running, finished, failed, stopped, daemon_lost");
            }
        }
    }
    if (const YAML::Node runs = n["runs"]) {
        if (!runs.IsMap()) {
            fail(file, runs, context + "runs", "must be a mapping {names, recipes, tags}");
        }
        checkKeys(file, runs, context + "runs.", {"names", "recipes", "tags"});
        if (runs["names"]) {
            r.runNames = stringList(file, runs["names"], context + "runs.names");
        }
        if (runs["recipes"]) {
            r.recipes = stringList(file, runs["recipes"], context + "runs.recipes");
        }
        if (runs["tags"]) {
            r.tags = stringList(file, runs["tags"], context + "runs.tags");
        }
    }
    if (n["nodes"]) {
        r.nodes = stringList(file, n["nodes"], context + "nodes");
    }
    if (n["min_level"]) {
        const std::string text = scalar(file, n["min_level"], context + "min_level");
        const auto level = levelFromString(text);
        if (!level) {
            fail(file, n["min_level"], context + "min_level",
                 "'" + text + "' is not one of info, warning, error, critical");
        }
        r.minLevel = *level;
    }
    if (const YAML::Node rate = n["rate_limit"]) {
        // "N/DURATION": at most N alerts of this rule per DURATION.
        const std::string text = rate.IsScalar() ? rate.Scalar() : std::string();
        const auto slash = text.find('/');
        int count = 0;
        std::optional<std::int64_t> window;
        if (slash != std::string::npos) {
            const auto [end, ec] = std::from_chars(text.data(), text.data() + slash, count);
            window = parseDuration(std::string_view(text).substr(slash + 1));
            if (ec != std::errc() || end != text.data() + slash) {
                count = 0;
            }
        }
        if (count <= 0 || count > 100000 || !window || *window <= 0) {
            fail(file, rate, context + "rate_limit",
                 "must be COUNT/DURATION, e.g. 5/1h (at most 5 alerts an hour)");
        }
        r.rateCount = count;
        r.rateWindowNs = *window;
    }
    if (n["quiet"]) {
        r.quietNs = duration(file, n["quiet"], context + "quiet");
    }
    if (!n["to"]) {
        fail(file, n, context + "to", "missing: the destination names this rule sends to");
    }
    r.to = stringList(file, n["to"], context + "to");
    for (std::size_t k = 0; k < r.to.size(); ++k) {
        if (rules.destination(r.to[k]) == nullptr) {
            const YAML::Node at = n["to"].IsSequence() ? n["to"][k] : n["to"];
            fail(file, at, context + "to", "no destination is named '" + r.to[k] + "'");
        }
    }
    return r;
}

AlertRules parseRoot(const std::string& file, const YAML::Node& root, bool fileIsPrivate) {
    AlertRules rules;
    rules.path = file;
    const fs::path base = fs::path(file).parent_path();
    if (!root.IsMap()) {
        fail(file, root, "alerts", "must be a mapping with destinations: and rules:");
    }
    checkKeys(file, root, "", {"destinations", "rules", "delivery"});
    const YAML::Node destinations = root["destinations"];
    if (!destinations || !destinations.IsSequence()) {
        fail(file, destinations ? destinations : root, "destinations",
             "must be a list of {name, type, ...}");
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < destinations.size(); ++i) {
        Destination d = parseDestination(file, destinations[i], i, fileIsPrivate, base);
        if (!names.insert(d.name).second) {
            fail(file, destinations[i]["name"], "destinations[" + std::to_string(i) + "].name",
                 "'" + d.name + "' is named twice");
        }
        rules.destinations.push_back(std::move(d));
    }
    if (const YAML::Node delivery = root["delivery"]) {
        if (!delivery.IsMap()) {
            fail(file, delivery, "delivery",
                 "must be a mapping {deadline, backoff_base, backoff_max, max_pending}");
        }
        checkKeys(file, delivery, "delivery.",
                  {"deadline", "backoff_base", "backoff_max", "max_pending"});
        DeliverySettings& s = rules.delivery;
        if (delivery["deadline"]) {
            s.deadlineNs = duration(file, delivery["deadline"], "delivery.deadline");
        }
        if (delivery["backoff_base"]) {
            s.backoffBaseNs = duration(file, delivery["backoff_base"], "delivery.backoff_base");
        }
        if (delivery["backoff_max"]) {
            s.backoffMaxNs = duration(file, delivery["backoff_max"], "delivery.backoff_max");
        }
        if (s.backoffMaxNs < s.backoffBaseNs) {
            fail(file, delivery, "delivery.backoff_max", "must not be below backoff_base");
        }
        if (const YAML::Node m = delivery["max_pending"]) {
            int value = 0;
            if (!m.IsScalar() || !YAML::convert<int>::decode(m, value) || value < 1 ||
                value > 100000) {
                fail(file, m, "delivery.max_pending", "must be a whole number in 1..100000");
            }
            s.maxPending = value;
        }
    }
    const YAML::Node list = root["rules"];
    if (!list || !list.IsSequence()) {
        fail(file, list ? list : root, "rules", "must be a list of {name, events, to, ...}");
    }
    std::set<std::string> ruleNames;
    for (std::size_t i = 0; i < list.size(); ++i) {
        Rule r = parseRule(file, list[i], i, rules);
        if (!ruleNames.insert(r.name).second) {
            fail(file, list[i]["name"] ? list[i]["name"] : list[i],
                 "rules[" + std::to_string(i) + "].name", "'" + r.name + "' is named twice");
        }
        rules.rules.push_back(std::move(r));
    }
    return rules;
}

}  // namespace

const char* toString(Level level) {
    for (const auto& [l, name] : kLevels) {
        if (l == level) {
            return name;
        }
    }
    return "warning";
}

std::optional<Level> levelFromString(std::string_view text) {
    for (const auto& [l, name] : kLevels) {
        if (text == name) {
            return l;
        }
    }
    return std::nullopt;
}

const char* toString(DestinationKind kind) {
    for (const auto& [k, name] : kKinds) {
        if (k == kind) {
            return name;
        }
    }
    return "webhook";
}

const Destination* AlertRules::destination(std::string_view name) const {
    for (const auto& d : destinations) {
        if (d.name == name) {
            return &d;
        }
    }
    return nullptr;
}

std::vector<std::string> AlertRules::secrets() const {
    std::vector<std::string> out;
    for (const auto& d : destinations) {
        for (const std::string* s : {&d.url, &d.token}) {
            if (!s->empty()) {
                out.push_back(*s);
            }
        }
    }
    return out;
}

std::string defaultAlertsPath() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg && fs::path(xdg).is_absolute()) {
        return (fs::path(xdg) / "runplane" / "alerts.yaml").string();
    }
    const char* home = std::getenv("HOME");
    return (fs::path(home && *home ? home : ".") / ".config" / "runplane" / "alerts.yaml").string();
}

Result<AlertRules> parseAlertRules(const std::string& text, const std::string& path,
                                   bool fileIsPrivate) {
    if (text.size() > kMaxFileBytes) {
        return Error{path + ": larger than 1 MiB; not an alerts file", ErrorCode::InvalidArgument};
    }
    try {
        const YAML::Node root = YAML::Load(text);
        return parseRoot(path, root, fileIsPrivate);
    } catch (const ParseError& e) {
        return Error{e.message, ErrorCode::InvalidArgument};
    } catch (const YAML::Exception& e) {
        return Error{where(path, e.mark) + ": " + e.msg, ErrorCode::InvalidArgument};
    }
}

Result<AlertRules> loadAlertRules(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return Error{path + ": no alerts file", ErrorCode::NotFound};
    }
    if (!S_ISREG(st.st_mode)) {
        return Error{path + ": not a regular file", ErrorCode::InvalidArgument};
    }
    if (static_cast<std::size_t>(st.st_size) > kMaxFileBytes) {
        return Error{path + ": larger than 1 MiB; not an alerts file", ErrorCode::InvalidArgument};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{path + ": cannot read the alerts file", ErrorCode::InvalidArgument};
    }
    std::ostringstream text;
    text << in.rdbuf();
    const bool isPrivate = (st.st_mode & (S_IRGRP | S_IROTH)) == 0;
    return parseAlertRules(text.str(), path, isPrivate);
}

std::optional<std::int64_t> parseDuration(std::string_view text) {
    while (!text.empty() && text.front() == ' ') {
        text.remove_prefix(1);
    }
    while (!text.empty() && text.back() == ' ') {
        text.remove_suffix(1);
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || !std::isfinite(value) || value < 0) {
        return std::nullopt;
    }
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    constexpr std::array<std::pair<std::string_view, double>, 6> kUnits{
        {{"", 1e9}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {"d", 86400e9}}};
    for (const auto& [name, scale] : kUnits) {
        if (unit == name) {
            const double ns = value * scale;
            if (ns > 9e18) {
                return std::nullopt;
            }
            return static_cast<std::int64_t>(ns);
        }
    }
    return std::nullopt;
}

bool globMatch(std::string_view pattern, std::string_view text) {
    // Iterative wildcard match with one backtrack point: linear in practice, never exponential.
    std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

std::string scrub(std::string text, const std::vector<std::string>& secrets) {
    for (const std::string& s : secrets) {
        if (s.empty()) {
            continue;
        }
        for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at)) {
            text.replace(at, s.size(), redact::kRedacted);
            at += redact::kRedacted.size();
        }
    }
    return redact::redactText(text);
}

}  // namespace runplane::alerts
