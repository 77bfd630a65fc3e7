// A run's diagnosis: its JSON form, the verdict and the text (diagnosis.h).
#include "backend/diagnosis/diagnosis.h"

#include "backend/diagnosis/gpu_clocks.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace runplane::diagnosis {
namespace {

using nlohmann::json;

// ncclInProgress: a non-blocking communicator's normal state, not an error (NVIDIA/nccl#2263).
constexpr std::int64_t kNcclInProgress = 7;

std::string joinList(const std::vector<std::string>& items, std::size_t shown = 8) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < shown; ++i) {
        out += (i ? ", " : "") + items[i];
    }
    if (items.size() > shown) {
        out += " and " + std::to_string(items.size() - shown) + " more";
    }
    return out;
}

template <typename T>
Status field(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return {};
    }
    try {
        out = it->get<T>();
    } catch (const json::exception&) {
        return Error{"diagnosis: '" + std::string(key) + "' has the wrong type (" +
                     it->type_name() + ")"};
    }
    return {};
}

json stringsJson(const std::vector<std::string>& v) {
    return json(v);
}

// ------------------------------------------------------------------ verdict helpers

struct RankRef {
    std::int64_t rank = -1;
    std::int64_t pid = 0;
    std::string host;
    std::string label() const {
        std::string s = "rank " + std::to_string(rank);
        if (pid > 0 || !host.empty()) {
            s += " (";
            if (pid > 0) {
                s += "pid " + std::to_string(pid);
            }
            if (!host.empty()) {
                s += (pid > 0 ? " on " : "") + host;
            }
            s += ")";
        }
        return s;
    }
};

// Every node's RAS report covers the job: merge them per communicator hash, keeping the copy
// that saw the most ranks and the union of missing ranks.
std::vector<RasCommunicator> mergedCommunicators(const std::vector<NodeDiagnosis>& nodes) {
    std::map<std::string, RasCommunicator> byHash;
    std::vector<std::string> order;
    for (const auto& n : nodes) {
        if (!n.rasAvailable) {
            continue;
        }
        for (const auto& c : n.ras.communicators) {
            auto it = byHash.find(c.hash);
            if (it == byHash.end()) {
                byHash.emplace(c.hash, c);
                order.push_back(c.hash);
                continue;
            }
            std::vector<RasMissingRank> missing = it->second.missingRanks;
            if (c.ranks.size() > it->second.ranks.size()) {
                it->second = c;
            }
            for (const auto& m : missing) {
                const bool have =
                    std::any_of(it->second.missingRanks.begin(), it->second.missingRanks.end(),
                                [&](const RasMissingRank& x) { return x.rank == m.rank; });
                if (!have) {
                    it->second.missingRanks.push_back(m);
                }
            }
        }
    }
    std::vector<RasCommunicator> out;
    for (const auto& h : order) {
        out.push_back(byHash[h]);
    }
    return out;
}

// NCCL prints a communicator hash as "0x" and 16 hex digits; anything longer is cut there.
std::string shortHash(const std::string& h) {
    return h.size() > 18 ? h.substr(0, 18) : h;
}

void rasFindings(const std::vector<RasCommunicator>& comms, Verdict& v) {
    for (const auto& c : comms) {
        const std::string comm =
            "communicator " + shortHash(c.hash) + " (" + std::to_string(c.size) + " ranks)";
        if (!c.missingRanks.empty() || c.missingRanksCount > 0) {
            std::vector<std::string> labels;
            for (const auto& m : c.missingRanks) {
                std::string l = RankRef{m.rank, m.pid, m.host}.label();
                if (m.consideredDead) {
                    l += " considered dead";
                } else if (m.unresponsive) {
                    l += " unresponsive";
                }
                labels.push_back(l);
            }
            const std::size_t count = std::max<std::size_t>(
                c.missingRanks.size(),
                static_cast<std::size_t>(std::max<std::int64_t>(0, c.missingRanksCount)));
            v.findings.push_back(
                {"missing_rank", "NCCL " + comm + ": " + std::to_string(count) + " rank" +
                                     (count == 1 ? "" : "s") + " missing" +
                                     (labels.empty() ? "" : ": " + joinList(labels))});
        }
        std::vector<std::string> asyncErr, initErr, aborted;
        for (const auto& r : c.ranks) {
            if (!r.status.present) {
                continue;
            }
            const std::string l = RankRef{r.rank, r.pid, r.host}.label();
            if (r.status.asyncError != 0 && r.status.asyncError != kNcclInProgress) {
                asyncErr.push_back(l + " error " + std::to_string(r.status.asyncError));
            }
            if (r.status.initState != 0 && r.status.initState != kNcclInProgress) {
                initErr.push_back(l + " state " + std::to_string(r.status.initState));
            }
            if (r.status.abortFlag) {
                aborted.push_back(l);
            }
        }
        if (!asyncErr.empty()) {
            v.findings.push_back(
                {"async_error", "NCCL " + comm + ": asynchronous error on " + joinList(asyncErr)});
        }
        if (!initErr.empty()) {
            v.findings.push_back(
                {"init_error", "NCCL " + comm + ": init failed on " + joinList(initErr)});
        }
        if (!aborted.empty()) {
            v.findings.push_back({"aborted", "NCCL " + comm + ": aborted on " + joinList(aborted)});
        }
        // Behind: per collective kind, the ranks whose count is below the highest.
        std::set<std::string> kinds;
        for (const auto& r : c.ranks) {
            for (const auto& [k, n] : r.collectiveCounts) {
                kinds.insert(k);
            }
        }
        for (const auto& kind : kinds) {
            std::uint64_t top = 0;
            for (const auto& r : c.ranks) {
                auto it = r.collectiveCounts.find(kind);
                top = std::max<std::uint64_t>(top, it == r.collectiveCounts.end() ? 0 : it->second);
            }
            std::vector<std::string> behind;
            std::uint64_t lowest = top;
            for (const auto& r : c.ranks) {
                auto it = r.collectiveCounts.find(kind);
                const std::uint64_t n = it == r.collectiveCounts.end() ? 0 : it->second;
                if (n < top) {
                    behind.push_back(RankRef{r.rank, r.pid, r.host}.label() + " at " +
                                     std::to_string(n));
                    lowest = std::min(lowest, n);
                }
            }
            if (!behind.empty()) {
                v.findings.push_back(
                    {"behind", "NCCL " + comm + ": " + std::to_string(behind.size()) + " of " +
                                   std::to_string(c.ranks.size()) +
                                   " ranks behind their peers in " + kind + " (peers at " +
                                   std::to_string(top) + "): " + joinList(behind)});
            }
        }
    }
}

struct Member {
    std::string label;
    std::int64_t rank = -1;
};

void stackFindings(const std::vector<NodeDiagnosis>& nodes,
                   const std::vector<RasCommunicator>& comms, Verdict& v) {
    // pid -> rank from RAS, where the pid names one rank only.
    std::map<std::int64_t, std::set<std::int64_t>> rasRanks;
    for (const auto& c : comms) {
        for (const auto& r : c.ranks) {
            if (r.pid > 0) {
                rasRanks[r.pid].insert(r.rank);
            }
        }
    }
    struct Entry {
        StackFrame frame;
        Member member;
    };
    std::vector<Entry> entries;
    bool anyRank = false;
    for (const auto& n : nodes) {
        const std::string host = n.hostname.empty() ? n.address : n.hostname;
        for (const auto& ps : n.stacks) {
            if (ps.threads.empty()) {
                continue;
            }
            std::int64_t rank = -1;
            for (const auto& p : n.processes) {
                if (p.pid == ps.pid) {
                    rank = p.rank;
                }
            }
            if (rank < 0) {
                auto it = rasRanks.find(ps.pid);
                if (it != rasRanks.end() && it->second.size() == 1) {
                    rank = *it->second.begin();
                }
            }
            anyRank = anyRank || rank >= 0;
            const std::string where = "pid " + std::to_string(ps.pid) + " on " + host;
            Member m{rank >= 0 ? "rank " + std::to_string(rank) + " (" + where + ")" : where, rank};
            entries.push_back({signatureFrame(ps.threads), std::move(m)});
        }
    }
    std::map<std::string, StackGroup> groups;
    for (const auto& e : entries) {
        if (anyRank && e.member.rank < 0) {
            continue;  // with ranks known, launchers and helpers are not peers of the ranks
        }
        const std::string key = e.frame.name.empty() ? "(no Python frames)" : e.frame.name;
        auto& g = groups[key];
        if (g.members.empty()) {
            g.frame = key;
            g.file = e.frame.file + (e.frame.line > 0 ? ":" + std::to_string(e.frame.line) : "");
        }
        g.members.push_back(e.member.label);
    }
    for (auto& [k, g] : groups) {
        v.stackGroups.push_back(std::move(g));
    }
    std::stable_sort(v.stackGroups.begin(), v.stackGroups.end(),
                     [](const StackGroup& a, const StackGroup& b) {
                         return a.members.size() < b.members.size();
                     });
    if (v.stackGroups.size() >= 2) {
        const auto& largest = v.stackGroups.back();
        std::vector<std::string> parts;
        for (std::size_t i = 0; i + 1 < v.stackGroups.size(); ++i) {
            const auto& g = v.stackGroups[i];
            parts.push_back((g.members.size() == 1 ? g.members.front()
                                                   : std::to_string(g.members.size()) +
                                                         (anyRank ? " ranks" : " processes")) +
                            " in " + g.frame);
        }
        parts.push_back(std::to_string(largest.members.size()) +
                        (anyRank ? " ranks" : " processes") + " in " + largest.frame);
        v.findings.push_back({"stack_outlier", joinList(parts, 4)});
    } else if (v.stackGroups.size() == 1) {
        const auto& g = v.stackGroups.front();
        v.findings.push_back({"stacks_agree", "all " + std::to_string(g.members.size()) +
                                                  (anyRank ? " ranks" : " processes") + " in " +
                                                  g.frame + " (" + g.file + ")"});
    }
}

void kernelFindings(const std::vector<NodeDiagnosis>& nodes, Verdict& v) {
    for (const auto& n : nodes) {
        std::map<std::string, std::vector<std::string>> byKind;
        for (const auto& k : n.kernelLines) {
            std::string what = k.kind == "xid" ? "Xid " + std::to_string(k.xid) : k.kind;
            if (k.pid > 0) {
                what += " (pid " + std::to_string(k.pid) + ")";
            }
            byKind[k.kind].push_back(what);
        }
        for (const auto& [kind, items] : byKind) {
            v.findings.push_back({"kernel", "kernel log on " +
                                                (n.hostname.empty() ? n.address : n.hostname) +
                                                ": " + joinList(items, 4)});
        }
    }
}

// GPUs slowed by heat or a power limit (gpu_clocks.h): a lagging-rank cause. The run's processes
// on the GPU name the rank (RANK from their environment) where the node knows it.
void gpuFindings(const std::vector<NodeDiagnosis>& nodes, Verdict& v) {
    for (const auto& n : nodes) {
        if (!n.gpus.is_array()) {
            continue;
        }
        for (const auto& g : n.gpus) {
            const GpuClockState state = gpuClockState(g);
            if (!state.throttled) {
                continue;
            }
            std::string who;
            if (const auto procs = g.find("run_processes"); procs != g.end() && procs->is_array()) {
                for (const auto& p : *procs) {
                    const std::int64_t pid = p.value("pid", std::int64_t{0});
                    std::string one = "pid " + std::to_string(pid);
                    for (const auto& info : n.processes) {
                        if (info.pid == pid && info.rank >= 0) {
                            one = "rank " + std::to_string(info.rank) + ", " + one;
                        }
                    }
                    who += (who.empty() ? "" : "; ") + one;
                }
            }
            v.findings.push_back(
                {"gpu_throttled", "GPU " + std::to_string(g.value("index", 0)) + " on " +
                                      (n.hostname.empty() ? n.address : n.hostname) +
                                      (who.empty() ? "" : " (" + who + ")") +
                                      " is throttled: " + state.text});
        }
    }
}

// Each node's last output per role (last_output.h), relative to the node's collection time.
void lastOutputFindings(const std::vector<NodeDiagnosis>& nodes, Verdict& v) {
    for (const auto& n : nodes) {
        if (n.roleOutput.empty()) {
            continue;
        }
        v.findings.push_back({"last_output", "last output on " +
                                                 (n.hostname.empty() ? n.address : n.hostname) +
                                                 ": " + lastOutputText(n.roleOutput, n.tUnixNs)});
    }
}

// Order of the headline: the most specific evidence first.
int rankOfKind(const std::string& kind) {
    static const std::vector<std::string> order = {
        "missing_rank",  "async_error", "init_error", "aborted",      "behind", "stack_outlier",
        "gpu_throttled", "kernel",      "node_error", "stacks_agree", "no_data"};
    const auto it = std::find(order.begin(), order.end(), kind);
    return static_cast<int>(it - order.begin());
}

}  // namespace

// ------------------------------------------------------------------ NodeDiagnosis JSON

json toJson(const NodeDiagnosis& n) {
    json processes = json::array();
    for (const auto& p : n.processes) {
        processes.push_back({{"pid", p.pid},
                             {"cmdline", p.cmdline},
                             {"rank", p.rank},
                             {"local_rank", p.localRank}});
    }
    json stacks = json::array();
    for (const auto& s : n.stacks) {
        json threads = json::array();
        for (const auto& t : s.threads) {
            threads.push_back(toJson(t));
        }
        stacks.push_back({{"pid", s.pid}, {"error", s.error}, {"threads", std::move(threads)}});
    }
    json kernel = json::array();
    for (const auto& k : n.kernelLines) {
        kernel.push_back({{"boot_seconds", k.bootSeconds},
                          {"kind", k.kind},
                          {"text", k.text},
                          {"xid", k.xid},
                          {"pid", k.pid}});
    }
    return {
        {"address", n.address},
        {"node_id", n.nodeId},
        {"hostname", n.hostname},
        {"run_id", n.runId},
        {"t_unix_ns", n.tUnixNs},
        {"collection_ms", n.collectionMs},
        {"error", n.error},
        {"run_state", n.runState},
        {"processes", std::move(processes)},
        {"ras",
         {{"available", n.rasAvailable},
          {"endpoint", n.rasEndpoint},
          {"missing", n.rasMissing},
          {"took_ms", n.rasMs},
          {"report", n.rasAvailable ? toJson(n.ras) : json(nullptr)}}},
        {"stacks",
         {{"tool", n.stackTool},
          {"tool_path", n.stackToolPath},
          {"tool_source", n.stackToolSource},
          {"missing", n.stacksMissing},
          {"native", n.nativeFrames},
          {"processes", std::move(stacks)}}},
        {"gpus", {{"devices", n.gpus}, {"missing", n.gpusMissing}}},
        {"kernel_log",
         {{"source", n.kernelLogSource},
          {"missing", n.kernelLogMissing},
          {"truncated", n.kernelLogTruncated},
          {"lines", std::move(kernel)}}},
        {"output",
         {{"stdout_tail", stringsJson(n.stdoutTail)},
          {"stderr_tail", stringsJson(n.stderrTail)},
          {"roles", toJson(n.roleOutput)},
          {"missing", n.outputMissing}}},
        {"flight_recorder",
         {{"files", stringsJson(n.flightRecorderFiles)}, {"missing", n.flightRecorderMissing}}},
    };
}

Result<NodeDiagnosis> nodeDiagnosisFromJson(const json& j) {
    if (!j.is_object()) {
        return Error{"diagnosis: a node's entry is not an object"};
    }
    NodeDiagnosis n;
    const json empty = json::object();
    auto sub = [&](const char* key) -> const json& {
        auto it = j.find(key);
        return it != j.end() && it->is_object() ? *it : empty;
    };
    std::vector<Status> checks = {
        field(j, "address", n.address),
        field(j, "node_id", n.nodeId),
        field(j, "hostname", n.hostname),
        field(j, "run_id", n.runId),
        field(j, "t_unix_ns", n.tUnixNs),
        field(j, "collection_ms", n.collectionMs),
        field(j, "error", n.error),
        field(j, "run_state", n.runState),
        field(sub("ras"), "available", n.rasAvailable),
        field(sub("ras"), "endpoint", n.rasEndpoint),
        field(sub("ras"), "missing", n.rasMissing),
        field(sub("ras"), "took_ms", n.rasMs),
        field(sub("stacks"), "tool", n.stackTool),
        field(sub("stacks"), "tool_path", n.stackToolPath),
        field(sub("stacks"), "tool_source", n.stackToolSource),
        field(sub("stacks"), "missing", n.stacksMissing),
        field(sub("stacks"), "native", n.nativeFrames),
        field(sub("gpus"), "missing", n.gpusMissing),
        field(sub("kernel_log"), "source", n.kernelLogSource),
        field(sub("kernel_log"), "missing", n.kernelLogMissing),
        field(sub("kernel_log"), "truncated", n.kernelLogTruncated),
        field(sub("output"), "stdout_tail", n.stdoutTail),
        field(sub("output"), "stderr_tail", n.stderrTail),
        field(sub("output"), "missing", n.outputMissing),
        field(sub("flight_recorder"), "files", n.flightRecorderFiles),
        field(sub("flight_recorder"), "missing", n.flightRecorderMissing),
    };
    for (const Status& s : checks) {
        if (!s.ok()) {
            return s.failure();
        }
    }
    if (auto roles = sub("output").find("roles"); roles != sub("output").end()) {
        n.roleOutput = roleOutputsFromJson(*roles);
    }
    if (auto ps = j.find("processes"); ps != j.end() && ps->is_array()) {
        for (const auto& p : *ps) {
            ProcessInfo info;
            for (Status s : {field(p, "pid", info.pid), field(p, "cmdline", info.cmdline),
                             field(p, "rank", info.rank), field(p, "local_rank", info.localRank)}) {
                if (!s.ok()) {
                    return s.failure();
                }
            }
            n.processes.push_back(std::move(info));
        }
    }
    if (auto rep = sub("ras").find("report"); rep != sub("ras").end() && rep->is_object()) {
        auto r = rasReportFromJson(*rep);
        if (!r) {
            return r.failure();
        }
        n.ras = std::move(*r);
    }
    if (auto ps = sub("stacks").find("processes"); ps != sub("stacks").end() && ps->is_array()) {
        for (const auto& p : *ps) {
            ProcessStacks s;
            if (Status st = field(p, "pid", s.pid); !st.ok()) {
                return st.failure();
            }
            if (Status st = field(p, "error", s.error); !st.ok()) {
                return st.failure();
            }
            if (auto ts = p.find("threads"); ts != p.end() && ts->is_array()) {
                for (const auto& t : *ts) {
                    s.threads.push_back(threadStackFromJson(t));
                }
            }
            n.stacks.push_back(std::move(s));
        }
    }
    if (auto g = sub("gpus").find("devices"); g != sub("gpus").end()) {
        n.gpus = *g;
    }
    if (auto ls = sub("kernel_log").find("lines");
        ls != sub("kernel_log").end() && ls->is_array()) {
        for (const auto& l : *ls) {
            KernelLine k;
            for (Status s :
                 {field(l, "boot_seconds", k.bootSeconds), field(l, "kind", k.kind),
                  field(l, "text", k.text), field(l, "xid", k.xid), field(l, "pid", k.pid)}) {
                if (!s.ok()) {
                    return s.failure();
                }
            }
            n.kernelLines.push_back(std::move(k));
        }
    }
    return n;
}

// ------------------------------------------------------------------ verdict

Verdict judge(const std::vector<NodeDiagnosis>& nodes) {
    Verdict v;
    const auto comms = mergedCommunicators(nodes);
    rasFindings(comms, v);
    stackFindings(nodes, comms, v);
    gpuFindings(nodes, v);
    kernelFindings(nodes, v);
    lastOutputFindings(nodes, v);
    std::vector<std::string> failed;
    for (const auto& n : nodes) {
        if (!n.error.empty()) {
            failed.push_back((n.address.empty() ? n.nodeId : n.address) + ": " + n.error);
        }
    }
    if (!failed.empty()) {
        v.findings.push_back(
            {"node_error", std::to_string(failed.size()) + " of " + std::to_string(nodes.size()) +
                               " nodes gave no diagnosis: " + joinList(failed, 3)});
    }
    std::stable_sort(v.findings.begin(), v.findings.end(), [](const Finding& a, const Finding& b) {
        return rankOfKind(a.kind) < rankOfKind(b.kind);
    });
    if (v.findings.empty()) {
        bool anyRas = false, anyStacks = false;
        for (const auto& n : nodes) {
            anyRas = anyRas || n.rasAvailable;
            anyStacks = anyStacks || !n.stacks.empty();
        }
        v.findings.push_back(
            {"no_data", std::string("no anomaly found") +
                            (anyRas ? "" : "; no NCCL RAS report (see each node)") +
                            (anyStacks ? "" : "; no Python stacks (see each node)")});
    }
    v.headline = v.findings.front().text;
    if (v.findings.size() > 1 && v.findings[1].kind != v.findings[0].kind &&
        rankOfKind(v.findings[1].kind) <= rankOfKind("kernel")) {
        v.headline += "; " + v.findings[1].text;
    }
    if (v.headline.size() > 300) {
        v.headline = v.headline.substr(0, 297) + "...";
    }
    return v;
}

json toJson(const Verdict& verdict) {
    json findings = json::array();
    for (const auto& f : verdict.findings) {
        findings.push_back({{"kind", f.kind}, {"text", f.text}});
    }
    json groups = json::array();
    for (const auto& g : verdict.stackGroups) {
        groups.push_back({{"frame", g.frame}, {"file", g.file}, {"members", g.members}});
    }
    return {{"headline", verdict.headline},
            {"findings", std::move(findings)},
            {"stack_groups", std::move(groups)}};
}

json toJson(const RunDiagnosis& d) {
    json nodes = json::array();
    for (const auto& n : d.nodes) {
        nodes.push_back(toJson(n));
    }
    return {{"format", "runplane.diagnosis.v1"},
            {"run_id", d.runId},
            {"trigger", d.trigger},
            {"t_unix_ns", d.tUnixNs},
            {"took_ms", d.tookMs},
            {"verdict", toJson(d.verdict)},
            {"nodes", std::move(nodes)}};
}

Result<RunDiagnosis> runDiagnosisFromJson(const json& j) {
    if (!j.is_object()) {
        return Error{"diagnosis: not a JSON object"};
    }
    RunDiagnosis d;
    for (Status s : {field(j, "run_id", d.runId), field(j, "trigger", d.trigger),
                     field(j, "t_unix_ns", d.tUnixNs), field(j, "took_ms", d.tookMs)}) {
        if (!s.ok()) {
            return s.failure();
        }
    }
    if (auto v = j.find("verdict"); v != j.end() && v->is_object()) {
        if (Status s = field(*v, "headline", d.verdict.headline); !s.ok()) {
            return s.failure();
        }
        if (auto fs = v->find("findings"); fs != v->end() && fs->is_array()) {
            for (const auto& f : *fs) {
                Finding finding;
                (void)field(f, "kind", finding.kind);
                (void)field(f, "text", finding.text);
                d.verdict.findings.push_back(std::move(finding));
            }
        }
        if (auto gs = v->find("stack_groups"); gs != v->end() && gs->is_array()) {
            for (const auto& g : *gs) {
                StackGroup group;
                (void)field(g, "frame", group.frame);
                (void)field(g, "file", group.file);
                (void)field(g, "members", group.members);
                d.verdict.stackGroups.push_back(std::move(group));
            }
        }
    }
    if (auto ns = j.find("nodes"); ns != j.end() && ns->is_array()) {
        for (const auto& n : *ns) {
            auto node = nodeDiagnosisFromJson(n);
            if (!node) {
                return node.failure();
            }
            d.nodes.push_back(std::move(*node));
        }
    }
    return d;
}

std::string boundedJsonText(const RunDiagnosis& diagnosis, std::size_t maxBytes) {
    auto dump = [](const json& j) {
        return j.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    RunDiagnosis d = diagnosis;
    std::string text = dump(toJson(d));
    std::vector<std::string> trimmed;
    // Step 1: only each process's main (first) thread.
    if (text.size() > maxBytes) {
        for (auto& n : d.nodes) {
            for (auto& s : n.stacks) {
                if (s.threads.size() > 1) {
                    s.threads.resize(1);
                }
            }
        }
        trimmed.push_back("stacks cut to one thread per process");
        text = dump(toJson(d));
    }
    // Step 2: the signature frame only.
    if (text.size() > maxBytes) {
        for (auto& n : d.nodes) {
            for (auto& s : n.stacks) {
                for (auto& t : s.threads) {
                    const StackFrame f = signatureFrame({t});
                    t.frames = {f};
                }
            }
        }
        trimmed.push_back("stacks cut to the grouping frame");
        text = dump(toJson(d));
    }
    // Step 3: output tails, kernel lines, RAS rank lists.
    if (text.size() > maxBytes) {
        for (auto& n : d.nodes) {
            n.stdoutTail.clear();
            n.stderrTail.clear();
            n.roleOutput.clear();
            n.kernelLines.clear();
            for (auto& c : n.ras.communicators) {
                c.ranks.clear();
            }
        }
        trimmed.push_back("output tails, kernel lines and RAS rank lists dropped");
        text = dump(toJson(d));
    }
    if (text.size() > maxBytes) {
        for (auto& n : d.nodes) {
            n.stacks.clear();
            n.processes.clear();
            n.gpus = json::array();
        }
        trimmed.push_back("stacks, processes and GPUs dropped");
    }
    json j = toJson(d);
    if (!trimmed.empty()) {
        j["trimmed"] = trimmed;
    }
    return dump(j);
}

std::string formatDiagnosis(const RunDiagnosis& d) {
    std::ostringstream out;
    out << d.verdict.headline << "\n\n";
    out << "run " << d.runId << ", trigger " << d.trigger << ", " << d.nodes.size() << " node"
        << (d.nodes.size() == 1 ? "" : "s") << ", collected in " << d.tookMs << " ms\n";
    out << "\nfindings:\n";
    for (const auto& f : d.verdict.findings) {
        out << "  [" << f.kind << "] " << f.text << "\n";
    }
    if (!d.verdict.stackGroups.empty()) {
        out << "\nstacks grouped by innermost Python frame (smallest group first):\n";
        for (const auto& g : d.verdict.stackGroups) {
            out << "  " << g.members.size() << " x " << g.frame << "  " << g.file << ": "
                << joinList(g.members, 6) << "\n";
        }
    }
    for (const auto& n : d.nodes) {
        out << "\nnode " << (n.address.empty() ? n.nodeId : n.address);
        if (!n.hostname.empty()) {
            out << " (" << n.hostname << ")";
        }
        out << "\n";
        if (!n.error.empty()) {
            out << "  error: " << n.error << "\n";
            continue;
        }
        out << "  run: " << (n.runState.empty() ? "?" : n.runState) << ", " << n.processes.size()
            << " processes, collected in " << n.collectionMs << " ms\n";
        if (n.rasAvailable) {
            out << "  NCCL RAS " << n.rasEndpoint << ": NCCL " << n.ras.ncclVersion << ", "
                << n.ras.communicatorsCount << " communicators (" << n.rasMs << " ms)\n";
        } else {
            out << "  NCCL RAS: missing: " << n.rasMissing << "\n";
        }
        if (!n.stackTool.empty()) {
            std::size_t with = 0;
            for (const auto& s : n.stacks) {
                with += s.threads.empty() ? 0 : 1;
            }
            out << "  stacks: " << n.stackTool << " from " << n.stackToolSource << " ("
                << n.stackToolPath << "), " << with << " of " << n.stacks.size() << " processes\n";
            for (const auto& s : n.stacks) {
                if (!s.error.empty()) {
                    out << "    pid " << s.pid << ": " << s.error << "\n";
                }
            }
        } else {
            out << "  stacks: missing: " << n.stacksMissing << "\n";
        }
        out << "  GPUs: "
            << (n.gpusMissing.empty() ? std::to_string(n.gpus.size()) + " read from NVML"
                                      : "missing: " + n.gpusMissing)
            << "\n";
        if (n.gpus.is_array()) {
            for (const auto& g : n.gpus) {
                const GpuClockState state = gpuClockState(g);
                if (!state.text.empty()) {
                    out << "    GPU " << g.value("index", 0) << ": " << state.text
                        << (state.throttled ? " (throttled)" : "") << "\n";
                }
            }
        }
        if (n.kernelLogMissing.empty()) {
            out << "  kernel log (" << n.kernelLogSource << "): " << n.kernelLines.size()
                << " Xid/OOM/segfault lines in the run's window\n";
            for (const auto& k : n.kernelLines) {
                out << "    [" << k.bootSeconds << "] " << k.text << "\n";
            }
        } else {
            out << "  kernel log: missing: " << n.kernelLogMissing << "\n";
        }
        for (const auto& r : n.roleOutput) {
            out << "  last output of " << r.role << " (" << r.source << ", " << r.stream
                << "): " << lastOutputText({r}, n.tUnixNs).substr(r.role.size() + 2) << "\n";
        }
        if (!n.outputMissing.empty()) {
            out << "  output: missing: " << n.outputMissing << "\n";
        } else {
            const auto& tail = n.stderrTail.empty() ? n.stdoutTail : n.stderrTail;
            out << "  last output (" << (n.stderrTail.empty() ? "stdout" : "stderr") << "):\n";
            const std::size_t from = tail.size() > 5 ? tail.size() - 5 : 0;
            for (std::size_t i = from; i < tail.size(); ++i) {
                out << "    " << tail[i] << "\n";
            }
        }
        if (!n.flightRecorderMissing.empty()) {
            out << "  flight recorder: " << n.flightRecorderMissing << "\n";
        } else {
            out << "  flight recorder: " << n.flightRecorderFiles.size() << " dump files\n";
        }
    }
    return out.str();
}

}  // namespace runplane::diagnosis
