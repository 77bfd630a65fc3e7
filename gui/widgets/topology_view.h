#pragma once
// TopologyView: the nodes × GPUs grid of a recipe. Each cell is coloured by the key the page
// chose (TP group, PP stage, EP group, DP rank or rollout engine), carries a short label, and a
// stripe at the bottom when the GPU also hosts a rollout engine shard; nodes that host both a
// trainer stage and an engine shard are marked "T+E" with an orange frame. Hover shows the
// cell's rank and coordinates. Plain QPainter; GUI thread only.

#include <QWidget>

#include "gui/widgets/budget_types.h"

namespace runplane::gui {

class TopologyView : public QWidget {
    Q_OBJECT
  public:
    explicit TopologyView(QWidget* parent = nullptr);

    void setData(TopologyData data);
    const TopologyData& data() const { return m_data; }
    /// The cell under a widget position, or nullptr.
    const TopologyCell* cellAt(const QPoint& pos) const;
    /// Centre of a cell in widget coordinates.
    QPoint cellCenter(int node, int gpu) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

  private:
    QRect cellRect(int node, int gpu) const;
    int cellWidth() const;
    int cellHeight() const;

    TopologyData m_data;
};

}  // namespace runplane::gui
