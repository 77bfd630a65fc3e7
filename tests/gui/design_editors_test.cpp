// issue 19, Design page: every field a finding points at has an editor (over every rule's field
// and every finding of validating the recipes in recipes/ and tests/plan/data), the hardware
// profile picker, and no topology for an invalid layout (the reason instead). Real widgets,
// offscreen; recipes parsed and validated by the real planner.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDirIterator>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QUndoStack>

#include <set>

#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"
#include "backend/plan/rules.h"
#include "gui/models/findings_model.h"
#include "gui/pages/design_page.h"
#include "gui/pages/plan_views.h"
#include "gui/pages/recipe_form.h"
#include "gui/widgets/topology_view.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

QString src() {
    return test::envPath("RUNPLANE_SOURCE_DIR");
}

void openRecipe(DesignPage& page, const QString& path) {
    ASSERT_TRUE(waitUntil([&] { return page.catalogReady(); }, 15000));
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

}  // namespace

TEST(DesignEditors, EveryFindingPathHasAnEditor) {
    RecipeForm form;
    // The rule table's fields (what a rule reports when it names no more precise field).
    for (const plan::RuleInfo& rule : plan::ruleTable()) {
        EXPECT_FALSE(form.editorPathFor(QString::fromLatin1(rule.field.c_str())).isEmpty())
            << "rule " << rule.id << " points at " << rule.field.c_str() << ", which has no editor";
    }
    // The findings of every recipe in recipes/ and tests/plan/data (those that parse).
    auto catalog = plan::ModelCatalog::loadDirectory((src() + "/recipes/models").toStdString());
    ASSERT_TRUE(catalog) << catalog.error();
    std::set<std::string> paths;
    int recipes = 0;
    for (const char* dir : {"/recipes", "/tests/plan/data"}) {
        QDirIterator it(src() + QLatin1String(dir), {QStringLiteral("*.yaml")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            if (file.contains(QStringLiteral("/recipes/models/"))) {
                continue;  // model definitions, not recipes
            }
            auto recipe = plan::loadRecipe(file.toStdString());
            if (!recipe) {
                continue;  // a parse error names its key, which has no editor by definition
            }
            ++recipes;
            for (const plan::Finding& f : plan::validate(*recipe, *catalog)) {
                paths.insert(f.fieldPath);
            }
        }
    }
    EXPECT_GE(recipes, 20);
    EXPECT_GE(paths.size(), 5u);
    for (const std::string& p : paths) {
        EXPECT_FALSE(form.editorPathFor(QString::fromStdString(p)).isEmpty())
            << "a finding points at " << p << ", which has no editor";
    }
    // The fields issue 19 named have editors of their own.
    for (const char* p : {"batch.max_tokens_per_gpu", "rollout.temperature", "lora.target_modules",
                          "launcher.argv", "batch.num_steps_per_rollout"}) {
        EXPECT_NE(form.editor(QString::fromLatin1(p)), nullptr) << p;
        EXPECT_EQ(form.editorPathFor(QString::fromLatin1(p)), QString::fromLatin1(p));
    }
}

// Issue 22: the form is built from the recipe field table, so every field has an editor of its
// own, labelled as the table says, disabled exactly when the table's rule says so.
TEST(DesignEditors, EveryTableFieldHasAnEditor) {
    RecipeForm form;
    for (const plan::RecipeField& f : plan::recipeFields()) {
        const QString path =
            QString::fromUtf8(f.path.data(), static_cast<qsizetype>(f.path.size()));
        EXPECT_NE(form.editor(path), nullptr) << f.path << " has no editor";
        EXPECT_EQ(form.editorPathFor(path), path) << f.path;
    }
    // Two recipes that between them switch every rule of the table both ways.
    plan::Recipe a;
    a.placement = plan::Placement::Colocate;
    a.trainer.backend = plan::TrainBackend::Fsdp;
    a.framework = plan::Framework::Vime;
    a.rollout.cudaGraph = false;
    plan::Recipe b;
    b.trainer.tp = 2;
    b.trainer.pp = 2;
    b.rollout.engine = plan::RolloutEngine::Vllm;
    b.rollout.expertParallel = true;
    b.rollout.eplb.enabled = true;
    b.rollout.weightDtype = plan::WeightDtype::Fp8;
    b.algorithm.useKlLoss = true;
    b.algorithm.useOpd = true;
    b.optimizer.cpuOffload = true;
    b.lora.rank = 8;
    b.weightUpdate.transport = plan::WeightTransport::Disk;
    b.launcher.kind = plan::LauncherKind::Command;
    b.launcher.rayStop = true;
    int disabled = 0;
    int enabled = 0;
    for (const plan::Recipe& r : {a, b}) {
        form.setRecipe(r);
        for (const plan::RecipeField& f : plan::recipeFields()) {
            if (f.disabledWhy == nullptr) {
                continue;
            }
            const QString path =
                QString::fromUtf8(f.path.data(), static_cast<qsizetype>(f.path.size()));
            const char* why = f.disabledWhy(r);
            EXPECT_EQ(form.disabledReason(path),
                      why != nullptr ? QString::fromUtf8(why) : QString())
                << f.path;
            EXPECT_EQ(form.editor(path)->isEnabled(), why == nullptr) << f.path;
            ++(why != nullptr ? disabled : enabled);
        }
    }
    EXPECT_GT(disabled, 10);
    EXPECT_GT(enabled, 10);
}

TEST(DesignEditors, NewEditorsEditTheRecipe) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/smoke-local.yaml"));
    auto* tokens =
        qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("batch.max_tokens_per_gpu")));
    ASSERT_NE(tokens, nullptr);
    tokens->setValue(9216);
    EXPECT_EQ(page.recipe().batch.maxTokensPerGpu, 9216);
    auto* modules =
        qobject_cast<QLineEdit*>(page.form()->editor(QStringLiteral("lora.target_modules")));
    ASSERT_NE(modules, nullptr);
    EXPECT_EQ(modules->text(), QStringLiteral("q_proj, k_proj, v_proj, o_proj"));
    modules->setText(QStringLiteral("all-linear"));
    emit modules->textEdited(modules->text());
    EXPECT_EQ(page.recipe().lora.targetModules, std::vector<std::string>{"all-linear"});
    page.undoStack()->undo();
    EXPECT_EQ(page.recipe().lora.targetModules.size(), 4u);
}

TEST(DesignEditors, HardwareProfilePicker) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    auto* combo = qobject_cast<QComboBox*>(page.form()->editor(QStringLiteral("hardware")));
    ASSERT_NE(combo, nullptr);
    const auto& profiles = hardwareProfiles();
    ASSERT_EQ(profiles.size(), 5u);
    int gb300 = -1;
    for (size_t i = 0; i < profiles.size(); ++i) {
        if (std::string(profiles[i].gpu) == "GB300") {
            gb300 = static_cast<int>(i) + 1;  // after "custom"
        }
    }
    ASSERT_GT(gb300, 0);
    combo->setCurrentIndex(gb300);
    emit combo->activated(gb300);
    const plan::Hardware& h = page.recipe().hardware;
    EXPECT_EQ(h.gpu, "GB300");
    EXPECT_DOUBLE_EQ(h.gpuMemoryGb, 288);
    EXPECT_EQ(h.gpusPerNode, 4);
    EXPECT_DOUBLE_EQ(h.hostRamGb, 956);
    EXPECT_EQ(h.cpuArch, plan::CpuArch::Aarch64);
    EXPECT_EQ(matchingProfile(h), gb300 - 1);
    // Editing one field by hand makes it a custom node again.
    auto* ram = page.form()->editor(QStringLiteral("hardware.host_ram_gb"));
    ASSERT_NE(ram, nullptr);
    plan::Recipe r = page.recipe();
    r.hardware.hostRamGb = 1000;
    page.setRecipe(r, QStringLiteral("host RAM"));
    EXPECT_EQ(combo->currentIndex(), 0);
}

TEST(DesignEditors, NoTopologyForAnInvalidLayout) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/vime-qwen3-30B-A3B-2x8.yaml"));
    ASSERT_EQ(page.topologyView()->data().cells.size(), 16u);
    ASSERT_TRUE(page.topologyView()->data().invalidReason.isEmpty());
    // TP 3 on 2 x 8 GPUs: the world does not divide into TP x PP x CP.
    auto* tp = qobject_cast<QSpinBox*>(page.form()->editor(QStringLiteral("trainer.tp")));
    ASSERT_NE(tp, nullptr);
    tp->setValue(3);
    ASSERT_GE(page.findingsModel()->errorCount(), 1);
    const TopologyData& bad = page.topologyView()->data();
    EXPECT_TRUE(bad.cells.empty());
    EXPECT_TRUE(bad.invalidReason.startsWith(QStringLiteral("No topology")));
    EXPECT_TRUE(bad.invalidReason.contains(QStringLiteral("trainer.")))
        << bad.invalidReason.toStdString();
    // invalidLayoutReason names exactly the layout rules' errors of the plan.
    const QString reason = invalidLayoutReason(page.result().plan.findings);
    ASSERT_FALSE(reason.isEmpty());
    EXPECT_TRUE(bad.invalidReason.endsWith(reason));
    page.undoStack()->undo();
    EXPECT_EQ(page.topologyView()->data().cells.size(), 16u);
    EXPECT_TRUE(page.topologyView()->data().invalidReason.isEmpty());
}

TEST(DesignEditors, AnalysisFieldsEditTheRecipe) {
    DesignPage page;
    page.resize(1500, 950);
    page.show();
    openRecipe(page, src() + QStringLiteral("/recipes/smoke-local.yaml"));
    RecipeForm* form = page.form();
    auto* primary =
        qobject_cast<QLineEdit*>(form->editor(QStringLiteral("analysis.primary_metric")));
    ASSERT_NE(primary, nullptr);
    primary->setText(QStringLiteral("eval/gsm8k"));
    emit primary->textEdited(primary->text());
    EXPECT_EQ(page.recipe().analysis.primaryMetric, "eval/gsm8k");

    auto* alarm =
        qobject_cast<QDoubleSpinBox*>(form->editor(QStringLiteral("analysis.memory_alarm_gb")));
    ASSERT_NE(alarm, nullptr);
    EXPECT_EQ(alarm->value(), 0);  // unset: the "default" special value
    alarm->setValue(20);
    ASSERT_TRUE(page.recipe().analysis.memoryAlarmGb.has_value());
    EXPECT_DOUBLE_EQ(*page.recipe().analysis.memoryAlarmGb, 20);
    alarm->setValue(0);
    EXPECT_FALSE(page.recipe().analysis.memoryAlarmGb.has_value());

    auto* kinds =
        qobject_cast<QPlainTextEdit*>(form->editor(QStringLiteral("analysis.metric_kinds")));
    ASSERT_NE(kinds, nullptr);
    kinds->setPlainText(QStringLiteral("eval/arith/time: time\neval/judge/*: score lower\n"));
    const auto& k = page.recipe().analysis.metricKinds;
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[1].pattern, "eval/judge/*");
    EXPECT_EQ(k[1].kind, metrics::Kind::Score);
    EXPECT_EQ(k[1].direction, metrics::Direction::Lower);
    // The planner sees the recipe's alarm line: the finding rule points at the new editor.
    EXPECT_EQ(form->editorPathFor(QStringLiteral("analysis.memory_alarm_gb")),
              QStringLiteral("analysis.memory_alarm_gb"));
}

TEST(DesignEditors, MetricKindLinesReadAndWrite) {
    QStringList errors;
    const auto o = parseMetricKindLines(
        QStringLiteral("eval/a: time\n\n  perf/*: rate higher \nx: scroe\ny: loss up\nnocolon\n"
                       "*: score\n"),
        &errors);
    ASSERT_EQ(o.size(), 2u);
    EXPECT_EQ(o[0].pattern, "eval/a");
    EXPECT_EQ(o[0].kind, metrics::Kind::Time);
    EXPECT_FALSE(o[0].direction.has_value());
    EXPECT_EQ(o[1].pattern, "perf/*");
    EXPECT_EQ(o[1].direction, metrics::Direction::Higher);
    ASSERT_EQ(errors.size(), 4);
    EXPECT_TRUE(errors[0].startsWith(QStringLiteral("line 4: unknown kind 'scroe'")))
        << errors[0].toStdString();
    EXPECT_TRUE(errors[1].startsWith(QStringLiteral("line 5: unknown direction 'up'")));
    EXPECT_TRUE(errors[2].startsWith(QStringLiteral("line 6:")));
    EXPECT_TRUE(errors[3].startsWith(QStringLiteral("line 7:")));
    EXPECT_EQ(metricKindLines(o), QStringLiteral("eval/a: time\nperf/*: rate higher"));
    EXPECT_EQ(parseMetricKindLines(metricKindLines(o)), o);
}

TEST(DesignEditors, RuleFieldsAndExtraArgsEditTheRecipe) {
    RecipeForm form;
    plan::Recipe r;
    r.extraArgs = {plan::ExtraArg{"--vllm-eplb-config", {"{\"a\": 1}"}, "run.sh:42"}};
    form.setRecipe(r);
    std::vector<plan::Recipe> edits;
    QObject::connect(&form, &RecipeForm::edited,
                     [&](const plan::Recipe& next, const QString&) { edits.push_back(next); });
    auto* args = qobject_cast<QPlainTextEdit*>(form.editor(QStringLiteral("extra_args")));
    ASSERT_NE(args, nullptr);
    EXPECT_EQ(args->toPlainText(), QStringLiteral("--vllm-eplb-config {\"a\": 1}"));
    // Appending a line keeps the first argument as it was (its source, its value with a blank);
    // a line that is not a flag is left out.
    args->setPlainText(args->toPlainText() +
                       QStringLiteral("\n--rollout-max-concurrency 8\nnot-a-flag\n"));
    ASSERT_FALSE(edits.empty());
    const auto& a = form.recipe().extraArgs;
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0], r.extraArgs[0]);
    EXPECT_EQ(a[1].flag, "--rollout-max-concurrency");
    EXPECT_EQ(a[1].values, std::vector<std::string>{"8"});

    // Weight update: the disk directories are only for transport disk.
    EXPECT_FALSE(form.disabledReason(QStringLiteral("weight_update.disk_dir")).isEmpty());
    auto* transport =
        qobject_cast<QComboBox*>(form.editor(QStringLiteral("weight_update.transport")));
    ASSERT_NE(transport, nullptr);
    transport->setCurrentIndex(transport->findText(QStringLiteral("disk")));
    EXPECT_EQ(form.recipe().weightUpdate.transport, plan::WeightTransport::Disk);
    EXPECT_TRUE(form.disabledReason(QStringLiteral("weight_update.disk_dir")).isEmpty());
    // OPD type is only editable with OPD on.
    EXPECT_FALSE(form.disabledReason(QStringLiteral("algorithm.opd_type")).isEmpty());
    auto* opd = qobject_cast<QCheckBox*>(form.editor(QStringLiteral("algorithm.use_opd")));
    ASSERT_NE(opd, nullptr);
    opd->setChecked(true);
    EXPECT_TRUE(form.recipe().algorithm.useOpd);
    EXPECT_TRUE(form.disabledReason(QStringLiteral("algorithm.opd_type")).isEmpty());
}
