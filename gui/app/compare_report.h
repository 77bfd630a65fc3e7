#pragma once
// The headless comparison (`runplane --report OUT_DIR --runs A,B,...`): the Compare page without
// a window. Loads 2–10 runs from the history and writes
//   compare_<metric>.png  per score-kind eval metric: every run's curve by step, raw points faint
//                         under the debiased EMA (the Compare page's drawing)
//   compare.csv           the plotted points of every score metric (run_id, run_name, metric,
//                         x, value, smoothed; gui/models/compare_data.h compareCsv)
//   report.md, report.html  the runs, the primary eval's last/best per run, each other run's
//                         deltas against the baseline (last, best), host-memory peaks
//                         per run and node, the recipe diff (only fields that differ), the plots
// Runs on the calling thread; needs a QApplication (the offscreen platform is fine).

#include <QString>
#include <QStringList>

#include "common/result.h"

namespace runplane::gui {

struct CompareReportRequest {
    QString historyPath;
    QStringList runIds;
    QString outDir;
    double smoothing = 0.6;  // EMA weight, as the Compare page's default
    /// The baseline of the "Deltas vs baseline" table (issue 49); "" = the first run listed.
    QString baselineRunId;
    /// Group the runs (issue 49): "tags" or a recipe field; "" = no grouping
    /// (compare_report_groups.h).
    QString groupBy;
    int width = 1400;
    int height = 560;
};

struct CompareReportFiles {
    QStringList written;
    QString markdown;  // path of report.md
};

/// Errors name the history file, the missing run, or the file that could not be written.
Result<CompareReportFiles> writeCompareReport(const CompareReportRequest& request);

}  // namespace runplane::gui
