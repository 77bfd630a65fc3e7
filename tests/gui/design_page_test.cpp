// issue 9: the Design page driven under QT_QPA_PLATFORM=offscreen: open the real recipes, set a
// field and expect a finding and a chart change, click a finding to focus its field, undo/redo,
// save/reopen, unsaved-changes prompt, import a launch script, hover texts, disabled controls.
// Saves screenshots design-*.png (test::screenshotPath).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>

#include "backend/launch/launch.h"
#include "gui/app/main_window.h"
#include "gui/models/findings_model.h"
#include "gui/pages/design_page.h"
#include "gui/pages/recipe_form.h"
#include "gui/widgets/memory_budget_chart.h"
#include "gui/widgets/topology_view.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

QString recipePath(const char* name) {
    return test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/recipes/") +
           QString::fromLatin1(name);
}

// Opens a recipe and waits for the catalog, the file and one planning pass.
void open(DesignPage& page, const QString& path) {
    ASSERT_TRUE(waitUntil([&] { return page.catalogReady(); }, 15000))
        << "model catalog not loaded";
    QString error = QStringLiteral("(not loaded)");
    const QMetaObject::Connection c =
        QObject::connect(&page, &DesignPage::fileLoaded, &page,
                         [&](const QString&, const QString& e) { error = e; });
    page.openFile(path);
    const bool loaded = waitUntil([&] { return error != QStringLiteral("(not loaded)"); }, 10000);
    QObject::disconnect(c);  // `error` lives in this frame only
    ASSERT_TRUE(loaded);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
}

bool hasFinding(const DesignPage& page, const char* field, plan::Severity severity) {
    for (const plan::Finding& f : page.findingsModel()->findings()) {
        if (f.fieldPath == field && f.severity == severity) {
            return true;
        }
    }
    return false;
}

int rowOf(const DesignPage& page, const char* field) {
    const auto& findings = page.findingsModel()->findings();
    for (size_t i = 0; i < findings.size(); ++i) {
        if (findings[i].fieldPath == field) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

double chartTotal(const MemoryBudgetChart* chart) {
    double total = 0;
    for (const BudgetGroup& g : chart->data().groups) {
        for (const BudgetBar& b : g.bars) {
            total += b.total();
        }
    }
    return total;
}

}  // namespace

TEST(DesignPage, Qwen3_30B_2x8_PlansChartsTopologyAndLaunch) {
    DesignPage page;
    page.resize(1700, 1050);
    page.show();
    QAbstractItemModelTester tester(page.findingsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    open(page, recipePath("vime-qwen3-30B-A3B-2x8.yaml"));
    EXPECT_EQ(page.recipe().cluster.nodes, 2);
    EXPECT_FALSE(page.isModified());
    EXPECT_EQ(page.findingsModel()->errorCount(), 0) << page.titleHint().toStdString();
    EXPECT_TRUE(page.titleHint().contains(QStringLiteral("0 errors")));

    // Memory budget: per node, four phases; per GPU class against HBM; hover shows formula.
    ASSERT_FALSE(page.hostChart()->data().groups.empty());
    EXPECT_EQ(page.hostChart()->data().groups.front().bars.size(), 4u);
    EXPECT_EQ(page.hostChart()->data().lines.size(), 2u);  // RAM and the alarm line
    ASSERT_FALSE(page.gpuChart()->data().groups.empty());
    page.viewTabs()->setCurrentIndex(0);
    test::pump(100);
    const QString tip = page.hostChart()->tooltipAt(page.hostChart()->segmentCenter(0, 1, 0));
    EXPECT_TRUE(tip.contains(QStringLiteral("GB")) && tip.contains(QStringLiteral("=")))
        << tip.toStdString();

    // Topology: 2 nodes x 8 GPUs; colocate: every node hosts trainer stages and engine shards.
    const TopologyData& topo = page.topologyView()->data();
    EXPECT_EQ(topo.nodes, 2);
    EXPECT_EQ(topo.gpusPerNode, 8);
    EXPECT_EQ(topo.cells.size(), 16u);
    EXPECT_TRUE(topo.mixedNodes[0] && topo.mixedNodes[1]);

    // Launch preview: the vime flavour's bash arrays.
    EXPECT_TRUE(page.launchPreviewText().contains(QStringLiteral("--vllm")))
        << page.launchPreviewText().left(400).toStdString();

    // Disabled with a reason: under colocate the rollout GPU count is the trainer's.
    EXPECT_FALSE(page.form()->editor(QStringLiteral("rollout.num_gpus"))->isEnabled());
    EXPECT_TRUE(page.form()
                    ->disabledReason(QStringLiteral("rollout.num_gpus"))
                    .contains(QStringLiteral("colocate")));
    EXPECT_FALSE(
        page.form()->editor(QStringLiteral("rollout.ep_size"))->isEnabled());  // vLLM derives EP

    EXPECT_GT(page.planPasses(), 0);
    // Whether a pass was slow enough to move planning off the GUI thread depends on this
    // machine's load, not on the page: a timing, recorded here and measured in bench/plan.
    RecordProperty("planning_off_thread", page.planningOffThread() ? 1 : 0);
    RecordProperty("last_pass_us", static_cast<int>(page.result().micros));

    EXPECT_TRUE(
        page.grab().save(test::screenshotPath(QStringLiteral("design-qwen3-30b-a3b-2x8.png"))));
    page.viewTabs()->setCurrentIndex(2);
    test::pump(100);
    const TopologyCell* cell = page.topologyView()->cellAt(page.topologyView()->cellCenter(1, 3));
    ASSERT_NE(cell, nullptr);
    EXPECT_TRUE(cell->tooltip.contains(QStringLiteral("trainer rank 11")))
        << cell->tooltip.toStdString();
    EXPECT_TRUE(cell->tooltip.contains(QStringLiteral("rollout engine 0")));
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("design-topology.png"))));
}

TEST(DesignPage, AnEditGivesAFindingAChartChangeAndIsUndoable) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    open(page, recipePath("vime-qwen3-30B-A3B-2x8.yaml"));
    const double before = chartTotal(page.hostChart());
    const int passes = page.planPasses();

    // The weight-sync backup mode: "clone" leaves malloc arena behind -> a warning on the field
    // and a new component in the host budget.
    auto* backup =
        qobject_cast<QComboBox*>(page.form()->editor(QStringLiteral("memory.backup_mode")));
    ASSERT_NE(backup, nullptr);
    backup->setCurrentIndex(backup->findText(QStringLiteral("clone")));
    EXPECT_GT(page.planPasses(), passes);  // re-planned at once, on this edit
    EXPECT_TRUE(hasFinding(page, "memory.backup_mode", plan::Severity::Warning));
    EXPECT_GT(chartTotal(page.hostChart()), before);
    EXPECT_TRUE(page.isModified());
    EXPECT_TRUE(page.titleHint().contains(QStringLiteral("*")));

    // An error: a global batch that is not rollout batch x samples.
    auto* gbs =
        qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("batch.global_batch_size")));
    ASSERT_NE(gbs, nullptr);
    gbs->setValue(9);
    EXPECT_TRUE(hasFinding(page, "batch.global_batch_size", plan::Severity::Error));
    EXPECT_GE(page.findingsModel()->errorCount(), 1);
    EXPECT_TRUE(page.titleHint().contains(
        QStringLiteral("%1 errors").arg(page.findingsModel()->errorCount())));

    // Clicking the finding focuses (and highlights) its field.
    const int row = rowOf(page, "batch.global_batch_size");
    ASSERT_GE(row, 0);
    page.findingsView()->clicked(page.findingsModel()->index(row, FindingsModel::MessageColumn));
    EXPECT_EQ(QApplication::focusWidget(), gbs);
    EXPECT_FALSE(gbs->styleSheet().isEmpty());

    // Undo twice: back to the file's recipe, clean again; redo once.
    page.undoStack()->undo();
    EXPECT_FALSE(hasFinding(page, "batch.global_batch_size", plan::Severity::Error));
    EXPECT_EQ(gbs->value(), 8);
    page.undoStack()->undo();
    EXPECT_FALSE(page.isModified());
    EXPECT_EQ(page.recipe().memory.backupMode, plan::BackupMode::ZeroCopy);
    EXPECT_NEAR(chartTotal(page.hostChart()), before, 1e-6);
    page.undoStack()->redo();
    EXPECT_EQ(page.recipe().memory.backupMode, plan::BackupMode::Clone);
}

TEST(DesignPage, Qwen3_8FullWithADeliberateError) {
    DesignPage page;
    page.resize(1700, 1050);
    page.show();
    open(page, recipePath("qwen3.8-2.4T-A95B-full.yaml"));
    const int errorsBefore = page.findingsModel()->errorCount();
    // The deliberate error: NCCL 2.28.9 under cross-node CUDA-graph engines (deadlocks).
    auto* nccl =
        qobject_cast<QLineEdit*>(page.form()->editor(QStringLiteral("environment.nccl_version")));
    ASSERT_NE(nccl, nullptr);
    nccl->setText(QStringLiteral("2.28.9"));
    emit nccl->textEdited(nccl->text());
    EXPECT_TRUE(hasFinding(page, "environment.nccl_version", plan::Severity::Error));
    EXPECT_GT(page.findingsModel()->errorCount(), errorsBefore);
    const int row = rowOf(page, "environment.nccl_version");
    ASSERT_GE(row, 0);
    page.findingsView()->selectRow(row);
    page.findingsView()->clicked(page.findingsModel()->index(row, FindingsModel::MessageColumn));
    EXPECT_EQ(QApplication::focusWidget(), nccl);
    // 16 nodes x 4 GPUs; every node's budget is drawn against 956 GB and the 750 GB alarm line.
    EXPECT_EQ(page.topologyView()->data().nodes, 16);
    ASSERT_EQ(page.hostChart()->data().lines.size(), 2u);
    EXPECT_NEAR(page.hostChart()->data().lines[1].y, 750, 1);
    page.viewTabs()->setCurrentIndex(0);
    test::pump(150);
    EXPECT_TRUE(
        page.grab().save(test::screenshotPath(QStringLiteral("design-qwen3.8-full-error.png"))));
}

TEST(DesignPage, SaveReopenPromptAndImport) {
    QTemporaryDir dir;
    DesignPage page;
    open(page, recipePath("vime-qwen3-30B-A3B-2x8.yaml"));
    auto* lora = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("lora.rank")));
    ASSERT_NE(lora, nullptr);
    EXPECT_FALSE(page.form()->editor(QStringLiteral("lora.alpha"))->isEnabled());  // LoRA off
    lora->setValue(32);
    EXPECT_TRUE(page.form()->editor(QStringLiteral("lora.alpha"))->isEnabled());

    // Unsaved changes: Cancel keeps the page, Discard lets it go.
    page.setUnsavedPrompt([] { return QMessageBox::Cancel; });
    EXPECT_FALSE(page.confirmClose());
    page.setUnsavedPrompt([] { return QMessageBox::Discard; });
    EXPECT_TRUE(page.confirmClose());

    const QString saved = dir.filePath(QStringLiteral("edited.yaml"));
    QString saveError = QStringLiteral("(pending)");
    QObject::connect(&page, &DesignPage::fileSaved, &page,
                     [&](const QString&, const QString& e) { saveError = e; });
    page.saveTo(saved);
    ASSERT_TRUE(waitUntil([&] { return saveError != QStringLiteral("(pending)"); }, 10000));
    ASSERT_TRUE(saveError.isEmpty()) << saveError.toStdString();
    EXPECT_FALSE(page.isModified());
    EXPECT_EQ(page.path(), saved);

    DesignPage reopened;
    open(reopened, saved);
    EXPECT_TRUE(reopened.recipe() == page.recipe());

    // A broken file: the error names file:line:column, and the page keeps what it had.
    const QString broken = dir.filePath(QStringLiteral("broken.yaml"));
    {
        QFile f(broken);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("schema_version: 1\nname: x\ntrainer:\n  tpp: 4\n");
    }
    QString error;
    QObject::connect(&reopened, &DesignPage::fileLoaded, &reopened,
                     [&](const QString&, const QString& e) { error = e; });
    reopened.openFile(broken);
    ASSERT_TRUE(waitUntil([&] { return !error.isEmpty(); }, 10000));
    EXPECT_TRUE(error.contains(QStringLiteral("broken.yaml:4:"))) << error.toStdString();
    EXPECT_EQ(reopened.path(), saved);

    // Import a launch script exported from the recipe, with one line it cannot understand.
    auto bundle = plan::launch::exportLaunch(page.recipe(), plan::launch::Flavour::Vime);
    ASSERT_TRUE(bundle) << bundle.error();
    ASSERT_TRUE(
        plan::launch::writeBundle(*bundle, dir.filePath(QStringLiteral("launch")).toStdString()));
    const QString script =
        dir.filePath(QStringLiteral("launch/")) + QString::fromStdString(bundle->jobScript);
    {
        QFile f(script);
        ASSERT_TRUE(f.open(QIODevice::Append));
        f.write("\nexport MYSTERY=\"$(curl -s http://example.invalid)\"\n");
    }
    QString importError = QStringLiteral("(pending)");
    QObject::connect(&page, &DesignPage::scriptImported, &page,
                     [&](const QString&, const QString& e) { importError = e; });
    page.importLaunchScript(script);
    ASSERT_TRUE(waitUntil([&] { return importError != QStringLiteral("(pending)"); }, 10000));
    ASSERT_TRUE(importError.isEmpty()) << importError.toStdString();
    EXPECT_EQ(page.recipe().trainer.tp, 8);
    EXPECT_EQ(page.recipe().lora.rank, 32);
    EXPECT_FALSE(page.importNotes().isEmpty());
    EXPECT_TRUE(page.isModified());
    page.undoStack()->undo();  // the import is one undoable step
}

// issue 9: the main window's title carries the Design page's "n errors, m warnings" and follows
// an edit that adds an error.
TEST(DesignPageInWindow, WindowTitleCountsErrorsAndWarnings) {
    QTemporaryDir dir;
    MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
    auto* page = new DesignPage;
    window.addPage(page, QStringLiteral("Design"));
    window.setCurrentPage(QStringLiteral("Design"));
    window.show();
    open(*page, recipePath("vime-qwen3-30B-A3B-2x8.yaml"));
    const auto counts = [&] {
        return QStringLiteral("%1 errors, %2 warnings")
            .arg(page->findingsModel()->errorCount())
            .arg(page->findingsModel()->warningCount());
    };
    ASSERT_TRUE(waitUntil([&] { return window.windowTitle().contains(counts()); }, 5000))
        << window.windowTitle().toStdString() << " lacks " << counts().toStdString();
    EXPECT_EQ(page->findingsModel()->errorCount(), 0);
    auto* gbs =
        qobject_cast<QSpinBox*>(page->form()->editor(QStringLiteral("batch.global_batch_size")));
    ASSERT_NE(gbs, nullptr);
    gbs->setValue(9);
    ASSERT_TRUE(waitUntil([&] { return page->findingsModel()->errorCount() >= 1; }, 5000));
    EXPECT_TRUE(waitUntil([&] { return window.windowTitle().contains(counts()); }, 5000))
        << window.windowTitle().toStdString() << " lacks " << counts().toStdString();
    EXPECT_TRUE(window.windowTitle().startsWith(QStringLiteral("Runplane")));
}
