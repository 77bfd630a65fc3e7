// issue 46: the Compare page's recipe diff shows what a recipe sets, and where the difference
// is. Two runs of the repository's smoke pair (smoke-local: LoRA rank 8, alpha 16 — the
// default; smoke-local-r4: rank 4, alpha 8) in a real history: lora.alpha reads 16 for the run
// that sets it (not "(default)"), and the launcher.argv row shows the differing words
// (`--lora-rank 8` vs `--lora-rank 4`) inside the cell's width at 1280×720, not behind "…".
#include <gtest/gtest.h>

#include <QFontMetrics>
#include <QHeaderView>
#include <QTableView>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/models/compare_data.h"
#include "gui/models/compare_model.h"
#include "gui/pages/compare_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

QString historyWithSmokePair(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    auto h = db::History::open(path.toStdString());
    EXPECT_TRUE(h) << h.error();
    if (!h) {
        return {};
    }
    test::SyntheticRunSpec a;
    a.runId = "smoke-r8";
    a.name = "smoke r8";
    a.recipeYaml = test::sourceRecipe("smoke-local.yaml");
    a.seconds = 120;
    a.evalSteps = 5;
    a.nodes = {"node-a"};
    test::SyntheticRunSpec b = a;
    b.runId = "smoke-r4";
    b.name = "smoke r4";
    b.recipeYaml = test::sourceRecipe("smoke-local-r4.yaml");
    b.startNs += kHour;
    EXPECT_FALSE(a.recipeYaml.empty());
    EXPECT_FALSE(b.recipeYaml.empty());
    EXPECT_TRUE(test::writeSyntheticRun(**h, a));
    EXPECT_TRUE(test::writeSyntheticRun(**h, b));
    return path;
}

int rowOf(const CompareModel& m, const QString& field) {
    for (int r = m.summaryRowCount(); r < m.rowCount(); ++r) {
        if (m.index(r, 0).data().toString() == field) {
            return r;
        }
    }
    return -1;
}

}  // namespace

TEST(CompareRecipeDiff, ShowsTheValueARecipeSetsAndTheDifferingArgvWords) {
    QTemporaryDir dir;
    const QString history = historyWithSmokePair(dir);
    ASSERT_FALSE(history.isEmpty());
    ComparePage page(history);
    page.resize(1280, 720);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(page.selectRuns({QStringLiteral("smoke-r8"), QStringLiteral("smoke-r4")}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000));
    test::pump(200);
    const CompareModel& m = *page.compareModel();
    ASSERT_EQ(m.columnCount(), 3);
    const int r8 =
        m.headerData(1, Qt::Horizontal).toString().startsWith(QStringLiteral("smoke r8")) ? 1 : 2;
    const int r4 = 3 - r8;

    // lora.alpha: smoke-local writes `alpha: 16` (the default value) — the user sees 16.
    const int alpha = rowOf(m, QStringLiteral("lora.alpha"));
    ASSERT_GE(alpha, 0) << m.diffFields().join(QLatin1Char(',')).toStdString();
    EXPECT_EQ(m.index(alpha, r8).data().toString(), QStringLiteral("16"));
    EXPECT_EQ(m.index(alpha, r4).data().toString(), QStringLiteral("8"));
    EXPECT_TRUE(m.index(alpha, 2).data(CompareModel::DiffersRole).toBool());  // vs column 1
    // lora.rank likewise (8 is the default rank too).
    const int rank = rowOf(m, QStringLiteral("lora.rank"));
    ASSERT_GE(rank, 0);
    EXPECT_EQ(m.index(rank, r8).data().toString(), QStringLiteral("8"));
    EXPECT_EQ(m.index(rank, r4).data().toString(), QStringLiteral("4"));

    // launcher.argv: the differing words, with the flag they belong to, and only those.
    const int argv = rowOf(m, QStringLiteral("launcher.argv"));
    ASSERT_GE(argv, 0);
    const QString a8 = m.index(argv, r8).data().toString();
    const QString a4 = m.index(argv, r4).data().toString();
    EXPECT_TRUE(a8.contains(QStringLiteral("--lora-rank 8"))) << a8.toStdString();
    EXPECT_TRUE(a4.contains(QStringLiteral("--lora-rank 4"))) << a4.toStdString();
    EXPECT_TRUE(a8.contains(QStringLiteral("--lora-alpha 16"))) << a8.toStdString();
    EXPECT_TRUE(a4.contains(QStringLiteral("--lora-alpha 8"))) << a4.toStdString();
    EXPECT_FALSE(a8.contains(QStringLiteral("--rollout-batch-size"))) << a8.toStdString();
    // The whole command is the tooltip.
    const QString tip = m.index(argv, r4).data(Qt::ToolTipRole).toString();
    EXPECT_TRUE(tip.contains(QStringLiteral("runplane-smoke"))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("--rollout-batch-size"))) << tip.toStdString();

    // ... and it fits its column as drawn at 1280×720 (the cell elides what does not fit).
    QTableView* view = nullptr;
    for (QTableView* t : page.findChildren<QTableView*>()) {
        if (t->model() == page.compareModel()) {
            view = t;
        }
    }
    ASSERT_NE(view, nullptr);
    const QFontMetrics fm(view->font());
    for (int c : {r8, r4}) {
        const QString text = m.index(argv, c).data().toString();
        // 2 × the style's cell margin (3 px in Fusion) on either side of the text.
        EXPECT_LE(fm.horizontalAdvance(text) + 8, view->columnWidth(c))
            << text.toStdString() << " in a column of " << view->columnWidth(c) << " px";
        EXPECT_LE(view->columnViewportPosition(c) + view->columnWidth(c),
                  view->viewport()->width() + 1)
            << "column " << c << " is off screen";
    }
}

TEST(CompareRecipeDiff, WordDiffOfLongValues) {
    CompareRun a;
    a.recipeFields = {{QStringLiteral("launcher.argv"),
                       QStringLiteral("[prog, --a, 1, --b, 2, --c, 3, --d, 4, --e, 5]")}};
    a.recipeLists[QStringLiteral("launcher.argv")] =
        QStringList{"prog", "--a", "1", "--b", "2", "--c", "3", "--d", "4", "--e", "5"};
    CompareRun b = a;
    // Inserted flag in b; same command otherwise.
    b.recipeLists[QStringLiteral("launcher.argv")] =
        QStringList{"prog", "--a", "1", "--b", "2", "--new", "--c", "3", "--d", "4", "--e", "5"};
    b.recipeFields[0].second =
        QStringLiteral("[prog, --a, 1, --b, 2, --new, --c, 3, --d, 4, --e, 5]");
    const std::vector<DiffRow> rows = recipeDiff({a, b});
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].values[1], QStringLiteral("… 2 --new …"));
    EXPECT_EQ(rows[0].values[0], QStringLiteral("… 2 --c …"));
    EXPECT_NE(rows[0].full[0], rows[0].full[1]);
}
