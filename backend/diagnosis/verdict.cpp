// The verdict of a run's diagnosis (diagnosis.h, judge): findings from the NCCL RAS reports,
// the stacks, the GPUs, the kernel log and each role's last output, ranked, and the headline.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/gpu_clocks.h"
#include "backend/diagnosis/host_names.h"
#include "backend/diagnosis/join_list.h"

namespace runplane::diagnosis {
namespace {

// ncclInProgress: a non-blocking communicator's normal state, not an error (NVIDIA/nccl#2263).
constexpr std::int64_t kNcclInProgress = 7;

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

// NCCL prints a communicator hash as "0x" and 16 hex digits; anything longer is cut there.
std::string shortHash(const std::string& h) {
    return h.size() > 18 ? h.substr(0, 18) : h;
}

void rasFindings(const std::vector<RasCommunicator>& comms, const HostNames& names, Verdict& v) {
    for (const auto& c : comms) {
        const std::string comm = "communicator " + shortHash(c.hash) + " (" +
                                 std::to_string(c.size) + (c.size == 1 ? " rank)" : " ranks)");
        if (!c.missingRanks.empty() || c.missingRanksCount > 0) {
            std::vector<std::string> labels;
            for (const auto& m : c.missingRanks) {
                std::string l = RankRef{m.rank, m.pid, names.ofRasHost(m.host)}.label();
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
            const std::string l = RankRef{r.rank, r.pid, names.ofRasHost(r.host)}.label();
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
        for (const LaggingKind& lag : ranksBehind(c)) {
            std::vector<std::string> behind;
            for (const auto& [i, n] : lag.behind) {
                const RasRank& r = c.ranks[i];
                behind.push_back(RankRef{r.rank, r.pid, names.ofRasHost(r.host)}.label() + " at " +
                                 std::to_string(n));
            }
            v.findings.push_back({"behind", "NCCL " + comm + ": " + std::to_string(behind.size()) +
                                                " of " + std::to_string(c.ranks.size()) +
                                                " ranks behind their peers in " + lag.kind +
                                                " (peers at " + std::to_string(lag.top) +
                                                "): " + joinList(behind)});
        }
    }
}

// The ranks RAS points at: behind their peers in some collective kind, or missing.
std::set<std::int64_t> suspectRanks(const std::vector<RasCommunicator>& comms) {
    std::set<std::int64_t> out;
    for (const auto& c : comms) {
        for (const auto& m : c.missingRanks) {
            out.insert(m.rank);
        }
        for (const LaggingKind& lag : ranksBehind(c)) {
            for (const auto& [i, n] : lag.behind) {
                out.insert(c.ranks[i].rank);
            }
        }
    }
    return out;
}

struct Member {
    std::string label;
    std::int64_t rank = -1;
};

void stackFindings(const std::vector<NodeDiagnosis>& nodes,
                   const std::vector<RasCommunicator>& comms, const HostNames& names, Verdict& v) {
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
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const NodeDiagnosis& n = nodes[i];
        const std::string host = names.ofNode(i);
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
    const std::set<std::int64_t> suspects = suspectRanks(comms);
    std::map<std::string, StackGroup> groups;
    std::set<std::string> withSuspect;  // groups holding a rank RAS names (behind or missing)
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
        if (e.member.rank >= 0 && suspects.count(e.member.rank) > 0) {
            withSuspect.insert(key);
        }
    }
    for (auto& [k, g] : groups) {
        v.stackGroups.push_back(std::move(g));
    }
    // Smallest first; among groups of one size, the one holding a rank RAS names comes first (a
    // two-rank job's groups are one each: the names' order would otherwise pick the outlier).
    std::stable_sort(v.stackGroups.begin(), v.stackGroups.end(),
                     [&withSuspect](const StackGroup& a, const StackGroup& b) {
                         if (a.members.size() != b.members.size()) {
                             return a.members.size() < b.members.size();
                         }
                         return withSuspect.count(a.frame) > withSuspect.count(b.frame);
                     });
    if (v.stackGroups.size() >= 2) {
        // A group of one names its member; a larger one is counted.
        auto who = [anyRank](const StackGroup& g) {
            return g.members.size() == 1
                       ? g.members.front()
                       : std::to_string(g.members.size()) + (anyRank ? " ranks" : " processes");
        };
        std::vector<std::string> parts;
        for (const auto& g : v.stackGroups) {
            parts.push_back(who(g) + " in " + g.frame);
        }
        v.findings.push_back({"stack_outlier", joinList(parts, 4)});
    } else if (v.stackGroups.size() == 1) {
        const auto& g = v.stackGroups.front();
        // One member is named ("rank 0 (pid 611 on vm), the only rank, in ..."), not "all 1".
        const std::string who =
            g.members.size() == 1
                ? g.members.front() + (anyRank ? ", the only rank," : ", the only process,")
                : "all " + std::to_string(g.members.size()) + (anyRank ? " ranks" : " processes");
        v.findings.push_back({"stacks_agree", who + " in " + g.frame + " (" + g.file + ")"});
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

Verdict judge(const std::vector<NodeDiagnosis>& nodes) {
    Verdict v;
    const auto comms = mergedCommunicators(nodes);
    const HostNames names(nodes, comms);
    rasFindings(comms, names, v);
    stackFindings(nodes, comms, names, v);
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

}  // namespace runplane::diagnosis
