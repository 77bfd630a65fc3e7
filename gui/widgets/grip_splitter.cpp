#include "gui/widgets/grip_splitter.h"

#include <QPainter>
#include <QSplitterHandle>

#include <algorithm>

namespace runplane::gui {

namespace {

class GripHandle : public QSplitterHandle {
  public:
    GripHandle(Qt::Orientation orientation, QSplitter* parent)
        : QSplitterHandle(orientation, parent) {}

  protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const QColor groove = palette().color(QPalette::Mid);
        const QColor grip = palette().color(QPalette::Dark);
        const QRect r = rect();
        if (orientation() == Qt::Vertical) {  // a horizontal bar between stacked widgets
            const int y = r.center().y();
            p.fillRect(QRect(r.left(), y, r.width(), 1), groove);
            const int len = std::min(48, r.width() / 3);
            p.fillRect(QRect(r.center().x() - len / 2, y - 2, len, 5), grip);
        } else {
            const int x = r.center().x();
            p.fillRect(QRect(x, r.top(), 1, r.height()), groove);
            const int len = std::min(48, r.height() / 3);
            p.fillRect(QRect(x - 2, r.center().y() - len / 2, 5, len), grip);
        }
    }
};

}  // namespace

GripSplitter::GripSplitter(Qt::Orientation orientation, QWidget* parent)
    : QSplitter(orientation, parent) {
    setHandleWidth(kHandleWidth);
    setChildrenCollapsible(false);
}

QSplitterHandle* GripSplitter::createHandle() {
    return new GripHandle(orientation(), this);
}

}  // namespace runplane::gui
