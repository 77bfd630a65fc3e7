#pragma once
// The headless report (`runplane --report OUT_DIR --run RUN_ID`): loads one run from the
// history and writes, without any window,
//   host_memory.png  host memory per node: min–max bands, lines, RAM/alarm lines, phases, alarms
//   eval.png         every eval/* metric of the run by step
//   report.md, report.html  a summary (run, peaks per node, last/best eval, NCCL, warnings,
//                           the stored diagnoses)
// The PNGs are drawn by the same TimeSeriesPlot + plot_builders code the Runs page uses.
// Runs on the calling thread (there is no GUI to keep responsive); needs a QApplication (the
// offscreen platform is fine).

#include <QString>
#include <QStringList>

#include "common/result.h"
#include "gui/models/diagnosis_data.h"
#include "gui/models/run_data.h"

namespace runplane::gui {

struct ReportRequest {
    QString historyPath;
    QString runId;
    QString outDir;
    int width = 1400;
    int height = 560;
};

/// The files written.
struct ReportFiles {
    QStringList written;
    QString markdown;  // path of report.md
};

/// Loads the run and writes the report. Errors name the file or the run.
Result<ReportFiles> writeRunReport(const ReportRequest& request);

/// Writes the report for an already-loaded snapshot (used by writeRunReport and tests). With
/// `diagnoses` (the run's stored diagnoses, writeRunReport reads them) the report has a Diagnosis
/// section (report_diagnosis.h).
Result<ReportFiles> writeSnapshotReport(const RunSnapshot& snapshot, const QString& outDir,
                                        int width, int height,
                                        const StoredDiagnoses* diagnoses = nullptr);

}  // namespace runplane::gui
