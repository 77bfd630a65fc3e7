#include "gui/pages/plot_builders.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

#include "gui/models/role_memory.h"
#include "gui/models/run_models.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/series_gaps.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {

PlotSeries scaled(const PointSeries& s, double divisor, const QString& label, const QColor& c) {
    PlotSeries p;
    p.name = label;
    p.color = c;
    p.t = s.t;
    p.value.reserve(s.value.size());
    for (double v : s.value) {
        p.value.push_back(v / divisor);
    }
    if (s.min.size() == s.t.size() && s.max.size() == s.t.size()) {
        p.min.reserve(s.min.size());
        p.max.reserve(s.max.size());
        for (size_t i = 0; i < s.t.size(); ++i) {
            p.min.push_back(s.min[i] / divisor);
            p.max.push_back(s.max[i] / divisor);
        }
    }
    return p;
}

// A dense plot draws no bands; its line is then each interval's peak (a decimation bucket's
// maximum, or a sample's own max), not its last value: a one-sample peak inside a bucket stays on
// the plot. (Drawing min and max both, as a vertical stroke per bucket, kept troughs too but
// tripled the pixels drawn: docs/performance.md "Load".)
void peaksAsLine(PlotSeries& p) {
    if (!p.hasBand()) {
        return;
    }
    for (size_t i = 0; i < p.t.size(); ++i) {
        if (std::isfinite(p.max[i]) && !(p.max[i] <= p.value[i])) {
            p.value[i] = p.max[i];
        }
    }
    p.min.clear();
    p.max.clear();
}

std::vector<PhaseSpan> toSpans(const std::vector<PhaseInterval>& phases) {
    std::vector<PhaseSpan> spans;
    spans.reserve(phases.size());
    for (const PhaseInterval& p : phases) {
        spans.push_back(PhaseSpan{p.phase, p.t0, p.t1});
    }
    return spans;
}

}  // namespace

QString formatBytes(double bytes) {
    return formatGB(bytes);
}

QString formatDuration(double seconds) {
    return formatSeconds(seconds);
}

QString seriesLabel(const PointSeries& series) {
    // "gpu.0.mem.used_bytes" -> "node gpu0"; "gpu.0.pid.42.mem.used_bytes" -> "node gpu0 pid 42"
    // (one process's share of that GPU, so it must not read like the GPU's own line).
    static const QRegularExpression gpu(QStringLiteral("^gpu\\.(\\d+)\\.(?:pid\\.(\\d+)\\.)?"));
    const auto m = gpu.match(series.name);
    if (m.hasMatch()) {
        QString label = series.nodeId + QStringLiteral(" gpu") + m.captured(1);
        if (m.hasCaptured(2)) {
            label += QStringLiteral(" pid ") + m.captured(2);
        }
        return label;
    }
    return series.nodeId;
}

std::vector<AlarmLine> alarmLinesGB(const MemoryLines& lines) {
    std::vector<AlarmLine> out;
    if (lines.ramBytes > 0) {
        AlarmLine ram{QStringLiteral("host RAM %1").arg(formatBytes(lines.ramBytes)),
                      lines.ramBytes / kBytesPerGB, QColor(60, 60, 60), false};
        ram.scalesAxis = false;  // a reference: a 1.5 GB run on 25 GB is not drawn flat
        out.push_back(ram);
    }
    if (lines.alarmBytes > 0) {
        out.push_back(
            AlarmLine{QStringLiteral("sustained alarm %1").arg(formatBytes(lines.alarmBytes)),
                      lines.alarmBytes / kBytesPerGB, errorColor(), true});
    }
    // The run's plan: its per-node peak in each phase. Phases within 1 % of each other share one
    // line (their labels would overlap), drawn at the highest of them.
    struct Group {
        QStringList phases;
        double bytes = 0;
    };
    std::vector<Group> groups;
    for (const MemoryLines::PlannedPhase& p : lines.plannedPhases) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
            return std::abs(g.bytes - p.bytes) <= 0.01 * std::max(g.bytes, p.bytes);
        });
        if (it == groups.end()) {
            groups.push_back(Group{{p.phase}, p.bytes});
        } else {
            it->phases << p.phase;
            it->bytes = std::max(it->bytes, p.bytes);
        }
    }
    for (const Group& g : groups) {
        const bool peak = g.bytes >= lines.plannedPeakBytes;
        out.push_back(AlarmLine{QStringLiteral("planned %1 %2%3")
                                    .arg(g.phases.join(QLatin1Char('/')), formatBytes(g.bytes),
                                         peak ? QStringLiteral(" (peak)") : QString()),
                                g.bytes / kBytesPerGB, peak ? QColor(0x00, 0x72, 0xB2) : okColor(),
                                true, peak});
    }
    if (lines.plannedPhases.empty() && lines.plannedPeakBytes > 0) {
        out.push_back(
            AlarmLine{QStringLiteral("planned peak %1").arg(formatBytes(lines.plannedPeakBytes)),
                      lines.plannedPeakBytes / kBytesPerGB, QColor(0x00, 0x72, 0xB2), true, true});
    }
    return out;
}

void showHostMemory(TimeSeriesPlot& plot, const std::vector<PointSeries>& nodes,
                    const MemoryLines& lines, const std::vector<PhaseInterval>& phases,
                    const std::vector<EventRow>& events,
                    const std::function<QString(const PointSeries&)>& label) {
    std::vector<PlotSeries> series;
    int i = 0;
    // Past a few nodes the min-max bands of overlapping lines hide each other and triple what is
    // drawn, and a legend entry per node crowds out the data: lines only, named by hover (and
    // by the node table) instead.
    const bool many = nodes.size() > kHostMemoryBandedNodes;
    for (const PointSeries& s : nodes) {
        series.push_back(
            scaled(s, kBytesPerGB, label ? label(s) : seriesLabel(s), seriesColor(i++)));
        // A stopped daemon's hole is a break in the line (series_gaps.h): by the samples'
        // spacing, and at each of the history's `gap` events on this node.
        std::vector<double> breaks;
        for (const EventRow& e : events) {
            if (isKind(e.kind, telemetry::EventKind::Gap) && e.nodeId == s.nodeId) {
                breaks.push_back(e.t);
            }
        }
        series.back().gaps = findGaps(s.t, breaks);
        if (many) {
            // No band, but never a lost peak: the line is each bucket's maximum.
            peaksAsLine(series.back());
            series.back().inLegend = false;
            // 1 px lines go through Qt's cosmetic stroker; wider ones are stroked into polygons
            // and filled, the bulk of a redraw of hundreds of lines (docs/performance.md "Load").
            // Without antialiasing: hundreds of overlapping 1 px lines gain nothing from it, and
            // it was the most of what their redraw cost (docs/performance.md "Load").
            series.back().lineWidth = 1.0;
            series.back().antialiased = false;
        }
    }
    std::vector<EventMarker> markers;
    for (const EventRow& e : events) {
        // Memory alarms and the log's alert-level failures (every OOM, crash, NCCL error,
        // weight-sync failure: gui/models/role_memory.h) in red with their message.
        if (isKind(e.kind, telemetry::EventKind::MemoryAlarm) || isAlertFailure(e.kind)) {
            markers.push_back(
                EventMarker{e.t, e.nodeId + QStringLiteral(": ") + e.message, errorColor()});
        }
    }
    // The y axis follows the data; a line far above it (> 2 x the highest sample) would flatten
    // the curves, so it is named (shortly) in the axis label instead of stretching the axis.
    double dataMax = 0;
    for (const PlotSeries& s : series) {
        for (double v : s.hasBand() ? s.max : s.value) {
            dataMax = std::isfinite(v) ? std::max(dataMax, v) : dataMax;
        }
    }
    std::vector<AlarmLine> alarmLines = alarmLinesGB(lines);
    QStringList offScale;
    double plannedAbove = 0;
    for (AlarmLine& a : alarmLines) {
        if (a.scalesAxis && dataMax > 0 && a.y > 2 * dataMax) {
            a.scalesAxis = false;
        }
        if (a.scalesAxis || a.y <= dataMax) {
            continue;
        }
        if (a.label.startsWith(QLatin1String("planned"))) {
            plannedAbove = std::max(plannedAbove, a.y);
        } else {
            offScale << (a.label.startsWith(QLatin1String("host RAM"))
                             ? QStringLiteral("RAM %1").arg(formatBytes(a.y * kBytesPerGB))
                             : QStringLiteral("alarm %1").arg(formatBytes(a.y * kBytesPerGB)));
        }
    }
    if (plannedAbove > 0) {
        offScale << QStringLiteral("plan ≤ %1").arg(formatBytes(plannedAbove * kBytesPerGB));
    }
    plot.setAxisLabels(QString(), offScale.isEmpty()
                                      ? QStringLiteral("host memory used (GB)")
                                      : QStringLiteral("host memory used (GB); above: %1")
                                            .arg(offScale.join(QStringLiteral(", "))));
    plot.setYIncludesZero(true);
    plot.setAlarmLines(std::move(alarmLines));
    plot.setPhases(toSpans(phases));
    plot.setEvents(std::move(markers));
    plot.setSeries(std::move(series));
}

void showSeries(TimeSeriesPlot& plot, const std::vector<PointSeries>& input,
                const std::vector<PhaseInterval>& phases, const QString& yLabel) {
    std::vector<PlotSeries> series;
    bool allBytes = !input.empty();
    for (const PointSeries& s : input) {
        allBytes = allBytes && s.unit == QLatin1String(telemetry::unit::kBytes);
    }
    int i = 0;
    for (const PointSeries& s : input) {
        QString label = seriesLabel(s);
        if (label.isEmpty() || !s.name.startsWith(QLatin1String(telemetry::series::kGpuPrefix))) {
            label = s.nodeId.isEmpty() ? s.name : s.nodeId + QStringLiteral(" ") + s.name;
        }
        series.push_back(scaled(s, allBytes ? kBytesPerGB : 1.0, label, seriesColor(i++)));
        series.back().gaps = findGaps(s.t);
    }
    plot.setAxisLabels(QString(), allBytes ? yLabel + QStringLiteral(" (GB)") : yLabel);
    plot.setPhases(toSpans(phases));
    plot.setSeries(std::move(series));
}

PlotSeries metricByStep(const PointSeries& s, const QString& label, const QColor& color) {
    PlotSeries p;
    p.name = label;
    p.color = color;
    bool haveSteps = !s.step.empty();
    for (double st : s.step) {
        haveSteps = haveSteps && st >= 0;
    }
    p.t = haveSteps ? s.step : s.t;
    p.value = s.value;
    return p;
}

}  // namespace runplane::gui
