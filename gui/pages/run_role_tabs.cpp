#include "gui/pages/run_role_tabs.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

#include "gui/pages/plot_builders.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/role_plots.h"

namespace runplane::gui {

std::vector<EventMarker> failureEventMarkers(const std::vector<FailureMarker>& failures) {
    std::vector<EventMarker> out;
    for (const FailureMarker& f : failures) {
        out.push_back(EventMarker{f.t, f.nodeId + QStringLiteral(": ") + f.message, errorColor()});
    }
    return out;
}

RunRoleTabs::RunRoleTabs(QTabWidget* tabs, QObject* parent) : QObject(parent) {
    m_roleTab = new QWidget;
    auto* layout = new QVBoxLayout(m_roleTab);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Node:"), m_roleTab));
    m_node = new QComboBox(m_roleTab);
    m_node->setMinimumContentsLength(16);
    bar->addWidget(m_node);
    m_roleNote = new QLabel(m_roleTab);
    m_roleNote->setWordWrap(true);
    bar->addWidget(m_roleNote, 1);
    layout->addLayout(bar);
    m_rolePlot = new StackedAreaPlot(m_roleTab);
    m_rolePlot->setTitle(tr("Host memory by role (stacked), plan per role dashed"));
    m_rolePlot->setYLabel(tr("GB"));
    layout->addWidget(m_rolePlot, 1);
    tabs->addTab(m_roleTab, tr("Memory by role"));

    m_lanesTab = new QWidget;
    auto* lanesLayout = new QVBoxLayout(m_lanesTab);
    m_lanesPlot = new PhaseLanesPlot(m_lanesTab);
    m_lanesPlot->setTitle(tr("Phases per rank / actor (a lane stuck in a phase is outlined)"));
    lanesLayout->addWidget(m_lanesPlot, 1);
    tabs->addTab(m_lanesTab, tr("Phase lanes"));

    connect(m_node, &QComboBox::currentIndexChanged, this, [this] { showNode(); });
    clear(tr("Select a run"));
}

void RunRoleTabs::clear(const QString& message) {
    m_snapshot.reset();
    {
        const QSignalBlocker block(m_node);
        m_node->clear();
    }
    m_roleNote->clear();
    m_rolePlot->setPlaceholder(message);
    m_lanesPlot->setPlaceholder(message);
}

const NodeRoleStack* RunRoleTabs::shownStack() const {
    if (!m_snapshot || !m_snapshot->roles) {
        return nullptr;
    }
    const QString node = m_node->currentText();
    for (const NodeRoleStack& s : m_snapshot->roles->nodes) {
        if (s.nodeId == node) {
            return &s;
        }
    }
    return nullptr;
}

void RunRoleTabs::setSnapshot(const std::shared_ptr<const RunSnapshot>& snapshot) {
    m_snapshot = snapshot;
    if (!m_snapshot || !m_snapshot->roles) {
        clear(tr("no role data"));
        return;
    }
    const RunRoleData& roles = *m_snapshot->roles;
    {
        // Keep the chosen node across refreshes.
        const QString chosen = m_node->currentText();
        const QSignalBlocker block(m_node);
        m_node->clear();
        for (const NodeRoleStack& s : roles.nodes) {
            m_node->addItem(s.nodeId);
        }
        const int at = m_node->findText(chosen);
        m_node->setCurrentIndex(at >= 0 ? at : 0);
    }
    showNode();

    const std::vector<EventMarker> markers = failureEventMarkers(roles.failures);
    if (roles.lanes.empty()) {
        m_lanesPlot->setPlaceholder(
            tr("no phase events with a process for this run\n(phase markers and timers carry "
               "the pid, actor and rank of the line that printed them)"));
        return;
    }
    std::vector<LaneRow> lanes;
    for (const PhaseLane& l : roles.lanes) {
        LaneRow row;
        row.label = l.label;
        row.highlight = l.stuck;
        row.note = l.note;
        for (const LaneSpan& s : l.spans) {
            row.bars.push_back(LaneBar{s.phase, s.t0, s.t1});
        }
        lanes.push_back(std::move(row));
    }
    m_lanesPlot->setLanes(std::move(lanes), markers);
}

void RunRoleTabs::showNode() {
    const NodeRoleStack* stack = shownStack();
    if (stack == nullptr) {
        m_roleNote->clear();
        m_rolePlot->setPlaceholder(
            tr("no memory-by-role samples for this run's nodes\n(the daemon's role walk is off, "
               "or it predates it)"));
        return;
    }
    std::vector<StackedLayer> layers;
    for (std::size_t k = 0; k < stack->layers.size(); ++k) {
        const RoleLayer& l = stack->layers[k];
        StackedLayer out;
        out.label = l.label;
        out.color = l.color;
        for (double b : l.bytes) {
            out.value.push_back(b / kBytesPerGB);
        }
        if (l.planned()) {
            for (std::size_t i = 0; i < stack->t.size(); ++i) {
                out.budgetTop.push_back(stack->budgetTop(k, i) / kBytesPerGB);
            }
        }
        layers.push_back(std::move(out));
    }
    std::vector<PhaseSpan> phases;
    for (const PhaseInterval& p : m_snapshot->phases) {
        phases.push_back(PhaseSpan{p.phase, p.t0, p.t1});
    }
    m_rolePlot->setData(stack->t, std::move(layers), std::move(phases),
                        failureEventMarkers(m_snapshot->roles->failures));
    const std::shared_ptr<const RunSnapshot> snap = m_snapshot;
    const QString node = stack->nodeId;
    m_rolePlot->setHoverText([snap, node](double x, double y) -> QString {
        for (const NodeRoleStack& s : snap->roles->nodes) {
            if (s.nodeId == node) {
                return s.hoverText(x, y * kBytesPerGB, snap->phases);
            }
        }
        return {};
    });
    bool planned = false;
    for (const RoleLayer& l : stack->layers) {
        planned = planned || l.planned();
    }
    m_roleNote->setText(planned ? tr("dashed: the plan's bytes per role in each phase, stacked "
                                     "as the layers are")
                                : tr("no plan for this run's recipe: no budget lines"));
}

}  // namespace runplane::gui
