#include "gui/pages/run_view.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "gui/models/log_tailer.h"
#include "gui/models/metric_views.h"
#include "gui/models/run_models.h"
#include "gui/pages/diagnosis_view.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/plot_builders.h"
#include "gui/pages/run_liveness.h"
#include "gui/pages/run_role_tabs.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {

constexpr size_t kMaxLogLines = 20000;

QString timeText(double t) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t * 1000))
        .toString(QStringLiteral("HH:mm:ss"));
}

QColor eventColor(const QString& kind) {
    if (isKind(kind, telemetry::EventKind::NcclError)) {
        return errorColor();
    }
    if (isKind(kind, telemetry::EventKind::NcclWarning)) {
        return warningColor();
    }
    return QColor(0x7F, 0x3C, 0x8D);  // stall
}

std::vector<PhaseSpan> spans(const std::vector<PhaseInterval>& phases) {
    std::vector<PhaseSpan> out;
    for (const PhaseInterval& p : phases) {
        out.push_back(PhaseSpan{p.phase, p.t0, p.t1});
    }
    return out;
}

QTableWidgetItem* item(const QString& text) {
    auto* i = new QTableWidgetItem(text);
    i->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return i;
}

}  // namespace

RunView::RunView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_header = new QLabel(this);
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    m_tabs = new QTabWidget(this);
    layout->addWidget(m_tabs, 1);

    // Memory tab.
    auto* memory = new QSplitter(Qt::Vertical);
    auto* top = new QSplitter(Qt::Horizontal);
    m_hostPlot = new TimeSeriesPlot(top);
    m_hostPlot->setTitle(tr("Host memory per node"));
    m_hostPlot->setFollowWindow(0);
    m_peaks = new PeaksModel(this);
    m_peaksView = new QTableView(top);
    m_peaksView->setModel(m_peaks);
    m_peaksView->setItemDelegate(new CachedTextDelegate(m_peaksView));
    m_peaksView->verticalHeader()->hide();
    // Columns fit the rows in view, measured again on each refresh and scroll: measuring all
    // rows (Qt's default, up to 1,000) was three quarters of a 256-node run's refresh
    // (docs/performance.md, BM_RunViewRefresh256).
    QHeaderView* peaksHeader = m_peaksView->horizontalHeader();
    peaksHeader->setSectionResizeMode(QHeaderView::ResizeToContents);
    peaksHeader->setResizeContentsPrecision(0);
    connect(m_peaksView->verticalScrollBar(), &QScrollBar::valueChanged, peaksHeader,
            [peaksHeader] { peaksHeader->resizeSections(QHeaderView::ResizeToContents); });
    m_peaksView->setMinimumWidth(340);  // the run list keeps its columns at 1280 px (issue 46)
    top->addWidget(m_hostPlot);
    top->addWidget(m_peaksView);
    top->setStretchFactor(0, 4);
    top->setStretchFactor(1, 1);
    auto* bottom = new QSplitter(Qt::Horizontal);
    m_gpuPlot = new TimeSeriesPlot(bottom);
    m_gpuPlot->setTitle(tr("GPU memory per GPU"));
    m_gpuPlot->setFollowWindow(0);
    m_gpuPlot->setLegendVisible(false);
    m_rssPlot = new TimeSeriesPlot(bottom);
    m_rssPlot->setTitle(tr("Run process-tree RSS per node"));
    m_rssPlot->setFollowWindow(0);
    bottom->addWidget(m_gpuPlot);
    bottom->addWidget(m_rssPlot);
    memory->addWidget(top);
    memory->addWidget(bottom);
    memory->setStretchFactor(0, 3);
    memory->setStretchFactor(1, 2);
    m_tabs->addTab(memory, tr("Memory"));

    // NCCL tab.
    auto* nccl = new QWidget;
    auto* ncclLayout = new QVBoxLayout(nccl);
    m_ncclVerdict = new QLabel(nccl);
    m_ncclVerdict->setTextFormat(Qt::RichText);
    m_ncclVerdict->setWordWrap(true);
    ncclLayout->addWidget(m_ncclVerdict);
    m_probes = new QTableWidget(0, 5, nccl);
    m_probes->setHorizontalHeaderLabels(
        {tr("Node"), tr("Collective"), tr("Size"), tr("busbw (GB/s)"), tr("expected (GB/s)")});
    m_probes->verticalHeader()->hide();
    m_probes->horizontalHeader()->setStretchLastSection(true);
    m_probes->setMaximumHeight(130);
    ncclLayout->addWidget(m_probes);
    m_ncclPlot = new TimeSeriesPlot(nccl);
    m_ncclPlot->setTitle(
        tr("NCCL warnings (orange), errors (red) and stalls (purple) over the run"));
    m_ncclPlot->setFollowWindow(0);
    m_ncclPlot->setLegendVisible(true);
    m_ncclPlot->setYAxisVisible(false);
    ncclLayout->addWidget(m_ncclPlot, 1);
    m_ncclEvents = new QTableWidget(0, 4, nccl);
    m_ncclEvents->setHorizontalHeaderLabels({tr("Time"), tr("Node"), tr("Kind"), tr("Message")});
    m_ncclEvents->verticalHeader()->hide();
    m_ncclEvents->horizontalHeader()->setStretchLastSection(true);
    ncclLayout->addWidget(m_ncclEvents, 1);
    m_tabs->addTab(nccl, tr("NCCL"));

    // Metrics tab.
    auto* metrics = new QWidget;
    auto* metricsLayout = new QVBoxLayout(metrics);
    auto* metricsBar = new QHBoxLayout;
    metricsBar->addWidget(new QLabel(tr("Series:"), metrics));
    m_metricCombo = new QComboBox(metrics);
    m_metricCombo->setMinimumContentsLength(24);
    metricsBar->addWidget(m_metricCombo, 1);
    metricsBar->addWidget(new QLabel(tr("x axis:"), metrics));
    m_metricAxis = new QComboBox(metrics);
    // Steps are drawn in one domain per axis (gui/models/step_axis.h): train/* counts optimizer
    // steps, eval/*, rollout/*, perf/* count rollouts; the recipe's steps per rollout converts.
    m_metricAxis->addItem(tr("rollout"), static_cast<int>(StepAxis::Rollout));
    m_metricAxis->addItem(tr("optimizer step"), static_cast<int>(StepAxis::Optimizer));
    m_metricAxis->addItem(tr("wall time"), -1);
    metricsBar->addWidget(m_metricAxis);
    metricsLayout->addLayout(metricsBar);
    m_metricsPlot = new TimeSeriesPlot(metrics);
    m_metricsPlot->setFollowWindow(0);
    metricsLayout->addWidget(m_metricsPlot, 1);
    m_tabs->addTab(metrics, tr("Metrics"));
    m_panels = new MetricPanelsView;
    m_tabs->addTab(m_panels, tr("Panels"));
    m_roleTabs = new RunRoleTabs(m_tabs, this);

    // Log tab.
    auto* log = new QWidget;
    auto* logLayout = new QVBoxLayout(log);
    auto* logBar = new QHBoxLayout;
    logBar->addWidget(new QLabel(tr("Node:"), log));
    m_logNode = new QComboBox(log);
    logBar->addWidget(m_logNode);
    m_logStream = new QComboBox(log);
    m_logStream->addItems({QStringLiteral("stdout"), QStringLiteral("stderr")});
    logBar->addWidget(m_logStream);
    m_logFilter = new QLineEdit(log);
    m_logFilter->setPlaceholderText(tr("filter lines (substring, case-insensitive)"));
    m_logFilter->setClearButtonEnabled(true);
    logBar->addWidget(m_logFilter, 1);
    logLayout->addLayout(logBar);
    m_log = new QPlainTextEdit(log);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(static_cast<int>(kMaxLogLines));
    m_log->setFont(QFont(QStringLiteral("DejaVu Sans Mono")));
    logLayout->addWidget(m_log, 1);
    m_tabs->addTab(log, tr("Log"));
    m_tailer = new LogTailer(this);
    m_diagnosis = new DiagnosisView;
    m_tabs->addTab(m_diagnosis, tr("Diagnosis"));

    // Time plots share one x-range: a zoom on one moves the others and asks for data.
    const std::vector<TimeSeriesPlot*> timePlots = {m_hostPlot, m_gpuPlot, m_rssPlot};
    for (TimeSeriesPlot* plot : timePlots) {
        connect(plot, &TimeSeriesPlot::visibleRangeChanged, this,
                [this, plot, timePlots](double lo, double hi, int pixels) {
                    if (plot->isFollowing()) {
                        return;
                    }
                    for (TimeSeriesPlot* other : timePlots) {
                        if (other != plot) {
                            other->setVisibleRange(lo, hi);
                        }
                    }
                    emit rangeRequested(lo, hi, pixels);
                });
        connect(plot, &TimeSeriesPlot::followingChanged, this, [this, timePlots](bool on) {
            if (!on) {
                return;
            }
            for (TimeSeriesPlot* other : timePlots) {
                other->setFollowing(true);
            }
            emit rangeRequested(0, 0, m_hostPlot->width());
        });
    }
    connect(m_metricCombo, &QComboBox::currentIndexChanged, this, [this] { applyMetrics(); });
    connect(m_metricAxis, &QComboBox::currentIndexChanged, this, [this] { applyMetrics(); });
    connect(m_logFilter, &QLineEdit::textChanged, this, [this] { rebuildLog(); });
    connect(m_logNode, &QComboBox::currentIndexChanged, this, [this] { startLogTail(); });
    connect(m_logStream, &QComboBox::currentIndexChanged, this, [this] { startLogTail(); });
    connect(m_tailer, &LogTailer::text, this, &RunView::appendLog);
    connect(m_tailer, &LogTailer::ended, this, [this](const QString& error) {
        appendLog(error.isEmpty() ? tr("\n[end of log]\n")
                                  : QStringLiteral("\n[") + error + QStringLiteral("]\n"));
    });
    clear(tr("Select a run"));
}

RunView::~RunView() = default;

void RunView::setHistoryPath(const QString& path) {
    m_tailer->setHistoryPath(path);
    m_diagnosis->setHistoryPath(path);
}

QString RunView::headerText() const {
    return m_header->text();
}

bool RunView::isFollowing() const {
    return m_hostPlot->isFollowing();
}

void RunView::clear(const QString& message) {
    m_snapshot.reset();
    m_runId.clear();
    m_header->setText(message.toHtmlEscaped());
    for (TimeSeriesPlot* p : {m_hostPlot, m_gpuPlot, m_rssPlot, m_ncclPlot, m_metricsPlot}) {
        p->setPlaceholder(message);
    }
    m_peaks->setPeaks({}, 0, 0);
    m_roleTabs->clear(message);
    m_tailer->stop();
    m_diagnosis->setRun(QString(), {});
}

void RunView::setSnapshot(std::shared_ptr<const RunSnapshot> snapshot) {
    if (!snapshot) {
        clear(tr("Select a run"));
        return;
    }
    const bool newRun = snapshot->run.id != m_runId;
    m_snapshot = std::move(snapshot);
    const RunSnapshot& s = *m_snapshot;
    if (newRun) {
        m_runId = s.run.id;
        for (TimeSeriesPlot* p : {m_hostPlot, m_gpuPlot, m_rssPlot}) {
            p->setFollowing(true);
        }
    }

    const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
    QString header =
        QStringLiteral(
            "<b>%1</b> &nbsp;·&nbsp; %2 &nbsp;·&nbsp; recipe %3 &nbsp;·&nbsp; "
            "%4 node(s) &nbsp;·&nbsp; %5 &nbsp;·&nbsp; NCCL gate: %6")
            .arg((s.run.name.isEmpty() ? s.run.id : s.run.name).toHtmlEscaped(),
                 // "running" only while telemetry arrives (run_liveness.h); else in amber.
                 telemetrySilentSince(s, now)
                     ? QStringLiteral("<span style=\"color:#a06000\">%1</span>")
                           .arg(liveStateText(s, now).toHtmlEscaped())
                     : liveStateText(s, now).toHtmlEscaped(),
                 (s.run.recipe.isEmpty() ? QStringLiteral("–") : s.run.recipe).toHtmlEscaped())
            .arg(s.run.nodes.size())
            .arg(formatDuration(s.run.durationSeconds(now)), s.nccl.verdict.toHtmlEscaped());
    if (const QString d = diagnosisText(s.run); !d.isEmpty()) {
        // The run's status line from its newest diagnosis (issue 44; whole in the Diagnosis tab).
        header += QStringLiteral("<br><span style=\"color:#b00020\">") + d.toHtmlEscaped() +
                  QStringLiteral("</span>");
    }
    if (!s.warnings.isEmpty()) {
        header += QStringLiteral("<br><span style=\"color:#a06000\">") +
                  s.warnings.join(QStringLiteral("; ")).toHtmlEscaped() + QStringLiteral("</span>");
    }
    m_header->setText(header);

    if (s.hostMemory.empty()) {
        m_hostPlot->setPlaceholder(tr("no host-memory samples for this run's nodes"));
    } else {
        showHostMemory(*m_hostPlot, s.hostMemory, s.lines, s.phases, s.events);
    }
    if (s.gpuMemory.empty()) {
        m_gpuPlot->setPlaceholder(tr("no GPU memory samples\n(no GPU, or NVML unavailable)"));
    } else {
        showSeries(*m_gpuPlot, s.gpuMemory, s.phases, tr("GPU memory used"));
    }
    if (s.processRss.empty()) {
        m_rssPlot->setPlaceholder(tr("no process-tree RSS samples for this run"));
    } else {
        showSeries(*m_rssPlot, s.processRss, s.phases, tr("RSS"));
    }
    m_peaks->setPeaks(s.peaks, s.lines.alarmBytes, s.run.startT);
    if (!m_hostPlot->isFollowing()) {
        // Keep the zoom of the plots on the range the data was asked for.
        for (TimeSeriesPlot* p : {m_hostPlot, m_gpuPlot, m_rssPlot}) {
            if (p->visibleRange().second <= p->visibleRange().first) {
                p->setVisibleRange(s.t0, s.t1);
            }
        }
    }

    // Metrics: keep the chosen series across refreshes.
    const QString chosen = m_metricCombo->currentText();
    {
        const QSignalBlocker block(m_metricCombo);
        m_metricCombo->clear();
        QStringList names;
        for (const PointSeries& m : s.metrics) {
            if (!names.contains(m.name)) {
                names << m.name;
            }
        }
        names.sort();
        if (!evalScoreSeries(s.metrics).empty()) {
            // Scores only: token lengths and eval times have their own units (Panels tab).
            m_metricCombo->addItem(tr("eval scores (eval/* of score kind)"),
                                   QStringLiteral("eval/*"));
        }
        for (const QString& n : names) {
            m_metricCombo->addItem(n, n);
        }
        int at = m_metricCombo->findText(chosen);
        if (!m_pendingMetric.isEmpty() && m_metricCombo->findData(m_pendingMetric) >= 0) {
            at = m_metricCombo->findData(m_pendingMetric);
            m_pendingMetric.clear();
        }
        m_metricCombo->setCurrentIndex(at >= 0 ? at : 0);
    }
    applyMetrics(newRun);
    applyNccl();
    m_roleTabs->setSnapshot(m_snapshot);

    if (newRun) {
        const QSignalBlocker block(m_logNode);
        m_logNode->clear();
        for (qsizetype i = 0; i < s.run.nodes.size(); ++i) {
            const QString address = i < s.nodeAddresses.size() ? s.nodeAddresses[i] : QString();
            m_logNode->addItem(
                s.run.nodes[i] + (address.isEmpty()
                                      ? QString()
                                      : QStringLiteral(" (") + address + QStringLiteral(")")),
                address);
        }
        startLogTail();
    }
    m_diagnosis->setRun(s.run.id, s.nodeAddresses);  // reads the stored ones for a new run only
}

void RunView::showMetric(const QString& name) {
    const int at = m_metricCombo->findData(name);
    if (at >= 0) {
        m_metricCombo->setCurrentIndex(at);
    } else {
        m_pendingMetric = name;
    }
}

QString RunView::metricKey() const {
    return m_pendingMetric.isEmpty() ? m_metricCombo->currentData().toString() : m_pendingMetric;
}

int RunView::metricAxisIndex() const {
    return m_metricAxis->currentIndex();
}

void RunView::setMetricAxisIndex(int index) {
    if (index >= 0 && index < m_metricAxis->count()) {
        m_metricAxis->setCurrentIndex(index);
    }
}

void RunView::applyMetrics(bool resetView) {
    if (!m_snapshot || m_snapshot->metrics.empty()) {
        m_metricsPlot->setPlaceholder(tr("no metric series recorded for this run"));
        m_panels->setMetrics({}, MetricXAxis{});
        return;
    }
    const QString key = m_metricCombo->currentData().toString();
    MetricXAxis x;
    x.wallTime = m_metricAxis->currentData().toInt() < 0;
    x.axis = m_metricAxis->currentData().toInt() == static_cast<int>(StepAxis::Optimizer)
                 ? StepAxis::Optimizer
                 : StepAxis::Rollout;
    x.mapping = stepMappingFromRecipe(m_snapshot->recipeYaml);
    std::vector<const PointSeries*> chosen;
    metrics::Kind kind = metrics::Kind::Score;
    if (key == QLatin1String("eval/*")) {
        chosen = evalScoreSeries(m_snapshot->metrics);
    } else {
        for (const PointSeries& m : m_snapshot->metrics) {
            if (m.name == key) {
                chosen.push_back(&m);
                kind = metricInfo(m).kind;
            }
        }
    }
    showMetricGroup(*m_metricsPlot, chosen, kind, x);
    m_panels->setMetrics(m_snapshot->metrics, x);
    if (resetView) {
        m_metricsPlot->setFollowing(true);
    }
}

void RunView::applyNccl() {
    const RunSnapshot& s = *m_snapshot;
    const NcclHealth& n = s.nccl;
    const QString colour = n.verdict == QLatin1String("pass")   ? okColor().name()
                           : n.verdict == QLatin1String("fail") ? errorColor().name()
                                                                : QStringLiteral("#707070");
    QStringList libs;
    for (const auto& lib : n.libraries) {
        libs << lib.nodeId + QStringLiteral(": ") + lib.version + QStringLiteral(" (") + lib.path +
                    QStringLiteral(")");
    }
    m_ncclVerdict->setText(
        QStringLiteral("<b>Version gate</b> (NCCL ≥ 2.30.7 for cross-node CUDA-graph rollout): "
                       "<b style=\"color:%1\">%2</b>: %3<br>%4")
            .arg(colour, n.verdict.toHtmlEscaped(), n.verdictText.toHtmlEscaped(),
                 libs.join(QStringLiteral("; ")).toHtmlEscaped()));
    m_probes->setRowCount(static_cast<int>(n.probes.size()));
    for (size_t i = 0; i < n.probes.size(); ++i) {
        const auto& p = n.probes[i];
        const int r = static_cast<int>(i);
        m_probes->setItem(r, 0, item(p.nodeId));
        m_probes->setItem(r, 1, item(p.collective));
        m_probes->setItem(r, 2, item(formatBytes(p.bytes)));
        auto* bw = item(QString::number(p.busbwGbps, 'f', 1));
        if (p.expectedGbps > 0 && p.busbwGbps < 0.8 * p.expectedGbps) {
            bw->setForeground(errorColor());
        }
        m_probes->setItem(r, 3, bw);
        m_probes->setItem(r, 4,
                          item(p.expectedGbps > 0 ? QString::number(p.expectedGbps, 'f', 1)
                                                  : QStringLiteral("–")));
    }
    m_ncclEvents->setRowCount(static_cast<int>(n.events.size()));
    std::vector<EventMarker> markers;
    for (size_t i = 0; i < n.events.size(); ++i) {
        const EventRow& e = n.events[i];
        const int r = static_cast<int>(i);
        m_ncclEvents->setItem(r, 0, item(timeText(e.t)));
        m_ncclEvents->setItem(r, 1, item(e.nodeId));
        auto* kind = item(e.kind);
        kind->setForeground(eventColor(e.kind));
        m_ncclEvents->setItem(r, 2, kind);
        m_ncclEvents->setItem(r, 3, item(e.message));
        markers.push_back(EventMarker{e.t, e.kind, eventColor(e.kind)});
    }
    m_ncclEvents->resizeColumnsToContents();
    m_ncclPlot->setYIncludesZero(true);
    m_ncclPlot->setFixedYRange(0, 1);
    m_ncclPlot->setAxisLabels(QString(), QString());
    m_ncclPlot->setSeries({});
    m_ncclPlot->setPhases(spans(s.phases));
    m_ncclPlot->setEvents(std::move(markers));
}

void RunView::startLogTail() {
    m_logLines.clear();
    m_partialLine.clear();
    m_log->clear();
    const QString address = m_logNode->currentData().toString();
    if (m_runId.isEmpty()) {
        m_tailer->stop();
        return;
    }
    // An unknown address reads the output stored in the history only.
    m_tailer->start(address, m_runId, m_logStream->currentIndex() == 1);
}

void RunView::appendLog(const QString& text) {
    QString data = m_partialLine + text;
    QStringList lines = data.split(QLatin1Char('\n'));
    m_partialLine = lines.takeLast();
    const QString filter = m_logFilter->text();
    for (const QString& line : lines) {
        m_logLines.push_back(line);
        if (filter.isEmpty() || line.contains(filter, Qt::CaseInsensitive)) {
            m_log->appendPlainText(line);
        }
    }
    while (m_logLines.size() > kMaxLogLines) {
        m_logLines.pop_front();
    }
}

void RunView::rebuildLog() {
    const QString filter = m_logFilter->text();
    QStringList shown;
    for (const QString& line : m_logLines) {
        if (filter.isEmpty() || line.contains(filter, Qt::CaseInsensitive)) {
            shown << line;
        }
    }
    m_log->setPlainText(shown.join(QLatin1Char('\n')));
}

void RunView::setLogFilter(const QString& filter) {
    m_logFilter->setText(filter);
}

QString RunView::logText() const {
    return m_log->toPlainText();
}

}  // namespace runplane::gui
