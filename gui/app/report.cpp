#include "gui/app/report.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QTextStream>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>

#include "db/history/history.h"
#include "gui/app/report_diagnosis.h"
#include "gui/app/report_text.h"
#include "gui/models/history_queries.h"
#include "gui/models/metric_views.h"
#include "gui/models/run_derivations.h"
#include "gui/models/step_axis.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/plot_builders.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {

constexpr int kReportBuckets = 1500;

QString isoTime(double t) {
    if (t <= 0) {
        return QStringLiteral("–");
    }
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t * 1000)).toString(Qt::ISODate);
}

}  // namespace

Result<ReportFiles> writeSnapshotReport(const RunSnapshot& snap, const QString& outDir, int width,
                                        int height, const StoredDiagnoses* diagnoses) {
    if (!QDir().mkpath(outDir)) {
        return Error{
            QString(outDir + QStringLiteral(": cannot create the report directory")).toStdString()};
    }
    const QDir dir(outDir);
    ReportFiles files;
    QStringList notes = snap.warnings;

    // Host memory per node.
    {
        TimeSeriesPlot plot;
        plot.resize(width, height);
        plot.setShowToolbar(false);
        plot.setXAxisKind(XAxisKind::WallClock);
        if (snap.hostMemory.empty()) {
            plot.setPlaceholder(QStringLiteral("no host-memory samples recorded for this run"));
            notes << QStringLiteral("no host-memory samples recorded for the run's nodes");
        } else {
            showHostMemory(plot, snap.hostMemory, snap.lines, snap.phases, snap.events);
            plot.setFollowing(false);
            plot.setVisibleRange(snap.t0, snap.t1);
        }
        plot.setAxisLabels(QStringLiteral("time"), QStringLiteral("host memory used (GB)"));
        const QString path = dir.filePath(QStringLiteral("host_memory.png"));
        if (!plot.savePng(path, width, height)) {
            return Error{plot.lastError().toStdString()};
        }
        files.written << path;
    }

    // GPU memory per GPU (NVML through the daemon), one line per node and GPU.
    {
        TimeSeriesPlot plot;
        plot.resize(width, height);
        plot.setShowToolbar(false);
        plot.setXAxisKind(XAxisKind::WallClock);
        // Only series with samples in the run's window (a node's other processes come and go).
        std::vector<PointSeries> gpus;
        std::copy_if(snap.gpuMemory.begin(), snap.gpuMemory.end(), std::back_inserter(gpus),
                     [](const PointSeries& s) { return !s.empty(); });
        if (gpus.empty()) {
            plot.setPlaceholder(
                QStringLiteral("no GPU memory samples (no GPU, or NVML unavailable)"));
            notes << QStringLiteral("no GPU memory samples recorded for the run's nodes");
        } else {
            showSeries(plot, gpus, snap.phases, QStringLiteral("GPU memory used"));
            plot.setLegendVisible(true);
            plot.setFollowing(false);
            plot.setVisibleRange(snap.t0, snap.t1);
        }
        plot.setAxisLabels(QStringLiteral("time"), QStringLiteral("GPU memory used (GB)"));
        const QString path = dir.filePath(QStringLiteral("gpu_memory.png"));
        if (!plot.savePng(path, width, height)) {
            return Error{plot.lastError().toStdString()};
        }
        files.written << path;
    }

    // Eval metrics by rollout.
    // Score-kind eval series only: tokens and seconds have their own units (metric_kind.h).
    const std::vector<const PointSeries*> evals = evalScoreSeries(snap.metrics);
    {
        TimeSeriesPlot plot;
        plot.resize(width, height);
        plot.setShowToolbar(false);
        plot.setXAxisKind(XAxisKind::Number);
        plot.setYIncludesZero(false);
        if (evals.empty()) {
            plot.setAxisLabels(QString(), QStringLiteral("score"));
            plot.setPlaceholder(QStringLiteral("no eval metrics recorded for this run"));
            notes << QStringLiteral("no eval/* series recorded for the run");
        } else {
            // By rollout, as the Runs page draws it (gui/models/step_axis.h).
            MetricXAxis x;
            x.mapping = stepMappingFromRecipe(snap.recipeYaml);
            showMetricGroup(plot, evals, metrics::Kind::Score, x);
            plot.setFollowWindow(0);
        }
        const QString path = dir.filePath(QStringLiteral("eval.png"));
        if (!plot.savePng(path, width, height)) {
            return Error{plot.lastError().toStdString()};
        }
        files.written << path;
    }

    // Tables.
    const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
    ReportTable runTable{{QStringLiteral("field"), QStringLiteral("value")}, {}};
    runTable.rows.push_back({QStringLiteral("run id"), snap.run.id});
    runTable.rows.push_back({QStringLiteral("name"), snap.run.name});
    runTable.rows.push_back({QStringLiteral("state"), stateName(snap.run.state)});
    runTable.rows.push_back({QStringLiteral("recipe"),
                             snap.run.recipe.isEmpty() ? QStringLiteral("–") : snap.run.recipe});
    runTable.rows.push_back({QStringLiteral("nodes"), snap.run.nodes.join(QStringLiteral(", "))});
    runTable.rows.push_back({QStringLiteral("started"), isoTime(snap.run.startT)});
    runTable.rows.push_back(
        {QStringLiteral("duration"), formatDuration(snap.run.durationSeconds(now))});
    if (!snap.run.message.isEmpty()) {
        runTable.rows.push_back({QStringLiteral("message"), snap.run.message});
    }

    const QString alarmText =
        snap.lines.alarmBytes > 0 ? formatBytes(snap.lines.alarmBytes) : QStringLiteral("not set");
    ReportTable peaks{
        {QStringLiteral("node"), QStringLiteral("peak"), QStringLiteral("when"),
         QStringLiteral("phase"), QStringLiteral("time above alarm (%1)").arg(alarmText)},
        {}};
    for (const NodePeakRow& p : snap.peaks) {
        peaks.rows.push_back({p.nodeId, formatBytes(p.peakBytes), isoTime(p.peakT),
                              p.phase.isEmpty() ? QStringLiteral("–") : p.phase,
                              snap.lines.alarmBytes > 0 ? formatDuration(p.secondsAboveAlarm)
                                                        : QStringLiteral("–")});
    }
    ReportTable gpuPeaks{
        {QStringLiteral("node"), QStringLiteral("GPU series"), QStringLiteral("peak"),
         QStringLiteral("when"), QStringLiteral("samples")},
        {}};
    for (const PointSeries& s : snap.gpuMemory) {
        const std::vector<double>& highs = s.max.size() == s.t.size() ? s.max : s.value;
        if (highs.empty()) {
            continue;
        }
        const auto top = std::max_element(highs.begin(), highs.end());
        const auto at = static_cast<std::size_t>(top - highs.begin());
        gpuPeaks.rows.push_back(
            {s.nodeId, s.name, formatBytes(*top), isoTime(s.t[at]),
             QString::number(s.sourceCount > 0 ? s.sourceCount : static_cast<qint64>(s.t.size()))});
    }
    ReportTable metrics{
        {QStringLiteral("metric"), QStringLiteral("last"), QStringLiteral("at step"),
         QStringLiteral("best"), QStringLiteral("at step")},
        {}};
    for (const MetricValue& m : snap.run.metrics) {
        // Best by the metric's direction ("–" where it has none, e.g. tokens).
        const QString best = bestText(m);
        metrics.rows.push_back(
            {m.name, QString::number(m.last, 'g', 4), QString::number(m.lastStep),
             best.section(QStringLiteral(" @ "), 0, 0),
             best.contains(QStringLiteral(" @ step ")) ? best.section(QStringLiteral(" @ step "), 1)
                                                       : QStringLiteral("–")});
    }
    std::map<QString, int> eventCounts;
    for (const EventRow& e : snap.events) {
        ++eventCounts[e.kind];
    }
    ReportTable events{{QStringLiteral("event kind"), QStringLiteral("count")}, {}};
    for (const auto& [kind, count] : eventCounts) {
        events.rows.push_back({kind, QString::number(count)});
    }
    ReportTable nccl{
        {QStringLiteral("node"), QStringLiteral("NCCL library"), QStringLiteral("version")}, {}};
    for (const auto& lib : snap.nccl.libraries) {
        nccl.rows.push_back({lib.nodeId, lib.path, lib.version});
    }

    const QString title =
        QStringLiteral("Run report: %1").arg(snap.run.name.isEmpty() ? snap.run.id : snap.run.name);
    QString md = QStringLiteral("# ") + title + QStringLiteral("\n\n") + runTable.markdown();
    md +=
        QStringLiteral("\n## Host memory per node\n\n![host memory per node](host_memory.png)\n\n");
    md += peaks.rows.empty() ? QStringLiteral("No peaks: no host-memory samples.\n")
                             : peaks.markdown();
    md += QStringLiteral("\n## GPU memory per GPU\n\n![GPU memory per GPU](gpu_memory.png)\n\n");
    md += gpuPeaks.rows.empty() ? QStringLiteral("No GPU memory samples.\n") : gpuPeaks.markdown();
    md += QStringLiteral("\n## Eval\n\n![eval accuracy](eval.png)\n\n");
    md += metrics.rows.empty() ? QStringLiteral("No eval metrics recorded.\n") : metrics.markdown();
    md += QStringLiteral(
              "\n## NCCL health\n\nVersion gate (>= 2.30.7 for cross-node CUDA-graph rollout): "
              "**%1**: %2\n\n")
              .arg(snap.nccl.verdict, snap.nccl.verdictText);
    if (!nccl.rows.empty()) {
        md += nccl.markdown();
    }
    md += QStringLiteral("\nNCCL warnings/errors/stalls: %1\n").arg(snap.nccl.events.size());
    const ReportSection diagnosis =
        diagnoses != nullptr ? diagnosisSection(*diagnoses) : ReportSection{};
    md += diagnosis.markdown;
    md += QStringLiteral("\n## Events\n\n");
    md += events.rows.empty() ? QStringLiteral("No events.\n") : events.markdown();
    if (!notes.isEmpty()) {
        md += QStringLiteral("\n## Notes\n\n");
        for (const QString& n : notes) {
            md += QStringLiteral("- ") + n + QLatin1Char('\n');
        }
    }

    QString html = QStringLiteral(
                       "<!doctype html><html><head><meta charset=\"utf-8\"><title>%1</title><style>"
                       "body{font-family:sans-serif;max-width:1450px;margin:2em auto}"
                       "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;"
                       "padding:3px 8px;text-align:left}img{max-width:100%}</style></head><body>\n")
                       .arg(title.toHtmlEscaped());
    html += QStringLiteral("<h1>") + title.toHtmlEscaped() + QStringLiteral("</h1>\n") +
            runTable.html();
    html +=
        QStringLiteral(
            "<h2>Host memory per node</h2><img src=\"host_memory.png\" alt=\"host memory\">\n") +
        peaks.html();
    html += QStringLiteral(
                "<h2>GPU memory per GPU</h2><img src=\"gpu_memory.png\" alt=\"GPU memory\">\n") +
            gpuPeaks.html();
    html += QStringLiteral("<h2>Eval</h2><img src=\"eval.png\" alt=\"eval\">\n") + metrics.html();
    html += QStringLiteral("<h2>NCCL health</h2><p>Version gate: <b>%1</b>: %2</p>\n")
                .arg(snap.nccl.verdict.toHtmlEscaped(), snap.nccl.verdictText.toHtmlEscaped()) +
            nccl.html();
    html += diagnosis.html;
    html += QStringLiteral("<h2>Events</h2>\n") + events.html();
    if (!notes.isEmpty()) {
        html += QStringLiteral("<h2>Notes</h2><ul>");
        for (const QString& n : notes) {
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

Result<ReportFiles> writeRunReport(const ReportRequest& request) {
    if (!QFileInfo::exists(request.historyPath)) {
        return Error{
            QString(request.historyPath + QStringLiteral(": no such history file")).toStdString()};
    }
    db::OpenOptions options;
    options.readOnly = true;
    auto history = db::History::open(request.historyPath.toStdString(), options);
    if (!history) {
        return Error{history.error()};
    }
    auto snap =
        loadRunSnapshot(**history, request.runId, 0, 0, kReportBuckets, defaultModelCatalog());
    if (!snap) {
        return Error{snap.error()};
    }
    history->reset();  // readStoredDiagnoses opens the file again, read-only
    const StoredDiagnoses diagnoses = readStoredDiagnoses(request.historyPath, request.runId);
    return writeSnapshotReport(*snap, request.outDir, request.width, request.height, &diagnoses);
}

}  // namespace runplane::gui
