#include "gui/app/compare_report_groups.h"

#include "gui/pages/compare_groups.h"

namespace runplane::gui {

namespace {

QString number(double v) {
    return QString::number(v, 'f', 4);
}

QString csvField(const QString& s) {
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) &&
        !s.contains(QLatin1Char('\n'))) {
        return s;
    }
    QString q = s;
    q.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

}  // namespace

Result<GroupReport> groupReport(const CompareData& data, const QString& key,
                                const QStringList& metrics, double weight) {
    const QStringList keys = groupByKeys(data);
    if (!keys.contains(key)) {
        return Error{QStringLiteral("--group-by: '%1' is not a key these runs can be grouped by "
                                    "(%2)")
                         .arg(key, keys.join(QStringLiteral(", ")))
                         .toStdString()};
    }
    GroupReport out;
    out.table.header = {
        QStringLiteral("metric"), QStringLiteral("group"),     QStringLiteral("runs"),
        QStringLiteral("points"), QStringLiteral("last step"), QStringLiteral("mean"),
        QStringLiteral("min"),    QStringLiteral("max"),       QStringLiteral("runs there")};
    out.csv = QStringLiteral("metric,group,x,mean,min,max,runs\n");
    const std::vector<RunGroup> groups = groupRuns(data, key);
    for (const QString& metric : metrics) {
        for (const RunGroup& g : groups) {
            QStringList names;
            for (int i : g.runs) {
                const RunRow& r = data.runs[static_cast<size_t>(i)].run;
                names << (r.name.isEmpty() ? r.id : r.name);
            }
            const GroupCurve c = groupCurve(data, g, metric, CompareAxis::Step, weight);
            for (size_t k = 0; k < c.x.size(); ++k) {
                out.csv += csvField(metric) + QLatin1Char(',') + csvField(g.label) +
                           QLatin1Char(',') + QString::number(c.x[k], 'g', 12) + QLatin1Char(',') +
                           QString::number(c.mean[k], 'g', 10) + QLatin1Char(',') +
                           QString::number(c.min[k], 'g', 10) + QLatin1Char(',') +
                           QString::number(c.max[k], 'g', 10) + QLatin1Char(',') +
                           QString::number(c.count[k]) + QLatin1Char('\n');
            }
            const QString none = QStringLiteral("–");
            if (c.x.empty()) {
                out.table.rows.push_back({metric, g.label, names.join(QStringLiteral(", ")),
                                          QStringLiteral("0"), none, none, none, none, none});
                continue;
            }
            const size_t last = c.x.size() - 1;
            out.table.rows.push_back(
                {metric, g.label, names.join(QStringLiteral(", ")), QString::number(c.x.size()),
                 QString::number(c.x[last], 'g', 12), number(c.mean[last]), number(c.min[last]),
                 number(c.max[last]),
                 QStringLiteral("%1 of %2").arg(c.count[last]).arg(g.runs.size())});
        }
    }
    out.text = QStringLiteral(
                   "Grouped by %1: each score plot above draws one line per group, the "
                   "mean of its runs' EMA-smoothed curves with the min–max band; the "
                   "table gives each group's curve at its last step (mean, min, max "
                   "and how many of its runs reach that step).")
                   .arg(key);
    return out;
}

}  // namespace runplane::gui
