// TimeSeriesPlot: coalesced redraw, bands, follow mode, export.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QSet>
#include <QTemporaryDir>
#include <QWheelEvent>

#include <cmath>

#include <qcustomplot.h>

#include "gui/widgets/time_series_plot.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane::gui;
using runplane::gui::test::pump;
using runplane::gui::test::waitUntil;

namespace {

PlotSeries ramp(const QString& name, int n, double t0, double spikeAt = -1) {
    PlotSeries s;
    s.name = name;
    s.color = Qt::blue;
    for (int i = 0; i < n; ++i) {
        const double v = 100 + 10 * std::sin(i * 0.1);
        s.t.push_back(t0 + i);
        s.value.push_back(v);
        s.min.push_back(v - 2);
        s.max.push_back(i == spikeAt ? 900 : v + 2);
    }
    return s;
}

}  // namespace

TEST(TimeSeriesPlot, RedrawIsCoalescedOnATimerNeverPerUpdate) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.show();
    pump(100);
    const int before = plot.replotCount();
    // 500 updates within ~0.25 s: per-sample replotting would give 500 replots.
    for (int i = 0; i < 500; ++i) {
        plot.setSeries({ramp(QStringLiteral("node-a"), 50 + i, 1000)});
        if (i % 50 == 0) {
            pump(25);
        }
    }
    pump(200);
    const int replots = plot.replotCount() - before;
    EXPECT_GE(replots, 1);
    EXPECT_LE(replots, 20) << "at most one replot per 40 ms tick";
    EXPECT_EQ(plot.seriesCount(), 1);
}

TEST(TimeSeriesPlot, DrawsBandAlarmLinesPhasesAndEvents) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setSeries(
        {ramp(QStringLiteral("node-a"), 100, 0), ramp(QStringLiteral("node-b"), 100, 0)});
    plot.setAlarmLines({AlarmLine{QStringLiteral("alarm 750 GB"), 750, Qt::red, true}});
    plot.setPhases(
        {PhaseSpan{QStringLiteral("rollout"), 0, 40}, PhaseSpan{QStringLiteral("train"), 40, 99}});
    plot.setEvents({EventMarker{50, QStringLiteral("memory alarm"), Qt::red}});
    plot.flush();
    // Two series with bands: 3 graphs each (upper, lower, line) of 100 points.
    EXPECT_EQ(plot.drawnPointCount(), 600);
    EXPECT_EQ(plot.alarmLineCount(), 1);
    EXPECT_EQ(plot.phaseCount(), 2);
    EXPECT_EQ(plot.eventCount(), 1);
}

// The plot paints from one layer buffer: QCustomPlot's own "overlay" layer, which it keeps in a
// second buffer blended on every paint, holds nothing here, so merging it changes no pixel.
TEST(TimeSeriesPlot, PaintsFromOneLayerBufferWithTheSamePixels) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setSeries(
        {ramp(QStringLiteral("node-a"), 100, 0), ramp(QStringLiteral("node-b"), 100, 0, 50)});
    plot.setAlarmLines({AlarmLine{QStringLiteral("alarm 750 GB"), 750, Qt::red, true}});
    plot.setPhases({PhaseSpan{QStringLiteral("rollout"), 0, 40}});
    plot.show();
    plot.flush();
    auto* custom = plot.findChild<QCustomPlot*>();
    ASSERT_NE(custom, nullptr);
    QCPLayer* overlay = custom->layer(QStringLiteral("overlay"));
    ASSERT_NE(overlay, nullptr);
    EXPECT_EQ(overlay->mode(), QCPLayer::lmLogical);
    auto render = [&] {
        custom->replot(QCustomPlot::rpImmediateRefresh);
        QImage image(plot.size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        plot.render(&image);
        return image;
    };
    const QImage merged = render();
    overlay->setMode(QCPLayer::lmBuffered);  // QCustomPlot's default
    EXPECT_TRUE(render() == merged);
}

// An empty legend used to cap the plot's layout column at its few pixels of margin: a plot with
// nothing to show (a run without GPUs) drew its axes 50 px wide in a 390 px plot, tick labels
// piled on each other. The legend leaves the layout while it has no entries.
TEST(TimeSeriesPlot, AnEmptyPlotKeepsItsFullWidth) {
    for (const bool legendVisible : {false, true}) {
        TimeSeriesPlot plot;
        plot.resize(390, 250);
        plot.setLegendVisible(legendVisible);
        plot.show();
        plot.setPlaceholder(QStringLiteral("no GPU memory samples (no GPU, or NVML unavailable)"));
        plot.flush();
        EXPECT_GT(plot.dataRect().width(), 300) << "legend visible: " << legendVisible;
        EXPECT_TRUE(plot.legendRect().isEmpty());
        auto* custom = plot.findChild<QCustomPlot*>();
        ASSERT_NE(custom, nullptr);
        for (QCPAxis* axis : {custom->xAxis, custom->yAxis}) {
            EXPECT_FALSE(axis->tickLabels()) << "no numbers on axes without data";
            EXPECT_FALSE(axis->ticks());
            EXPECT_FALSE(axis->grid()->visible()) << "no zero line through the placeholder";
        }
        // Entries bring the legend back, above the data.
        plot.setSeries({ramp(QStringLiteral("node-a"), 100, 0)});
        plot.flush();
        EXPECT_GT(plot.dataRect().width(), 300);
        EXPECT_EQ(!plot.legendRect().isEmpty(), legendVisible);
        for (QCPAxis* axis : {custom->xAxis, custom->yAxis}) {
            EXPECT_TRUE(axis->tickLabels());
            EXPECT_TRUE(axis->ticks());
            EXPECT_TRUE(axis->grid()->visible());
        }
        if (legendVisible) {
            EXPECT_LE(plot.legendRect().bottom(), plot.dataRect().top());
        }
    }
}

// A wall-clock axis over a few seconds (a run just started) labels each tick with its own second:
// QCustomPlot's date-time ticker stepped by half seconds there, "21:35:22" twice.
TEST(TimeSeriesPlot, WallClockTicksOverAFewSecondsAreDistinctSeconds) {
    for (int samples = 2; samples <= 8; ++samples) {  // 1 to 7 s of data, one sample a second
        TimeSeriesPlot plot;
        plot.resize(600, 300);
        plot.setXAxisKind(XAxisKind::WallClock);
        plot.setFollowWindow(0);
        plot.setSeries({ramp(QStringLiteral("node-a"), samples, 1767261600.0)});
        plot.show();
        plot.flush();
        auto* custom = plot.findChild<QCustomPlot*>();
        ASSERT_NE(custom, nullptr);
        const QVector<QString> labels = custom->xAxis->tickVectorLabels();
        ASSERT_GE(labels.size(), 2) << samples << " samples";
        const QSet<QString> distinct(labels.begin(), labels.end());
        EXPECT_EQ(distinct.size(), labels.size())
            << samples << " samples: " << labels.join(QStringLiteral(", ")).toStdString();
    }
}

// Legend entries wrap into as many columns as fit: four fixed columns ran wide entries past the
// plot's right edge, where they were cut ("phase: rollou"); a wider plot gets four again.
TEST(TimeSeriesPlot, LegendColumnsFitThePlotsWidth) {
    TimeSeriesPlot plot;
    plot.resize(470, 300);
    std::vector<PlotSeries> series;
    for (const char* node : {"node-a", "node-b", "node-c", "node-d", "node-e"}) {
        series.push_back(ramp(QStringLiteral("%1 run.tree.rss_bytes").arg(QLatin1String(node)), 50,
                              1767261600.0));
    }
    plot.setSeries(series);
    plot.show();
    plot.flush();
    auto* custom = plot.findChild<QCustomPlot*>();
    ASSERT_NE(custom, nullptr);
    auto everyEntryInside = [&] {
        custom->replot(QCustomPlot::rpImmediateRefresh);
        int entries = 0;
        for (int i = 0; i < custom->legend->itemCount(); ++i) {  // grid cells, some empty
            const QCPAbstractLegendItem* entry = custom->legend->item(i);
            if (entry == nullptr) {
                continue;
            }
            ++entries;
            if (entry->outerRect().right() > custom->viewport().right()) {
                return false;
            }
        }
        return entries == 5;
    };
    EXPECT_TRUE(everyEntryInside());
    EXPECT_LT(custom->legend->wrap(), 4);
    plot.resize(1400, 300);
    QApplication::processEvents();
    EXPECT_TRUE(everyEntryInside());
    EXPECT_EQ(custom->legend->wrap(), 4);
    plot.resize(470, 300);
    QApplication::processEvents();
    EXPECT_TRUE(everyEntryInside());
}

TEST(TimeSeriesPlot, ZoomFreezesFollowModeUntilAsked) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setFollowWindow(30);
    plot.setSeries({ramp(QStringLiteral("n"), 100, 0)});
    plot.flush();
    ASSERT_TRUE(plot.isFollowing());
    auto [lo, hi] = plot.visibleRange();
    EXPECT_NEAR(lo, 69, 1e-9);  // the newest 30 s
    EXPECT_GT(hi, 99);

    int followSignals = 0;
    double askedLo = 0;
    double askedHi = 0;
    QObject::connect(&plot, &TimeSeriesPlot::followingChanged, [&](bool) { ++followSignals; });
    QObject::connect(&plot, &TimeSeriesPlot::visibleRangeChanged, [&](double l, double h, int) {
        askedLo = l;
        askedHi = h;
    });
    // A real wheel zoom on the plot area (around x = 95, zooming in).
    plot.show();
    QWidget* canvas = nullptr;
    for (QWidget* w : plot.findChildren<QWidget*>()) {
        if (QString::fromLatin1(w->metaObject()->className()) == QStringLiteral("QCustomPlot")) {
            canvas = w;
        }
    }
    ASSERT_NE(canvas, nullptr);
    const QPointF at(canvas->width() * 0.8, canvas->height() / 2.0);
    QWheelEvent wheel(at, canvas->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(canvas, &wheel);
    EXPECT_FALSE(plot.isFollowing());
    EXPECT_EQ(followSignals, 1);
    auto [zlo, zhi] = plot.visibleRange();
    EXPECT_LT(zhi - zlo, hi - lo);  // zoomed in
    EXPECT_TRUE(waitUntil([&] { return askedHi > 0; }, 2000));
    EXPECT_DOUBLE_EQ(askedLo, zlo);
    EXPECT_DOUBLE_EQ(askedHi, zhi);
    // A programmatic zoom stays frozen and does not ask the owner again.
    askedHi = 0;
    plot.setVisibleRange(10, 20);
    EXPECT_FALSE(plot.isFollowing());
    // New data arrives: the frozen view stays where the user put it.
    plot.setSeries({ramp(QStringLiteral("n"), 200, 0)});
    plot.flush();
    std::tie(lo, hi) = plot.visibleRange();
    EXPECT_DOUBLE_EQ(lo, 10);
    EXPECT_DOUBLE_EQ(hi, 20);
    runplane::gui::test::pump(300);
    EXPECT_EQ(askedHi, 0);

    plot.setFollowing(true);
    plot.flush();
    std::tie(lo, hi) = plot.visibleRange();
    EXPECT_NEAR(lo, 169, 1e-9);
    EXPECT_EQ(followSignals, 2);
}

TEST(TimeSeriesPlot, OneSampleSpikeInTheBandSetsTheYRange) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setSeries({ramp(QStringLiteral("n"), 1000, 0, 500)});
    plot.flush();
    EXPECT_EQ(plot.drawnPointCount(), 3000);
    EXPECT_GE(plot.yRange().second, 900);
    // Zoomed to a window without the spike, the y-range follows the visible data.
    plot.setVisibleRange(0, 100);
    EXPECT_LT(plot.yRange().second, 200);
    // Rendered: the spike (900) must be inside the y-range, i.e. visible.
    QTemporaryDir dir;
    ASSERT_TRUE(plot.savePng(dir.filePath(QStringLiteral("spike.png")), 600, 300));
    QImage img(dir.filePath(QStringLiteral("spike.png")));
    ASSERT_FALSE(img.isNull());
    EXPECT_EQ(img.width(), 600);
    EXPECT_EQ(img.height(), 300);
}

TEST(TimeSeriesPlot, ExportsPngAndSvgOffscreen) {
    TimeSeriesPlot plot;  // never shown
    plot.setTitle(QStringLiteral("export"));
    plot.setSeries({ramp(QStringLiteral("node-a"), 300, 1.7e9)});
    plot.setAlarmLines({AlarmLine{QStringLiteral("RAM"), 120, Qt::black, false}});
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("p.png"));
    const QString svg = dir.filePath(QStringLiteral("p.svg"));
    ASSERT_TRUE(plot.savePng(png, 900, 400)) << plot.lastError().toStdString();
    QImage img(png);
    ASSERT_EQ(img.size(), QSize(900, 400));
    // Not a blank image: the blue curve is drawn somewhere.
    int blue = 0;
    for (int y = 0; y < img.height(); y += 2) {
        for (int x = 0; x < img.width(); x += 2) {
            const QColor c = img.pixelColor(x, y);
            blue += (c.blue() > 200 && c.red() < 80 && c.green() < 80) ? 1 : 0;
        }
    }
    EXPECT_GT(blue, 50);
    ASSERT_TRUE(plot.saveSvg(svg, 900, 400)) << plot.lastError().toStdString();
    QFile f(svg);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_TRUE(f.readAll().contains("<svg"));
}

TEST(TimeSeriesPlot, PlaceholderClearsCurves) {
    TimeSeriesPlot plot;
    plot.setSeries({ramp(QStringLiteral("n"), 10, 0)});
    plot.flush();
    EXPECT_GT(plot.drawnPointCount(), 0);
    plot.setPlaceholder(QStringLiteral("no samples yet"));
    plot.flush();
    EXPECT_EQ(plot.drawnPointCount(), 0);
}

// Line labels lie over the data (the plan's peak line is labelled at the left, across the
// curves): each label has a backing, so a curve under it does not run through its text.
TEST(TimeSeriesPlot, LineLabelsStayReadableOverTheData) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    PlotSeries flat;
    flat.name = QStringLiteral("node-a");
    flat.color = QColor(0, 0, 255);
    flat.lineWidth = 5;
    flat.antialiased = false;
    for (int i = 0; i < 100; ++i) {
        flat.t.push_back(i);
        flat.value.push_back(100);
    }
    plot.setSeries({flat});
    // The label's bottom edge is at its line: put the line just under the curve.
    const QString text = QStringLiteral("planned rollout 100.0 GB (peak)");
    plot.setAlarmLines({AlarmLine{text, 99, QColor(0, 0x72, 0xB2), true, true}});
    plot.show();
    plot.flush();
    auto* custom = plot.findChild<QCustomPlot*>();
    ASSERT_NE(custom, nullptr);
    QCPItemText* label = nullptr;
    for (int i = 0; i < custom->itemCount(); ++i) {
        auto* t = qobject_cast<QCPItemText*>(custom->item(i));
        label = t != nullptr && t->text() == text ? t : label;
    }
    ASSERT_NE(label, nullptr);
    custom->replot(QCustomPlot::rpImmediateRefresh);
    QImage image(plot.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    plot.render(&image);
    const QRect box = QRect(custom->mapTo(&plot, label->topLeft->pixelPosition().toPoint()),
                            custom->mapTo(&plot, label->bottomRight->pixelPosition().toPoint()))
                          .adjusted(1, 1, -1, -1);
    ASSERT_GT(box.width(), 50);
    int pureCurve = 0;
    int curveOutside = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            if (image.pixelColor(x, y) == flat.color) {
                (box.contains(x, y) ? pureCurve : curveOutside)++;
            }
        }
    }
    EXPECT_GT(curveOutside, 500) << "the curve is drawn beside the label";
    EXPECT_EQ(pureCurve, 0) << "the curve shows through the label's text at full strength";
}

// A marker's label longer than fits is elided, never cut to read as another value.
TEST(TimeSeriesPlot, LongMarkerLabelsAreElidedNotCut) {
    TimeSeriesPlot plot;
    plot.resize(800, 400);
    plot.setSeries({ramp(QStringLiteral("node-a"), 100, 0)});
    const QString longText = QStringLiteral("node-b: above 750.0 GB for 600 s");
    const QString shortText = QStringLiteral("node-a: nccl warning");
    plot.setEvents({EventMarker{20, longText, Qt::red}, EventMarker{60, shortText, Qt::red}});
    plot.show();
    plot.flush();
    auto* custom = plot.findChild<QCustomPlot*>();
    ASSERT_NE(custom, nullptr);
    QStringList texts;
    for (int i = 0; i < custom->itemCount(); ++i) {
        if (auto* t = qobject_cast<QCPItemText*>(custom->item(i))) {
            texts << t->text();
        }
    }
    EXPECT_TRUE(texts.contains(shortText)) << texts.join(QLatin1Char('|')).toStdString();
    const QString cut = longText.left(27) + QChar(0x2026);
    EXPECT_TRUE(texts.contains(cut)) << texts.join(QLatin1Char('|')).toStdString();
}

// A report's plots are exported from widgets never shown (never laid out): the legend's
// columns follow the export's width, not the widget's (one column per entry pushed a hidden
// plot's data down by a legend six rows tall and cut its first entry off).
TEST(TimeSeriesPlot, AnExportLaysTheLegendOutForItsOwnWidth) {
    auto dataTopInExport = [](bool shown) {
        TimeSeriesPlot plot;
        plot.resize(1400, 500);
        if (shown) {
            plot.show();  // laid out at 1400 px; a hidden one's inner plot keeps Qt's default
            pump(20);
        }
        std::vector<PlotSeries> series;
        for (int k = 0; k < 6; ++k) {
            PlotSeries s;
            s.name = QStringLiteral("node-%1").arg(k);
            s.color = k == 0 ? QColor(255, 0, 0) : QColor(0, 0, 50 + 30 * k);
            s.antialiased = false;
            for (int i = 0; i < 50; ++i) {
                s.t.push_back(i);
                s.value.push_back(k == 0 ? 100 : 10);  // node-0 along the top of the range
            }
            series.push_back(std::move(s));
        }
        plot.setSeries(std::move(series));
        plot.setFixedYRange(0, 100);
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("export.png"));
        if (!plot.savePng(png, 1400, 500)) {
            return -1;
        }
        const QImage image(png);
        for (int y = 0; y < image.height(); ++y) {
            for (int x = image.width() / 2; x < image.width() * 3 / 4; ++x) {
                if (image.pixelColor(x, y) == QColor(255, 0, 0)) {
                    return y;
                }
            }
        }
        return -1;
    };
    const int shown = dataTopInExport(true);
    const int hidden = dataTopInExport(false);
    ASSERT_GT(shown, 0);
    EXPECT_EQ(hidden, shown) << "the exported data area starts lower when the plot was not shown";
}

namespace {
QStringList g_qtMessages;
void collectQtMessage(QtMsgType, const QMessageLogContext&, const QString& message) {
    g_qtMessages << message;
}
}  // namespace

// A plot without legend entries (every 256-node plot) rebuilt without a word on stderr: asking
// the layout for the legend's empty cell made QCustomPlot log a warning on each rebuild (2,365
// lines in a ten-minute load run).
TEST(TimeSeriesPlot, RebuildsWithoutLoggingWhenItHasNoLegend) {
    TimeSeriesPlot plot;
    plot.resize(600, 300);
    plot.show();
    g_qtMessages.clear();
    const QtMessageHandler previous = qInstallMessageHandler(collectQtMessage);
    for (int i = 0; i < 3; ++i) {
        plot.setPlaceholder(QStringLiteral("no samples"));
        plot.flush();
        PlotSeries s = ramp(QStringLiteral("node-a"), 20 + i, 0);
        s.inLegend = false;
        plot.setPlaceholder(QString());
        plot.setSeries({s});
        plot.flush();
    }
    qInstallMessageHandler(previous);
    EXPECT_TRUE(g_qtMessages.isEmpty()) << g_qtMessages.join(QLatin1Char('\n')).toStdString();
}

// A title set while the plot is shown fits its axis at once, before the next (timer-driven)
// replot: a live view that lengthens its y title ("…; above: RAM …, alarm …") never holds an
// unfitted one, even for the timer's wait (the afternoon walk read one at 1280×720 under load).
TEST(TimeSeriesPlot, AnAxisTitleSetWhileShownFitsItsAxisBeforeTheNextReplot) {
    TimeSeriesPlot plot;
    plot.resize(500, 220);
    plot.show();
    plot.setSeries({ramp(QStringLiteral("node-a"), 50, 1000)});
    plot.flush();
    const int height = plot.dataRect().height();
    ASSERT_GT(height, 20);
    const int before = plot.replotCount();
    const QString longTitle = QStringLiteral(
        "host memory used (GB); above: RAM 25.28 GB, alarm 18.83 GB, and a little more to be sure");
    plot.setAxisLabels(QStringLiteral("time"), longTitle);
    EXPECT_EQ(plot.replotCount(), before) << "no replot yet: the check is of the state between";
    const QFontMetrics fm(plot.axisLabelFont());
    const QString shown = plot.shownAxisLabel(Qt::Vertical);
    EXPECT_LE(fm.horizontalAdvance(shown), height + 1) << shown.toStdString();
    EXPECT_TRUE(shown.endsWith(QChar(0x2026))) << shown.toStdString();
    // a title that fits is kept whole
    plot.setAxisLabels(QStringLiteral("time"), QStringLiteral("GB"));
    EXPECT_EQ(plot.shownAxisLabel(Qt::Vertical), QStringLiteral("GB"));
}
