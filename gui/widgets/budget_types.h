#pragma once
// Value types of the memory budget chart and the topology view (no QCustomPlot here).

#include <QColor>
#include <QString>

#include <vector>

#include "gui/widgets/plot_types.h"

namespace runplane::gui {

/// One named component of a stacked bar (e.g. "trainer backup (tms)": 374.8 GB).
struct BudgetComponent {
    QString name;
    double value = 0;   // in the chart's unit (GB)
    QString detail;     // bytes and formula, shown on hover
    int colorKey = -1;  // its identity's colour slot (stable_colors.h); -1: by its name
};

/// One stacked bar, e.g. the rollout phase of node 0.
struct BudgetBar {
    QString label;  // "load", "rollout", "train", "weight sync"
    std::vector<BudgetComponent> components;
    double total() const {
        double t = 0;
        for (const auto& c : components) {
            t += c.value;
        }
        return t;
    }
};

/// A group of bars side by side, e.g. one node (or several identical nodes).
struct BudgetGroup {
    QString title;  // "node 0", "nodes 1–15", "GPU class: trainer stage 0 + engine"
    std::vector<BudgetBar> bars;
};

struct BudgetChartData {
    QString yLabel;
    std::vector<BudgetGroup> groups;
    std::vector<AlarmLine> lines;  // e.g. host RAM, 750 GB alarm; HBM per GPU
};

/// One GPU of the topology grid.
struct TopologyCell {
    int node = 0;
    int gpu = 0;
    int colorKey = -1;  // index into the series palette; -1 = idle (grey)
    QString text;       // short label drawn in the cell
    int engine = -1;    // rollout engine on this GPU, drawn as a stripe; -1 none
    QString tooltip;    // rank and coordinates
};

struct TopologyData {
    int nodes = 0;
    int gpusPerNode = 0;
    std::vector<TopologyCell> cells;  // node-major
    std::vector<bool> mixedNodes;     // node hosts both a trainer stage and an engine shard
    QString legend;                   // what the colours mean
    QString invalidReason;            // non-empty: no grid is drawn, this text says why
};

}  // namespace runplane::gui
