#include "gui/app/compare_report.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <optional>
#include <vector>

#include "db/history/history.h"
#include "gui/app/compare_report_groups.h"
#include "gui/app/report_diagnosis.h"
#include "gui/app/report_text.h"
#include "gui/models/compare_baseline.h"
#include "gui/models/compare_data.h"
#include "gui/models/metric_views.h"
#include "gui/pages/compare_fork_marks.h"
#include "gui/pages/compare_groups.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/plot_builders.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {

Error errorText(const QString& text) {
    return Error{text.toStdString()};
}

QString label(const CompareRun& r) {
    return r.run.name.isEmpty() ? r.run.id : r.run.name;
}

// "eval/gsm8k-pass@4" -> "compare_eval_gsm8k-pass_4.png": a file name without path separators.
QString plotFile(const QString& metric) {
    QString name = metric;
    for (QChar& c : name) {
        if (!c.isLetterOrNumber() && c != QLatin1Char('-') && c != QLatin1Char('.')) {
            c = QLatin1Char('_');
        }
    }
    return QStringLiteral("compare_") + name + QStringLiteral(".png");
}

const MetricValue* valueOf(const CompareRun& r, const QString& metric) {
    for (const MetricValue& m : r.run.metrics) {
        if (m.name == metric) {
            return &m;
        }
    }
    return nullptr;
}

}  // namespace

Result<CompareReportFiles> writeCompareReport(const CompareReportRequest& request) {
    if (request.runIds.size() < kMinCompareRuns || request.runIds.size() > kMaxCompareRuns) {
        return errorText(QStringLiteral("--runs: give %1 to %2 run ids, got %3")
                             .arg(kMinCompareRuns)
                             .arg(kMaxCompareRuns)
                             .arg(request.runIds.size()));
    }
    if (!QFileInfo::exists(request.historyPath)) {
        return errorText(request.historyPath + QStringLiteral(": no such history file"));
    }
    db::OpenOptions options;
    options.readOnly = true;
    auto history = db::History::open(request.historyPath.toStdString(), options);
    if (!history) {
        return Error{history.error()};
    }
    auto loaded = loadCompare(**history, request.runIds);
    if (!loaded) {
        return Error{loaded.error()};
    }
    const CompareData& data = *loaded;
    if (!QDir().mkpath(request.outDir)) {
        return errorText(request.outDir + QStringLiteral(": cannot create the report directory"));
    }
    const QDir dir(request.outDir);
    CompareReportFiles files;

    // One overlay per score-kind eval metric (the units of the other kinds differ).
    QStringList scoreMetrics;
    for (const QString& m : data.metricNames) {
        if (isEvalScore(m)) {
            scoreMetrics << m;
        }
    }
    std::optional<GroupReport> groups;  // --group-by (issue 49)
    if (!request.groupBy.isEmpty()) {
        auto g = groupReport(data, request.groupBy, scoreMetrics, request.smoothing);
        if (!g) {
            return Error{g.error()};
        }
        groups = std::move(*g);
    }
    QString plotsMd;
    QString plotsHtml;
    for (const QString& metric : scoreMetrics) {
        TimeSeriesPlot plot;
        plot.resize(request.width, request.height);
        plot.setShowToolbar(false);
        plot.setXAxisKind(XAxisKind::Number);
        plot.setYIncludesZero(false);
        plot.setAxisLabels(compareXLabel(data, metric, CompareAxis::Step),
                           metric + QStringLiteral(" (score)"));
        plot.setSeries(groups ? groupSeries(data, request.groupBy, metric, CompareAxis::Step,
                                            request.smoothing)
                              : compareSeries(data, metric, CompareAxis::Step, request.smoothing));
        plot.setEvents(forkMarkers(data, metric, CompareAxis::Step));  // where a fork leaves
        plot.setFollowWindow(0);
        const QString file = plotFile(metric);
        if (!plot.savePng(dir.filePath(file), request.width, request.height)) {
            return errorText(plot.lastError());
        }
        files.written << dir.filePath(file);
        plotsMd += QStringLiteral("### %1\n\n![%1](%2)\n\n").arg(metric, file);
        plotsHtml += QStringLiteral("<h3>%1</h3><img src=\"%2\" alt=\"%1\">\n")
                         .arg(metric.toHtmlEscaped(), file.toHtmlEscaped());
    }

    // The plotted points as data: every score metric's curves, raw and smoothed, in one CSV.
    {
        QString csv;
        for (const QString& metric : scoreMetrics) {
            const QString part = compareCsv(data, metric, CompareAxis::Step, request.smoothing);
            csv += csv.isEmpty() ? part : part.section(QLatin1Char('\n'), 1);
        }
        if (csv.isEmpty()) {
            csv = compareCsv(data, QString(), CompareAxis::Step, request.smoothing);  // header
        }
        QFile f(dir.filePath(QStringLiteral("compare.csv")));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(csv.toUtf8()) < 0) {
            return errorText(f.fileName() + QStringLiteral(": cannot write: ") + f.errorString());
        }
        files.written << f.fileName();
    }
    if (groups) {
        QFile f(dir.filePath(QStringLiteral("compare_groups.csv")));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            f.write(groups->csv.toUtf8()) < 0) {
            return errorText(f.fileName() + QStringLiteral(": cannot write: ") + f.errorString());
        }
        files.written << f.fileName();
    }

    ReportTable runs{{QStringLiteral("run"), QStringLiteral("id"), QStringLiteral("state"),
                      QStringLiteral("recipe"), QStringLiteral("nodes"), QStringLiteral("started"),
                      QStringLiteral("duration")},
                     {}};
    const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
    for (const CompareRun& r : data.runs) {
        runs.rows.push_back(
            {label(r), r.run.id, stateName(r.run.state),
             r.run.recipe.isEmpty() ? QStringLiteral("–") : r.run.recipe,
             r.run.nodes.join(QStringLiteral(", ")),
             QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(r.run.startT * 1000))
                 .toString(Qt::ISODate),
             formatDuration(r.run.durationSeconds(now))});
    }

    ReportTable evals{
        {QStringLiteral("metric"), QStringLiteral("run"), QStringLiteral("last (step)"),
         QStringLiteral("best, higher is better (step)")},
        {}};
    for (const QString& metric : scoreMetrics) {
        for (const CompareRun& r : data.runs) {
            const MetricValue* m = valueOf(r, metric);
            evals.rows.push_back(
                {metric, label(r),
                 m ? QStringLiteral("%1 (%2)").arg(m->last, 0, 'f', 4).arg(m->lastStep)
                   : QStringLiteral("–"),
                 m ? bestText(*m) : QStringLiteral("–")});
        }
    }

    // Deltas against the baseline (issue 49): the asked run, else the first listed.
    const QString baselineId =
        request.baselineRunId.isEmpty() ? data.runs.front().run.id : request.baselineRunId;
    const int baseline = runIndex(data, baselineId);
    if (baseline < 0) {
        return errorText(
            QStringLiteral("baseline %1 is not among the compared runs").arg(baselineId));
    }
    ReportTable deltas{{QStringLiteral("metric"), QStringLiteral("run"),
                        QStringLiteral("Δ last vs baseline"), QStringLiteral("Δ best vs baseline")},
                       {}};
    for (const QString& metric : scoreMetrics) {
        const std::vector<MetricDelta> d = baselineDeltas(data, metric, baseline, std::nullopt);
        for (size_t i = 0; i < d.size(); ++i) {
            if (static_cast<int>(i) != baseline) {
                deltas.rows.push_back(
                    {metric, label(data.runs[i]), formatDelta(d[i].last), formatDelta(d[i].best)});
            }
        }
    }
    const QString baselineText =
        QStringLiteral("Baseline: %1 (%2); each cell is run − baseline.")
            .arg(label(data.runs[static_cast<size_t>(baseline)]), baselineId);

    // Lineage (issue 49): which run each run continues, and from which step; its curves above
    // already start with the ancestors' points (compare_lineage.h).
    ReportTable lineage{{QStringLiteral("run"), QStringLiteral("continues"), QStringLiteral("as"),
                         QStringLiteral("from step")},
                        {}};
    for (const CompareRun& r : data.runs) {
        for (const LineageMark& m : r.lineage) {
            lineage.rows.push_back(
                {m.runId, m.parentId, m.kind,
                 m.step >= 0 ? QString::number(m.step) : QStringLiteral("its end")});
        }
    }

    ReportTable peaks{{QStringLiteral("run"), QStringLiteral("node"),
                       QStringLiteral("peak host memory"), QStringLiteral("when")},
                      {}};
    for (const CompareRun& r : data.runs) {
        if (r.run.peaks.empty()) {
            peaks.rows.push_back({label(r), QStringLiteral("–"),
                                  QStringLiteral("no host-memory samples"), QStringLiteral("–")});
        }
        for (const NodePeakRow& p : r.run.peaks) {
            peaks.rows.push_back(
                {label(r), p.nodeId, formatBytes(p.peakBytes),
                 QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(p.peakT * 1000))
                     .toString(Qt::ISODate)});
        }
    }

    QStringList diffHeader{QStringLiteral("field")};
    for (const CompareRun& r : data.runs) {
        diffHeader << label(r);
    }
    ReportTable diff{diffHeader, {}};
    for (const DiffRow& d : recipeDiff(data.runs)) {
        diff.rows.push_back(QStringList{d.field} + d.values);
    }
    QStringList notes;
    for (const CompareRun& r : data.runs) {
        if (!r.recipeError.isEmpty()) {
            notes << QStringLiteral("%1: recipe snapshot compared as written: %2")
                         .arg(label(r), r.recipeError);
        }
    }
    if (scoreMetrics.isEmpty()) {
        notes << QStringLiteral("no score-kind eval/* series recorded for these runs");
    }

    QStringList names;
    for (const CompareRun& r : data.runs) {
        names << label(r);
    }
    const QString title = QStringLiteral("Comparison: %1").arg(names.join(QStringLiteral(" vs ")));
    const QString emaText =
        QStringLiteral("Curves by step; faint points raw, lines the debiased EMA (weight %1).")
            .arg(request.smoothing);
    QString md = QStringLiteral("# ") + title + QStringLiteral("\n\n") + runs.markdown();
    md += QStringLiteral("\n## Eval scores\n\n") + emaText + QStringLiteral("\n\n") + plotsMd;
    md += evals.rows.empty() ? QString() : evals.markdown();
    if (groups) {
        md += QStringLiteral("\n## Groups\n\n") + groups->text + QStringLiteral("\n\n") +
              groups->table.markdown();
    }
    md += QStringLiteral("\n## Deltas vs baseline\n\n") + baselineText + QStringLiteral("\n\n") +
          (deltas.rows.empty() ? QString() : deltas.markdown());
    if (!lineage.rows.empty()) {
        md += QStringLiteral("\n## Lineage\n\n") + lineage.markdown();
    }
    md += QStringLiteral("\n## Host memory peaks per run\n\n") + peaks.markdown();
    std::vector<StoredDiagnoses> stored;
    for (const QString& id : request.runIds) {
        stored.push_back(readStoredDiagnoses(request.historyPath, id));
    }
    const ReportSection diagnoses = diagnosisSummarySection(stored);
    md += diagnoses.markdown;
    md += QStringLiteral("\n## Recipe diff (fields that differ)\n\n");
    md += diff.rows.empty() ? QStringLiteral("The recipes are the same.\n") : diff.markdown();
    QString html = QStringLiteral(
                       "<!doctype html><html><head><meta charset=\"utf-8\"><title>%1</title><style>"
                       "body{font-family:sans-serif;max-width:1450px;margin:2em auto}"
                       "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;"
                       "padding:3px 8px;text-align:left}img{max-width:100%}</style></head><body>\n")
                       .arg(title.toHtmlEscaped());
    html += QStringLiteral("<h1>%1</h1>\n").arg(title.toHtmlEscaped()) + runs.html();
    html += QStringLiteral("<h2>Eval scores</h2><p>%1</p>\n").arg(emaText.toHtmlEscaped()) +
            plotsHtml + evals.html();
    if (groups) {
        html += QStringLiteral("<h2>Groups</h2><p>%1</p>\n").arg(groups->text.toHtmlEscaped()) +
                groups->table.html();
    }
    html +=
        QStringLiteral("<h2>Deltas vs baseline</h2><p>%1</p>\n").arg(baselineText.toHtmlEscaped()) +
        (deltas.rows.empty() ? QString() : deltas.html());
    if (!lineage.rows.empty()) {
        html += QStringLiteral("<h2>Lineage</h2>\n") + lineage.html();
    }
    html += QStringLiteral("<h2>Host memory peaks per run</h2>\n") + peaks.html();
    html += diagnoses.html;
    html +=
        QStringLiteral("<h2>Recipe diff (fields that differ)</h2>\n") +
        (diff.rows.empty() ? QStringLiteral("<p>The recipes are the same.</p>\n") : diff.html());
    if (!notes.isEmpty()) {
        md += QStringLiteral("\n## Notes\n\n");
        html += QStringLiteral("<h2>Notes</h2><ul>");
        for (const QString& n : notes) {
            md += QStringLiteral("- ") + n + QLatin1Char('\n');
            html += QStringLiteral("<li>") + n.toHtmlEscaped() + QStringLiteral("</li>");
        }
        html += QStringLiteral("</ul>\n");
    }
    html += QStringLiteral("</body></html>\n");

    if (Status s = writeReportPages(dir, md, html, &files.markdown, &files.written); !s) {
        return Error{s.error()};
    }
    return files;
}

}  // namespace runplane::gui
