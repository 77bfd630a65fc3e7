#pragma once
// Grouping on the Compare page (issue 49, as Aim and W&B group runs): the compared runs split by
// their tags or by a recipe field, each group drawn as the mean of its runs' curves with the
// min–max band around it (docs/gui.md "Grouping"). Pure functions over CompareData; GUI thread.

#include <QString>
#include <QStringList>

#include <vector>

#include "gui/models/compare_data.h"
#include "gui/widgets/plot_types.h"

namespace runplane::gui {

/// The group-by key for tags (every other key is a recipe field's path).
inline const QString kGroupByTags = QStringLiteral("tags");

/// What the runs can be grouped by: "tags", then each recipe field whose value differs between
/// the runs (recipeDiff order).
QStringList groupByKeys(const CompareData& data);

struct RunGroup {
    QString label;          // "tags: a, b" / "field = value" / "(untagged)"
    std::vector<int> runs;  // indices into data.runs, in data order
};

/// The runs grouped by `key`: by their sorted tags joined ("(untagged)" without any), or by the
/// recipe field's value ("(default)" where a run leaves it out). Groups in order of first run.
std::vector<RunGroup> groupRuns(const CompareData& data, const QString& key);

/// A group's curve: at every x where one of its runs has a point, the mean, min and max of the
/// runs that cover x (a run covers [its first x, its last x]; between its points it is linearly
/// interpolated), after each run's own EMA (weight 0 = raw). `count` is how many runs covered x.
struct GroupCurve {
    std::vector<double> x;
    std::vector<double> mean;
    std::vector<double> min;
    std::vector<double> max;
    std::vector<int> count;
};
GroupCurve groupCurve(const CompareData& data, const RunGroup& group, const QString& metric,
                      CompareAxis axis, double weight);

/// One series per group: the mean line with the min–max band (a filled channel between the
/// band's two graphs), named "LABEL (n runs)". `colors` receives each group's colour.
std::vector<PlotSeries> groupSeries(const CompareData& data, const QString& key,
                                    const QString& metric, CompareAxis axis, double weight,
                                    std::vector<QColor>* colors = nullptr);

}  // namespace runplane::gui
