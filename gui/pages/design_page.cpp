// Slightly over 600 lines: the page wires form, findings, charts, topology, launch preview, files
// and undo; the drawing lives in widgets/ and plan_views.cpp.
#include "gui/pages/design_page.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include "backend/launch/launch.h"
#include "backend/plan/catalog.h"
#include "gui/models/findings_model.h"
#include "gui/models/qt_text.h"
#include "gui/models/serial_worker.h"
#include "gui/pages/design_validity.h"
#include "gui/pages/plan_views.h"
#include "gui/pages/recipe_form.h"
#include "gui/widgets/grip_splitter.h"
#include "gui/widgets/invalid_banner.h"
#include "gui/widgets/memory_budget_chart.h"
#include "gui/widgets/topology_view.h"

namespace runplane::gui {

namespace {

DesignResult computeDesign(const plan::Recipe& recipe, const plan::ModelCatalog& catalog,
                           plan::launch::Flavour flavour) {
    QElapsedTimer timer;
    timer.start();
    DesignResult r;
    r.plan = plan::planRecipe(recipe, catalog);
    plan::launch::ExportOptions options;
    options.catalog = &catalog;
    auto bundle = plan::launch::exportLaunch(recipe, flavour, options);
    if (!bundle) {
        r.launchText = QStringLiteral("# export failed: ") + qs(bundle.error());
    } else {
        for (const plan::launch::LaunchFile& f : bundle->files) {
            r.launchText += QStringLiteral("# ===== %1 =====\n").arg(qs(f.name)) + qs(f.content);
            if (!r.launchText.endsWith(QLatin1Char('\n'))) {
                r.launchText += QLatin1Char('\n');
            }
        }
        for (const plan::launch::LaunchNote& n : bundle->notes) {
            r.launchNotes << qs(n.format());
        }
    }
    r.micros = static_cast<double>(timer.nsecsElapsed()) / 1000.0;
    return r;
}

}  // namespace

/// One undoable recipe change. Consecutive edits of the same field merge into one step.
class RecipeEditCommand : public QUndoCommand {
  public:
    RecipeEditCommand(DesignPage* page, plan::Recipe before, plan::Recipe after,
                      const QString& field, bool fromForm)
        : m_page(page),
          m_before(std::move(before)),
          m_after(std::move(after)),
          m_field(field),
          m_skipFirstRedo(fromForm) {
        setText(field.isEmpty() ? QObject::tr("edit") : QObject::tr("edit %1").arg(field));
    }
    int id() const override {
        return m_field.isEmpty() ? -1 : static_cast<int>(qHash(m_field) & 0x7fffffff);
    }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const RecipeEditCommand*>(other);
        if (o->m_field != m_field) {
            return false;
        }
        m_after = o->m_after;
        return true;
    }
    void redo() override {
        if (m_skipFirstRedo) {
            m_skipFirstRedo = false;  // the form already shows it
            m_page->replan();
            return;
        }
        m_page->showRecipe(m_after);
    }
    void undo() override { m_page->showRecipe(m_before); }

  private:
    DesignPage* m_page;
    plan::Recipe m_before;
    plan::Recipe m_after;
    QString m_field;
    bool m_skipFirstRedo;
};

DesignPage::DesignPage(QWidget* parent) : Page(parent), m_worker(std::make_unique<SerialWorker>()) {
    m_undo = new QUndoStack(this);
    m_findings = new FindingsModel(this);
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QToolBar(this);
    buildToolbar(bar);
    layout->addWidget(bar);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    m_form = new RecipeForm(splitter);
    // Its minimum width is what its content needs (RecipeForm::minimumSizeHint, issue 46).
    // A handle that can be seen and grabbed between the findings and the charts (issue 46).
    auto* right = new GripSplitter(Qt::Vertical, splitter);
    auto* findingsBox = new QWidget(right);
    auto* findingsLayout = new QVBoxLayout(findingsBox);
    findingsLayout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(findingsBox);
    m_summary->setTextFormat(Qt::RichText);
    findingsLayout->addWidget(m_summary);
    m_findingsView = new QTableView(findingsBox);
    m_findingsView->setModel(m_findings);
    m_findingsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_findingsView->verticalHeader()->hide();
    m_findingsView->setWordWrap(true);
    m_findingsView->horizontalHeader()->setSectionResizeMode(FindingsModel::MessageColumn,
                                                             QHeaderView::Stretch);
    m_findingsView->horizontalHeader()->setSectionResizeMode(FindingsModel::FixColumn,
                                                             QHeaderView::Stretch);
    // At least four rows under the header, at any window size (issue 46: half a row at 1280x720).
    m_findingsView->setMinimumHeight(m_findingsView->horizontalHeader()->sizeHint().height() +
                                     4 * m_findingsView->verticalHeader()->defaultSectionSize() +
                                     2 * m_findingsView->frameWidth());
    findingsLayout->addWidget(m_findingsView);
    m_tabs = new QTabWidget(right);
    m_hostChart = new MemoryBudgetChart(m_tabs);
    m_gpuChart = new MemoryBudgetChart(m_tabs);
    auto* topo = new QWidget(m_tabs);
    auto* topoLayout = new QVBoxLayout(topo);
    m_topologyColor = new QComboBox(topo);
    for (TopologyColor c : {TopologyColor::TpGroup, TopologyColor::PpStage, TopologyColor::EpGroup,
                            TopologyColor::DpRank, TopologyColor::Engine}) {
        m_topologyColor->addItem(tr("colour by %1").arg(toString(c)), static_cast<int>(c));
    }
    topoLayout->addWidget(m_topologyColor);
    // In a scroll area: a 32-node grid scrolls instead of making the window taller than a screen.
    auto* topoScroll = new QScrollArea(topo);
    topoScroll->setWidgetResizable(true);
    topoScroll->setFrameShape(QFrame::NoFrame);
    m_topology = new TopologyView(topoScroll);
    topoScroll->setWidget(m_topology);
    topoLayout->addWidget(topoScroll, 1);
    auto* launch = new QWidget(m_tabs);
    auto* launchLayout = new QVBoxLayout(launch);
    auto* launchBar = new QHBoxLayout;
    m_flavour = new QComboBox(launch);
    m_flavour->addItem(tr("framework's own flavour"), -1);
    for (auto f : {plan::launch::Flavour::Slime, plan::launch::Flavour::Vime,
                   plan::launch::Flavour::Miles}) {
        m_flavour->addItem(QString::fromLatin1(plan::launch::toString(f)), static_cast<int>(f));
    }
    auto* copy = new QPushButton(tr("Copy"), launch);
    m_copy = copy;
    launchBar->addWidget(m_flavour);
    launchBar->addStretch(1);
    launchBar->addWidget(copy);
    launchLayout->addLayout(launchBar);
    m_launchBanner = new InvalidBanner(launch);
    launchLayout->addWidget(m_launchBanner);
    m_launch = new QPlainTextEdit(launch);
    m_launch->setReadOnly(true);
    m_launch->setFont(QFont(QStringLiteral("DejaVu Sans Mono")));
    m_launch->setLineWrapMode(QPlainTextEdit::NoWrap);
    launchLayout->addWidget(m_launch, 3);
    launchLayout->addWidget(new QLabel(tr("Export / import notes:"), launch));
    m_notes = new QListWidget(launch);
    launchLayout->addWidget(m_notes, 1);
    m_tabs->addTab(m_hostChart, tr("Host memory per node"));
    m_tabs->addTab(m_gpuChart, tr("GPU memory"));
    m_tabs->addTab(topo, tr("Topology"));
    m_tabs->addTab(launch, tr("Launch preview"));
    right->addWidget(findingsBox);
    right->addWidget(m_tabs);
    right->setStretchFactor(0, 2);
    right->setStretchFactor(1, 5);
    splitter->addWidget(m_form);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 5);
    layout->addWidget(splitter, 1);

    connect(m_form, &RecipeForm::edited, this,
            [this](const plan::Recipe& next, const QString& field) {
                m_undo->push(new RecipeEditCommand(this, m_lastShown, next, field, true));
            });
    connect(m_findingsView, &QTableView::clicked, this, [this](const QModelIndex& index) {
        const QString path = index.data(FindingsModel::FieldPathRole).toString();
        if (!m_form->focusField(path)) {
            emit statusMessage(tr("no editor for %1").arg(path));
        }
    });
    connect(m_topologyColor, &QComboBox::currentIndexChanged, this, [this] { applyTopology(); });
    connect(m_flavour, &QComboBox::currentIndexChanged, this, [this] { replan(); });
    connect(copy, &QPushButton::clicked, this, [this] { copyLaunch(); });
    m_copyPrompt = [this](const QString& reason) { return askCopyInvalidLaunch(this, reason); };
    connect(m_undo, &QUndoStack::cleanChanged, this, [this] { emit titleHintChanged(); });

    // The model catalog is files on disk: read it on the worker.
    const std::string exeDir = QCoreApplication::applicationDirPath().toStdString();
    m_worker->run(
        QStringLiteral("catalog"), this,
        [exeDir]() -> Result<std::shared_ptr<const plan::ModelCatalog>> {
            auto dir = plan::locateRecipesDir(exeDir);
            if (!dir) {
                return Error{dir.error()};
            }
            auto catalog = plan::ModelCatalog::loadDirectory(*dir + "/models");
            if (!catalog) {
                return Error{catalog.error()};
            }
            return std::make_shared<const plan::ModelCatalog>(std::move(*catalog));
        },
        [this](Result<std::shared_ptr<const plan::ModelCatalog>> catalog) {
            if (!catalog) {
                m_summary->setText(tr("<b>model catalog unavailable:</b> %1")
                                       .arg(qs(catalog.error()).toHtmlEscaped()));
                emit catalogLoaded(qs(catalog.error()));
                return;
            }
            m_catalog = *catalog;
            m_form->setCatalog(m_catalog);
            replan();
            emit catalogLoaded(QString());
        });
    m_prompt = [this] {
        return QMessageBox::question(
            this, tr("Unsaved recipe"), tr("The recipe has unsaved changes. Save them first?"),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    };
    newRecipe();
}

DesignPage::~DesignPage() {
    m_worker.reset();  // join before the widgets the results would touch go away
    // The undo stack is a child deleted after this body; its last cleanChanged must not reach
    // this page (or, through titleHintChanged, a main window that is being torn down).
    QObject::disconnect(m_undo, nullptr, this, nullptr);
    blockSignals(true);
}

void DesignPage::buildToolbar(QToolBar* bar) {
    bar->addAction(tr("New"), this, [this] {
        if (maybeSave()) {
            newRecipe();
        }
    });
    QAction* open = bar->addAction(tr("Open…"), this, [this] {
        if (!maybeSave()) {
            return;
        }
        const QString path = m_pathPrompt
                                 ? m_pathPrompt(false)
                                 : QFileDialog::getOpenFileName(this, tr("Open recipe"), QString(),
                                                                tr("Recipes (*.yaml *.yml)"));
        if (!path.isEmpty()) {
            openFile(path);
        }
    });
    open->setShortcut(QKeySequence::Open);
    open->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_openAction = open;
    m_recentMenu = new QMenu(tr("Recent"), this);
    auto* recent = new QToolButton(bar);
    recent->setText(tr("Recent"));
    recent->setMenu(m_recentMenu);
    recent->setPopupMode(QToolButton::InstantPopup);
    bar->addWidget(recent);
    QAction* save = bar->addAction(tr("Save"), this, [this] {
        QString path = m_path;
        if (path.isEmpty()) {
            path = m_pathPrompt ? m_pathPrompt(true)
                                : QFileDialog::getSaveFileName(this, tr("Save recipe"), QString(),
                                                               tr("Recipes (*.yaml)"));
        }
        if (!path.isEmpty()) {
            saveTo(withRecipeSuffix(path));
        }
    });
    save->setShortcut(QKeySequence::Save);
    save->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_saveAction = save;
    m_saveAsAction = bar->addAction(tr("Save as…"), this, [this] {
        const QString path = m_pathPrompt
                                 ? m_pathPrompt(true)
                                 : QFileDialog::getSaveFileName(this, tr("Save recipe"), m_path,
                                                                tr("Recipes (*.yaml)"));
        if (!path.isEmpty()) {
            saveTo(withRecipeSuffix(path));
        }
    });
    bar->addAction(tr("Import launch script…"), this, [this] {
        if (!maybeSave()) {
            return;
        }
        const QString path =
            m_pathPrompt ? m_pathPrompt(false)  // tests: no dialog
                         : QFileDialog::getOpenFileName(this, tr("Import launch script"), QString(),
                                                        tr("Scripts (*.sh);;All files (*)"));
        if (!path.isEmpty()) {
            importLaunchScript(path);
        }
    });
    bar->addSeparator();
    QAction* undo = m_undo->createUndoAction(this, tr("Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QAction* redo = m_undo->createRedoAction(this, tr("Redo"));
    redo->setShortcut(QKeySequence::Redo);
    redo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    bar->addAction(undo);
    bar->addAction(redo);
    m_undoAction = undo;
    m_redoAction = redo;
    // The shortcuts live on the page too: toolbar buttons never hold focus, so actions only on
    // the toolbar would not see Ctrl+O / Ctrl+S typed in the form.
    addAction(open);
    addAction(save);
    addAction(undo);
    addAction(redo);
}

QAction* DesignPage::standardAction(Action action) const {
    switch (action) {
        case Action::Open:
            return m_openAction;
        case Action::Save:
            return m_saveAction;
        case Action::SaveAs:
            return m_saveAsAction;
        case Action::Undo:
            return m_undoAction;
        case Action::Redo:
            return m_redoAction;
        case Action::Find:
            break;
    }
    return nullptr;
}

void DesignPage::setPathPrompt(std::function<QString(bool save)> prompt) {
    m_pathPrompt = std::move(prompt);
}

void DesignPage::setCopyInvalidPrompt(std::function<bool(const QString& reason)> prompt) {
    m_copyPrompt = std::move(prompt);
}

bool DesignPage::copyLaunch() {
    const QString reason = m_launchBanner->reason();
    if (!reason.isEmpty() && !m_copyPrompt(reason)) {
        emit statusMessage(tr("not copied: the design has errors"));
        return false;
    }
    QApplication::clipboard()->setText(m_launch->toPlainText());
    emit statusMessage(tr("launch script copied"));
    return true;
}

QString DesignPage::launchInvalidReason() const {
    return m_launchBanner->reason();
}

QString DesignPage::titleHint() const {
    const QString file = m_path.isEmpty() ? tr("untitled recipe") : QFileInfo(m_path).fileName();
    return QStringLiteral("%1%2 — %3 errors, %4 warnings")
        .arg(file, isModified() ? QStringLiteral("*") : QString())
        .arg(m_findings->errorCount())
        .arg(m_findings->warningCount());
}

bool DesignPage::isModified() const {
    return !m_undo->isClean();
}

const plan::Recipe& DesignPage::recipe() const {
    return m_form->recipe();
}

void DesignPage::setUnsavedPrompt(std::function<QMessageBox::StandardButton()> prompt) {
    m_prompt = std::move(prompt);
}

bool DesignPage::maybeSave() {
    if (!isModified()) {
        return true;
    }
    switch (m_prompt()) {
        case QMessageBox::Save:
            if (m_path.isEmpty()) {
                const QString path = QFileDialog::getSaveFileName(
                    this, tr("Save recipe"), QString(), tr("Recipes (*.yaml)"));
                if (path.isEmpty()) {
                    return false;
                }
                m_path = withRecipeSuffix(path);
            }
            // Written synchronously here: the user is leaving and asked for the data to be kept.
            {
                QSaveFile f(m_path);
                if (!f.open(QIODevice::WriteOnly) ||
                    f.write(QByteArray::fromStdString(plan::writeRecipe(recipe()))) < 0 ||
                    !f.commit()) {
                    emit statusMessage(tr("%1: cannot write: %2").arg(m_path, f.errorString()));
                    return false;
                }
            }
            m_undo->setClean();
            return true;
        case QMessageBox::Discard:
            return true;
        default:
            return false;
    }
}

bool DesignPage::confirmClose() {
    return maybeSave();
}

void DesignPage::newRecipe() {
    plan::Recipe r;
    r.name = "new-run";
    r.model.name = "qwen3-8B";
    // A design that runs on its own default hardware (one H100 node), as slime's Qwen3 scripts
    // do (recipes/known-good/slime-qwen3-4B.yaml): colocated, TP 2 with sequence parallelism
    // and recompute, engines of 2 GPUs; 0 errors (issue 46).
    r.placement = plan::Placement::Colocate;
    r.trainer.tp = 2;
    r.trainer.sequenceParallel = true;
    r.trainer.recompute = true;
    r.rollout.gpusPerEngine = 2;
    r.rollout.memFraction = 0.7;
    r.batch.rolloutBatchSize = 32;
    r.batch.nSamplesPerPrompt = 8;
    r.batch.globalBatchSize = 256;
    r.batch.dynamicBatchSize = true;
    r.batch.maxTokensPerGpu = 9216;
    r.batch.numRollout = 3000;
    m_path.clear();
    showRecipe(r);
    m_undo->clear();
    emit titleHintChanged();
}

void DesignPage::showRecipe(const plan::Recipe& recipe) {
    m_lastShown = recipe;
    m_form->setRecipe(recipe);
    replan();
}

void DesignPage::setRecipe(const plan::Recipe& recipe, const QString& description) {
    auto* command = new RecipeEditCommand(this, m_lastShown, recipe, QString(), false);
    command->setText(description);
    m_undo->push(command);
}

void DesignPage::replan() {
    m_lastShown = m_form->recipe();
    if (!m_catalog) {
        m_summary->setText(tr("loading the model catalog …"));
        return;
    }
    const int flavourData = m_flavour->currentData().toInt();
    const auto flavour = flavourData < 0 ? plan::launch::flavourOf(m_lastShown.framework)
                                         : static_cast<plan::launch::Flavour>(flavourData);
    if (!m_offThread) {
        DesignResult r = computeDesign(m_lastShown, *m_catalog, flavour);
        if (r.micros > kSlowPlanMs * 1000) {
            m_offThread = true;  // from now on plan on the worker, newest request wins
        }
        applyResult(std::move(r));
        return;
    }
    m_worker->run(
        QStringLiteral("plan"), this,
        [recipe = m_lastShown, catalog = m_catalog, flavour] {
            return computeDesign(recipe, *catalog, flavour);
        },
        [this](DesignResult r) { applyResult(std::move(r)); });
}

void DesignPage::applyResult(DesignResult result) {
    m_result = std::move(result);
    ++m_planPasses;
    const plan::Plan& p = m_result.plan;
    m_findings->setFindings(p.findings);
    m_findingsView->resizeColumnToContents(FindingsModel::SeverityColumn);
    m_findingsView->resizeColumnToContents(FindingsModel::FieldColumn);
    m_findingsView->resizeRowsToContents();
    m_form->setFindings(p.findings);
    m_summary->setText(tr("<b>%1 errors, %2 warnings</b> &nbsp; planned in %3 µs · peak host "
                          "memory %4 GB on node %5 (%6)")
                           .arg(m_findings->errorCount())
                           .arg(m_findings->warningCount())
                           .arg(m_result.micros, 0, 'f', 0)
                           .arg(p.memory.peakBytes / plan::kGb, 0, 'f', 1)
                           .arg(p.memory.peakNode)
                           .arg(QString::fromLatin1(plan::toString(p.memory.peakPhase))));
    // An invalid design looks invalid wherever its results appear (issue 46).
    const QString numbersWhy =
        invalidDesignText(p.findings, tr("These numbers are for a design that cannot run."));
    m_hostChart->setInvalid(numbersWhy);
    m_gpuChart->setInvalid(numbersWhy);
    m_launchBanner->setReason(invalidDesignText(
        p.findings, tr("This launch cannot run as written; copying it asks first.")));
    if (p.model) {
        m_hostChart->setData(hostBudgetChart(p.memory));
        m_gpuChart->setData(gpuBudgetChart(p.memory));
    } else {
        m_hostChart->setPlaceholder(tr("no memory plan: the model could not be resolved"));
        m_gpuChart->setPlaceholder(tr("no memory plan: the model could not be resolved"));
    }
    applyTopology();
    m_launch->setPlainText(m_result.launchText);
    m_notes->clear();
    m_notes->addItems(m_importNotes);
    m_notes->addItems(m_result.launchNotes);
    emit titleHintChanged();
    emit planUpdated();
}

void DesignPage::applyTopology() {
    const QString invalid = invalidLayoutReason(m_result.plan.findings);
    if (!invalid.isEmpty()) {
        // A grid of an impossible layout would show ranks that can never exist.
        TopologyData why;
        why.invalidReason = tr("No topology: the parallel layout is invalid.\n\n") + invalid;
        m_topology->setData(std::move(why));
        return;
    }
    const auto mode = static_cast<TopologyColor>(m_topologyColor->currentData().toInt());
    m_topology->setData(topologyGrid(m_result.plan.topology, mode));
}

QString DesignPage::launchPreviewText() const {
    return m_launch->toPlainText();
}

QStringList DesignPage::importNotes() const {
    return m_importNotes;
}

void DesignPage::setRecentFiles(const QStringList& files) {
    m_recentMenu->clear();
    for (const QString& f : files) {
        m_recentMenu->addAction(f, this, [this, f] {
            if (maybeSave()) {
                openFile(f);
            }
        });
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

void DesignPage::openFile(const QString& path) {
    m_worker->run(
        QStringLiteral("file"), this,
        [path]() -> Result<plan::Recipe> {
            // The planner's own reader: refuses directories and files over its size cap
            // without reading more than the cap.
            return plan::loadRecipe(path.toStdString());
        },
        [this, path](Result<plan::Recipe> recipe) {
            if (!recipe) {
                const QString error = qs(recipe.error());
                emit statusMessage(error.section(QLatin1Char('\n'), 0, 0));
                emit fileLoaded(path, error);
                return;
            }
            m_path = path;
            m_importNotes.clear();
            showRecipe(*recipe);
            m_undo->clear();
            emit titleHintChanged();
            emit recentFileUsed(path);
            emit fileLoaded(path, QString());
        });
}

void DesignPage::saveTo(const QString& path) {
    const std::string yaml = plan::writeRecipe(recipe());
    const int index = m_undo->index();
    m_worker->run(
        QStringLiteral("save"), this,
        [path, yaml]() -> QString {
            QSaveFile f(path);  // atomic: the old file stays intact if anything fails
            if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(yaml)) < 0 ||
                !f.commit()) {
                return path + QStringLiteral(": cannot write: ") + f.errorString();
            }
            return {};
        },
        [this, path, index](const QString& error) {
            if (error.isEmpty()) {
                m_path = path;
                if (m_undo->index() == index) {
                    m_undo->setClean();
                }
                emit recentFileUsed(path);
                emit statusMessage(tr("saved %1").arg(path));
            } else {
                emit statusMessage(error);
            }
            emit titleHintChanged();
            emit fileSaved(path, error);
        });
}

void DesignPage::importLaunchScript(const QString& path) {
    auto catalog = m_catalog;
    m_worker->run(
        QStringLiteral("import"), this,
        [path, catalog]() -> Result<plan::launch::ImportResult> {
            plan::launch::ImportOptions options;
            options.catalog = catalog.get();
            return plan::launch::importScript(path.toStdString(), options);
        },
        [this, path](Result<plan::launch::ImportResult> imported) {
            if (!imported) {
                emit statusMessage(qs(imported.error()));
                emit scriptImported(path, qs(imported.error()));
                return;
            }
            m_importNotes.clear();
            for (const auto& n : imported->notes) {
                m_importNotes << tr("import: ") + qs(n.format());
            }
            m_path.clear();
            if (imported->recipe.name.empty()) {
                imported->recipe.name = recipeNameFromScript(path);  // the script's file name
            }
            setRecipe(imported->recipe, tr("import %1").arg(QFileInfo(path).fileName()));
            m_tabs->setCurrentIndex(3);
            emit statusMessage(tr("imported %1: %2 note(s) on what was not understood")
                                   .arg(path)
                                   .arg(m_importNotes.size()));
            emit scriptImported(path, QString());
        });
}

}  // namespace runplane::gui
