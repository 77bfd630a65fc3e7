// issue 46: missing telemetry looks missing. A node whose daemon stopped for a while has no
// samples over that while: the host-memory plot (the builder the Runs and Cluster pages use) draws
// a break there, not a straight line, and hovering inside it says "no data", never a value read
// off a line. Real TimeSeriesPlot under the offscreen platform, pixels read from its render.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>

#include <cmath>

#include "gui/models/series_data.h"
#include "gui/pages/plot_builders.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/series_gaps.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

// 1 s samples at 600 GB over [1000, 1050) and [1120, 1170): the daemon was stopped for 70 s.
PointSeries nodeWithHole(double holeFrom = 1050, double holeTo = 1120) {
    PointSeries s;
    s.nodeId = QStringLiteral("node-a");
    s.name = QStringLiteral("host.mem.used_bytes");
    s.unit = QStringLiteral("bytes");
    for (double t = 1000; t < 1170; t += 1) {
        if (t >= holeFrom && t < holeTo) {
            continue;
        }
        s.t.push_back(t);
        s.value.push_back(t < holeFrom ? 600e9 : 700e9);
        s.step.push_back(-1);
    }
    return s;
}

QWidget* customPlotOf(TimeSeriesPlot& plot) {
    for (QWidget* w : plot.findChildren<QWidget*>()) {
        if (QLatin1String(w->metaObject()->className()) == QLatin1String("QCustomPlot")) {
            return w;
        }
    }
    return nullptr;
}

// Pixels near the series' colour in the data area's column at x = key.
int seriesPixelsAt(TimeSeriesPlot& plot, double key, const QColor& color) {
    QWidget* custom = customPlotOf(plot);
    if (custom == nullptr) {
        return -1;
    }
    const QImage img = custom->grab().toImage();
    const QRect r = plot.dataRect();
    const auto [lo, hi] = plot.visibleRange();
    const int x = r.left() + static_cast<int>(std::lround((key - lo) / (hi - lo) * r.width()));
    int n = 0;
    for (int y = r.top(); y <= r.bottom(); ++y) {
        const QColor c = img.pixelColor(x, y);
        if (std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
                std::abs(c.blue() - color.blue()) <
            60) {
            ++n;
        }
    }
    return n;
}

}  // namespace

TEST(TelemetryGaps, AStoppedDaemonsHoleIsABreakInTheLineAndHoverSaysNoData) {
    TimeSeriesPlot plot;
    plot.resize(900, 400);
    plot.show();
    showHostMemory(plot, {nodeWithHole()}, MemoryLines{}, {}, {});
    plot.flush();
    plot.setVisibleRange(1000, 1170);
    plot.flush();
    test::pump(50);
    const QColor color = seriesColor(0);
    // Measured on both sides: the line is there.
    EXPECT_GT(seriesPixelsAt(plot, 1025, color), 0);
    EXPECT_GT(seriesPixelsAt(plot, 1145, color), 0);
    // Inside the hole (1085): no stroke from 600 to 700 GB across it.
    EXPECT_EQ(seriesPixelsAt(plot, 1085, color), 0);
    const QString inside = plot.hoverText(1085);
    EXPECT_TRUE(inside.contains(QStringLiteral("no data"))) << inside.toStdString();
    EXPECT_FALSE(inside.contains(QStringLiteral("600"))) << inside.toStdString();
    EXPECT_FALSE(inside.contains(QStringLiteral("700"))) << inside.toStdString();
    // Outside it, the measured value.
    const QString before = plot.hoverText(1025);
    EXPECT_FALSE(before.contains(QStringLiteral("no data"))) << before.toStdString();
    EXPECT_TRUE(before.contains(QStringLiteral("600"))) << before.toStdString();
}

TEST(TelemetryGaps, TheHistorysGapEventBreaksTheLineWhateverTheSpacing) {
    // No hole in the spacing, but the ingestor recorded lost records (a `gap` event) at 1100.
    PointSeries s = nodeWithHole(2000, 2000);
    EventRow gap;
    gap.t = 1100.5;
    gap.nodeId = s.nodeId;
    gap.kind = QString::fromLatin1(telemetry::toString(telemetry::EventKind::Gap));
    gap.message = QStringLiteral("records 40-55 lost");
    TimeSeriesPlot plot;
    showHostMemory(plot, {s}, MemoryLines{}, {}, {gap});
    plot.flush();
    ASSERT_EQ(plot.seriesCount(), 1);
    EXPECT_TRUE(plot.hoverText(1100.5).contains(QStringLiteral("no data")));
    EXPECT_FALSE(plot.hoverText(1099).contains(QStringLiteral("no data")));
    // Another node's gap event leaves this node's line whole.
    gap.nodeId = QStringLiteral("node-b");
    showHostMemory(plot, {s}, MemoryLines{}, {}, {gap});
    plot.flush();
    EXPECT_FALSE(plot.hoverText(1100.5).contains(QStringLiteral("no data")));
}

TEST(TelemetryGaps, TheRuleIsMoreThanThreeMedianIntervals) {
    // 2 s samples: a 6 s spacing is no gap (3 intervals), 6.5 s is.
    const std::vector<double> t{0, 2, 4, 6, 8, 14, 16, 18, 24.5, 26};
    const auto gaps = findGaps(t);
    ASSERT_EQ(gaps.size(), 1U);
    EXPECT_EQ(gaps[0].first, 18);
    EXPECT_EQ(gaps[0].second, 24.5);
    EXPECT_DOUBLE_EQ(sampleInterval(t), 2);
    EXPECT_TRUE(findGaps({0, 100}).empty()) << "two points have no interval";
}
