#pragma once
// GripSplitter: a QSplitter whose handles can be seen and hit (issue 46: the findings table hid
// behind an invisible 4-px handle). Each handle is kHandleWidth px wide and draws a groove with
// a short grip in its middle; hovering it shows the resize cursor, as any splitter handle does.
// GUI thread only.

#include <QSplitter>

namespace runplane::gui {

class GripSplitter : public QSplitter {
    Q_OBJECT
  public:
    static constexpr int kHandleWidth = 9;
    explicit GripSplitter(Qt::Orientation orientation, QWidget* parent = nullptr);

  protected:
    QSplitterHandle* createHandle() override;
};

}  // namespace runplane::gui
