#pragma once
// The run view's per-process tabs (issues 42 and 43), kept apart from run_view.cpp:
//   "Memory by role": one node's host memory stacked by role over time (a node chooser above),
//                     the plan's budget per role as dashed lines, phases behind, failure events
//                     as red markers; the tooltip names the role, its bytes and process count.
//   "Phase lanes":    one lane per rank / actor with its phases over time; a lane stuck in a
//                     phase is outlined in red with how long; the same failure markers.
// Draws RunSnapshot::roles; reads nothing itself. GUI thread only.

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

#include "gui/models/role_memory.h"
#include "gui/models/run_data.h"
#include "gui/widgets/plot_types.h"

class QComboBox;
class QLabel;
class QTabWidget;

namespace runplane::gui {

class PhaseLanesPlot;
class StackedAreaPlot;

/// The failure markers as the plots draw them: red, "node: message".
std::vector<EventMarker> failureEventMarkers(const std::vector<FailureMarker>& failures);

class RunRoleTabs : public QObject {
    Q_OBJECT
  public:
    /// Adds the two tabs to `tabs`.
    RunRoleTabs(QTabWidget* tabs, QObject* parent);
    void setSnapshot(const std::shared_ptr<const RunSnapshot>& snapshot);
    void clear(const QString& message);

    StackedAreaPlot* roleMemoryPlot() const { return m_rolePlot; }
    PhaseLanesPlot* phaseLanesPlot() const { return m_lanesPlot; }
    QComboBox* nodeChooser() const { return m_node; }
    /// The stack shown (nullptr: none).
    const NodeRoleStack* shownStack() const;
    QWidget* roleTab() const { return m_roleTab; }
    QWidget* lanesTab() const { return m_lanesTab; }

  private:
    void showNode();
    std::shared_ptr<const RunSnapshot> m_snapshot;
    QWidget* m_roleTab = nullptr;
    QWidget* m_lanesTab = nullptr;
    QComboBox* m_node = nullptr;
    QLabel* m_roleNote = nullptr;
    StackedAreaPlot* m_rolePlot = nullptr;
    PhaseLanesPlot* m_lanesPlot = nullptr;
};

}  // namespace runplane::gui
