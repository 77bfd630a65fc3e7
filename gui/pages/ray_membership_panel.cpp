#include "gui/pages/ray_membership_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "backend/control/dispatch_membership.h"
#include "gui/models/ray_membership_model.h"
#include "gui/pages/off_gui_thread.h"

namespace runplane::gui {

RayMembershipPanel::RayMembershipPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Ray membership:"), this));
    m_summary = new QLabel(tr("not checked"), this);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(m_summary, 1);
    m_check = new QPushButton(tr("Check"), this);
    m_check->setToolTip(
        tr("Ask every daemon which Ray cluster its raylets joined (as `runplanectl dispatch "
           "preflight` does)"));
    bar->addWidget(m_check);
    layout->addLayout(bar);
    m_model = new RayMembershipModel(this);
    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    connect(m_check, &QPushButton::clicked, this, &RayMembershipPanel::checkRequested);
}

bool RayMembershipPanel::refresh(const QStringList& addresses,
                                 const control::NodeClientOptions& options) {
    if (m_busy) {
        return false;
    }
    m_busy = true;
    m_check->setEnabled(false);
    m_summary->setText(tr("asking %1 daemon(s)…").arg(addresses.size()));
    std::vector<std::string> list;
    for (const auto& a : addresses) {
        list.push_back(a.toStdString());
    }
    // blocking gRPC calls off the GUI thread; the answer comes back by value
    runOffGuiThread(
        this, [list = std::move(list), options] { return control::rayMembership(list, options); },
        [](RayMembershipPanel* panel, auto nodes) { panel->apply(std::move(nodes)); });
    return true;
}

void RayMembershipPanel::apply(std::vector<control::NodeMembership> nodes) {
    m_model->setMembership(std::move(nodes));
    m_summary->setText(m_model->summary());
    m_table->resizeColumnsToContents();
    m_busy = false;
    m_check->setEnabled(true);
    emit updated();
}

}  // namespace runplane::gui
