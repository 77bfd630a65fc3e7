#include "backend/agent/process_roles.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>

#include "backend/agent/proc_tree.h"

namespace runplane::agent {
namespace {

constexpr std::size_t kMaxTableBytes = 1u << 20;
constexpr std::size_t kMaxRows = 4096;
constexpr std::size_t kMaxRoleName = 32;

struct BuiltinRow {
    std::string_view role;
    RoleField field;
    std::string_view pattern;
    bool objectStore = false;
};

// The built-in rows, first match wins (docs/daemon.md, "Process roles", gives each row's source).
// Titles: Ray names an actor's worker process "ray::Class" (idle) or "ray::Class.method" (busy)
// and an idle pooled worker "ray::IDLE"; SGLang's processes call setproctitle("sglang::scheduler
// _TP0", "sglang::detokenizer", ...); vLLM's set_process_title writes "VLLM::EngineCore",
// "VLLM::Worker_TP0" (prefix VLLM_PROCESS_NAME_PREFIX, default "VLLM").
constexpr std::array<BuiltinRow, 26> kBuiltin{{
    // trainer: slime / miles Megatron and FSDP train actors (actor and critic)
    {kRoleTrainer, RoleField::Title, "ray::MegatronTrainRayActor*"},
    {kRoleTrainer, RoleField::Title, "ray::FSDPTrainRayActor*"},
    // router: SGLang's router (Python launcher or the Rust binary) and vime's vllm-router
    {kRoleRouter, RoleField::Cmdline, "*sglang_router.launch_router*"},
    {kRoleRouter, RoleField::Comm, "sglang-router"},
    {kRoleRouter, RoleField::Comm, "sglang_router"},
    {kRoleRouter, RoleField::Cmdline, "*vllm-router*"},
    {kRoleRouter, RoleField::Cmdline, "*vllm_router*"},
    // rollout: the engines' Ray actors, their server processes and SGLang / vLLM subprocesses
    {kRoleRollout, RoleField::Title, "ray::SGLangEngine*"},
    {kRoleRollout, RoleField::Title, "ray::VLLMEngine*"},
    {kRoleRollout, RoleField::Title, "ray::RolloutManager*"},
    {kRoleRollout, RoleField::Title, "sglang::*"},
    {kRoleRollout, RoleField::Title, "VLLM::*"},
    {kRoleRollout, RoleField::Cmdline, "*sglang.launch_server*"},
    {kRoleRollout, RoleField::Cmdline, "*vllm serve *"},  // vime starts `vllm serve MODEL ...`
    // driver: a Ray job's supervisor actor (the entrypoint is its child and inherits)
    {kRoleDriver, RoleField::Title, "ray::JobSupervisor*"},
    // ray: the raylet (it hosts the plasma object store), GCS, dashboard and agents, workers
    {kRoleRay, RoleField::Comm, "raylet", true},
    {kRoleRay, RoleField::Comm, "gcs_server"},
    {kRoleRay, RoleField::Title, "ray::IDLE*"},
    {kRoleRay, RoleField::Cmdline, "*ray/dashboard/dashboard.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/dashboard/agent.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/_private/log_monitor.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/autoscaler/_private/monitor.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/_private/runtime_env/agent/main.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/_private/workers/default_worker.py*"},
    {kRoleRay, RoleField::Cmdline, "*ray/util/client/server*"},
    // any other Ray actor or task (a framework's helper actors)
    {kRoleRay, RoleField::Title, "ray::*"},
}};

bool validRoleName(std::string_view r) {
    if (r.empty() || r.size() > kMaxRoleName || r[0] < 'a' || r[0] > 'z') {
        return false;
    }
    return std::all_of(r.begin(), r.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

bool globMatch(const std::string& pattern, const std::string& text) {
    return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

std::string_view nextWord(std::string_view& rest) {
    rest = trim(rest);
    std::size_t end = 0;
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t') {
        ++end;
    }
    const std::string_view word = rest.substr(0, end);
    rest.remove_prefix(end);
    return word;
}

}  // namespace

std::string_view titleOf(std::string_view cmdline) {
    const auto nul = cmdline.find('\0');
    return nul == std::string_view::npos ? cmdline : cmdline.substr(0, nul);
}

std::string joinedCmdline(std::string_view cmdline) {
    while (!cmdline.empty() && cmdline.back() == '\0') {
        cmdline.remove_suffix(1);
    }
    std::string out(cmdline);
    std::replace(out.begin(), out.end(), '\0', ' ');
    return out;
}

std::string printableTitle(std::string_view text, std::size_t maxBytes) {
    std::string out;
    out.reserve(std::min(text.size(), maxBytes));
    for (char c : text) {
        if (out.size() >= maxBytes) {
            break;
        }
        const auto u = static_cast<unsigned char>(c);
        out.push_back(u >= 0x20 && u <= 0x7e ? c : '?');
    }
    return out;
}

void RoleTable::addRole(const std::string& role) {
    if (roleIndex(role) < 0) {
        m_roles.push_back(role);
    }
}

int RoleTable::roleIndex(std::string_view role) const {
    for (std::size_t i = 0; i < m_roles.size(); ++i) {
        if (m_roles[i] == role) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

bool RoleTable::inherits(int roleIndex) const {
    return roleIndex >= 0 && static_cast<std::size_t>(roleIndex) < m_roles.size() &&
           m_roles[static_cast<std::size_t>(roleIndex)] != kRoleOther;
}

const RoleTable& RoleTable::builtin() {
    static const RoleTable table = [] {
        RoleTable t;
        for (auto r :
             {kRoleTrainer, kRoleRollout, kRoleRouter, kRoleRay, kRoleDriver, kRoleOther}) {
            t.addRole(std::string(r));
        }
        for (const auto& row : kBuiltin) {
            t.m_rules.push_back(RoleRule{std::string(row.role), row.field, std::string(row.pattern),
                                         row.objectStore});
        }
        return t;
    }();
    return table;
}

void RoleTable::append(const RoleTable& other) {
    for (const auto& r : other.m_rules) {
        m_rules.push_back(r);
    }
    for (const auto& r : other.m_roles) {
        addRole(r);
    }
}

Result<RoleTable> RoleTable::parse(std::string_view text, const std::string& source) {
    RoleTable t;
    for (auto r : {kRoleTrainer, kRoleRollout, kRoleRouter, kRoleRay, kRoleDriver, kRoleOther}) {
        t.addRole(std::string(r));
    }
    if (text.size() > kMaxTableBytes) {
        return Error{source + ": over 1 MiB; a role table is a few rows"};
    }
    std::size_t pos = 0;
    int lineNo = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view line = trim(text.substr(pos, end - pos));
        pos = end + 1;
        ++lineNo;
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const std::string where = source + ":" + std::to_string(lineNo);
        if (line.find('\0') != std::string_view::npos) {
            return Error{where + ": a NUL byte in the row"};
        }
        std::string_view rest = line;
        const std::string_view role = nextWord(rest);
        const std::string_view field = nextWord(rest);
        rest = trim(rest);
        bool objectStore = false;
        constexpr std::string_view kStore = "object_store";
        if (rest.size() > kStore.size() && rest.ends_with(kStore) &&
            (rest[rest.size() - kStore.size() - 1] == ' ' ||
             rest[rest.size() - kStore.size() - 1] == '\t')) {
            objectStore = true;
            rest = trim(rest.substr(0, rest.size() - kStore.size()));
        }
        if (!validRoleName(role)) {
            return Error{where + ": role '" + printableTitle(role) +
                         "' is not [a-z][a-z0-9_]{0,31} (e.g. trainer, rollout, router, ray, "
                         "driver)"};
        }
        if (role == kRoleOther) {
            return Error{where + ": 'other' is what no row matches; it cannot be a row's role"};
        }
        RoleRule rule;
        rule.role = std::string(role);
        if (field == "title") {
            rule.field = RoleField::Title;
        } else if (field == "cmdline") {
            rule.field = RoleField::Cmdline;
        } else if (field == "comm") {
            rule.field = RoleField::Comm;
        } else {
            return Error{where + ": field '" + printableTitle(field) +
                         "' is not title, cmdline or comm"};
        }
        if (rest.empty()) {
            return Error{where + ": no pattern after '" + std::string(field) + "'"};
        }
        rule.pattern = std::string(rest);
        rule.objectStore = objectStore;
        if (t.m_rules.size() >= kMaxRows) {
            return Error{where + ": more than 4096 rows"};
        }
        t.addRole(rule.role);
        t.m_rules.push_back(std::move(rule));
    }
    return t;
}

Result<RoleTable> RoleTable::load(const std::string& path) {
    auto text = readSmallFile(path, kMaxTableBytes + 1);
    if (!text) {
        return Error{path + ": cannot read the role table"};
    }
    auto parsed = parse(*text, path);
    if (!parsed) {
        return parsed;
    }
    parsed->append(builtin());
    return parsed;
}

int RoleTable::match(std::string_view cmdline, std::string_view comm) const {
    const std::string title(titleOf(cmdline));
    std::string joined;
    bool haveJoined = false;
    const std::string commText(comm);
    for (std::size_t i = 0; i < m_rules.size(); ++i) {
        const RoleRule& r = m_rules[i];
        const std::string* field = &title;
        if (r.field == RoleField::Comm) {
            field = &commText;
        } else if (r.field == RoleField::Cmdline) {
            if (!haveJoined) {
                joined = joinedCmdline(cmdline);
                haveJoined = true;
            }
            field = &joined;
        }
        if (globMatch(r.pattern, *field)) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

}  // namespace runplane::agent
