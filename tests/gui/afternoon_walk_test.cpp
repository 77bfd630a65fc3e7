// issue 46: the afternoon's walk at each screen, 1920x1080 and 1280x720 (one test per screen):
// the real main window opens every recipe in recipes/ on the Design page (the window fits the
// screen after each, the recipe form never scrolls sideways, no two texts of the memory budget
// charts meet), watches a run of a real SQLite history on the Runs page and compares two runs on
// the Compare page (the diff names LoRA rank and alpha with their values). On every page: no
// chart title drawn over another, checked on the window rendered to a QImage
// (plot_text_checks.h), and no two time-axis tick labels meeting. Needs no daemon: the history
// is written by the test (synthetic_history.h), the two runs carrying recipes/smoke-local.yaml
// and recipes/smoke-local-r4.yaml. The daemon-backed steps are afternoon_test.cpp and
// afternoon_restart_test.cpp; the fit checks are theirs (afternoon_checks.h). Saves
// afternoon-walk-1920x1080.png and afternoon-walk-1280x720.png.
#include <gtest/gtest.h>

#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTemporaryDir>

#include <ostream>

#include "db/history/history.h"
#include "gui/models/compare_model.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/recipe_form.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/memory_budget_chart.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/plot_text_checks.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::waitUntil;

namespace {

/// Two finished runs of the smoke recipe, LoRA rank 8 and rank 4, an hour apart.
void writeHistory(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    int i = 0;
    for (const char* recipe : {"smoke-local.yaml", "smoke-local-r4.yaml"}) {
        test::SyntheticRunSpec spec;
        spec.runId = i == 0 ? "walk-r8" : "walk-r4";
        spec.name = i == 0 ? "smoke r8" : "smoke r4";
        spec.recipeYaml = test::sourceRecipe(recipe);
        ASSERT_FALSE(spec.recipeYaml.empty()) << recipe;
        spec.seconds = 900;
        spec.evalSteps = 12;
        spec.evalEnd = i == 0 ? 0.75 : 0.71;
        spec.startNs += static_cast<std::int64_t>(i) * 3600 * 1'000'000'000LL;
        auto written = test::writeSyntheticRun(**h, spec);
        ASSERT_TRUE(written) << written.error();
        ++i;
    }
}

/// Every visible chart's titles and every visible time plot's tick labels, on this page.
void expectNoTextOverText(QWidget* window, QSize screen, const QString& step) {
    for (TimeSeriesPlot* plot : window->findChildren<TimeSeriesPlot*>()) {
        if (plot->isVisible()) {
            plot->flush();
        }
    }
    test::pump(50);
    QStringList problems = plotcheck::chartTitleProblems(window);
    for (TimeSeriesPlot* plot : window->findChildren<TimeSeriesPlot*>()) {
        if (plot->isVisible() && plot->dataRect().width() >= 50) {
            problems += plotcheck::tickLabelProblems(plot);
        }
    }
    EXPECT_TRUE(problems.isEmpty())
        << step.toStdString() << " at " << screen.width() << "×" << screen.height() << ":\n  "
        << problems.join(QStringLiteral("\n  ")).toStdString();
}

}  // namespace

// The screen as ctest names its test ("1920x1080", not the QSize's bytes).
void PrintTo(const QSize& size, std::ostream* out) {
    *out << size.width() << "x" << size.height();
}

class AfternoonWalk : public ::testing::TestWithParam<QSize> {};

TEST_P(AfternoonWalk, EveryRecipeARunAndACompareFitWithNoTextOverText) {
    const QSize screen = GetParam();
    QTemporaryDir dir;
    ASSERT_NO_FATAL_FAILURE(writeHistory(dir.filePath(QStringLiteral("history.sqlite"))));
    std::unique_ptr<MainWindow> window = openWindow(dir, screen, QStringLiteral("Design"));
    expectFits(window.get(), screen, QStringLiteral("the window as it opens"));
    DesignPage* d = page<DesignPage>(*window);
    RunsPage* runs = page<RunsPage>(*window);
    ComparePage* compare = page<ComparePage>(*window);
    ASSERT_TRUE(d && runs && compare);

    // 1. Every recipe in recipes/ on the Design page, both memory charts looked at.
    ASSERT_TRUE(waitUntil([&] { return d->catalogReady(); }, 20000));
    const QStringList recipes = recipeFiles();
    ASSERT_GE(recipes.size(), 5);
    for (const QString& r : recipes) {
        ASSERT_TRUE(openRecipe(*d, r));
        expectFits(window.get(), screen, QStringLiteral("Design: ") + r);
        auto* form = d->form()->findChild<QScrollArea*>();
        ASSERT_NE(form, nullptr);
        EXPECT_FALSE(form->horizontalScrollBar()->isVisible())
            << r.toStdString() << ": the recipe form scrolls sideways at " << screen.width();
        for (MemoryBudgetChart* chart : {d->hostChart(), d->gpuChart()}) {
            d->viewTabs()->setCurrentWidget(chart);
            test::pump(60);
            expectNoTextOverText(window.get(), screen, QStringLiteral("Design charts: ") + r);
        }
    }

    // 2. A run of the history on the Runs page.
    window->setCurrentPage(QStringLiteral("Runs"));
    ASSERT_TRUE(showRun(*runs, QStringLiteral("walk-r4"), 2));
    expectFits(window.get(), screen, QStringLiteral("Runs"));
    expectNoTextOverText(window.get(), screen, QStringLiteral("Runs"));

    // 3. Compare the two: the diff names what differs, with the values.
    window->setCurrentPage(QStringLiteral("Compare"));
    compare->refreshRuns();
    ASSERT_TRUE(waitUntil([&] { return compare->runListsApplied() > 0; }, 10000));
    const int applied = compare->comparisonsApplied();
    ASSERT_TRUE(compare->selectRuns({QStringLiteral("walk-r8"), QStringLiteral("walk-r4")}));
    ASSERT_TRUE(waitUntil([&] { return compare->comparisonsApplied() > applied; }, 20000));
    const CompareModel& m = *compare->compareModel();
    const QStringList diff = m.diffFields();
    for (const char* f : {"lora.rank", "lora.alpha"}) {
        EXPECT_TRUE(diff.contains(QString::fromLatin1(f)))
            << f << " not in " << diff.join(',').toStdString();
    }
    EXPECT_FALSE(diff.contains(QStringLiteral("batch.rollout_batch_size")));
    const bool r8First = m.headerData(1, Qt::Horizontal).toString().contains(QStringLiteral("r8"));
    bool sawRank = false;
    for (int r = m.summaryRowCount(); r < m.rowCount(); ++r) {
        if (m.index(r, 0).data().toString() == QStringLiteral("lora.rank")) {
            sawRank = true;
            EXPECT_EQ(m.index(r, r8First ? 1 : 2).data().toString(), QStringLiteral("8"));
            EXPECT_EQ(m.index(r, r8First ? 2 : 1).data().toString(), QStringLiteral("4"));
        }
    }
    EXPECT_TRUE(sawRank);
    test::pump(200);
    expectFits(window.get(), screen, QStringLiteral("Compare"));
    expectNoTextOverText(window.get(), screen, QStringLiteral("Compare"));
    const QString shot = screen.width() == 1280
                             ? test::screenshotPath(QStringLiteral("afternoon-walk-1280x720.png"))
                             : test::screenshotPath(QStringLiteral("afternoon-walk-1920x1080.png"));
    EXPECT_TRUE(window->grab().save(shot));
    AppSettings::setFileOverride(QString());
}

INSTANTIATE_TEST_SUITE_P(Screens, AfternoonWalk, ::testing::ValuesIn(kScreens),
                         [](const ::testing::TestParamInfo<QSize>& p) {
                             return std::to_string(p.param.width()) + "x" +
                                    std::to_string(p.param.height());
                         });
