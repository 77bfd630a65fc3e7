#include "gui/pages/ray_membership_panel.h"

#include "backend/control/dispatch_membership.h"
#include "gui/models/ray_membership_model.h"
#include "gui/pages/off_gui_thread.h"

namespace runplane::gui {

RayMembershipPanel::RayMembershipPanel(QWidget* parent)
    : NodeCheckPanel({tr("Ray membership:"), tr("Check"),
                      tr("Ask every daemon which Ray cluster its raylets joined (as `runplanectl "
                         "dispatch preflight` does)"),
                      false},
                     parent) {
    m_model = new RayMembershipModel(this);
    setModel(m_model);
}

bool RayMembershipPanel::refresh(const QStringList& addresses,
                                 const control::NodeClientOptions& options) {
    if (!beginAsking(addresses.size())) {
        return false;
    }
    // blocking gRPC calls off the GUI thread; the answer comes back by value
    runOffGuiThread(
        this,
        [list = addressList(addresses), options] { return control::rayMembership(list, options); },
        [](RayMembershipPanel* panel, auto nodes) { panel->apply(std::move(nodes)); });
    return true;
}

void RayMembershipPanel::apply(std::vector<control::NodeMembership> nodes) {
    m_model->setMembership(std::move(nodes));
    finishAsking(m_model->summary());
}

}  // namespace runplane::gui
