#pragma once
// Grouping in the headless comparison (issue 49, docs/gui.md "In the headless comparison"):
// `runplane --report DIR --runs ... --group-by KEY` draws each score metric per group (the mean
// with the min–max band, exactly the Compare page's groupSeries) and adds a Groups table and
// compare_groups.csv (groupCurve's points). GUI thread (the plots are widgets).

#include <QString>
#include <QStringList>

#include "common/result.h"
#include "gui/app/report_text.h"
#include "gui/models/compare_data.h"

namespace runplane::gui {

struct GroupReport {
    /// metric, group, runs, points, last step, mean, min, max, runs there: per score metric and
    /// group, the group curve at its last x (4 decimals; "–" for a metric the group lacks).
    ReportTable table;
    /// metric,group,x,mean,min,max,runs: every point of every group curve, header first.
    QString csv;
    /// The group-by line above the table ("Grouped by KEY: …").
    QString text;
};

/// The groups of `data` by `key` ("tags" or a recipe field whose value differs between the runs,
/// groupByKeys) for each of `metrics` on the step axis after the EMA of `weight`. An unknown key
/// is refused naming the keys there are: "--group-by: 'K' is not a key these runs can be grouped
/// by (tags, FIELD, ...)".
Result<GroupReport> groupReport(const CompareData& data, const QString& key,
                                const QStringList& metrics, double weight);

}  // namespace runplane::gui
