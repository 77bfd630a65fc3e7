#pragma once
// CompareModel: the table beside the Compare plot. Columns: the field, then one per run (header
// in the run's colour). Rows: a few summary rows (status, duration, peak host memory, last and
// best of the shown metric), then only the recipe fields that differ between the runs. Cells
// whose value differs from the first run's are highlighted. GUI thread only; tested with
// QAbstractItemModelTester.

#include <QAbstractTableModel>
#include <QColor>
#include <QString>

#include <optional>
#include <vector>

#include "gui/models/compare_data.h"

namespace runplane::gui {

class CompareModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Role { IsSummaryRole = Qt::UserRole + 1, DiffersRole, DeltaRole };

    explicit CompareModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// colors: one per run (the plot's legend colours).
    void setData(const CompareData& data, const QString& metric, const std::vector<QColor>& colors);
    /// The baseline run (index into the data's runs, -1 = none) and the step of the "at step"
    /// delta row (none = no such row). Applies at the next setData. With a baseline, the
    /// summary gains "Δ last / Δ best / Δ at step N vs baseline" rows (compare_baseline.h);
    /// DeltaRole gives the delta as a double (invalid where there is none).
    void setBaseline(int runIndex, std::optional<double> atStep);
    int baseline() const { return m_baseline; }
    int summaryRowCount() const { return m_summaryRows; }
    /// The recipe fields that differ (rows after the summary).
    QStringList diffFields() const;

  private:
    struct Row {
        QString field;
        QStringList values;
        bool summary = false;
        std::vector<std::optional<double>> deltas;  // delta rows only, one per run
        QStringList full;  // recipe rows: whole values (tooltip, equality); values = as shown
    };
    std::vector<Row> m_rows;
    QStringList m_runNames;
    std::vector<QColor> m_colors;
    int m_summaryRows = 0;
    int m_baseline = -1;
    std::optional<double> m_atStep;
};

}  // namespace runplane::gui
