#pragma once
// What the Runs page's Diagnosis tab shows (issue #44, docs/diagnosis.md, docs/gui.md): a run's
// stored diagnoses read from the history, a new diagnosis asked of the run's daemons and stored,
// and the per-node lines drawn from a diagnosis (NCCL RAS state, stuck ranks, top stack frames,
// kernel log lines). readStoredDiagnoses and diagnoseRunNow block (SQLite, gRPC): call them on a
// worker thread (DiagnosisView does, through SerialWorker); their results are plain values that
// cross to the GUI thread. The line builders are pure functions.

#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

#include "backend/control/node_client.h"
#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/host_names.h"

namespace runplane::gui {

struct StoredDiagnosis {
    std::int64_t id = 0;  // run_diagnoses.id
    QString trigger;
    QString headline;
    std::int64_t tNs = 0;
    diagnosis::RunDiagnosis diagnosis;
    QString parseError;  // the stored document could not be read back (diagnosis is empty)
};

/// A run's stored diagnoses, newest first; error says why none could be read.
struct StoredDiagnoses {
    QString runId;
    QString error;
    std::vector<StoredDiagnosis> items;
};

/// The run's diagnoses in the history at historyPath (opened read-only). A history that does not
/// exist yet has none (no error).
StoredDiagnoses readStoredDiagnoses(const QString& historyPath, const QString& runId);

/// The outcome of "Diagnose now".
struct DiagnoseOutcome {
    QString runId;
    QStringList addresses;  // the daemons asked
    QString error;          // nothing was asked (no address known, the history unreadable)
    std::optional<diagnosis::RunDiagnosis> diagnosis;
    QString storeError;  // asked, but not stored
    std::int64_t tookMs = 0;
};

/// Asks the daemons at `addresses` (the non-empty ones; none: the run's nodes as the history
/// knows them, control::runNodeAddresses) for the run's diagnosis at once
/// (control::diagnoseAcross, each call bounded), then stores it with the run
/// (control::storeDiagnosis). A node that cannot be asked is a NodeDiagnosis with its error.
DiagnoseOutcome diagnoseRunNow(const QString& historyPath, const QString& runId,
                               const QStringList& addresses,
                               const control::NodeClientOptions& client);

/// "2 of 3 nodes answered; 127.0.0.1:9 could not be asked: ..." — the line under the button.
QString diagnoseOutcomeText(const DiagnoseOutcome& outcome);

/// One node's lines in the tab (docs/gui.md, "Diagnosis tab").
struct NodeDiagnosisLines {
    QString title;  // "node-0 on gpu-a (127.0.0.1:7001) · run running · 412 ms"
    QString error;  // the whole node failed: why
    QString ras;    // "NCCL 2.28.9, 1 communicator(s), 8 rank(s), 0 missing" or why missing
    /// Ranks this node's RAS report names as missing, in error, or behind their peers in a
    /// collective count: "rank 3 (pid 4103 on 10.0.0.1): behind in AllGather (640 of 641)".
    QStringList stuckRanks;
    QString stacks;  // "py-spy 0.4.3 (PATH), 2 process(es)" or why missing
    struct Process {
        QString label;       // "rank 1 (pid 812)"
        QStringList frames;  // top frames of its main thread, innermost first: "f (file.py:12)"
        QString error;       // why py-spy gave nothing
    };
    std::vector<Process> processes;
    QString kernelLog;  // "/dev/kmsg: 2 line(s)" or why missing
    QStringList kernelLines;
    /// Per GPU: "GPU 0: SM clock 990 of 1980 MHz (50%), hw_thermal_slowdown (thermal), 92 C
    /// (throttled)" (docs/diagnosis.md "GPU clocks"); empty when NVML gave none.
    QStringList gpuClocks;
    /// Per role: "trainer (MegatronTrainRayActor pid 812, stdout): `line` 14 min ago"
    /// (docs/diagnosis.md "Last output per role").
    QStringList lastOutput;
};

/// Frames shown per process.
inline constexpr int kTopFrames = 4;

/// `names`: how the verdict names each RAS host (one name per host, docs/diagnosis.md); nullptr =
/// as RAS gives it.
NodeDiagnosisLines nodeLines(const diagnosis::NodeDiagnosis& node,
                             const diagnosis::HostNames* names = nullptr);

/// The ranks a RAS report names as stuck (missing, async error, init error, aborted, behind in a
/// collective count of their communicator), each once, in rank order; hosts named as `names`
/// names them (the verdict's `vm, 192.0.2.2`), else as RAS gives them.
QStringList stuckRanks(const diagnosis::RasReport& report,
                       const diagnosis::HostNames* names = nullptr);

}  // namespace runplane::gui
