#pragma once
// MainWindow: assembles the pages into tabs, shows their status messages and title hints, and
// remembers its geometry. It does no data work of its own. GUI thread only; owns the pages.

#include <QMainWindow>
#include <QString>

class QTabWidget;
class QLabel;

namespace runplane::gui {

class Page;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const QString& historyPath, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Adds a page as a tab; the window takes ownership.
    void addPage(Page* page, const QString& title);
    void setCurrentPage(const QString& title);
    Page* currentPage() const;

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    void updateTitle();

    QTabWidget* m_tabs = nullptr;
    QLabel* m_historyLabel = nullptr;
};

}  // namespace runplane::gui
