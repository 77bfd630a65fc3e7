#include "gui/models/run_models.h"

#include "common/units/units.h"
#include "gui/models/metric_views.h"
#include "gui/models/role_memory.h"
#include "gui/models/run_data.h"
#include "gui/models/run_derivations.h"
#include "gui/models/run_silence.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QSize>

#include <cmath>
#include <set>

namespace runplane::gui {

namespace {

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

QString timeText(double t) {
    if (t <= 0) {
        return {};
    }
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t * 1000))
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

/// The run list's Started cell, short so the list fits 1280 px (issue 46): "MM-dd HH:mm" in the
/// current year, else "yyyy-MM-dd HH:mm"; the tooltip has the whole time (timeText).
QString startText(double t) {
    if (t <= 0) {
        return {};
    }
    const QDateTime when = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t * 1000));
    return when.toString(when.date().year() == QDate::currentDate().year()
                             ? QStringLiteral("MM-dd HH:mm")
                             : QStringLiteral("yyyy-MM-dd HH:mm"));
}

QColor stateColor(telemetry::RunState state) {
    switch (state) {
        case telemetry::RunState::Running:
            return QColor(0x00, 0x72, 0xB2);
        case telemetry::RunState::Finished:
            return QColor(0x2E, 0x7D, 0x32);
        case telemetry::RunState::Failed:
        case telemetry::RunState::DaemonLost:
            return QColor(0xC6, 0x28, 0x28);
        case telemetry::RunState::Stopped:
            break;
    }
    return QColor(0x70, 0x70, 0x70);
}

// A cause at alert level (an OOM of any kind, a crash, an NCCL error, a weight-sync failure) in
// red; a weaker one (batch mismatch, nan loss, skipped iteration) in amber.
QColor causeColor(const QString& kind) {
    return isAlertFailure(kind) ? QColor(0xC6, 0x28, 0x28) : QColor(0xA0, 0x60, 0x00);
}
constexpr qsizetype kCauseChars = 40;

constexpr int kCauseWidth = 260;

QString stateText(telemetry::RunState state) {
    const std::string_view s = telemetry::label(state);
    return QString::fromLatin1(s.data(), static_cast<qsizetype>(s.size()));
}

}  // namespace

// "Diagnosis (stall, 2026-12-06 14:02:11): rank 3 ... in all_gather_into_tensor, 63 ranks in
// barrier": the run's status line in tooltips and the run view's header.
QString diagnosisText(const RunRow& r) {
    if (r.diagnosis.isEmpty()) {
        return {};
    }
    return QObject::tr("Diagnosis (%1, %2): %3")
        .arg(r.diagnosisTrigger,
             QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(r.diagnosisT * 1000))
                 .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
             r.diagnosis);
}

QString formatGB(double bytes) {
    return QString::fromStdString(units::formatBytes(bytes));
}

QString formatSeconds(double seconds) {
    return QString::fromStdString(units::formatDuration(seconds));
}

// ---------------------------------------------------------------- RunListModel

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == EvalColumn) {
        return tr(
            "The primary eval metric (the recipe's analysis.primary_metric, else the first "
            "score-kind eval/* series): its last and its best value");
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NameColumn:
            return tr("Run");
        case StateColumn:
            return tr("Status");
        case RecipeColumn:
            return tr("Recipe");
        case NodesColumn:
            return tr("Nodes");
        case StartColumn:
            return tr("Started");
        case DurationColumn:
            return tr("Duration");
        case PeakColumn:
            return tr("Peak host mem");
        case EvalColumn:
            return tr("Eval (last / best)");  // short, so the list fits 1280 px (issue 46)
        case CauseColumn:
            return tr("Cause");
        case DiagnosisColumn:
            return tr("Diagnosis");
        default:
            return {};
    }
}

QString RunListModel::evalText(const RunRow& run) const {
    // The primary eval metric only (the recipe's analysis.primary_metric, else the first
    // score-kind eval/*): token lengths and eval times are not accuracies. The tooltip lists
    // every eval/* series.
    const MetricValue* m = primaryMetric(run.metrics, run.primaryMetric);
    if (m == nullptr) {
        return {};
    }
    return QStringLiteral("%1 %2 / %3")
        .arg(m->name.startsWith(QLatin1String("eval/")) ? m->name.mid(5) : m->name)
        .arg(m->last, 0, 'f', 3)
        .arg(m->hasBest() ? QString::number(m->best, 'f', 3) : QStringLiteral("–"));
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.parent().isValid() || index.row() < 0 ||
        index.row() >= rowCount() || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    const RunRow& r = m_runs[static_cast<size_t>(index.row())];
    const double now = m_now > 0 ? m_now : nowSeconds();
    switch (role) {
        case RunIdRole:
            return r.id;
        case StateRole:
            return stateName(r.state);
        case AnnotationRole:
            return QString(r.tags.join(QLatin1Char(' ')) + QLatin1Char('\n') + r.note);
        case SortRole:
            switch (index.column()) {
                case StartColumn:
                    return r.startT;
                case DurationColumn:
                    return r.durationSeconds(now);
                case PeakColumn:
                    return r.maxPeakBytes();
                case NodesColumn:
                    return static_cast<int>(r.nodes.size());
                case EvalColumn:
                    if (const MetricValue* m = primaryMetric(r.metrics, r.primaryMetric);
                        m && m->hasBest()) {
                        return m->best;
                    }
                    return -1.0;
                default:
                    return data(index, Qt::DisplayRole);
            }
        case Qt::ForegroundRole:
            if (index.column() == StateColumn) {
                return QBrush(stateColor(r.state));
            }
            if (index.column() == CauseColumn && !r.cause.isEmpty()) {
                return QBrush(causeColor(r.causeKind));
            }
            return {};
        case Qt::SizeHintRole:
            // A long cause is elided (whole in the tooltip) rather than widening the list.
            if ((index.column() == CauseColumn && r.cause.size() > kCauseChars) ||
                (index.column() == DiagnosisColumn && r.diagnosis.size() > kCauseChars)) {
                return QSize(kCauseWidth, 0);
            }
            return {};
        case Qt::ToolTipRole:
            if (index.column() == EvalColumn) {
                QStringList lines;
                for (const MetricValue& m : r.metrics) {
                    lines << QStringLiteral("%1 (%2): last %3 @ step %4, best %5")
                                 .arg(m.name,
                                      QString::fromUtf8(metrics::kindName(m.info.kind).data()))
                                 .arg(m.last, 0, 'f', 4)
                                 .arg(m.lastStep)
                                 .arg(bestText(m));
                }
                return lines.join(QLatin1Char('\n'));
            }
            if (index.column() == PeakColumn) {
                QStringList lines;
                for (const NodePeakRow& p : r.peaks) {
                    lines << p.nodeId + QStringLiteral(": ") + formatGB(p.peakBytes) +
                                 QStringLiteral(" at ") + timeText(p.peakT);
                }
                return lines.join(QLatin1Char('\n'));
            }
            if (index.column() == StateColumn) {
                QStringList lines;
                if (!r.message.isEmpty()) {
                    lines << r.message;
                }
                if (!r.diagnosis.isEmpty()) {
                    lines << diagnosisText(r);
                }
                if (!lines.isEmpty()) {
                    return lines.join(QLatin1Char('\n'));
                }
            }
            if (index.column() == DiagnosisColumn && !r.diagnosis.isEmpty()) {
                return diagnosisText(r);
            }
            if (index.column() == NameColumn) {  // the whole name (the cell elides), and the id
                return r.name.isEmpty() || r.name == r.id ? r.id
                                                          : r.name + QLatin1Char('\n') + r.id;
            }
            if (index.column() == StartColumn) {
                return timeText(r.startT);
            }
            if (index.column() == CauseColumn && !r.cause.isEmpty()) {
                return QString(r.causeKind + QStringLiteral(": ") + r.cause);
            }
            return {};
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (index.column()) {
        case NameColumn:
            return r.name.isEmpty() ? r.id : r.name;
        case StateColumn:
            // "running · daemon unreachable since HH:MM" when its samples stopped (issue 46):
            // the rule and the words of the run's header (run_silence.h).
            return liveText(stateText(r.state), clockOf(r), now);
        case RecipeColumn:
            return r.recipe;
        case NodesColumn:
            return r.nodes.join(QStringLiteral(", "));
        case StartColumn:
            return startText(r.startT);
        case DurationColumn:
            return formatSeconds(r.durationSeconds(now));
        case PeakColumn:
            // The highest node's peak; every node's is in the tooltip (a list of 256 values
            // in a cell was unreadable, and shaping it was most of a Runs page paint).
            if (r.peaks.size() > 1) {
                return tr("%1 (max of %2 nodes)")
                    .arg(formatGB(r.maxPeakBytes()))
                    .arg(r.peaks.size());
            }
            return r.peaks.empty() ? QString() : formatGB(r.peaks.front().peakBytes);
        case EvalColumn:
            return evalText(r);
        case CauseColumn:
            return r.cause;
        case DiagnosisColumn:
            return r.diagnosis;
        default:
            return {};
    }
}

void RunListModel::setRuns(std::vector<RunRow> runs) {
    bool sameIds = runs.size() == m_runs.size();
    for (size_t i = 0; sameIds && i < runs.size(); ++i) {
        sameIds = runs[i].id == m_runs[i].id;
    }
    if (sameIds) {
        m_runs = std::move(runs);
        if (!m_runs.empty()) {
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

const RunRow* RunListModel::run(const QString& runId) const {
    const int i = indexOf(runId);
    return i < 0 ? nullptr : &m_runs[static_cast<size_t>(i)];
}

int RunListModel::indexOf(const QString& runId) const {
    for (size_t i = 0; i < m_runs.size(); ++i) {
        if (m_runs[i].id == runId) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

// ---------------------------------------------------------------- RunFilterProxy

RunFilterProxy::RunFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(RunListModel::SortRole);
    setDynamicSortFilter(true);
}

void RunFilterProxy::setText(const QString& text) {
    m_text = text.trimmed();
    invalidateFilter();
}

void RunFilterProxy::setState(const QString& state) {
    m_state = state;
    invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* src = sourceModel();
    if (src == nullptr) {
        return false;
    }
    const QModelIndex first = src->index(sourceRow, 0, sourceParent);
    if (!m_state.isEmpty() && src->data(first, RunListModel::StateRole).toString() != m_state) {
        return false;
    }
    if (m_text.isEmpty()) {
        return true;
    }
    if (src->data(first, RunListModel::RunIdRole)
            .toString()
            .contains(m_text, Qt::CaseInsensitive)) {
        return true;
    }
    // Tags and notes (issue 49): the filter text inside any tag or the note.
    if (src->data(first, RunListModel::AnnotationRole)
            .toString()
            .contains(m_text, Qt::CaseInsensitive)) {
        return true;
    }
    for (int c = 0; c < src->columnCount(sourceParent); ++c) {
        if (src->data(src->index(sourceRow, c, sourceParent))
                .toString()
                .contains(m_text, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------- PeaksModel

PeaksModel::PeaksModel(QObject* parent) : QAbstractTableModel(parent) {}

int PeaksModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_peaks.size());
}

int PeaksModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PeaksModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NodeColumn:
            return tr("Node");
        case PeakColumn:
            return tr("Peak");
        case WhenColumn:
            return tr("When");
        case PhaseColumn:
            return tr("Phase");
        case AboveColumn:
            return m_alarmBytes > 0 ? tr("Above %1").arg(formatGB(m_alarmBytes))
                                    : tr("Above alarm");
        default:
            return {};
    }
}

QVariant PeaksModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.parent().isValid() || index.row() < 0 ||
        index.row() >= rowCount() || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    const NodePeakRow& p = m_peaks[static_cast<size_t>(index.row())];
    if (role == Qt::ForegroundRole && m_alarmBytes > 0 &&
        (index.column() == PeakColumn || index.column() == AboveColumn) &&
        p.peakBytes > m_alarmBytes) {
        return QBrush(QColor(0xC6, 0x28, 0x28));
    }
    if (role == Qt::ToolTipRole && index.column() == WhenColumn) {
        return timeText(p.peakT);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
        case NodeColumn:
            return p.nodeId;
        case PeakColumn:
            return formatGB(p.peakBytes);
        case WhenColumn:
            return m_runStartT > 0 ? QStringLiteral("+") + formatSeconds(p.peakT - m_runStartT)
                                   : timeText(p.peakT);
        case PhaseColumn:
            return p.phase.isEmpty() ? QStringLiteral("–") : p.phase;
        case AboveColumn:
            return m_alarmBytes > 0 ? formatSeconds(p.secondsAboveAlarm) : QStringLiteral("–");
        default:
            return {};
    }
}

void PeaksModel::setPeaks(std::vector<NodePeakRow> peaks, double alarmBytes, double runStartT) {
    beginResetModel();
    m_peaks = std::move(peaks);
    m_alarmBytes = alarmBytes;
    m_runStartT = runStartT;
    endResetModel();
    emit headerDataChanged(Qt::Horizontal, AboveColumn, AboveColumn);
}

}  // namespace runplane::gui
