// The restatements folded into the event of their first telling (log_event_folds.h).
#include "backend/agent/log_event_folds.h"

#include <string>

namespace runplane::agent {
namespace {

const std::string& attrOf(const LogEvent& e, const char* key) {
    static const std::string kNone;
    const auto it = e.attrs.find(key);
    return it == e.attrs.end() ? kNone : it->second;
}

std::string_view leafName(std::string_view name) {
    const auto dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// ray_task_error_cause: Ray prints a failed task as `ray.exceptions.RayTaskError(ActorDiedError):
// ray::main_task() (pid=109108, ip=...)`, the task's frames, then the cause's own line
// `ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.`
// (PeterGriffinJin/Search-R1#45). Both end a traceback: one crash, the cause's.
std::string rayTaskCause(const LogEvent& e) {
    if (e.kind != LogEventKind::Crash) {
        return "";
    }
    const std::string& ex = attrOf(e, "exception");
    const auto open = ex.find("RayTaskError(");
    if (open == std::string::npos || ex.back() != ')') {
        return "";
    }
    const std::size_t from = open + 13;
    return ex.substr(from, ex.size() - 1 - from);
}

bool rayTaskErrorFirst(const LogEvent& e) {
    return !rayTaskCause(e).empty();
}

bool rayTaskErrorRestated(const LogEvent& first, const LogEvent& later) {
    if (later.kind != LogEventKind::Crash) {
        return false;
    }
    const std::string& ex = attrOf(later, "exception");
    return !ex.empty() && ex.find('(') == std::string::npos &&
           leafName(ex) == leafName(rayTaskCause(first));
}

// The event names the cause and says what it said; the task's head line stays in `ray_task`.
void rayTaskErrorFold(LogEvent& first, const LogEvent& later) {
    first.attrs["ray_task"] = std::string(attrOf(first, "summary"));
    first.attrs["exception"] = attrOf(later, "exception");
    first.attrs["summary"] = attrOf(later, "summary");
    first.message = later.message;
    for (const char* key : {"pid", "actor", "rank"}) {
        if (first.attrs.count(key) == 0 && later.attrs.count(key) != 0) {
            first.attrs[key] = attrOf(later, key);
        }
    }
}

// slurm_after_shell_kill: bash's report of the child it lost to SIGKILL, then Slurm's step
// daemon saying its cgroup saw the OOM kill (ArjunaCluster/ArjunaUsers#52): one host_oom, with
// the pid and command from bash and the Slurm figures (which settle that it was an OOM kill).
bool shellKillFirst(const LogEvent& e) {
    return e.kind == LogEventKind::HostOom && attrOf(e, "source") == "shell";
}

bool slurmRestatesKill(const LogEvent& /*first*/, const LogEvent& later) {
    return later.kind == LogEventKind::HostOom && attrOf(later, "source") == "slurm";
}

void slurmKillFold(LogEvent& first, const LogEvent& later) {
    for (const char* key : {"oom_kill_events", "slurm_step"}) {
        if (later.attrs.count(key) != 0) {
            first.attrs[key] = attrOf(later, key);
        }
    }
    first.attrs["confirmed_by"] = "slurm";
    std::string said = attrOf(first, "summary");
    if (said.starts_with("host OOM? ")) {
        said.erase(0, 10);
    }
    if (said.ends_with(" (host OOM?)")) {
        said.erase(said.size() - 12);
    }
    std::string slurm = attrOf(later, "summary");
    if (slurm.starts_with("host OOM: ")) {
        slurm.erase(0, 10);
    }
    first.attrs["summary"] = "host OOM: " + said + "; " + slurm;
    first.message = first.attrs["summary"];
}

}  // namespace

const std::vector<EventFold>& eventFolds() {
    static const std::vector<EventFold> kFolds = {
        {"ray_task_error_cause", rayTaskErrorFirst, rayTaskErrorRestated, rayTaskErrorFold, 60},
        {"slurm_after_shell_kill", shellKillFirst, slurmRestatesKill, slurmKillFold, 5},
    };
    return kFolds;
}

}  // namespace runplane::agent
