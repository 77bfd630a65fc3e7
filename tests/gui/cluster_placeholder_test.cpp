// issue 46: on the Cluster page at 1280×720 the host-memory plot's placeholder ("Cannot reach
// A: …; B: …. Is runplaned running there? …") was one line wider than the plot, cut off at both
// sides. The real main window at 1280×720 (and 1920×1080) on the Cluster page, first with no
// daemon, then with three refused loopback ports: the placeholder lies inside the plot's data
// area (its text element's rectangle, and no ink at the area's sides in the plot rendered to a
// QImage: plot_text_checks.h), wraps onto several centred lines, and shows the whole message.
// Saves cluster-placeholder-1280x720.png.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/plot_text_checks.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::waitUntil;

namespace {

/// The drawn placeholder's words in one line ('\\n' breaks as spaces).
QString drawnWords(TimeSeriesPlot* plot) {
    QCPItemText* text = plotcheck::placeholderItem(plot);
    return text == nullptr ? QString() : QString(text->text()).replace('\n', ' ').simplified();
}

}  // namespace

TEST(ClusterFit, HostMemoryPlaceholderWrapsInsideThePlot) {
    QTemporaryDir dir;
    std::unique_ptr<MainWindow> window = openWindow(dir, kScreens[1], QStringLiteral("Cluster"));
    ClusterPage* cluster = page<ClusterPage>(*window);
    ASSERT_NE(cluster, nullptr);
    TimeSeriesPlot* plot = cluster->memoryPlot();
    test::pump(300);
    ASSERT_TRUE(plot->isVisible());
    EXPECT_EQ(plotcheck::placeholderProblems(plot).join("\n").toStdString(), "")
        << "no daemon: " << plot->placeholder().toStdString();

    constexpr int kDaemons = 3;
    for (int i = 0; i < kDaemons; ++i) {
        ASSERT_TRUE(cluster->addAddress(QStringLiteral("127.0.0.1:%1").arg(i + 1)));
    }
    ASSERT_TRUE(waitUntil(
        [&] {
            const QString p = plot->placeholder();
            return p.startsWith(QStringLiteral("Cannot reach")) &&
                   p.count(QStringLiteral("127.0.0.1:")) >= kDaemons;
        },
        20000))
        << plot->placeholder().toStdString();
    for (QSize screen : {kScreens[0], kScreens[1]}) {
        window->resize(screen);
        test::pump(400);
        const std::string at =
            std::to_string(screen.width()) + "x" + std::to_string(screen.height());
        EXPECT_EQ(plotcheck::placeholderProblems(plot).join("\n").toStdString(), "") << at;
        QCPItemText* text = plotcheck::placeholderItem(plot);
        ASSERT_NE(text, nullptr);
        // Wrapped, not cut: the whole message's words, on several lines, centred.
        EXPECT_EQ(drawnWords(plot).toStdString(), plot->placeholder().simplified().toStdString())
            << at;
        if (screen == kScreens[1]) {  // at 1920×1080 the first paragraph fits on one line
            EXPECT_GE(text->text().count('\n'), 2) << at << ": " << text->text().toStdString();
        }
        EXPECT_TRUE(text->textAlignment() & Qt::AlignHCenter);
        const QRect drawn = plotcheck::centredTextRect(text);
        EXPECT_LE(std::abs(drawn.center().x() - plot->dataRect().center().x()), 2) << at;
    }
    EXPECT_TRUE(window->grab().save(
        test::screenshotPath(QStringLiteral("cluster-placeholder-1280x720.png"))));
    AppSettings::setFileOverride(QString());
}
