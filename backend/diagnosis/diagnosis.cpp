// A run's diagnosis: its JSON form and its text (diagnosis.h); the verdict is verdict.cpp's.
#include "backend/diagnosis/diagnosis.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "backend/diagnosis/gpu_clocks.h"
#include "backend/diagnosis/join_list.h"

namespace runplane::diagnosis {
namespace {

using nlohmann::json;

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
