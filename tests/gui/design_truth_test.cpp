// issue 46, Design page: a GUI that never shows what is not so. An edit of an imported recipe
// reaches the launch (one --lr, the edited one); the wheel edits only a focused field; an invalid
// design looks invalid in the launch preview and the memory charts, and copying its launch asks;
// everyday editing (2e-6 in the learning rate, Ctrl+Z in a focused field, the hardware profile
// following GPUs per node, a new recipe without errors, Save as adding .yaml, an imported recipe
// named after its script). Real widgets on the offscreen platform, the real planner, importer and
// exporter; the script is tests/gui/data/run-qwen3-4B-defaults.sh (our own, in slime's style).
#include <gtest/gtest.h>

#include <functional>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QWheelEvent>

#include "gui/models/findings_model.h"
#include "gui/pages/design_page.h"
#include "gui/pages/design_validity.h"
#include "gui/pages/form_input.h"
#include "gui/pages/recipe_form.h"
#include "gui/widgets/memory_budget_chart.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::linesWithFlag;
using runplane::gui::test::waitUntil;

namespace {

QString src() {
    return test::envPath("RUNPLANE_SOURCE_DIR");
}

void waitCatalog(DesignPage& page) {
    ASSERT_TRUE(waitUntil([&] { return page.catalogReady(); }, 15000)) << "no model catalog";
}

void openRecipe(DesignPage& page, const QString& path) {
    waitCatalog(page);
    QString error = QStringLiteral("(not loaded)");
    const QMetaObject::Connection c =
        QObject::connect(&page, &DesignPage::fileLoaded, &page,
                         [&](const QString&, const QString& e) { error = e; });
    page.openFile(path);
    const bool loaded = waitUntil([&] { return error != QStringLiteral("(not loaded)"); }, 10000);
    QObject::disconnect(c);
    ASSERT_TRUE(loaded);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
}

void importScript(DesignPage& page, const QString& path) {
    waitCatalog(page);
    QString error = QStringLiteral("(pending)");
    const QMetaObject::Connection c =
        QObject::connect(&page, &DesignPage::scriptImported, &page,
                         [&](const QString&, const QString& e) { error = e; });
    page.importLaunchScript(path);
    const bool done = waitUntil([&] { return error != QStringLiteral("(pending)"); }, 15000);
    QObject::disconnect(c);
    ASSERT_TRUE(done);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
}

/// Runs one edit and waits for the planning pass it starts (planning moves to a worker thread
/// when one pass is slow, e.g. on a loaded machine).
void edit(DesignPage& page, const std::function<void()>& change) {
    const int before = page.planPasses();
    change();
    ASSERT_TRUE(waitUntil([&] { return page.planPasses() > before; }, 10000)) << "no new plan";
}

/// Makes the page the active window and gives `w` the keyboard focus.
void focus(DesignPage& page, QWidget* w) {
    QApplication::setActiveWindow(&page);
    w->setFocus(Qt::OtherFocusReason);
    ASSERT_TRUE(waitUntil([&] { return w->hasFocus(); }, 2000)) << "no focus";
}

/// One wheel notch down over w; true when w accepted it (an ignored one goes on to the parents,
/// the form's scroll area, when the window system sends it).
bool wheelDown(QWidget* w) {
    const QPointF at(w->width() / 2.0, w->height() / 2.0);
    QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
    return e.isAccepted();
}

// The flags of the fixture that the recipe models and that it writes at their default value:
// each goes to its field, none stays a "flag the recipe does not model".
const char* const kModelledAtDefault[] = {"--lr",
                                          "--optimizer",
                                          "--actor-num-nodes",
                                          "--eps-clip",
                                          "--entropy-coef",
                                          "--advantage-estimator",
                                          "--rollout-temperature",
                                          "--pipeline-model-parallel-size",
                                          "--context-parallel-size"};

}  // namespace

TEST(DesignTruth, AnEditOfAnImportedRecipeReachesTheLaunch) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    importScript(page, src() + QStringLiteral("/tests/gui/data/run-qwen3-4B-defaults.sh"));
    const plan::Recipe& imported = page.recipe();
    EXPECT_EQ(imported.name, "run-qwen3-4B-defaults");  // named after the script
    EXPECT_DOUBLE_EQ(imported.algorithm.lr, 1e-6);
    // Every flag the recipe models went to its field: none is an extra argument.
    auto* extra = qobject_cast<QPlainTextEdit*>(page.form()->editor(QStringLiteral("extra_args")));
    ASSERT_NE(extra, nullptr);
    const QString box = extra->toPlainText();
    EXPECT_FALSE(box.isEmpty()) << "the script has flags the recipe does not model";
    EXPECT_TRUE(box.contains(QStringLiteral("--attention-backend flash"))) << box.toStdString();
    for (const char* flag : kModelledAtDefault) {
        const QString f = QString::fromLatin1(flag);
        for (const plan::ExtraArg& a : imported.extraArgs) {
            EXPECT_NE(a.flag, flag) << "kept as an extra argument: " << flag;
        }
        EXPECT_TRUE(linesWithFlag(box, f).isEmpty()) << flag << " listed as unmodelled";
        // and the launch still spells it out, once
        EXPECT_EQ(linesWithFlag(page.launchPreviewText(), f).size(), 1)
            << flag << "\n"
            << page.launchPreviewText().toStdString();
    }

    // Edit the learning rate: the launch has one --lr, the edited one, and no 1e-6 anywhere.
    auto* lr = qobject_cast<QDoubleSpinBox*>(page.form()->editor(QStringLiteral("algorithm.lr")));
    ASSERT_NE(lr, nullptr);
    edit(page, [&] { lr->setValue(2e-6); });
    EXPECT_DOUBLE_EQ(page.recipe().algorithm.lr, 2e-6);
    const QString preview = page.launchPreviewText();
    EXPECT_EQ(linesWithFlag(preview, QStringLiteral("--lr")),
              QStringList{QStringLiteral("--lr 2e-06")})
        << preview.toStdString();
    EXPECT_FALSE(preview.contains(QStringLiteral("1e-6"))) << preview.toStdString();
    EXPECT_FALSE(preview.contains(QStringLiteral("1e-06"))) << preview.toStdString();

    // Two more edits, both to values the script did not have: each flag once, with the edit.
    auto* eps =
        qobject_cast<QDoubleSpinBox*>(page.form()->editor(QStringLiteral("algorithm.eps_clip")));
    ASSERT_NE(eps, nullptr);
    edit(page, [&] { eps->setValue(0.25); });
    auto* pp = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("trainer.pp")));
    ASSERT_NE(pp, nullptr);
    edit(page, [&] { pp->setValue(2); });
    const QString after = page.launchPreviewText();
    EXPECT_EQ(linesWithFlag(after, QStringLiteral("--eps-clip")),
              QStringList{QStringLiteral("--eps-clip 0.25")});
    EXPECT_EQ(linesWithFlag(after, QStringLiteral("--pipeline-model-parallel-size")),
              QStringList{QStringLiteral("--pipeline-model-parallel-size 2")});

    // Back to the default: still written once (the script spelled it out), with the field's value.
    edit(page, [&] { lr->setValue(1e-6); });
    EXPECT_EQ(linesWithFlag(page.launchPreviewText(), QStringLiteral("--lr")),
              QStringList{QStringLiteral("--lr 1e-06")});
}

TEST(DesignTruth, TheWheelEditsOnlyAFocusedField) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    auto* placement = qobject_cast<QComboBox*>(page.form()->editor(QStringLiteral("placement")));
    auto* tp = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("trainer.tp")));
    ASSERT_NE(placement, nullptr);
    ASSERT_NE(tp, nullptr);
    EXPECT_EQ(placement->focusPolicy(), Qt::StrongFocus);
    EXPECT_EQ(tp->focusPolicy(), Qt::StrongFocus);
    const plan::Recipe before = page.recipe();
    const int placementIndex = placement->currentIndex();
    const int tpValue = tp->value();
    focus(page, page.findingsView());

    // Over fields without focus the wheel changes nothing and is left to the form (ignored).
    EXPECT_FALSE(wheelDown(placement));
    EXPECT_FALSE(wheelDown(tp));
    EXPECT_EQ(placement->currentIndex(), placementIndex);
    EXPECT_EQ(tp->value(), tpValue);
    EXPECT_TRUE(page.recipe() == before);
    EXPECT_FALSE(page.isModified());
    EXPECT_FALSE(placement->hasFocus());  // the wheel does not give the focus either

    // A focused field takes the wheel.
    focus(page, tp);
    EXPECT_TRUE(wheelDown(tp));
    EXPECT_EQ(tp->value(), tpValue - 1);
    EXPECT_EQ(page.recipe().trainer.tp, tpValue - 1);
}

TEST(DesignTruth, AnInvalidDesignLooksInvalidWhereverItsResultsAppear) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    ASSERT_EQ(page.findingsModel()->errorCount(), 0);
    EXPECT_TRUE(page.launchInvalidReason().isEmpty());
    EXPECT_TRUE(page.hostChart()->invalidReason().isEmpty());
    int asked = 0;
    page.setCopyInvalidPrompt([&](const QString&) {
        ++asked;
        return false;
    });
    QApplication::clipboard()->setText(QStringLiteral("before"));
    EXPECT_TRUE(page.copyLaunch());  // a valid design copies without a question
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(QApplication::clipboard()->text(), page.launchPreviewText());

    // EP 32 on 16 GPUs: an error.
    auto* ep = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("trainer.ep")));
    ASSERT_NE(ep, nullptr);
    edit(page, [&] { ep->setValue(32); });
    ASSERT_GE(page.findingsModel()->errorCount(), 1);
    const QString reason = page.launchInvalidReason();
    EXPECT_TRUE(reason.startsWith(QStringLiteral("Invalid design: "))) << reason.toStdString();
    EXPECT_TRUE(reason.contains(QStringLiteral("trainer.ep"))) << reason.toStdString();
    for (MemoryBudgetChart* chart : {page.hostChart(), page.gpuChart()}) {
        EXPECT_TRUE(chart->invalidReason().startsWith(QStringLiteral("Invalid design: ")));
        ASSERT_GT(chart->barCount(), 0);
    }
    // The banners are on screen where the results are.
    page.viewTabs()->setCurrentWidget(page.hostChart());
    QApplication::processEvents();
    auto* banner = page.hostChart()->findChild<QWidget*>(QStringLiteral("invalidBanner"));
    ASSERT_NE(banner, nullptr);
    EXPECT_TRUE(banner->isVisible());
    const QString tip = page.hostChart()->tooltipAt(page.hostChart()->segmentCenter(0, 0, 0));
    EXPECT_TRUE(tip.startsWith(QStringLiteral("Invalid design: "))) << tip.toStdString();
    page.hostChart()->grab().save(
        test::screenshotPath(QStringLiteral("design-invalid-memory.png")));
    page.viewTabs()->setCurrentIndex(3);
    QApplication::processEvents();
    auto* launchBanner =
        page.copyButton()->parentWidget()->findChild<QWidget*>(QStringLiteral("invalidBanner"));
    ASSERT_NE(launchBanner, nullptr);
    EXPECT_TRUE(launchBanner->isVisible());
    page.grab().save(test::screenshotPath(QStringLiteral("design-invalid-launch.png")));

    // Copying asks first; No leaves the clipboard alone.
    QApplication::clipboard()->setText(QStringLiteral("before"));
    EXPECT_FALSE(page.copyLaunch());
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(QApplication::clipboard()->text(), QStringLiteral("before"));
    page.setCopyInvalidPrompt([&](const QString& why) {
        ++asked;
        EXPECT_EQ(why, reason);
        return true;
    });
    page.copyButton()->click();
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(QApplication::clipboard()->text(), page.launchPreviewText());

    // Fixed: no banner anywhere.
    edit(page, [&] { page.undoStack()->undo(); });
    EXPECT_EQ(page.findingsModel()->errorCount(), 0);
    EXPECT_TRUE(page.launchInvalidReason().isEmpty());
    EXPECT_FALSE(launchBanner->isVisible());
    EXPECT_TRUE(page.hostChart()->invalidReason().isEmpty());
    EXPECT_TRUE(page.gpuChart()->invalidReason().isEmpty());
}

TEST(DesignTruth, TheLearningRateReadsAndShowsScientificNotation) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    auto* lr = qobject_cast<QDoubleSpinBox*>(page.form()->editor(QStringLiteral("algorithm.lr")));
    ASSERT_NE(lr, nullptr);
    EXPECT_EQ(lr->text(), ScientificSpinBox::format(page.recipe().algorithm.lr));
    EXPECT_FALSE(lr->text().startsWith(QStringLiteral("0.0000")));
    focus(page, lr);
    lr->selectAll();
    QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("2e-6"));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Return);
    EXPECT_DOUBLE_EQ(page.recipe().algorithm.lr, 2e-6);
    EXPECT_EQ(lr->text(), QStringLiteral("2e-6"));
    EXPECT_EQ(ScientificSpinBox::format(1e-5), QStringLiteral("1e-5"));
    EXPECT_EQ(ScientificSpinBox::format(0.7), QStringLiteral("0.7"));
    EXPECT_EQ(ScientificSpinBox::format(3.5e-7), QStringLiteral("3.5e-7"));
}

TEST(DesignTruth, CtrlZInAFocusedFieldUndoesTheRecipeEdit) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    auto* tp = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("trainer.tp")));
    ASSERT_NE(tp, nullptr);
    const int before = tp->value();
    focus(page, tp);
    tp->selectAll();
    QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("2"));
    ASSERT_EQ(page.recipe().trainer.tp, 2);
    ASSERT_TRUE(page.isModified());
    ASSERT_TRUE(tp->hasFocus());
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Z, Qt::ControlModifier);
    EXPECT_EQ(page.recipe().trainer.tp, before);
    EXPECT_EQ(tp->value(), before);
    EXPECT_TRUE(page.undoStack()->canRedo()) << "Ctrl+Z went to the field, not the recipe";
    EXPECT_FALSE(page.isModified());
    QTest::keySequence(QApplication::focusWidget(),
                       page.standardAction(Page::Action::Redo)->shortcut());
    EXPECT_EQ(page.recipe().trainer.tp, 2);
}

TEST(DesignTruth, TheHardwareProfileFollowsTheFields) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    auto* combo = qobject_cast<QComboBox*>(page.form()->editor(QStringLiteral("hardware")));
    auto* gpus =
        qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("hardware.gpus_per_node")));
    ASSERT_NE(combo, nullptr);
    ASSERT_NE(gpus, nullptr);
    int gb300 = -1;
    for (size_t i = 0; i < hardwareProfiles().size(); ++i) {
        if (std::string(hardwareProfiles()[i].gpu) == "GB300") {
            gb300 = static_cast<int>(i) + 1;
        }
    }
    ASSERT_GT(gb300, 0);
    combo->setCurrentIndex(gb300);
    emit combo->activated(gb300);
    EXPECT_EQ(page.recipe().hardware.gpusPerNode, 4);
    EXPECT_EQ(gpus->value(), 4);  // the fields show what the profile set
    gpus->setValue(8);
    EXPECT_EQ(page.recipe().hardware.gpusPerNode, 8);
    EXPECT_EQ(combo->currentIndex(), 0) << combo->currentText().toStdString();
    EXPECT_FALSE(combo->currentText().contains(QStringLiteral("288")))
        << combo->currentText().toStdString();
}

TEST(DesignTruth, ANewRecipeHasNoErrorsAndFitsItsHardware) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    waitCatalog(page);
    ASSERT_TRUE(waitUntil([&] { return page.planPasses() > 0; }, 5000));
    edit(page, [&] { page.newRecipe(); });
    QStringList errors;
    for (const plan::Finding& f : page.findingsModel()->findings()) {
        if (f.severity == plan::Severity::Error) {
            errors << QString::fromStdString(f.fieldPath + ": " + f.message);
        }
    }
    EXPECT_TRUE(errors.isEmpty()) << errors.join(QLatin1Char('\n')).toStdString();
    const plan::Plan& p = page.result().plan;
    ASSERT_TRUE(p.model.has_value());
    EXPECT_GT(p.memory.peakBytes, 0);
    EXPECT_LE(p.memory.peakBytes / plan::kGb, page.recipe().hardware.hostRamGb);
    EXPECT_TRUE(page.launchInvalidReason().isEmpty());
}

TEST(DesignTruth, SaveAsWithoutAnExtensionWritesYaml) {
    QTemporaryDir dir;
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    waitCatalog(page);
    page.setPathPrompt([&](bool) { return dir.filePath(QStringLiteral("my-run")); });
    QString saved = QStringLiteral("(pending)");
    QObject::connect(&page, &DesignPage::fileSaved, &page,
                     [&](const QString& path, const QString& error) {
                         saved = error.isEmpty() ? path : QStringLiteral("error: ") + error;
                     });
    page.standardAction(Page::Action::SaveAs)->trigger();
    ASSERT_TRUE(waitUntil([&] { return saved != QStringLiteral("(pending)"); }, 10000));
    EXPECT_EQ(saved, dir.filePath(QStringLiteral("my-run.yaml")));
    EXPECT_TRUE(QFile::exists(dir.filePath(QStringLiteral("my-run.yaml"))));
    EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("my-run"))));
    EXPECT_EQ(withRecipeSuffix(QStringLiteral("/x/a.yml")), QStringLiteral("/x/a.yml"));
    EXPECT_EQ(withRecipeSuffix(QStringLiteral("/x.d/a")), QStringLiteral("/x.d/a.yaml"));
}
