#include "gui/models/diagnosis_data.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "backend/control/diagnose.h"
#include "backend/diagnosis/gpu_clocks.h"
#include "db/history/history.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {
namespace {

namespace dx = runplane::diagnosis;

// ncclInProgress: a non-blocking communicator's normal state, not an error (the verdict's rule).
constexpr std::int64_t kNcclInProgress = 7;

QString rankLabel(std::int64_t rank, std::int64_t pid, const std::string& host) {
    QString s = QStringLiteral("rank %1").arg(rank);
    if (pid > 0 || !host.empty()) {
        s += QStringLiteral(" (");
        if (pid > 0) {
            s += QStringLiteral("pid %1").arg(pid);
        }
        if (!host.empty()) {
            s += (pid > 0 ? QStringLiteral(" on ") : QString()) + qs(host);
        }
        s += QLatin1Char(')');
    }
    return s;
}

QString frameText(const dx::StackFrame& f) {
    QString s = f.name.empty() ? QStringLiteral("?") : qs(f.name);
    if (!f.file.empty()) {
        s += QStringLiteral(" (") + qs(f.file) +
             (f.line > 0 ? QStringLiteral(":%1").arg(f.line) : QString()) + QLatin1Char(')');
    }
    return s;
}

// The thread the verdict groups by: MainThread, else the first.
const dx::ThreadStack* mainThread(const std::vector<dx::ThreadStack>& threads) {
    for (const auto& t : threads) {
        if (t.threadName == "MainThread") {
            return &t;
        }
    }
    return threads.empty() ? nullptr : &threads.front();
}

}  // namespace

StoredDiagnoses readStoredDiagnoses(const QString& historyPath, const QString& runId) {
    StoredDiagnoses out;
    out.runId = runId;
    const std::string path = historyPath.toStdString();
    std::error_code ec;
    if (path.empty() || runId.isEmpty() || !std::filesystem::exists(path, ec)) {
        return out;
    }
    db::OpenOptions open;
    open.readOnly = true;
    auto history = db::History::open(path, open);
    if (!history) {
        out.error = qs(history.error());
        return out;
    }
    auto records = (*history)->listDiagnoses(RunId{runId.toStdString()}, true);
    if (!records) {
        out.error = qs(records.error());
        return out;
    }
    for (const auto& r : *records) {
        StoredDiagnosis s;
        s.id = r.id;
        s.trigger = qs(r.trigger);
        s.headline = qs(r.headline);
        s.tNs = r.tNs;
        const auto j = nlohmann::json::parse(r.json, nullptr, false);
        if (j.is_discarded()) {
            s.parseError = QStringLiteral("stored diagnosis %1 is not JSON").arg(r.id);
        } else if (auto d = dx::runDiagnosisFromJson(j); d) {
            s.diagnosis = std::move(*d);
        } else {
            s.parseError = QStringLiteral("stored diagnosis %1: ").arg(r.id) + qs(d.error());
        }
        out.items.push_back(std::move(s));
    }
    return out;
}

DiagnoseOutcome diagnoseRunNow(const QString& historyPath, const QString& runId,
                               const QStringList& addresses,
                               const control::NodeClientOptions& client) {
    DiagnoseOutcome out;
    out.runId = runId;
    control::DiagnoseSpec spec;
    spec.runId = RunId{runId.toStdString()};
    spec.trigger = "on_demand";
    spec.client = client;
    for (const QString& a : addresses) {
        if (!a.isEmpty() && !out.addresses.contains(a)) {
            out.addresses << a;
            spec.addresses.push_back(a.toStdString());
        }
    }
    if (spec.addresses.empty()) {
        auto known = control::runNodeAddresses(historyPath.toStdString(), spec.runId);
        if (!known) {
            out.error = QStringLiteral("no node of run %1 to ask: ").arg(runId) + qs(known.error());
            return out;
        }
        for (const auto& a : *known) {
            out.addresses << qs(a);
        }
        spec.addresses = *known;
    }
    if (spec.addresses.empty()) {
        out.error = QStringLiteral(
                        "no daemon address is known for the nodes of run %1 (the history "
                        "names none): nothing was asked")
                        .arg(runId);
        return out;
    }
    dx::RunDiagnosis d = control::diagnoseAcross(spec);
    out.tookMs = d.tookMs;
    if (auto stored = control::storeDiagnosis(historyPath.toStdString(), d); !stored) {
        out.storeError = qs(stored.error());
    }
    out.diagnosis = std::move(d);
    return out;
}

QString diagnoseOutcomeText(const DiagnoseOutcome& outcome) {
    if (!outcome.error.isEmpty()) {
        return outcome.error;
    }
    if (!outcome.diagnosis) {
        return {};
    }
    const auto& nodes = outcome.diagnosis->nodes;
    QStringList failed;
    for (const auto& n : nodes) {
        if (!n.error.empty()) {
            failed << qs(n.address) + QStringLiteral(": ") + qs(n.error);
        }
    }
    const auto answered = static_cast<qsizetype>(nodes.size()) - failed.size();
    QString text = QStringLiteral("%1 of %2 node(s) answered in %3 s")
                       .arg(answered)
                       .arg(nodes.size())
                       .arg(static_cast<double>(outcome.tookMs) / 1000.0, 0, 'f', 1);
    if (!failed.isEmpty()) {
        text += QStringLiteral("; could not ask ") + failed.join(QStringLiteral("; "));
    }
    text += outcome.storeError.isEmpty() ? QStringLiteral("; stored with the run")
                                         : QStringLiteral("; NOT stored: ") + outcome.storeError;
    return text;
}

QStringList stuckRanks(const dx::RasReport& report, const dx::HostNames* names) {
    // rank -> reasons, so that a rank that is both missing and behind is listed once.
    std::map<std::int64_t, std::pair<QString, QStringList>> byRank;
    auto note = [&](std::int64_t rank, std::int64_t pid, const std::string& host,
                    const QString& why) {
        auto& entry = byRank[rank];
        if (entry.first.isEmpty()) {
            entry.first = rankLabel(rank, pid, names != nullptr ? names->ofRasHost(host) : host);
        }
        if (!entry.second.contains(why)) {
            entry.second << why;
        }
    };
    for (const auto& c : report.communicators) {
        for (const auto& m : c.missingRanks) {
            note(m.rank, m.pid, m.host,
                 m.consideredDead ? QStringLiteral("missing, considered dead")
                 : m.unresponsive ? QStringLiteral("missing, unresponsive")
                                  : QStringLiteral("missing"));
        }
        for (const auto& r : c.ranks) {
            if (r.status.present) {
                if (r.status.asyncError != 0 && r.status.asyncError != kNcclInProgress) {
                    note(r.rank, r.pid, r.host,
                         QStringLiteral("async error %1").arg(r.status.asyncError));
                }
                if (r.status.initState != 0 && r.status.initState != kNcclInProgress) {
                    note(r.rank, r.pid, r.host,
                         QStringLiteral("init state %1").arg(r.status.initState));
                }
                if (r.status.abortFlag) {
                    note(r.rank, r.pid, r.host, QStringLiteral("aborted"));
                }
            }
        }
        for (const dx::LaggingKind& lag : dx::ranksBehind(c)) {
            for (const auto& [i, n] : lag.behind) {
                const auto& r = c.ranks[i];
                note(r.rank, r.pid, r.host,
                     QStringLiteral("behind in ") + qs(lag.kind) +
                         QStringLiteral(" (%1 of %2)").arg(n).arg(lag.top));
            }
        }
    }
    QStringList out;
    for (const auto& [rank, entry] : byRank) {
        out << entry.first + QStringLiteral(": ") + entry.second.join(QStringLiteral(", "));
    }
    return out;
}

NodeDiagnosisLines nodeLines(const dx::NodeDiagnosis& node, const dx::HostNames* names) {
    NodeDiagnosisLines out;
    QString title = node.nodeId.empty() ? qs(node.address) : qs(node.nodeId);
    if (!node.hostname.empty() && node.hostname != node.nodeId) {
        title += QStringLiteral(" on ") + qs(node.hostname);
    }
    if (!node.nodeId.empty() && !node.address.empty()) {
        title += QStringLiteral(" (") + qs(node.address) + QLatin1Char(')');
    }
    if (!node.runState.empty()) {
        // The daemon's enum spelling ("RUN_STATE_RUNNING") shown as a word ("running").
        QString state = qs(node.runState);
        state.remove(QStringLiteral("RUN_STATE_"));
        title += QStringLiteral(" · run ") + state.toLower();
    }
    if (node.error.empty()) {
        title += QStringLiteral(" · %1 ms").arg(node.collectionMs);
    }
    out.title = title;
    out.error = qs(node.error);
    if (!node.error.empty()) {
        return out;
    }

    if (node.rasAvailable) {
        std::int64_t ranks = 0;
        std::int64_t missing = 0;
        for (const auto& c : node.ras.communicators) {
            ranks +=
                std::max<std::int64_t>(c.ranksCount, static_cast<std::int64_t>(c.ranks.size()));
            missing += std::max<std::int64_t>(c.missingRanksCount,
                                              static_cast<std::int64_t>(c.missingRanks.size()));
        }
        out.ras = QStringLiteral("NCCL ") +
                  (node.ras.ncclVersion.empty() ? QStringLiteral("?") : qs(node.ras.ncclVersion)) +
                  QStringLiteral(" at ") + qs(node.rasEndpoint) +
                  QStringLiteral(": %1 communicator(s), %2 rank(s), %3 missing")
                      .arg(node.ras.communicators.size())
                      .arg(ranks)
                      .arg(missing);
        out.stuckRanks = stuckRanks(node.ras, names);
    } else {
        out.ras =
            QStringLiteral("not available: ") +
            (node.rasMissing.empty() ? QStringLiteral("no reason given") : qs(node.rasMissing));
    }

    if (!node.stacksMissing.empty()) {
        out.stacks = QStringLiteral("not taken: ") + qs(node.stacksMissing);
    } else {
        out.stacks = (node.stackTool.empty() ? QStringLiteral("py-spy") : qs(node.stackTool)) +
                     (node.stackToolSource.empty()
                          ? QString()
                          : QStringLiteral(" (") + qs(node.stackToolSource) + QLatin1Char(')')) +
                     QStringLiteral(", %1 process(es)").arg(node.stacks.size()) +
                     (node.nativeFrames ? QStringLiteral(", native frames") : QString());
    }
    for (const auto& p : node.stacks) {
        NodeDiagnosisLines::Process shown;
        std::int64_t rank = -1;
        for (const auto& info : node.processes) {
            if (info.pid == p.pid) {
                rank = info.rank;
            }
        }
        shown.label = rank >= 0 ? QStringLiteral("rank %1 (pid %2)").arg(rank).arg(p.pid)
                                : QStringLiteral("pid %1").arg(p.pid);
        shown.error = qs(p.error);
        if (const dx::ThreadStack* t = mainThread(p.threads)) {
            for (std::size_t i = 0; i < t->frames.size() && i < kTopFrames; ++i) {
                shown.frames << frameText(t->frames[i]);
            }
        }
        out.processes.push_back(std::move(shown));
    }

    if (!node.kernelLogMissing.empty()) {
        out.kernelLog = QStringLiteral("not read: ") + qs(node.kernelLogMissing);
    } else {
        out.kernelLog =
            qs(node.kernelLogSource) +
            QStringLiteral(": %1 line(s) of the run's window").arg(node.kernelLines.size()) +
            (node.kernelLogTruncated ? QStringLiteral(" (the newest kept)") : QString());
    }
    for (const auto& k : node.kernelLines) {
        out.kernelLines
            << QStringLiteral("[%1] %2: ").arg(k.bootSeconds, 0, 'f', 3).arg(qs(k.kind)) +
                   qs(k.text);
    }
    if (node.gpus.is_array()) {
        for (const auto& g : node.gpus) {
            const dx::GpuClockState state = dx::gpuClockState(g);
            if (!state.text.empty()) {
                out.gpuClocks << QStringLiteral("GPU %1: ").arg(g.value("index", 0)) +
                                     qs(state.text) +
                                     (state.throttled ? QStringLiteral(" (throttled)") : QString());
            }
        }
    }
    for (const auto& r : node.roleOutput) {
        // lastOutputText gives "role: `line` AGE"; the source and stream go after the role.
        const std::string text = dx::lastOutputText({r}, node.tUnixNs);
        out.lastOutput << qs(r.role) + QStringLiteral(" (") + qs(r.source) + QStringLiteral(", ") +
                              qs(r.stream) + QStringLiteral("): ") +
                              qs(text.substr(r.role.size() + 2));
    }
    return out;
}

}  // namespace runplane::gui
