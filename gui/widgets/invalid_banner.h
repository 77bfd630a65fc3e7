#pragma once
// InvalidBanner: the strip every view of a design's results shows while the design has errors
// (issue 46, docs/gui.md "An invalid design"): a red band, an icon and the reason ("Invalid
// design: 1 error — trainer.ep: ..."). Hidden while the reason is empty. GUI thread only.

#include <QLabel>
#include <QString>

namespace runplane::gui {

class InvalidBanner : public QLabel {
    Q_OBJECT
  public:
    explicit InvalidBanner(QWidget* parent = nullptr);
    /// Shows the reason ("" hides the banner).
    void setReason(const QString& reason);
    const QString& reason() const { return m_reason; }

  private:
    QString m_reason;
};

}  // namespace runplane::gui
