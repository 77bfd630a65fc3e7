#pragma once
// MainWindow: assembles the pages into tabs, shows their status messages and title hints, carries
// the menus (File: Open recipe / Save / Save As / Quit; Edit: Undo / Redo / Find runs; View: one
// entry per page, Ctrl+1..N; Help) with the platform's standard shortcuts, and saves / restores
// the workspace (geometry, current page, each page's state) through AppSettings. It does no data
// work of its own. GUI thread only; owns the pages.

#include <QMainWindow>
#include <QString>

#include <map>

#include "gui/pages/page.h"

class QAction;
class QMenu;
class QTabWidget;
class QLabel;

namespace runplane::gui {

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const QString& historyPath, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Adds a page as a tab; the window takes ownership. Its standard actions join the menus
    /// (the window's entry holds the shortcut) and a View entry with Ctrl+<n> switches to it.
    void addPage(Page* page, const QString& title);
    void setCurrentPage(const QString& title);
    Page* currentPage() const;
    QTabWidget* tabs() const { return m_tabs; }

    /// The menu entry for a standard action (always present; disabled while no page has it).
    QAction* menuAction(Page::Action action) const { return m_actions.at(action); }
    /// View → <page> entries, in page order.
    const std::vector<QAction*>& pageActions() const { return m_pageActions; }

    /// Writes geometry, the current page and every page's workspace to AppSettings.
    void saveWorkspace() const;
    /// Restores what saveWorkspace wrote (call after the pages are added).
    void restoreWorkspace();

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    void updateTitle();
    /// The page that provides `action`: the current page if it does, else the first that does.
    Page* provider(Page::Action action) const;
    void syncActions();

    QTabWidget* m_tabs = nullptr;
    QLabel* m_historyLabel = nullptr;
    QMenu* m_viewMenu = nullptr;
    std::map<Page::Action, QAction*> m_actions;
    std::vector<QAction*> m_pageActions;
};

}  // namespace runplane::gui
