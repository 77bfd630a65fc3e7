#pragma once
// Page: the base of every top-level page (Design, Cluster, Runs, Compare). MainWindow only
// assembles pages; a page tells it what to show in the status bar and the window title through
// these signals. GUI thread only.

#include <QString>
#include <QWidget>

namespace runplane::gui {

class Page : public QWidget {
    Q_OBJECT
  public:
    using QWidget::QWidget;
    /// Text for the window title while this page is current (e.g. "2 errors, 1 warning").
    virtual QString titleHint() const { return {}; }
    /// Asked before the window closes; false keeps it open (e.g. unsaved recipe, user cancelled).
    virtual bool confirmClose() { return true; }

  signals:
    void statusMessage(const QString& message);
    void titleHintChanged();
};

}  // namespace runplane::gui
