#pragma once
// Shared set-up of the Compare page tests (issue 49: baseline, groups, annotations, grid
// smoothing, fork marks): show the page on a history, wait for its run list, select the runs and
// wait for the comparison; find a plot's series by name and a table row by its field.

#include <gtest/gtest.h>

#include <QSize>
#include <QStringList>

#include "gui/models/compare_model.h"
#include "gui/pages/compare_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"

namespace runplane::gui::test {

/// Shows `page` at `size` and waits (10 s) for its run list.
inline ::testing::AssertionResult showComparePage(ComparePage& page,
                                                  QSize size = QSize(1400, 900)) {
    page.resize(size);
    page.show();
    if (!waitUntil([&] { return page.runListsApplied() > 0; }, 10000)) {
        return ::testing::AssertionFailure() << "the run list never arrived";
    }
    return ::testing::AssertionSuccess();
}

/// showComparePage, then selects `runs` and waits (10 s) for the comparison to be applied. Use
/// as ASSERT_TRUE(openComparePage(page, {...})).
inline ::testing::AssertionResult openComparePage(ComparePage& page, const QStringList& runs,
                                                  QSize size = QSize(1400, 900)) {
    if (auto shown = showComparePage(page, size); !shown) {
        return shown;
    }
    if (!page.selectRuns(runs)) {
        return ::testing::AssertionFailure()
               << "could not select " << runs.join(QStringLiteral(", ")).toStdString();
    }
    if (!waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000)) {
        return ::testing::AssertionFailure() << "the comparison never arrived";
    }
    return ::testing::AssertionSuccess();
}

/// The plot's series called `name`, or null.
inline const PlotSeries* seriesNamed(const TimeSeriesPlot& plot, const QString& name) {
    for (const PlotSeries& s : plot.series()) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

/// The row of the comparison table whose first column reads `field`, or -1.
inline int rowOf(const CompareModel& m, const QString& field) {
    for (int r = 0; r < m.rowCount(); ++r) {
        if (m.index(r, 0).data().toString() == field) {
            return r;
        }
    }
    return -1;
}

}  // namespace runplane::gui::test
