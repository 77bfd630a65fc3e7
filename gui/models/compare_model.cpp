#include "gui/models/compare_model.h"

#include <algorithm>

#include "common/metrics/metric_kind.h"

#include <QBrush>
#include <QFont>

#include "gui/models/compare_baseline.h"
#include "gui/models/run_models.h"

namespace runplane::gui {

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

int CompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 1 + static_cast<int>(m_runNames.size());
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        if (section == 0) {
            return tr("Field");
        }
        return section - 1 == m_baseline ? tr("%1 (baseline)").arg(m_runNames[section - 1])
                                         : m_runNames[section - 1];
    }
    if (role == Qt::ForegroundRole && section > 0 &&
        static_cast<size_t>(section - 1) < m_colors.size()) {
        return QBrush(m_colors[static_cast<size_t>(section - 1)]);
    }
    return {};
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.parent().isValid() || index.row() < 0 ||
        index.row() >= rowCount() || index.column() < 0 || index.column() >= columnCount()) {
        return {};
    }
    const Row& row = m_rows[static_cast<size_t>(index.row())];
    const int c = index.column();
    const QStringList& keys = row.full.isEmpty() ? row.values : row.full;
    const bool differs = c > 0 && !row.summary && keys[c - 1] != keys[0];
    switch (role) {
        case Qt::DisplayRole:
            return c == 0 ? row.field : row.values[c - 1];
        case Qt::ToolTipRole:
            return c == 0 ? row.field : keys[c - 1];
        case Qt::BackgroundRole:
            if (differs) {
                return QBrush(QColor(255, 236, 179));  // highlighted difference
            }
            if (row.summary) {
                return QBrush(QColor(240, 244, 250));
            }
            return {};
        case Qt::FontRole:
            if (c == 0 && row.summary) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        case IsSummaryRole:
            return row.summary;
        case DiffersRole:
            return differs;
        case DeltaRole:
            if (c > 0 && static_cast<size_t>(c - 1) < row.deltas.size() && row.deltas[c - 1]) {
                return *row.deltas[c - 1];
            }
            return {};
        default:
            return {};
    }
}

void CompareModel::setData(const CompareData& data, const QString& metric,
                           const std::vector<QColor>& colors) {
    beginResetModel();
    m_rows.clear();
    m_runNames.clear();
    m_colors = colors;
    for (const CompareRun& r : data.runs) {
        m_runNames << (r.run.name.isEmpty() ? r.run.id : r.run.name);
    }
    auto summary = [&](const QString& field, auto valueOf) {
        Row row{field, {}, true, {}, {}};
        for (const CompareRun& r : data.runs) {
            row.values << valueOf(r);
        }
        m_rows.push_back(std::move(row));
    };
    summary(tr("status"), [](const CompareRun& r) -> QString { return stateName(r.run.state); });
    summary(tr("duration"), [](const CompareRun& r) -> QString {
        return formatSeconds(r.run.durationSeconds(r.run.endT > 0 ? r.run.endT : r.run.startT));
    });
    summary(tr("peak host memory"), [](const CompareRun& r) -> QString {
        const NodePeakRow* top = nullptr;
        for (const NodePeakRow& p : r.run.peaks) {
            if (top == nullptr || p.peakBytes > top->peakBytes) {
                top = &p;
            }
        }
        return top == nullptr ? QStringLiteral("–")
                              : formatGB(top->peakBytes) + QStringLiteral(" (") + top->nodeId +
                                    QStringLiteral(")");
    });
    if (!metric.isEmpty()) {
        summary(tr("%1 last (step)").arg(metric), [&](const CompareRun& r) -> QString {
            for (const MetricValue& m : r.run.metrics) {
                if (m.name == metric) {
                    return QStringLiteral("%1 (%2)").arg(m.last, 0, 'f', 4).arg(m.lastStep);
                }
            }
            return QStringLiteral("–");
        });
        // Best by the metric's direction (max of a score, min of a loss or a time, none for a
        // token length or a count).
        // The first run's classification (its recipe's analysis.metric_kinds), else the table.
        metrics::MetricInfo info = metrics::classify(metric.toStdString());
        for (const CompareRun& r : data.runs) {
            const auto it = std::find_if(r.run.metrics.begin(), r.run.metrics.end(),
                                         [&](const MetricValue& m) { return m.name == metric; });
            if (it != r.run.metrics.end()) {
                info = it->info;
                break;
            }
        }
        summary(info.direction == metrics::Direction::None
                    ? tr("%1 best (no better direction)").arg(metric)
                    : tr("%1 best, %2 is better (step)")
                          .arg(metric,
                               QString::fromUtf8(metrics::directionName(info.direction).data())),
                [&](const CompareRun& r) -> QString {
                    for (const MetricValue& m : r.run.metrics) {
                        if (m.name == metric) {
                            return m.hasBest() ? QStringLiteral("%1 (%2)")
                                                     .arg(m.best, 0, 'f', 4)
                                                     .arg(m.bestStep)
                                               : QStringLiteral("–");
                        }
                    }
                    return QStringLiteral("–");
                });
    }
    if (!metric.isEmpty() && m_baseline >= 0 &&
        static_cast<size_t>(m_baseline) < data.runs.size()) {
        const std::vector<MetricDelta> deltas = baselineDeltas(data, metric, m_baseline, m_atStep);
        auto deltaRow = [&](const QString& field, auto pick) {
            Row row{field, {}, true, {}, {}};
            for (size_t i = 0; i < deltas.size(); ++i) {
                const std::optional<double> d = pick(deltas[i]);
                row.deltas.push_back(d);
                row.values << (static_cast<int>(i) == m_baseline ? tr("baseline") : formatDelta(d));
            }
            m_rows.push_back(std::move(row));
        };
        deltaRow(tr("Δ %1 last vs baseline").arg(metric),
                 [](const MetricDelta& d) { return d.last; });
        deltaRow(tr("Δ %1 best vs baseline").arg(metric),
                 [](const MetricDelta& d) { return d.best; });
        if (m_atStep) {
            deltaRow(tr("Δ %1 at step %2 vs baseline").arg(metric).arg(*m_atStep),
                     [](const MetricDelta& d) { return d.atStep; });
        }
    }
    m_summaryRows = static_cast<int>(m_rows.size());
    for (DiffRow& d : recipeDiff(data.runs)) {
        m_rows.push_back(Row{d.field, d.values, false, {}, d.full});
    }
    endResetModel();
}

void CompareModel::setBaseline(int runIndex, std::optional<double> atStep) {
    m_baseline = runIndex;
    m_atStep = atStep;
}

QStringList CompareModel::diffFields() const {
    QStringList out;
    for (size_t i = static_cast<size_t>(m_summaryRows); i < m_rows.size(); ++i) {
        out << m_rows[i].field;
    }
    return out;
}

}  // namespace runplane::gui
