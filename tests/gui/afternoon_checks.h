#pragma once
// The afternoon tests' shared checks (issue 46; afternoon_test.cpp, afternoon_restart_test.cpp):
// the window fits the screen with no label cut off or drawn over another, and opening a recipe
// on the Design page as a user does. Also used by gui_fit_test (design_fit_test.cpp,
// cluster_fit_test.cpp, time_ticks_test.cpp, afternoon_walk_test.cpp): the main window at a
// screen on a page, the recipes/ files, a run shown on the Runs page.

#include <gtest/gtest.h>

#include <QDir>
#include <QFontMetrics>
#include <QLabel>
#include <QSize>
#include <QStringList>
#include <QTemporaryDir>
#include <QWidget>

#include <memory>
#include <utility>
#include <vector>

#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"
#include "gui/models/run_models.h"
#include "gui/pages/design_page.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"

namespace runplane::gui::afternoon {

inline const QSize kScreens[] = {QSize(1920, 1080), QSize(1280, 720)};

/// What a user would call broken at this size: the window larger than the screen, or a label
/// whose text does not fit it (cut off), or two visible labels drawn over each other.
inline QStringList layoutProblems(QWidget* window, QSize screen) {
    QStringList problems;
    if (window->minimumSizeHint().width() > screen.width() ||
        window->minimumSizeHint().height() > screen.height()) {
        problems << QStringLiteral("minimum size %1×%2 exceeds the screen")
                        .arg(window->minimumSizeHint().width())
                        .arg(window->minimumSizeHint().height());
    }
    if (window->width() > screen.width() || window->height() > screen.height()) {
        problems << QStringLiteral("window %1×%2 exceeds the screen")
                        .arg(window->width())
                        .arg(window->height());
    }
    std::vector<std::pair<QLabel*, QRect>> shown;
    for (QLabel* label : window->findChildren<QLabel*>()) {
        if (!label->isVisible() || label->text().isEmpty() || label->width() <= 0) {
            continue;
        }
        const QRect r(label->mapTo(window, QPoint(0, 0)), label->size());
        if (!r.intersects(window->rect())) {
            continue;  // inside a scrolled-away region
        }
        if (!label->wordWrap() && label->pixmap().isNull() && label->textFormat() != Qt::RichText &&
            !label->text().contains(QLatin1Char('<')) &&
            label->fontMetrics().horizontalAdvance(label->text().split(QLatin1Char('\n')).first()) >
                label->contentsRect().width() + 1) {
            problems << QStringLiteral("label '%1' cut off (%2 px of text in %3 px)")
                            .arg(label->text().left(60))
                            .arg(label->fontMetrics().horizontalAdvance(label->text()))
                            .arg(label->contentsRect().width());
        }
        shown.emplace_back(label, r);
    }
    // A plot's axis title is drawn along its data area: it must not run past it.
    for (TimeSeriesPlot* plot : window->findChildren<TimeSeriesPlot*>()) {
        if (!plot->isVisible() || plot->dataRect().height() < 20) {
            continue;
        }
        const QFontMetrics fm(plot->axisLabelFont());
        const QString y = plot->shownAxisLabel(Qt::Vertical);
        const QString x = plot->shownAxisLabel(Qt::Horizontal);
        if (fm.horizontalAdvance(y) > plot->dataRect().height() + 1) {
            problems << QStringLiteral("y axis title '%1' (%2 px) longer than its axis (%3 px)")
                            .arg(y)
                            .arg(fm.horizontalAdvance(y))
                            .arg(plot->dataRect().height());
        }
        if (fm.horizontalAdvance(x) > plot->dataRect().width() + 1) {
            problems << QStringLiteral("x axis title '%1' (%2 px) longer than its axis (%3 px)")
                            .arg(x)
                            .arg(fm.horizontalAdvance(x))
                            .arg(plot->dataRect().width());
        }
    }
    for (size_t i = 0; i < shown.size(); ++i) {
        for (size_t j = i + 1; j < shown.size(); ++j) {
            const QRect both = shown[i].second.intersected(shown[j].second);
            if (both.width() > 2 && both.height() > 2 &&
                !shown[i].first->isAncestorOf(shown[j].first) &&
                !shown[j].first->isAncestorOf(shown[i].first)) {
                problems << QStringLiteral("labels '%1' and '%2' overlap")
                                .arg(shown[i].first->text().left(40),
                                     shown[j].first->text().left(40));
            }
        }
    }
    return problems;
}

inline void expectFits(QWidget* window, QSize screen, const QString& step) {
    window->resize(screen);
    test::pump(150);
    const QStringList problems = layoutProblems(window, screen);
    EXPECT_TRUE(problems.isEmpty())
        << step.toStdString() << " at " << screen.width() << "×" << screen.height() << ":\n  "
        << problems.join(QStringLiteral("\n  ")).toStdString();
}

template <typename T>
T* page(MainWindow& w) {
    T* p = w.findChild<T*>();
    EXPECT_NE(p, nullptr);
    return p;
}

inline bool openRecipe(DesignPage& design, const QString& path) {
    QString error = QStringLiteral("(not loaded)");
    const QMetaObject::Connection c =
        QObject::connect(&design, &DesignPage::fileLoaded, &design,
                         [&](const QString&, const QString& e) { error = e; });
    design.openFile(path);
    const bool loaded =
        test::waitUntil([&] { return error != QStringLiteral("(not loaded)"); }, 15000);
    QObject::disconnect(c);
    EXPECT_TRUE(loaded && error.isEmpty()) << path.toStdString() << ": " << error.toStdString();
    return loaded && error.isEmpty();
}

/// The real main window over `dir`/history.sqlite (its settings in `dir` too; the caller resets
/// AppSettings::setFileOverride), shown at `screen` on the page titled `pageTitle`.
inline std::unique_ptr<MainWindow> openWindow(const QTemporaryDir& dir, QSize screen,
                                              const QString& pageTitle) {
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    std::unique_ptr<MainWindow> window =
        createMainWindow(dir.filePath(QStringLiteral("history.sqlite")), {});
    window->resize(screen);
    window->show();
    window->setCurrentPage(pageTitle);
    return window;
}

/// Every recipe in the source tree's recipes/ (not its subfolders), full paths, by name.
inline QStringList recipeFiles() {
    const QString root = test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/recipes/");
    QStringList out;
    for (const QString& f :
         QDir(root).entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name)) {
        out << root + f;
    }
    return out;
}

/// Refreshes the run list until it has `rows` runs, selects `runId` and waits for its host
/// memory. False (with a failure) when any step does not happen.
inline bool showRun(RunsPage& runs, const QString& runId, int rows) {
    const bool listed = test::waitUntil(
        [&] {
            runs.refreshRuns();
            test::pump(100);
            return runs.runsModel()->rowCount() == rows;
        },
        20000);
    EXPECT_TRUE(listed) << runs.runsModel()->rowCount() << " runs listed, not " << rows;
    EXPECT_TRUE(listed && runs.selectRun(runId)) << runId.toStdString();
    const bool shown = listed && test::waitUntil(
                                     [&] {
                                         auto s = runs.runView()->snapshot();
                                         return s && !s->hostMemory.empty();
                                     },
                                     20000);
    EXPECT_TRUE(shown) << "no host memory for " << runId.toStdString();
    return shown;
}

}  // namespace runplane::gui::afternoon
