#pragma once
// The Cluster page's memory by role (issue 43): one bar per node (its host memory split by role:
// trainer, rollout engines, router, Ray object store, Ray workers, driver, page cache, other, a
// site's own role) and one bar per GPU (NVML's per-process memory summed by role), the newest
// samples of the history, read through the page's HistoryReader. GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>

namespace runplane::gui {

class HistoryReader;
class RoleSplitBars;
struct ClusterRoleSplit;

class ClusterRolesPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ClusterRolesPanel(QWidget* parent = nullptr);
    /// Reads the split of `nodeIds` (samples of the last `window` seconds) and shows it;
    /// `displayName` names a node in the bars. Superseded by the next request.
    void request(HistoryReader& reader, const QStringList& nodeIds,
                 std::function<QString(const QString&)> displayName, double window = 30);
    /// Shows a split (what request() applies).
    void showSplit(const ClusterRoleSplit& split,
                   const std::function<QString(const QString&)>& displayName);
    RoleSplitBars* hostBars() const { return m_host; }
    RoleSplitBars* gpuBars() const { return m_gpu; }
    int appliedQueries() const { return m_applied; }

  private:
    RoleSplitBars* m_host = nullptr;
    RoleSplitBars* m_gpu = nullptr;
    bool m_inFlight = false;
    int m_applied = 0;
};

}  // namespace runplane::gui
