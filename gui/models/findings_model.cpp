#include "gui/models/findings_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>

#include "gui/models/qt_text.h"

namespace runplane::gui {

namespace {

int rank(plan::Severity s) {
    switch (s) {
        case plan::Severity::Error:
            return 0;
        case plan::Severity::Warning:
            return 1;
        case plan::Severity::Info:
            return 2;
    }
    return 3;
}

QColor severityColor(plan::Severity s) {
    switch (s) {
        case plan::Severity::Error:
            return QColor(0xC6, 0x28, 0x28);
        case plan::Severity::Warning:
            return QColor(0xB2, 0x6A, 0x00);
        case plan::Severity::Info:
            return QColor(0x45, 0x5A, 0x64);
    }
    return {};
}

}  // namespace

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

int FindingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_findings.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case SeverityColumn:
            return tr("Severity");
        case FieldColumn:
            return tr("Field");
        case MessageColumn:
            return tr("Message");
        case FixColumn:
            return tr("Fix");
        default:
            return {};
    }
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.parent().isValid() || index.row() < 0 ||
        index.row() >= rowCount() || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    const plan::Finding& f = m_findings[static_cast<size_t>(index.row())];
    switch (role) {
        case FieldPathRole:
            return qs(f.fieldPath);
        case SeverityRole:
            return QString::fromLatin1(plan::toString(f.severity));
        case RuleIdRole:
            return qs(f.ruleId);
        case Qt::ForegroundRole:
            if (index.column() == SeverityColumn) {
                return QBrush(severityColor(f.severity));
            }
            return {};
        case Qt::FontRole:
            if (index.column() == SeverityColumn && f.severity == plan::Severity::Error) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return {};
        case Qt::ToolTipRole:
            return QString(qs(f.message) + QStringLiteral("\n\nfix: ") + qs(f.fixHint) +
                           QStringLiteral("\nrule: ") + qs(f.ruleId));
        case Qt::DisplayRole:
            switch (index.column()) {
                case SeverityColumn:
                    return QString::fromLatin1(plan::toString(f.severity));
                case FieldColumn:
                    return qs(f.fieldPath);
                case MessageColumn:
                    return qs(f.message);
                case FixColumn:
                    return qs(f.fixHint);
                default:
                    return {};
            }
        default:
            return {};
    }
}

void FindingsModel::setFindings(std::vector<plan::Finding> findings) {
    std::stable_sort(findings.begin(), findings.end(),
                     [](const plan::Finding& a, const plan::Finding& b) {
                         return rank(a.severity) < rank(b.severity);
                     });
    beginResetModel();
    m_findings = std::move(findings);
    m_errors = 0;
    m_warnings = 0;
    for (const plan::Finding& f : m_findings) {
        m_errors += f.severity == plan::Severity::Error ? 1 : 0;
        m_warnings += f.severity == plan::Severity::Warning ? 1 : 0;
    }
    endResetModel();
}

}  // namespace runplane::gui
