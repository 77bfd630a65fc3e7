#pragma once
// DesignPage (issue 9): design a run visually. A form bound to the planner's Recipe; on every
// edit the planner re-validates and re-plans (findings, memory budget per node and per GPU,
// topology) and the launch preview is re-exported. Findings are clickable (focus + highlight
// the field); the page's title hint is "n errors, m warnings". Open/save YAML (with an
// unsaved-changes prompt), import a launch script (notes on what was not understood),
// undo/redo, recent files.
//
// Threads: file reads/writes and the model catalog load run on a worker; planning runs on the
// GUI thread while it stays fast (measured each time; it is tens of microseconds) and moves to
// the worker, dropping stale results, if one pass ever takes longer than kSlowPlanMs.
// GUI thread only; owns its widgets.

#include <QMessageBox>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

#include "backend/plan/planner.h"
#include "gui/pages/page.h"

class QComboBox;
class QToolBar;
class QLabel;
class QListWidget;
class QMenu;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTabWidget;
class QUndoStack;

namespace runplane::gui {

class FindingsModel;
class InvalidBanner;
class MemoryBudgetChart;
class RecipeForm;
class SerialWorker;
class TopologyView;

/// What one planning pass produced (computed on either thread).
struct DesignResult {
    plan::Plan plan;
    QString launchText;  // the exported files, or why export failed
    QStringList launchNotes;
    double micros = 0;  // how long planning + export took
};

class DesignPage : public Page {
    Q_OBJECT
  public:
    static constexpr double kSlowPlanMs = 8.0;

    explicit DesignPage(QWidget* parent = nullptr);
    ~DesignPage() override;

    QString titleHint() const override;
    QAction* standardAction(Action action) const override;
    bool confirmClose() override;

    void newRecipe();
    /// Reads and parses a recipe file on the worker; result: fileLoaded(path, error).
    void openFile(const QString& path);
    /// Writes the recipe to path on the worker; result: fileSaved(path, error).
    void saveTo(const QString& path);
    void importLaunchScript(const QString& path);
    /// Replaces the recipe as one undoable step.
    void setRecipe(const plan::Recipe& recipe, const QString& description);
    void setRecentFiles(const QStringList& files);
    /// Replaces the unsaved-changes question (tests answer it without a dialog).
    void setUnsavedPrompt(std::function<QMessageBox::StandardButton()> prompt);
    /// Replaces the open / save-as / import file dialogs (tests): returns the path, "" =
    /// cancelled.
    void setPathPrompt(std::function<QString(bool save)> prompt);
    /// Replaces the "copy an invalid launch?" question (tests): true = copy.
    void setCopyInvalidPrompt(std::function<bool(const QString& reason)> prompt);
    /// Copies the launch preview to the clipboard; an invalid design asks first. True = copied.
    bool copyLaunch();

    const plan::Recipe& recipe() const;
    const QString& path() const { return m_path; }
    bool isModified() const;
    bool catalogReady() const { return static_cast<bool>(m_catalog); }
    const DesignResult& result() const { return m_result; }
    int planPasses() const { return m_planPasses; }
    bool planningOffThread() const { return m_offThread; }

    RecipeForm* form() const { return m_form; }
    FindingsModel* findingsModel() const { return m_findings; }
    QTableView* findingsView() const { return m_findingsView; }
    MemoryBudgetChart* hostChart() const { return m_hostChart; }
    MemoryBudgetChart* gpuChart() const { return m_gpuChart; }
    TopologyView* topologyView() const { return m_topology; }
    QComboBox* topologyColorCombo() const { return m_topologyColor; }
    QTabWidget* viewTabs() const { return m_tabs; }
    QUndoStack* undoStack() const { return m_undo; }
    QString launchPreviewText() const;
    /// The banner over the launch preview ("" = the design has no errors).
    QString launchInvalidReason() const;
    QPushButton* copyButton() const { return m_copy; }
    QStringList importNotes() const;

  signals:
    void catalogLoaded(const QString& error);
    void fileLoaded(const QString& path, const QString& error);
    void fileSaved(const QString& path, const QString& error);
    void scriptImported(const QString& path, const QString& error);
    /// A file was opened or saved: the app adds it to the recent files.
    void recentFileUsed(const QString& path);
    void planUpdated();

  private:
    friend class RecipeEditCommand;
    void showRecipe(const plan::Recipe& recipe);  // form + replan, no undo step
    void replan();
    void applyResult(DesignResult result);
    void applyTopology();
    bool maybeSave();
    void buildToolbar(QToolBar* bar);

    std::unique_ptr<SerialWorker> m_worker;
    std::shared_ptr<const plan::ModelCatalog> m_catalog;
    RecipeForm* m_form = nullptr;
    FindingsModel* m_findings = nullptr;
    QTableView* m_findingsView = nullptr;
    QLabel* m_summary = nullptr;
    QTabWidget* m_tabs = nullptr;
    MemoryBudgetChart* m_hostChart = nullptr;
    MemoryBudgetChart* m_gpuChart = nullptr;
    TopologyView* m_topology = nullptr;
    QComboBox* m_topologyColor = nullptr;
    QComboBox* m_flavour = nullptr;
    QPlainTextEdit* m_launch = nullptr;
    InvalidBanner* m_launchBanner = nullptr;
    QPushButton* m_copy = nullptr;
    std::function<bool(const QString& reason)> m_copyPrompt;
    QListWidget* m_notes = nullptr;
    QMenu* m_recentMenu = nullptr;
    QUndoStack* m_undo = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    QString m_path;
    plan::Recipe m_lastShown;  // the recipe the form showed before the current edit
    QStringList m_importNotes;
    DesignResult m_result;
    bool m_offThread = false;
    int m_planPasses = 0;
    std::function<QMessageBox::StandardButton()> m_prompt;
    std::function<QString(bool save)> m_pathPrompt;
};

}  // namespace runplane::gui
