// issue 46: the afternoon, end to end, through the real GUI (the main window `runplane` opens,
// offscreen) at 1920×1080 and at 1280×720. Open every recipe in recipes/, design a short smoke
// run from recipes/smoke-local.yaml (edit fields, validate: 0 errors, the launch preview's
// numbers are the form's), save it and launch it with `runplanectl submit` on a real runplaned
// running the embedded smoke workload, watch it live on the Runs page, edit LoRA rank and alpha
// and launch again, compare the two runs (the diff names what was edited) and export the
// comparison. At every step: the window fits the screen, no label is cut off or overlaps another,
// and the values shown are the true ones. Saves afternoon-*.png screenshots.
// Skipped (with the reason) where runplane-smoke was not built (no LibTorch).
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"
#include "gui/models/compare_model.h"
#include "gui/models/findings_model.h"
#include "gui/models/run_models.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/recipe_form.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/daemon_process.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;
using namespace runplane::gui::afternoon;

namespace {

QString src() {
    return test::envPath("RUNPLANE_SOURCE_DIR");
}
QString bin() {
    return test::envPath("RUNPLANE_BINARY_DIR");
}

bool save(DesignPage& design, const QString& path) {
    QString error = QStringLiteral("(not saved)");
    const QMetaObject::Connection c =
        QObject::connect(&design, &DesignPage::fileSaved, &design,
                         [&](const QString&, const QString& e) { error = e; });
    design.saveTo(path);
    const bool saved = waitUntil([&] { return error != QStringLiteral("(not saved)"); }, 15000);
    QObject::disconnect(c);
    EXPECT_TRUE(saved && error.isEmpty()) << path.toStdString() << ": " << error.toStdString();
    return saved && error.isEmpty() && QFileInfo::exists(path);
}

void editField(DesignPage& design, const QString& path, const std::function<void(QWidget*)>& set) {
    QWidget* editor = design.form()->editor(path);
    ASSERT_NE(editor, nullptr) << path.toStdString();
    const int before = design.planPasses();
    set(editor);
    ASSERT_TRUE(waitUntil([&] { return design.planPasses() > before; }, 15000))
        << "no new plan after editing " << path.toStdString();
}

void setInt(DesignPage& design, const QString& path, int value) {
    if (auto* spin = qobject_cast<QSpinBox*>(design.form()->editor(path));
        spin != nullptr && spin->value() == value) {
        return;  // already so: no edit, no new plan
    }
    editField(design, path, [&](QWidget* w) {
        auto* spin = qobject_cast<QSpinBox*>(w);
        ASSERT_NE(spin, nullptr) << path.toStdString();
        spin->setValue(value);
    });
}

int formInt(DesignPage& design, const QString& path) {
    auto* spin = qobject_cast<QSpinBox*>(design.form()->editor(path));
    return spin != nullptr ? spin->value() : -1;
}

int errorsOf(DesignPage& design) {
    int errors = 0;
    for (const plan::Finding& f : design.result().plan.findings) {
        errors += f.severity == plan::Severity::Error ? 1 : 0;
    }
    return errors;
}

/// The word after `flag` in the launch preview's command lines ("" if none).
QString flagValue(const QString& preview, const QString& flag) {
    const QRegularExpression re(QStringLiteral("(?:^|[\\s\"'\\[,])") +
                                QRegularExpression::escape(flag) +
                                QStringLiteral("[\"']?[\\s,=]+[\"']?([^\\s\"',\\]]+)"));
    for (const QString& line : preview.split(QLatin1Char('\n'))) {
        if (line.trimmed().startsWith(QLatin1Char('#'))) {
            continue;
        }
        const auto m = re.match(line);
        if (m.hasMatch()) {
            return m.captured(1);
        }
    }
    return {};
}

/// A short CPU configuration of the smoke workload that agrees with the recipe's fields.
QStringList shortArgv(int rank, int alpha) {
    return {QStringLiteral("runplane-smoke"),
            QStringLiteral("--d-model"),
            QStringLiteral("32"),
            QStringLiteral("--eval-size"),
            QStringLiteral("64"),
            QStringLiteral("--sft-steps"),
            QStringLiteral("40"),
            QStringLiteral("--rollout-batch-size"),
            QStringLiteral("4"),
            QStringLiteral("--n-samples-per-prompt"),
            QStringLiteral("4"),
            QStringLiteral("--global-batch-size"),
            QStringLiteral("16"),
            QStringLiteral("--rl-steps"),
            QStringLiteral("6"),
            QStringLiteral("--eval-interval"),
            QStringLiteral("2"),
            QStringLiteral("--backup-scale-mb"),
            QStringLiteral("64"),
            QStringLiteral("--lora-rank"),
            QString::number(rank),
            QStringLiteral("--lora-alpha"),
            QString::number(alpha),
            QStringLiteral("--backup-mode"),
            QStringLiteral("zero_copy"),
            QStringLiteral("--seed"),
            QStringLiteral("1"),
            QStringLiteral("--device"),
            QStringLiteral("cpu")};
}

/// Designs the short run: batch fields, LoRA rank/alpha and the command, through the form.
void design(DesignPage& d, int rank, int alpha) {
    setInt(d, QStringLiteral("batch.rollout_batch_size"), 4);
    setInt(d, QStringLiteral("batch.n_samples_per_prompt"), 4);
    setInt(d, QStringLiteral("batch.global_batch_size"), 16);
    setInt(d, QStringLiteral("batch.num_rollout"), 6);
    setInt(d, QStringLiteral("lora.rank"), rank);
    auto* alphaSpin = qobject_cast<QDoubleSpinBox*>(d.form()->editor(QStringLiteral("lora.alpha")));
    ASSERT_NE(alphaSpin, nullptr);
    if (alphaSpin->value() != alpha) {
        editField(d, QStringLiteral("lora.alpha"), [&](QWidget* w) {
            auto* spin = qobject_cast<QDoubleSpinBox*>(w);
            ASSERT_NE(spin, nullptr);
            spin->setValue(alpha);
        });
    }
    editField(d, QStringLiteral("launcher.argv"), [&](QWidget* w) {
        auto* lines = qobject_cast<QPlainTextEdit*>(w);
        ASSERT_NE(lines, nullptr);
        lines->setPlainText(shortArgv(rank, alpha).join(QLatin1Char('\n')));  // commits
    });
}

/// `runplanectl submit` as a user types it, with the saved recipe. Empty when it worked.
QString submit(const QString& address, const QString& recipe, const QString& history,
               const QString& runId, const QString& name, QStringList argv) {
    argv[0] = bin() + QStringLiteral("/compute/smoke/runplane-smoke");
    QProcess p;
    p.start(bin() + QStringLiteral("/backend/cli/runplanectl"),
            QStringList{QStringLiteral("submit"), address, QStringLiteral("--recipe"), recipe,
                        QStringLiteral("--history"), history, QStringLiteral("--run-id"), runId,
                        QStringLiteral("--name"), name, QStringLiteral("--")} +
                argv);
    if (!p.waitForFinished(60000)) {
        return QStringLiteral("runplanectl submit did not finish");
    }
    return p.exitCode() == 0
               ? QString()
               : QString::fromUtf8(p.readAllStandardError() + p.readAllStandardOutput());
}

QString stateOf(RunsPage& runs, const QString& runId) {
    const RunRow* run = runs.runsModel()->run(runId);
    return run != nullptr ? stateName(run->state) : QString();
}

}  // namespace

TEST(Afternoon, DesignLaunchWatchCompareExportAt1920x1080And1280x720) {
    if (!QFileInfo(bin() + QStringLiteral("/compute/smoke/runplane-smoke")).isExecutable()) {
        GTEST_SKIP() << "runplane-smoke was not built (LibTorch unavailable)";
    }
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    test::DaemonProcess daemon(QStringLiteral("afternoon-node"), 5);
    ASSERT_TRUE(daemon.ok()) << daemon.error().toStdString();
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    std::unique_ptr<MainWindow> window = createMainWindow(history, {daemon.address()});
    window->show();
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("the window as it opens"));
    }
    DesignPage* d = page<DesignPage>(*window);
    RunsPage* runs = page<RunsPage>(*window);
    ComparePage* compare = page<ComparePage>(*window);
    ClusterPage* cluster = page<ClusterPage>(*window);
    ASSERT_TRUE(d && runs && compare && cluster);
    ASSERT_TRUE(waitUntil([&] { return d->catalogReady(); }, 20000));

    // 1. Every recipe in recipes/ opens, and the window still fits either screen.
    window->setCurrentPage(QStringLiteral("Design"));
    const QStringList recipes =
        QDir(src() + QStringLiteral("/recipes")).entryList({QStringLiteral("*.yaml")}, QDir::Files);
    ASSERT_GE(recipes.size(), 5);
    for (const QString& r : recipes) {
        ASSERT_TRUE(openRecipe(*d, src() + QStringLiteral("/recipes/") + r));
        expectFits(window.get(), kScreens[1], QStringLiteral("Design: ") + r);
    }
    expectFits(window.get(), kScreens[0], QStringLiteral("Design after every recipe"));

    // 2. Design the earlier run (LoRA rank 8, alpha 16) from the smoke recipe; validate.
    ASSERT_TRUE(openRecipe(*d, src() + QStringLiteral("/recipes/smoke-local.yaml")));
    ASSERT_NO_FATAL_FAILURE(design(*d, 8, 16));
    EXPECT_EQ(errorsOf(*d), 0) << d->launchInvalidReason().toStdString();
    const QString a = dir.filePath(QStringLiteral("smoke-r8.yaml"));
    ASSERT_TRUE(save(*d, a));
    ASSERT_EQ(submit(daemon.address(), a, history, QStringLiteral("afternoon-r8"),
                     QStringLiteral("smoke r8"), shortArgv(8, 16)),
              QString());

    // 3. Edit LoRA rank and alpha for the second run: the preview follows the form.
    ASSERT_NO_FATAL_FAILURE(design(*d, 4, 8));
    EXPECT_EQ(errorsOf(*d), 0) << d->launchInvalidReason().toStdString();
    EXPECT_TRUE(d->launchInvalidReason().isEmpty()) << d->launchInvalidReason().toStdString();
    const QString preview = d->launchPreviewText();
    for (const auto& [flag, field] : std::vector<std::pair<QString, QString>>{
             {QStringLiteral("--lora-rank"), QStringLiteral("lora.rank")},
             {QStringLiteral("--rollout-batch-size"), QStringLiteral("batch.rollout_batch_size")},
             {QStringLiteral("--n-samples-per-prompt"),
              QStringLiteral("batch.n_samples_per_prompt")},
             {QStringLiteral("--global-batch-size"), QStringLiteral("batch.global_batch_size")},
             {QStringLiteral("--num-rollout"), QStringLiteral("batch.num_rollout")}}) {
        EXPECT_EQ(flagValue(preview, flag), QString::number(formInt(*d, field)))
            << flag.toStdString() << " in the preview vs " << field.toStdString()
            << " in the form:\n"
            << preview.toStdString();
    }
    auto* alphaField =
        qobject_cast<QDoubleSpinBox*>(d->form()->editor(QStringLiteral("lora.alpha")));
    ASSERT_NE(alphaField, nullptr);
    EXPECT_EQ(flagValue(preview, QStringLiteral("--lora-alpha")).toDouble(), alphaField->value());
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Design: smoke r4"));
    }
    EXPECT_TRUE(window->grab().save(test::screenshotPath(QStringLiteral("afternoon-design.png"))));
    const QString b = dir.filePath(QStringLiteral("smoke-r4.yaml"));
    ASSERT_TRUE(save(*d, b));
    ASSERT_EQ(submit(daemon.address(), b, history, QStringLiteral("afternoon-r4"),
                     QStringLiteral("smoke r4"), shortArgv(4, 8)),
              QString());

    // 4. Watch it live on the Runs page (the Cluster page ingests the daemon).
    window->setCurrentPage(QStringLiteral("Runs"));
    ASSERT_TRUE(waitUntil(
        [&] {
            runs->refreshRuns();
            test::pump(200);
            return runs->runsModel()->rowCount() == 2;
        },
        30000));
    ASSERT_TRUE(runs->selectRun(QStringLiteral("afternoon-r4")));
    RunView* view = runs->runView();
    ASSERT_TRUE(waitUntil(
        [&] {
            auto s = view->snapshot();
            return s && !s->hostMemory.empty();
        },
        120000))
        << "no host memory for the run";
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Runs: live"));
    }
    EXPECT_TRUE(window->grab().save(test::screenshotPath(QStringLiteral("afternoon-live.png"))));
    // Both runs end; the list says so.
    ASSERT_TRUE(waitUntil(
        [&] {
            runs->refreshRuns();
            test::pump(300);
            return stateOf(*runs, QStringLiteral("afternoon-r8")) == QStringLiteral("finished") &&
                   stateOf(*runs, QStringLiteral("afternoon-r4")) == QStringLiteral("finished");
        },
        180000))
        << stateOf(*runs, QStringLiteral("afternoon-r8")).toStdString() << " / "
        << stateOf(*runs, QStringLiteral("afternoon-r4")).toStdString();

    // 5. Compare with the earlier run: the diff names what was edited, with the values.
    window->setCurrentPage(QStringLiteral("Compare"));
    // a list applied earlier (before the runs finished) does not count: this refresh's does
    const int listsBefore = compare->runListsApplied();
    compare->refreshRuns();
    ASSERT_TRUE(waitUntil([&] { return compare->runListsApplied() > listsBefore; }, 10000));
    const int applied = compare->comparisonsApplied();
    ASSERT_TRUE(
        compare->selectRuns({QStringLiteral("afternoon-r8"), QStringLiteral("afternoon-r4")}));
    ASSERT_TRUE(waitUntil([&] { return compare->comparisonsApplied() > applied; }, 20000));
    const CompareModel& m = *compare->compareModel();
    const QStringList diff = m.diffFields();
    for (const char* f : {"lora.rank", "lora.alpha", "launcher.argv"}) {
        EXPECT_TRUE(diff.contains(QString::fromLatin1(f)))
            << f << " not in " << diff.join(',').toStdString();
    }
    EXPECT_FALSE(diff.contains(QStringLiteral("batch.rollout_batch_size")));
    for (int r = m.summaryRowCount(); r < m.rowCount(); ++r) {
        const QString field = m.index(r, 0).data().toString();
        const QString v1 = m.index(r, 1).data().toString();
        const QString v2 = m.index(r, 2).data().toString();
        const bool r8First =
            m.headerData(1, Qt::Horizontal).toString().contains(QStringLiteral("r8"));
        if (field == QStringLiteral("lora.rank")) {
            EXPECT_EQ(r8First ? v1 : v2, QStringLiteral("8"));
            EXPECT_EQ(r8First ? v2 : v1, QStringLiteral("4"));
        }
        if (field == QStringLiteral("launcher.argv")) {
            EXPECT_TRUE((r8First ? v1 : v2).contains(QStringLiteral("--lora-rank 8")))
                << v1.toStdString();
            EXPECT_TRUE((r8First ? v2 : v1).contains(QStringLiteral("--lora-rank 4")))
                << v2.toStdString();
        }
    }
    for (QSize s : kScreens) {
        expectFits(window.get(), s, QStringLiteral("Compare"));
    }
    EXPECT_TRUE(window->grab().save(test::screenshotPath(QStringLiteral("afternoon-compare.png"))));

    // 6. Export: the picture and the numbers.
    const QStringList metrics = compare->data().metricNames;
    ASSERT_FALSE(metrics.isEmpty());
    ASSERT_TRUE(compare->exportPng(dir.filePath(QStringLiteral("c.png"))));
    EXPECT_FALSE(QImage(dir.filePath(QStringLiteral("c.png"))).isNull());
    ASSERT_TRUE(compare->exportCsv(dir.filePath(QStringLiteral("c.csv"))));
    QFile csv(dir.filePath(QStringLiteral("c.csv")));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    const QStringList lines =
        QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    ASSERT_GE(lines.size(), 3);
    std::size_t points = 0;
    for (const CompareRun& run : compare->data().runs) {
        for (const PointSeries& s : run.metrics) {
            points += s.name == compare->data().metricNames.front() ? s.t.size() : 0;
        }
    }
    Q_UNUSED(points);
    EXPECT_TRUE(lines[1].startsWith(QStringLiteral("afternoon-r"))) << lines[1].toStdString();
    AppSettings::setFileOverride(QString());
}
