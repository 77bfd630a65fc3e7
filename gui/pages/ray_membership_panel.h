#pragma once
// RayMembershipPanel (issue 47): the Cluster page's "Ray membership" box -- a Check button, a
// summary line and the RayMembershipModel table (which Ray cluster / GCS each node's raylets
// joined, a stranger's row in red). refresh() asks every daemon at once on a background thread
// (control::rayMembership: RayStatus with raylets only, what `runplanectl dispatch preflight`
// prints) and applies the answer on the GUI thread; a panel destroyed meanwhile drops it.

#include <QStringList>
#include <QWidget>

#include <vector>

#include "backend/control/dispatch_membership.h"

class QLabel;
class QPushButton;
class QTableView;

namespace runplane::gui {

class RayMembershipModel;

class RayMembershipPanel : public QWidget {
    Q_OBJECT
  public:
    explicit RayMembershipPanel(QWidget* parent = nullptr);

    /// Asks the daemons at `addresses` with `options` (TLS, token); one answer at a time: a call
    /// while one is in flight is dropped (returns false).
    bool refresh(const QStringList& addresses, const control::NodeClientOptions& options);
    bool busy() const { return m_busy; }
    RayMembershipModel* model() const { return m_model; }
    QLabel* summaryLabel() const { return m_summary; }
    QTableView* table() const { return m_table; }
    QPushButton* checkButton() const { return m_check; }

    /// Shows `nodes` (what refresh() applies when the daemons answered).
    void apply(std::vector<control::NodeMembership> nodes);

  signals:
    /// The Check button was pressed (the page answers with refresh()).
    void checkRequested();
    /// An answer was applied to the model.
    void updated();

  private:
    RayMembershipModel* m_model = nullptr;
    QPushButton* m_check = nullptr;
    QLabel* m_summary = nullptr;
    QTableView* m_table = nullptr;
    bool m_busy = false;
};

}  // namespace runplane::gui
