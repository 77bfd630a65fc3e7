#pragma once
// Internal to runplane_gui_app: the "Diagnosis" section of the headless run report (issue #44,
// docs/diagnosis.md "In the run report"): every diagnosis stored with the run, newest first, with
// its verdict, evidence (the verdict's findings) and when; "none" when the run has none.

#include <QString>

#include <vector>

#include "gui/models/diagnosis_data.h"

namespace runplane::gui {

struct ReportSection {
    QString markdown;
    QString html;
};

/// The section for `stored` (readStoredDiagnoses of the report's run).
ReportSection diagnosisSection(const StoredDiagnoses& stored);

/// The compare report's section: per run, how many diagnoses are stored and the newest one's
/// verdict, trigger and time, or "none".
ReportSection diagnosisSummarySection(const std::vector<StoredDiagnoses>& runs);

}  // namespace runplane::gui
