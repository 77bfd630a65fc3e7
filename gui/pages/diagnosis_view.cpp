#include "gui/pages/diagnosis_view.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "gui/models/cluster_connection.h"
#include "gui/models/qt_text.h"
#include "gui/models/serial_worker.h"
#include "gui/widgets/palette.h"

namespace runplane::gui {
namespace {

namespace dx = runplane::diagnosis;

QString timeText(std::int64_t tNs) {
    return QDateTime::fromMSecsSinceEpoch(tNs / 1000000)
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QTreeWidgetItem* addItem(QTreeWidgetItem* parent, const QString& key, const QString& detail,
                         const QColor& colour = QColor()) {
    auto* item = new QTreeWidgetItem(parent, {key, detail});
    item->setToolTip(1, detail);
    if (colour.isValid()) {
        item->setForeground(0, colour);
        item->setForeground(1, colour);
    }
    return item;
}

QTreeWidgetItem* addTop(QTreeWidget* tree, const QString& key, const QString& detail,
                        const QColor& colour = QColor()) {
    auto* item = new QTreeWidgetItem(tree, {key, detail});
    item->setToolTip(1, detail);
    if (colour.isValid()) {
        item->setForeground(0, colour);
        item->setForeground(1, colour);
    }
    return item;
}

// Findings that say something is wrong (docs/diagnosis.md, "The verdict").
bool isProblem(const std::string& kind) {
    return kind != "stacks_agree" && kind != "no_data" && kind != "no_anomaly";
}

QTreeWidget* makeTree(const QString& first, const QString& second, QWidget* parent) {
    auto* tree = new QTreeWidget(parent);
    tree->setColumnCount(2);
    tree->setHeaderLabels({first, second});
    tree->setUniformRowHeights(true);
    tree->setWordWrap(false);
    tree->header()->setStretchLastSection(true);
    tree->setSelectionMode(QAbstractItemView::ExtendedSelection);
    return tree;
}

void appendText(const QTreeWidgetItem* item, int depth, QStringList& out) {
    out << QString(depth * 2, QLatin1Char(' ')) + item->text(0) +
               (item->text(1).isEmpty() ? QString() : QStringLiteral(" | ") + item->text(1));
    for (int i = 0; i < item->childCount(); ++i) {
        appendText(item->child(i), depth + 1, out);
    }
}

}  // namespace

DiagnosisView::DiagnosisView(QWidget* parent)
    : QWidget(parent),
      m_reads(std::make_unique<SerialWorker>()),
      m_asks(std::make_unique<SerialWorker>()) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_button = new QPushButton(tr("Diagnose now"), this);
    m_button->setToolTip(
        tr("Ask every node of the run for its processes' stacks, NCCL's RAS report, GPU state "
           "and kernel log lines, and store the diagnosis with the run"));
    bar->addWidget(m_button);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(m_status, 1);
    bar->addWidget(new QLabel(tr("Stored:"), this));
    m_list = new QComboBox(this);
    m_list->setMinimumContentsLength(40);
    m_list->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    bar->addWidget(m_list);
    layout->addLayout(bar);
    m_headline = new QLabel(this);
    m_headline->setTextFormat(Qt::RichText);
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_headline);
    auto* split = new QSplitter(Qt::Vertical, this);
    m_findings = makeTree(tr("Finding"), tr("What"), split);
    m_nodes = makeTree(tr("Node / piece"), tr("What was found"), split);
    split->addWidget(m_findings);
    split->addWidget(m_nodes);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);

    connect(m_button, &QPushButton::clicked, this, &DiagnosisView::diagnoseNow);
    connect(m_list, &QComboBox::currentIndexChanged, this, [this] { showChosen(); });
    m_button->setEnabled(false);
    showEmpty(tr("Select a run"));
}

DiagnosisView::~DiagnosisView() = default;  // the workers join (a diagnosis in flight ends)

void DiagnosisView::setHistoryPath(const QString& path) {
    m_historyPath = path;
}

void DiagnosisView::setRun(const QString& runId, const QStringList& addresses) {
    const bool changed = runId != m_runId;
    m_runId = runId;
    m_addresses = addresses;
    if (!changed) {
        return;
    }
    m_stored = StoredDiagnoses{};
    m_unstored.reset();
    {
        const QSignalBlocker block(m_list);
        m_list->clear();
    }
    if (m_runId.isEmpty()) {
        m_button->setEnabled(false);
        setStatus(QString(), false);
        showEmpty(tr("Select a run"));
        return;
    }
    m_button->setEnabled(!m_diagnosing);
    if (m_diagnosing) {
        setStatus(tr("Diagnosing run %1…").arg(m_diagnosingRun), false);
    } else {
        setStatus(QString(), false);
    }
    showEmpty(tr("Reading the stored diagnoses…"));
    reload();
}

void DiagnosisView::reload() {
    if (m_runId.isEmpty()) {
        return;
    }
    const QString history = m_historyPath;
    const QString run = m_runId;
    m_reads->run(
        QStringLiteral("stored"), this,
        [history, run] { return readStoredDiagnoses(history, run); },
        [this](StoredDiagnoses stored) { applyStored(std::move(stored)); });
}

void DiagnosisView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    reload();  // a trigger (stall, failure) may have stored one meanwhile
}

void DiagnosisView::applyStored(StoredDiagnoses stored) {
    if (stored.runId != m_runId) {
        return;
    }
    ++m_loads;
    const std::int64_t chosen =
        m_list->currentIndex() >= 0 ? m_list->currentData().toLongLong() : 0;
    const std::int64_t newestBefore = m_stored.items.empty() ? 0 : m_stored.items.front().id;
    m_stored = std::move(stored);
    if (!m_stored.error.isEmpty()) {
        setStatus(tr("Could not read the stored diagnoses: %1").arg(m_stored.error), true);
    }
    {
        const QSignalBlocker block(m_list);
        m_list->clear();
        for (const auto& s : m_stored.items) {
            m_list->addItem(timeText(s.tNs) + QStringLiteral(" · ") + s.trigger +
                                QStringLiteral(" · ") + s.headline,
                            QVariant::fromValue<qlonglong>(s.id));
        }
        int at = 0;  // the newest, unless the user chose an older one that is still there
        if (chosen != 0 && chosen == newestBefore) {
            at = 0;
        } else if (chosen != 0) {
            at = std::max(0, m_list->findData(QVariant::fromValue<qlonglong>(chosen)));
        }
        m_list->setCurrentIndex(m_list->count() > 0 ? at : -1);
    }
    m_list->setEnabled(m_list->count() > 0);
    showChosen();
}

void DiagnosisView::showChosen() {
    const int at = m_list->currentIndex();
    if (at < 0 || at >= static_cast<int>(m_stored.items.size())) {
        if (m_unstored) {
            showDiagnosis(*m_unstored);
        } else {
            showEmpty(
                tr("No diagnosis is stored for this run yet. \"Diagnose now\" asks its "
                   "nodes; a stall or a failure stores one by itself."));
        }
        return;
    }
    const StoredDiagnosis& s = m_stored.items[static_cast<std::size_t>(at)];
    if (!s.parseError.isEmpty()) {
        showEmpty(s.parseError);
        return;
    }
    showDiagnosis(s.diagnosis);
}

void DiagnosisView::diagnoseNow() {
    if (m_runId.isEmpty() || m_diagnosing) {
        return;
    }
    m_diagnosing = true;
    m_diagnosingRun = m_runId;
    m_button->setEnabled(false);
    m_button->setText(tr("Diagnosing…"));
    QStringList known;
    for (const QString& a : m_addresses) {
        if (!a.isEmpty()) {
            known << a;
        }
    }
    setStatus(
        known.isEmpty()
            ? tr("Diagnosing run %1: asking its nodes (addresses from the history)…").arg(m_runId)
            : tr("Diagnosing run %1: asking %2 node(s) at once (%3)…")
                  .arg(m_runId)
                  .arg(known.size())
                  .arg(known.join(QStringLiteral(", "))),
        false);
    const QString history = m_historyPath;
    const QString run = m_runId;
    const QStringList addresses = m_addresses;
    const control::NodeClientOptions client = activeClientOptions();
    m_asks->run(
        QStringLiteral("diagnose"), this,
        [history, run, addresses, client] {
            return diagnoseRunNow(history, run, addresses, client);
        },
        [this](DiagnoseOutcome outcome) { applyOutcome(std::move(outcome)); });
}

void DiagnosisView::applyOutcome(DiagnoseOutcome outcome) {
    m_diagnosing = false;
    m_diagnosingRun.clear();
    ++m_done;
    m_button->setText(tr("Diagnose now"));
    m_button->setEnabled(!m_runId.isEmpty());
    emit diagnosed(outcome.runId);
    if (outcome.runId != m_runId) {
        return;  // another run is shown now; the diagnosis is stored with its own run
    }
    bool nodeFailed = false;
    if (outcome.diagnosis) {
        nodeFailed = std::any_of(outcome.diagnosis->nodes.begin(), outcome.diagnosis->nodes.end(),
                                 [](const dx::NodeDiagnosis& n) { return !n.error.empty(); });
    }
    setStatus(diagnoseOutcomeText(outcome),
              !outcome.error.isEmpty() || !outcome.storeError.isEmpty() || nodeFailed);
    if (!outcome.diagnosis) {
        return;
    }
    {
        const QSignalBlocker block(m_list);
        m_list->setCurrentIndex(-1);
    }
    showDiagnosis(*outcome.diagnosis);
    if (!outcome.storeError.isEmpty()) {
        m_unstored = *outcome.diagnosis;  // shown until another is chosen; not in the list
        return;
    }
    reload();  // the stored list is read again; its newest entry (chosen) is this diagnosis
}

void DiagnosisView::setStatus(const QString& text, bool error) {
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: %1").arg(errorColor().name())
                                  : QString());
}

QString DiagnosisView::statusText() const {
    return m_status->text();
}

QString DiagnosisView::headlineText() const {
    return m_headline->text();
}

void DiagnosisView::showEmpty(const QString& message) {
    m_headline->setText(message.toHtmlEscaped());
    m_findings->clear();
    m_nodes->clear();
}

void DiagnosisView::showDiagnosis(const dx::RunDiagnosis& d) {
    bool problem = false;
    for (const auto& f : d.verdict.findings) {
        problem = problem || isProblem(f.kind);
    }
    const QString colour = problem ? errorColor().name() : okColor().name();
    int failed = 0;
    for (const auto& n : d.nodes) {
        failed += n.error.empty() ? 0 : 1;
    }
    m_headline->setText(
        QStringLiteral("<b style=\"color:%1\">%2</b><br><span style=\"color:#606060\">%3</span>")
            .arg(colour, qs(d.verdict.headline).toHtmlEscaped(),
                 tr("%1 · trigger %2 · %3 node(s), %4 not asked · took %5 ms")
                     .arg(timeText(d.tUnixNs), qs(d.trigger).toHtmlEscaped())
                     .arg(d.nodes.size())
                     .arg(failed)
                     .arg(d.tookMs)));

    m_findings->clear();
    for (const auto& f : d.verdict.findings) {
        addTop(m_findings, qs(f.kind), qs(f.text), isProblem(f.kind) ? errorColor() : QColor());
    }
    if (!d.verdict.stackGroups.empty()) {
        auto* groups =
            addTop(m_findings, tr("stack groups"),
                   tr("%1 group(s), the smallest first").arg(d.verdict.stackGroups.size()));
        for (const auto& g : d.verdict.stackGroups) {
            QStringList members;
            for (const auto& m : g.members) {
                members << qs(m);
            }
            addItem(groups,
                    qs(g.frame) + (g.file.empty()
                                       ? QString()
                                       : QStringLiteral(" (") + qs(g.file) + QLatin1Char(')')),
                    tr("%1 process(es): %2")
                        .arg(members.size())
                        .arg(members.join(QStringLiteral(", "))));
        }
    }
    m_findings->expandAll();
    m_findings->resizeColumnToContents(0);

    m_nodes->clear();
    // a rank reads as in the verdict: its node's hostname, RAS's address after it
    const diagnosis::HostNames names(d.nodes, diagnosis::mergedCommunicators(d.nodes));
    for (const auto& node : d.nodes) {
        const NodeDiagnosisLines lines = nodeLines(node, &names);
        if (!lines.error.isEmpty()) {
            auto* top = addTop(m_nodes, lines.title, tr("could not be asked: %1").arg(lines.error),
                               errorColor());
            top->setExpanded(true);
            continue;
        }
        auto* top = addTop(m_nodes, lines.title,
                           lines.stuckRanks.isEmpty()
                               ? tr("no stuck rank in its RAS report")
                               : tr("%1 stuck rank(s)").arg(lines.stuckRanks.size()));
        addItem(top, tr("NCCL RAS"), lines.ras,
                lines.ras.startsWith(QLatin1String("not available")) ? warningColor() : QColor());
        auto* stuck =
            addItem(top, tr("Stuck ranks"),
                    lines.stuckRanks.isEmpty() ? tr("none (or no RAS report)")
                                               : tr("%1 rank(s)").arg(lines.stuckRanks.size()),
                    lines.stuckRanks.isEmpty() ? QColor() : errorColor());
        for (const QString& s : lines.stuckRanks) {
            addItem(stuck, QString(), s, errorColor());
        }
        auto* stacks = addItem(
            top, tr("Stacks"), lines.stacks,
            lines.stacks.startsWith(QLatin1String("not taken")) ? warningColor() : QColor());
        for (const auto& p : lines.processes) {
            auto* proc = addItem(stacks, p.label,
                                 !p.error.isEmpty()   ? p.error
                                 : p.frames.isEmpty() ? tr("no frames")
                                                      : tr("in ") + p.frames.front(),
                                 p.error.isEmpty() ? QColor() : warningColor());
            for (qsizetype i = 0; i < p.frames.size(); ++i) {
                addItem(proc, QStringLiteral("#%1").arg(i), p.frames[i]);
            }
        }
        auto* kernel = addItem(
            top, tr("Kernel log"), lines.kernelLog,
            lines.kernelLog.startsWith(QLatin1String("not read")) ? warningColor() : QColor());
        for (const QString& k : lines.kernelLines) {
            addItem(kernel, QString(), k, errorColor());
        }
        if (!lines.gpuClocks.isEmpty()) {
            auto* gpus = addItem(top, tr("GPU clocks"),
                                 tr("%n GPU(s) read from NVML", "", lines.gpuClocks.size()));
            for (const QString& g : lines.gpuClocks) {
                addItem(gpus, QString(), g,
                        g.endsWith(QLatin1String("(throttled)")) ? warningColor() : QColor());
            }
            m_nodes->expandItem(gpus);
        }
        if (!lines.lastOutput.isEmpty()) {
            auto* last = addItem(top, tr("Last output per role"),
                                 tr("%n role(s)", "", lines.lastOutput.size()));
            for (const QString& l : lines.lastOutput) {
                addItem(last, QString(), l);
            }
            m_nodes->expandItem(last);
        }
        m_nodes->expandItem(top);
        m_nodes->expandItem(stuck);
        m_nodes->expandItem(stacks);
        m_nodes->expandItem(kernel);
        for (int i = 0; i < stacks->childCount(); ++i) {
            m_nodes->expandItem(stacks->child(i));
        }
    }
    m_nodes->resizeColumnToContents(0);
}

QString DiagnosisView::shownText() const {
    QStringList out;
    for (QTreeWidget* tree : {m_findings, m_nodes}) {
        for (int i = 0; i < tree->topLevelItemCount(); ++i) {
            appendText(tree->topLevelItem(i), 0, out);
        }
    }
    return out.join(QLatin1Char('\n'));
}

}  // namespace runplane::gui
