#pragma once
// Issue 42: the Cluster page's OOM alerts. Every OOM event of a node on the page (`cuda_oom`,
// `ray_oom`, `host_oom`, of any run) in the last kOomAlertWindowSeconds is alert-level: one line
// per event in the error colour under the node table, newest first ("node-a 10:03:12 · CUDA OOM
// on GPU 3: tried 61.34 GiB, 27.07 GiB free"). loadNodeOomAlerts runs on the history reader's
// worker; NodeOomPanel draws on the GUI thread. docs/gui.md, "Cluster".

#include <QLabel>
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace runplane::db {
class History;
}

namespace runplane::gui {

inline constexpr double kOomAlertWindowSeconds = 24 * 3600;
inline constexpr int kOomAlertMax = 20;  // lines shown; the rest are counted

struct NodeOomAlert {
    QString nodeId;
    QString kind;     // cuda_oom, ray_oom, host_oom
    QString message;  // the event's summary attribute, else its message
    double t = 0;     // unix seconds
};

struct NodeOomResult {
    std::vector<NodeOomAlert> alerts;  // newest first, at most kOomAlertMax
    int total = 0;                     // every OOM event of the nodes in the window
    QString error;
};

/// The OOM events of `nodeIds` at or after `t0` (unix seconds), from the history's events.
NodeOomResult loadNodeOomAlerts(db::History& history, const QStringList& nodeIds, double t0);

/// The alert lines; hidden while there is none.
class NodeOomPanel : public QLabel {
    Q_OBJECT
  public:
    explicit NodeOomPanel(QWidget* parent = nullptr);
    /// `displayName` maps a node id to the name the node table shows.
    void setAlerts(const NodeOomResult& result,
                   const std::function<QString(const QString&)>& displayName);
    int alertCount() const { return m_count; }
    /// The lines as plain text (tests).
    const QStringList& lines() const { return m_lines; }

  private:
    int m_count = 0;
    QStringList m_lines;
};

}  // namespace runplane::gui
