// issue 46: "chart group titles and phase labels overlap at the default size ("trainweight
// sync")". The Design page's two memory budget charts (host memory per node, device memory per
// GPU class: group titles over the bars, a phase label under each bar, the lines' labels), for
// every recipe in recipes/ and recipes/known-good/, on a 1280x720 and a 1920x1080 screen: no
// text's rectangle meets another's, and each lies inside its chart. Real DesignPage, offscreen.
#include <gtest/gtest.h>

#include <QDir>
#include <QTabWidget>

#include <sstream>

#include "gui/pages/design_page.h"
#include "gui/widgets/memory_budget_chart.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

/// Where two texts of the chart meet, or "".
std::string overlaps(const MemoryBudgetChart& chart) {
    const auto texts = chart.drawnTexts();
    const QRect inside = chart.rect();
    std::ostringstream o;
    for (size_t i = 0; i < texts.size(); ++i) {
        if (!inside.contains(texts[i].rect)) {
            o << "'" << texts[i].text.toStdString() << "' leaves the chart; ";
        }
        for (size_t j = i + 1; j < texts.size(); ++j) {
            if (texts[i].rect.intersects(texts[j].rect)) {
                o << "'" << texts[i].text.toStdString() << "' meets '"
                  << texts[j].text.toStdString() << "'; ";
            }
        }
    }
    return o.str();
}

bool open(DesignPage& page, const QString& path) {
    QString error = QStringLiteral("(not loaded)");
    const QMetaObject::Connection c =
        QObject::connect(&page, &DesignPage::fileLoaded, &page,
                         [&](const QString&, const QString& e) { error = e; });
    page.openFile(path);
    const bool loaded = waitUntil([&] { return error != QStringLiteral("(not loaded)"); }, 10000);
    QObject::disconnect(c);
    return loaded && error.isEmpty();
}

}  // namespace

TEST(ChartText, NoTitleOrPhaseLabelOverlapsAnotherAt720And1080) {
    const QString root = test::envPath("RUNPLANE_SOURCE_DIR") + QStringLiteral("/recipes");
    QStringList recipes;
    for (const QString& sub : {QString(), QStringLiteral("/known-good")}) {
        for (const QString& f :
             QDir(root + sub).entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name)) {
            recipes << root + sub + QLatin1Char('/') + f;
        }
    }
    ASSERT_GE(recipes.size(), 10);
    // The Design page's share of each screen (menu, toolbar, page tabs, status bar take the rest).
    for (const QSize size : {QSize(1280, 600), QSize(1920, 960)}) {
        DesignPage page;
        page.resize(size);
        page.show();
        ASSERT_TRUE(waitUntil([&] { return page.catalogReady(); }, 15000));
        int checked = 0;
        for (const QString& path : recipes) {
            ASSERT_TRUE(open(page, path)) << path.toStdString();
            for (MemoryBudgetChart* chart : {page.hostChart(), page.gpuChart()}) {
                page.viewTabs()->setCurrentWidget(chart);
                ASSERT_TRUE(waitUntil([&] { return chart->isVisible(); }, 2000));
                test::pump(30);
                if (chart->barCount() == 0) {
                    continue;
                }
                ++checked;
                const std::string found = overlaps(*chart);
                if (size.width() == 1280 && chart == page.gpuChart() &&
                    path.endsWith(QStringLiteral("slime-qwen3-235B-A22B.yaml"))) {
                    chart->grab().save(
                        test::screenshotPath(QStringLiteral("chart-texts-1280.png")));
                }
                EXPECT_TRUE(found.empty())
                    << size.width() << "x" << size.height() << " "
                    << QDir(root).relativeFilePath(path).toStdString() << " "
                    << (chart == page.hostChart() ? "host" : "gpu") << " chart: " << found;
            }
        }
        EXPECT_GT(checked, recipes.size());
    }
}
