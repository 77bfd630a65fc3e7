// issue 46: "export buttons enabled with nothing selected (they write a picture of the
// empty-state text)". The Compare page's PNG / SVG / CSV buttons (the GUI's export actions) are
// disabled until a comparison is drawn, disabled again when the selection no longer makes one,
// and an export asked for meanwhile writes no file. Real ComparePage (offscreen), a real SQLite
// history written through the history's ingest API.
#include <gtest/gtest.h>

#include <QFile>
#include <QPushButton>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

std::vector<QPushButton*> exportButtons(ComparePage& page) {
    std::vector<QPushButton*> out;
    for (QPushButton* b : page.findChildren<QPushButton*>()) {
        const QString t = b->text();
        if (t == QStringLiteral("PNG…") || t == QStringLiteral("SVG…") ||
            t == QStringLiteral("CSV…")) {
            out.push_back(b);
        }
    }
    return out;
}

bool allEnabled(ComparePage& page, bool enabled) {
    for (QPushButton* b : exportButtons(page)) {
        if (b->isEnabled() != enabled) {
            return false;
        }
    }
    return true;
}

}  // namespace

TEST(ExportEnabled, CompareExportsNeedAComparisonToExport) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        for (const char* id : {"cmp-a", "cmp-b"}) {
            test::SyntheticRunSpec spec;
            spec.runId = id;
            spec.name = id;
            spec.seconds = 600;
            spec.nodes = {std::string("node-") + id};
            ASSERT_TRUE(test::writeSyntheticRun(**h, spec));
        }
    }
    ComparePage page(path);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runsModel()->rowCount() == 2; }, 10000));
    ASSERT_EQ(exportButtons(page).size(), 3U);

    // Nothing selected: nothing to export, and an export writes nothing.
    EXPECT_TRUE(allEnabled(page, false));
    const QString png = dir.filePath(QStringLiteral("empty.png"));
    EXPECT_FALSE(page.exportPng(png));
    EXPECT_FALSE(QFile::exists(png));
    EXPECT_FALSE(page.exportCsv(dir.filePath(QStringLiteral("empty.csv"))));
    EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("empty.csv"))));

    // Two runs: a comparison is drawn, the exports are enabled and write it.
    const int before = page.comparisonsApplied();
    ASSERT_TRUE(page.selectRuns({QStringLiteral("cmp-a"), QStringLiteral("cmp-b")}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > before; }, 10000));
    EXPECT_TRUE(allEnabled(page, true));
    EXPECT_TRUE(page.exportPng(dir.filePath(QStringLiteral("two.png"))));

    // Back to one run: no comparison any more; disabled again.
    ASSERT_TRUE(page.selectRuns({QStringLiteral("cmp-a")}));
    test::pump(50);
    EXPECT_TRUE(allEnabled(page, false));
    EXPECT_FALSE(page.exportSvg(dir.filePath(QStringLiteral("one.svg"))));
    EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("one.svg"))));
}
