#include "backend/alerts/alert_event.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>

#include "common/json_text.h"

namespace runplane::alerts {
namespace {

using nlohmann::json;

// A run_state event's attrs.state (the protocol's spelling) in the history's spelling.
constexpr std::array<std::pair<const char*, const char*>, 7> kNodeStates{
    {{"RUN_STATE_STARTING", "running"},
     {"RUN_STATE_RUNNING", "running"},
     {"RUN_STATE_SUCCEEDED", "finished"},
     {"RUN_STATE_FAILED", "failed"},
     {"RUN_STATE_STOPPED", "stopped"},
     {"RUN_STATE_LOST", "daemon_lost"},
     {"RUN_STATE_UNSPECIFIED", "running"}}};

constexpr std::array<std::pair<const char*, Level>, 5> kStateLevels{
    {{"running", Level::Info},
     {"finished", Level::Info},
     {"stopped", Level::Warning},
     {"failed", Level::Error},
     {"daemon_lost", Level::Error}}};

std::string isoTime(std::int64_t ns) {
    const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// One line, no links, bounded: what a phone's lock screen shows.
std::string oneLine(std::string text, std::size_t max = 280) {
    for (char& c : text) {
        if (c == '\n' || c == '\r' || c == '\t') {
            c = ' ';
        }
    }
    // Link-free: a word with "://" is replaced, so chat clients render no link from it.
    for (std::size_t at = text.find("://"); at != std::string::npos; at = text.find("://")) {
        std::size_t begin = at;
        while (begin > 0 && text[begin - 1] != ' ') {
            --begin;
        }
        std::size_t end = text.find(' ', at);
        text.replace(begin, (end == std::string::npos ? text.size() : end) - begin, "<link>");
    }
    if (text.size() > max) {
        text.resize(max - 3);
        text += "...";
    }
    return text;
}

std::optional<double> number(const json& value) {
    if (value.is_number()) {
        return value.get<double>();
    }
    if (!value.is_string()) {
        return std::nullopt;
    }
    const std::string& s = value.get_ref<const std::string&>();
    double d = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(d)) {
        return std::nullopt;
    }
    return d;
}

std::string slackEscape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

int discordColor(const std::string& level) {
    if (level == "critical") {
        return 0x8B0000;
    }
    if (level == "error") {
        return 0xE01E5A;
    }
    if (level == "warning") {
        return 0xECB22E;
    }
    return 0x2EB67D;
}

std::string str(const json& j, const char* key) {
    if (!j.is_object()) {
        return {};
    }
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

const std::vector<KindLevel>& kindLevels() {
    static const std::vector<KindLevel> table{
        {"info", Level::Info},
        {"phase", Level::Info},
        {"nccl_warning", Level::Warning},
        {"stall", Level::Warning},
        {"gap", Level::Warning},
        {"node_reset", Level::Warning},
        {"memory_alarm", Level::Error},  // cleared: info
        {"process_exit", Level::Error},  // exit code 0: info
        {"run_state", Level::Info},      // by state: failed/daemon_lost error, stopped warning
        {"nccl_error", Level::Error},
        {"nccl_timeout", Level::Error},
        {"weight_sync_failure", Level::Error},
        {"hang", Level::Error},
        {"alert_failed", Level::Error},
        {"cuda_oom", Level::Critical},
        {"ray_oom", Level::Critical},
        {"host_oom", Level::Critical},
        {"crash", Level::Critical},
    };
    return table;
}

std::string runStateOf(const db::StoredEvent& event) {
    if (event.kind != "run_state") {
        return {};
    }
    const std::string state = db::attrText(event.attrs, "state");
    for (const auto& [node, history] : kNodeStates) {
        if (state == node) {
            return history;
        }
    }
    for (const auto& [history, level] : kStateLevels) {
        if (state == history) {
            return history;
        }
    }
    return {};
}

Level levelOf(const db::StoredEvent& event) {
    if (event.kind == "run_state") {
        const std::string state = runStateOf(event);
        for (const auto& [name, level] : kStateLevels) {
            if (state == name) {
                return level;
            }
        }
        return Level::Info;
    }
    if (event.kind == "process_exit") {
        const auto code =
            number(event.attrs.count("exit_code") ? event.attrs.at("exit_code") : json());
        const auto signal =
            number(event.attrs.count("term_signal") ? event.attrs.at("term_signal") : json());
        return (code && *code == 0 && (!signal || *signal == 0)) ? Level::Info : Level::Error;
    }
    if (event.kind == "memory_alarm" && db::attrText(event.attrs, "state") == "cleared") {
        return Level::Info;
    }
    for (const KindLevel& row : kindLevels()) {
        if (event.kind == row.kind) {
            return row.level;
        }
    }
    if (auto level = levelFromString(db::attrText(event.attrs, "level"))) {
        return *level;
    }
    return Level::Warning;
}

RunFacts runFacts(const db::StoredEvent& event, const std::optional<db::AlertRunInfo>& run) {
    RunFacts f;
    f.id = event.runId.value();
    f.name = f.id;
    if (!run) {
        return f;
    }
    f.known = true;
    f.name = run->name.empty() ? f.id : run->name;
    f.state = run->state;
    try {
        const YAML::Node recipe = YAML::Load(run->recipeYaml);
        if (recipe.IsMap()) {
            if (recipe["name"] && recipe["name"].IsScalar()) {
                f.recipe = recipe["name"].Scalar();
            }
            for (const char* key : {"framework", "placement"}) {
                if (recipe[key] && recipe[key].IsScalar()) {
                    f.tags.push_back(std::string(key) + "=" + recipe[key].Scalar());
                }
            }
            if (recipe["model"] && recipe["model"].IsMap() && recipe["model"]["name"] &&
                recipe["model"]["name"].IsScalar()) {
                f.tags.push_back("model=" + recipe["model"]["name"].Scalar());
            }
        }
    } catch (const YAML::Exception&) {
        // A recipe snapshot that does not parse has no name or tags to match.
    }
    const json provenance = json::parse(run->provenanceJson, nullptr, false);
    if (provenance.is_object() && provenance.contains("tags") && provenance["tags"].is_array()) {
        for (const json& t : provenance["tags"]) {
            if (t.is_string()) {
                f.tags.push_back(t.get<std::string>());
            }
        }
    }
    return f;
}

namespace {

bool anyMatch(const std::vector<std::string>& patterns, const std::vector<std::string>& values) {
    for (const auto& p : patterns) {
        for (const auto& v : values) {
            if (globMatch(p, v)) {
                return true;
            }
        }
    }
    return false;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
    for (const auto& v : list) {
        if (v == value) {
            return true;
        }
    }
    return false;
}

}  // namespace

bool matches(const Rule& rule, const db::StoredEvent& event, const RunFacts& run) {
    const bool isRunState = event.kind == "run_state";
    if (!rule.events.empty() || !rule.runStates.empty()) {
        const bool kindListed = contains(rule.events, event.kind);
        const bool byState = isRunState && !rule.runStates.empty();
        if (!kindListed && !byState) {
            return false;
        }
    }
    if (isRunState && !rule.runStates.empty() && !contains(rule.runStates, runStateOf(event))) {
        return false;
    }
    if (levelOf(event) < rule.minLevel) {
        return false;
    }
    if (!rule.nodes.empty() && !anyMatch(rule.nodes, {event.nodeId.value()})) {
        return false;
    }
    if (!rule.runNames.empty() || !rule.recipes.empty() || !rule.tags.empty()) {
        if (run.id.empty()) {
            return false;  // a node-level event belongs to no run
        }
        if (!rule.runNames.empty() && !anyMatch(rule.runNames, {run.name, run.id})) {
            return false;
        }
        if (!rule.recipes.empty() && !anyMatch(rule.recipes, {run.recipe})) {
            return false;
        }
        if (!rule.tags.empty() && !anyMatch(rule.tags, run.tags)) {
            return false;
        }
    }
    return true;
}

json payloadOf(const db::StoredEvent& event, const RunFacts& run, const Rule& rule) {
    const std::string level = toString(levelOf(event));
    json attributes = json::object();
    json numbers = json::object();
    for (const auto& [key, value] : event.attrs) {
        attributes[key] = value;
        if (auto n = number(value)) {
            numbers[key] = *n;
        }
    }
    std::string where = "node " + event.nodeId.value();
    if (!run.id.empty()) {
        where = "run " + run.name + ", " + where;
    }
    std::string upper = level;
    for (char& c : upper) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    const std::string summary =
        oneLine("[" + upper + "] " + event.kind + " (" + where + "): " + event.message);
    json runJson = nullptr;
    if (!run.id.empty()) {
        runJson = {{"id", run.id},
                   {"name", run.name},
                   {"recipe", run.recipe},
                   {"state", run.state},
                   {"tags", run.tags}};
    }
    return {{"schema", "runplane.alert.v1"},
            {"type", "event"},
            {"summary", summary},
            {"level", level},
            {"rule", rule.name},
            {"event",
             {{"id", event.id},
              {"kind", event.kind},
              {"seq", event.seq ? json(*event.seq) : json(nullptr)},
              {"t_ns", event.tNs},
              {"time", isoTime(event.tNs)},
              {"message", oneLine(event.message, 2000)},
              {"attributes", attributes},
              {"numbers", numbers}}},
            {"run", runJson},
            {"node", {{"id", event.nodeId.value()}}}};
}

json testPayload(const std::string& destination, std::int64_t nowNs) {
    return {{"schema", "runplane.alert.v1"},
            {"type", "test"},
            {"summary", oneLine("[INFO] test alert from runplane to " + destination +
                                ": alerts reach this destination")},
            {"level", "info"},
            {"rule", ""},
            {"event",
             {{"id", 0},
              {"kind", "alert_test"},
              {"seq", nullptr},
              {"t_ns", nowNs},
              {"time", isoTime(nowNs)},
              {"message", "runplanectl alerts test"},
              {"attributes", json::object()},
              {"numbers", json::object()}}},
            {"run", nullptr},
            {"node", {{"id", ""}}}};
}

std::string renderBody(DestinationKind kind, const json& payload) {
    // A payload read back from the history is trusted for nothing: a missing part reads empty.
    static const json kEmpty = json::object();
    const auto part = [&](const char* key) -> const json& {
        const auto it = payload.is_object() ? payload.find(key) : payload.end();
        return it != payload.end() && it->is_object() ? *it : kEmpty;
    };
    const std::string summary = str(payload, "summary");
    const std::string level = str(payload, "level");
    const json& event = part("event");
    const json run = payload.is_object() && payload.contains("run") ? payload["run"] : json();
    const std::string node = str(part("node"), "id");
    const std::string kindName = str(event, "kind");
    const std::string message = str(event, "message");
    const std::string rule = str(payload, "rule");
    const std::string context =
        "rule " + (rule.empty() ? std::string("(test)") : rule) + " · event " +
        std::to_string(event.contains("id") && event["id"].is_number_integer()
                           ? event["id"].get<std::int64_t>()
                           : std::int64_t{0}) +
        " · " + str(event, "time");
    switch (kind) {
        case DestinationKind::Slack: {
            // Block Kit: `text` is the notification's fallback; the blocks are what one reads.
            std::string head = "*" + slackEscape(summary) + "*";
            std::string fields;
            if (!node.empty()) {
                fields += "*node* `" + slackEscape(node) + "`";
            }
            if (run.is_object()) {
                fields += (fields.empty() ? "" : "  ") + std::string("*run* `") +
                          slackEscape(str(run, "name")) + "`";
            }
            json blocks = json::array();
            blocks.push_back({{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", head}}}});
            if (!fields.empty() || !message.empty()) {
                blocks.push_back(
                    {{"type", "section"},
                     {"text",
                      {{"type", "mrkdwn"},
                       {"text", fields + (fields.empty() ? "" : "\n") + slackEscape(message)}}}});
            }
            blocks.push_back({{"type", "context"},
                              {"elements", json::array({{{"type", "mrkdwn"},
                                                         {"text", slackEscape(context)}}})}});
            return json_text::dump({{"text", summary}, {"blocks", blocks}});
        }
        case DestinationKind::Discord: {
            json fields = json::array();
            if (!node.empty()) {
                fields.push_back({{"name", "node"}, {"value", node}, {"inline", true}});
            }
            if (run.is_object()) {
                fields.push_back({{"name", "run"}, {"value", str(run, "name")}, {"inline", true}});
            }
            fields.push_back({{"name", "level"}, {"value", level}, {"inline", true}});
            json embed = {
                {"title", oneLine(kindName, 256)}, {"description", message.substr(0, 4000)},
                {"color", discordColor(level)},    {"fields", fields},
                {"footer", {{"text", context}}},   {"timestamp", str(event, "time")}};
            // No pings from text in a message: allowed_mentions parses nothing.
            return json_text::dump({{"content", summary.substr(0, 2000)},
                                    {"embeds", json::array({embed})},
                                    {"allowed_mentions", {{"parse", json::array()}}}});
        }
        case DestinationKind::Webhook:
        case DestinationKind::Command:
            break;
    }
    return json_text::dump(payload);
}

}  // namespace runplane::alerts
