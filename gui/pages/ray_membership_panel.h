#pragma once
// RayMembershipPanel (issue 47): the Cluster page's "Ray membership" box -- a Check button, a
// summary line and the RayMembershipModel table (which Ray cluster / GCS each node's raylets
// joined, a stranger's row in red). refresh() asks every daemon at once on a background thread
// (control::rayMembership: RayStatus with raylets only, what `runplanectl dispatch preflight`
// prints) and applies the answer on the GUI thread; a panel destroyed meanwhile drops it.

#include <QStringList>

#include <vector>

#include "backend/control/dispatch_membership.h"
#include "gui/pages/node_check_panel.h"

namespace runplane::gui {

class RayMembershipModel;

class RayMembershipPanel : public NodeCheckPanel {
    Q_OBJECT
  public:
    explicit RayMembershipPanel(QWidget* parent = nullptr);

    /// Asks the daemons at `addresses` with `options` (TLS, token); one answer at a time: a call
    /// while one is in flight is dropped (returns false).
    bool refresh(const QStringList& addresses, const control::NodeClientOptions& options);
    RayMembershipModel* model() const { return m_model; }

    /// Shows `nodes` (what refresh() applies when the daemons answered).
    void apply(std::vector<control::NodeMembership> nodes);

  private:
    RayMembershipModel* m_model = nullptr;
};

}  // namespace runplane::gui
