#pragma once
// FindingsModel: the planner's findings for the recipe being designed, errors first. Columns:
// severity, field, message (with the numbers), fix hint. FieldPathRole gives the field path a
// click focuses. GUI thread only; tested with QAbstractItemModelTester.

#include <QAbstractTableModel>

#include <vector>

#include "backend/plan/rules.h"

namespace runplane::gui {

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column { SeverityColumn, FieldColumn, MessageColumn, FixColumn, ColumnCount };
    enum Role { FieldPathRole = Qt::UserRole + 1, SeverityRole, RuleIdRole };

    explicit FindingsModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// Replaces the findings (sorted: errors, warnings, infos; stable otherwise).
    void setFindings(std::vector<plan::Finding> findings);
    const std::vector<plan::Finding>& findings() const { return m_findings; }
    int errorCount() const { return m_errors; }
    int warningCount() const { return m_warnings; }

  private:
    std::vector<plan::Finding> m_findings;
    int m_errors = 0;
    int m_warnings = 0;
};

}  // namespace runplane::gui
