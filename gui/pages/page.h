#pragma once
// Page: the base of every top-level page (Design, Cluster, Runs, Compare). MainWindow only
// assembles pages; a page tells it what to show in the status bar and the window title through
// these signals, hands it the actions the window's menus carry (standardAction), and saves /
// restores its part of the workspace (saveWorkspace / restoreWorkspace, QSettings). GUI thread
// only.

#include <QString>
#include <QStringList>
#include <QWidget>

class QAction;
class QSettings;

namespace runplane::gui {

class Page : public QWidget {
    Q_OBJECT
  public:
    /// Actions the window's menus carry for the page that provides them. The window owns the
    /// shortcut (the page's own action keeps none, so a key is never ambiguous).
    enum class Action { Open, Save, SaveAs, Undo, Redo, Find };

    using QWidget::QWidget;
    /// Text for the window title while this page is current (e.g. "2 errors, 1 warning").
    virtual QString titleHint() const { return {}; }
    /// Asked before the window closes; false keeps it open (e.g. unsaved recipe, user cancelled).
    virtual bool confirmClose() { return true; }
    /// The page's action for a menu entry, or nullptr when it has none.
    virtual QAction* standardAction(Action) const { return nullptr; }

    /// Saves the page's workspace into `settings` (the caller opened the page's group). The
    /// base saves every splitter and tab widget of the page (by creation order: "splitter/0",
    /// "tabs/0", ...) and the header of every table view with an objectName ("header/<name>":
    /// column widths, order, sort). Overrides add their own keys and call the base.
    virtual void saveWorkspace(QSettings& settings) const;
    /// Restores what saveWorkspace wrote; missing keys leave the defaults.
    virtual void restoreWorkspace(QSettings& settings);

  signals:
    void statusMessage(const QString& message);
    void titleHintChanged();

  protected:
    /// Whether restoreWorkspace restored the header of the table view named `name`.
    bool headerRestored(const QString& name) const { return m_restoredHeaders.contains(name); }

  private:
    QStringList m_restoredHeaders;
};

}  // namespace runplane::gui
