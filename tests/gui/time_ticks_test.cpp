// issue 46: time-axis tick labels drawn over each other (`19:32:1019:32:15` on the Runs page).
// The tick step comes from the label's width: no two tick labels meet, by QCustomPlot's own tick
// vector and the tick font's metrics, and by a pixel test on the rendered plot
// (plot_text_checks.h).
// 1. A TimeSeriesPlot alone: wall-clock and elapsed-time axes over spans from 8 s to 7 h, at
//    widths from 160 px to 1900 px. 2. The real main window's Runs page over a real history
//    (synthetic run) at 1280x720 and 1920x1080, zoomed to several spans: every visible plot.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <cmath>

#include "db/history/history.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/time_series_plot.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/plot_text_checks.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::waitUntil;

namespace {

PlotSeries wave(double t0, double span, double step) {
    PlotSeries s;
    s.name = QStringLiteral("node-a");
    s.color = Qt::blue;
    for (double t = 0; t <= span; t += step) {
        s.t.push_back(t0 + t);
        s.value.push_back(100 + 50 * std::sin(t / span * 6.28));
    }
    return s;
}

void expectNoMeetingTicks(TimeSeriesPlot* plot, const std::string& where) {
    const QStringList geometric = plotcheck::tickLabelProblems(plot);
    EXPECT_TRUE(geometric.isEmpty())
        << where << ": " << geometric.join(QStringLiteral("; ")).toStdString();
    const QStringList pixels = plotcheck::tickLabelPixelProblems(plot);
    EXPECT_TRUE(pixels.isEmpty()) << where << ": "
                                  << pixels.join(QStringLiteral("; ")).toStdString();
}

}  // namespace

TEST(TimeTicks, NoTwoTickLabelsMeetAtAnyWidthOrSpan) {
    const double t0 = 1767261600 + 19 * 3600 + 32 * 60;  // 19:32 on 2026-01-01 (UTC)
    for (XAxisKind kind : {XAxisKind::WallClock, XAxisKind::ElapsedSeconds}) {
        TimeSeriesPlot plot;
        plot.setXAxisKind(kind);
        plot.show();
        const double base = kind == XAxisKind::WallClock ? t0 : 0;
        for (double span : {8.0, 45.0, 190.0, 1020.0, 3600.0, 7 * 3600.0}) {
            plot.setSeries({wave(base, span, span / 200)});
            for (int width = 160; width <= 1900; width += 87) {
                plot.resize(width, 260);
                plot.setVisibleRange(base, base + span);
                plot.flush();
                test::pump(5);
                plot.flush();
                // Never none; and spacing the labels out does not leave a wide axis bare.
                const size_t want = plot.dataRect().width() >= 600   ? 3U
                                    : plot.dataRect().width() >= 300 ? 2U
                                                                     : 1U;
                ASSERT_GE(plotcheck::xTickLabels(&plot).size(), want)
                    << "span " << span << " at " << width << " px (data " << plot.dataRect().width()
                    << " px): too few tick labels";
                expectNoMeetingTicks(&plot,
                                     (kind == XAxisKind::WallClock ? "wall clock" : "elapsed") +
                                         std::string(", span ") + std::to_string(span) + " s at " +
                                         std::to_string(width) + " px");
            }
        }
    }
}

TEST(TimeTicks, RunsPagePlotsAt1280x720And1920x1080) {
    QTemporaryDir dir;
    test::SyntheticRunSpec spec;
    spec.seconds = 1800;
    {
        auto h = db::History::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
        ASSERT_TRUE(h) << h.error();
        auto written = test::writeSyntheticRun(**h, spec);
        ASSERT_TRUE(written) << written.error();
    }
    std::unique_ptr<MainWindow> window = openWindow(dir, kScreens[0], QStringLiteral("Runs"));
    RunsPage* runs = page<RunsPage>(*window);
    ASSERT_NE(runs, nullptr);
    ASSERT_TRUE(showRun(*runs, QString::fromStdString(spec.runId), 1));
    const double start = static_cast<double>(spec.startNs) * 1e-9;
    for (QSize screen : kScreens) {
        window->resize(screen);
        test::pump(200);
        int checked = 0;
        for (double span : {10.0, 55.0, 300.0, 1800.0}) {
            for (TimeSeriesPlot* plot : window->findChildren<TimeSeriesPlot*>()) {
                if (!plot->isVisible() || plot->dataRect().width() < 50) {
                    continue;
                }
                plot->setVisibleRange(start + 100, start + 100 + span);
                plot->flush();
                test::pump(5);
                plot->flush();
                expectNoMeetingTicks(plot, std::to_string(screen.width()) + "x" +
                                               std::to_string(screen.height()) + ", '" +
                                               plot->xAxisLabel().toStdString() + "', span " +
                                               std::to_string(span) + " s, plot " +
                                               std::to_string(plot->width()) + " px");
                ++checked;
            }
        }
        EXPECT_GE(checked, 4) << "no plot on the Runs page at " << screen.width();
    }
    EXPECT_TRUE(window->grab().save(test::screenshotPath(QStringLiteral("runs-time-ticks.png"))));
    AppSettings::setFileOverride(QString());
}
