// issue 49: tags and notes from the GUI. The Runs and Compare pages' annotation bar, driven with
// real key and mouse events, writes tags and notes into a real SQLite history on the page's
// worker thread (the GUI thread never blocks on it); the history holds them, the bar and the run
// filter show them after the list is re-read, a bad tag comes back as the history's error.
#include <gtest/gtest.h>

#include <QLineEdit>
#include <QTest>
#include <QThread>
#include <QToolButton>

#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/run_annotations_bar.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/compare_page_fixture.h"
#include "tests/gui/eval_runs_fixture.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

// run-0, run-1, run-2 (named "run 0" ...), an hour apart, eval/score 0.5, 0.75 at steps 0, 10.
void writeRuns(const QString& path) {
    std::vector<test::SyntheticRunSpec> runs;
    for (int i = 0; i < 3; ++i) {
        runs.push_back(test::evalRun("run-" + std::to_string(i), "run " + std::to_string(i), i,
                                     {{"eval/score", "", {{0, 0.5}, {10, 0.75}}}}, 120));
    }
    test::writeRuns(path, runs);
}

db::History::RunAnnotation annotationOf(const QString& path, const std::string& run) {
    db::OpenOptions ro;
    ro.readOnly = true;
    auto h = db::History::open(path.toStdString(), ro);
    EXPECT_TRUE(h) << h.error();
    auto notes = (*h)->runAnnotations();
    EXPECT_TRUE(notes) << notes.error();
    for (auto& [id, a] : *notes) {
        if (id == run) {
            return a;
        }
    }
    return {};
}

/// Types `text` into `edit` and clicks `button`, as a user does; waits for the write's outcome.
void typeAndClick(RunAnnotationsBar& bar, QLineEdit* edit, const QString& text,
                  QToolButton* button) {
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Delete);
    QTest::keyClicks(edit, text);
    const int before = bar.writesDone();
    QTest::mouseClick(button, Qt::LeftButton);
    ASSERT_TRUE(waitUntil([&] { return bar.writesDone() > before; }, 10000));
}

}  // namespace

TEST(RunAnnotationsGui, ComparePageTagsAndNotesTheSelectedRuns) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(writeRuns(path));
    ComparePage page(path);
    ASSERT_TRUE(test::showComparePage(page));
    RunAnnotationsBar& bar = *page.annotations();
    EXPECT_FALSE(bar.isEnabled());  // nothing selected
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-0"), QStringLiteral("run-1")}));
    ASSERT_TRUE(bar.isEnabled());
    EXPECT_EQ(bar.runIds().size(), 2);
    EXPECT_EQ(bar.tagsText(), QStringLiteral("tags: none"));

    // A tag on both selected runs, written on the worker thread.
    const int lists = page.runListsApplied();
    typeAndClick(bar, bar.tagEdit(), QStringLiteral("lr-sweep"), bar.addButton());
    EXPECT_EQ(bar.lastError(), QString());
    EXPECT_EQ(annotationOf(path, "run-0").tags, (std::vector<std::string>{"lr-sweep"}));
    EXPECT_EQ(annotationOf(path, "run-1").tags, (std::vector<std::string>{"lr-sweep"}));
    EXPECT_TRUE(annotationOf(path, "run-2").tags.empty());
    EXPECT_TRUE(bar.tagEdit()->text().isEmpty());
    // The page re-reads its list: the bar and the model show the tag, the filter finds it.
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > lists; }, 10000));
    EXPECT_EQ(bar.tagsText(), QStringLiteral("tags: lr-sweep"));
    EXPECT_EQ(page.runsModel()->run(QStringLiteral("run-1"))->tags,
              QStringList{QStringLiteral("lr-sweep")});
    EXPECT_EQ(page.selectedRunIds().size(), 2);  // the selection survived the re-read

    // A bad tag: the history's error, nothing written.
    typeAndClick(bar, bar.tagEdit(), QStringLiteral("two words"), bar.addButton());
    EXPECT_TRUE(bar.lastError().contains(QStringLiteral("tag 'two words'")))
        << bar.lastError().toStdString();
    EXPECT_EQ(annotationOf(path, "run-0").tags, (std::vector<std::string>{"lr-sweep"}));

    // A note on both.
    typeAndClick(bar, bar.noteEdit(), QStringLiteral("warmup too short"), bar.saveNoteButton());
    EXPECT_EQ(annotationOf(path, "run-0").note, "warmup too short");
    EXPECT_EQ(annotationOf(path, "run-1").note, "warmup too short");

    // The list re-read after the write carries the note.
    ASSERT_TRUE(waitUntil(
        [&] {
            return page.runsModel()->run(QStringLiteral("run-1"))->note ==
                   QStringLiteral("warmup too short");
        },
        10000));

    // Remove the tag from run-1 only.
    ASSERT_TRUE(page.selectRuns({QStringLiteral("run-1")}));
    ASSERT_EQ(bar.runIds(), QStringList{QStringLiteral("run-1")});
    EXPECT_EQ(bar.noteEdit()->text(), QStringLiteral("warmup too short"));  // one run: its note
    typeAndClick(bar, bar.tagEdit(), QStringLiteral("lr-sweep"), bar.removeButton());
    EXPECT_EQ(bar.lastError(), QString());
    EXPECT_TRUE(annotationOf(path, "run-1").tags.empty());
    EXPECT_EQ(annotationOf(path, "run-0").tags, (std::vector<std::string>{"lr-sweep"}));
}

TEST(RunAnnotationsGui, RunsPageEditsTheNoteOfTheSelectedRun) {
    test::TempHistory temp;
    const QString& path = temp.path;
    ASSERT_NO_FATAL_FAILURE(writeRuns(path));
    RunsPage page(path);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    ASSERT_TRUE(page.selectRun(QStringLiteral("run-2")));
    RunAnnotationsBar& bar = *page.annotations();
    ASSERT_EQ(bar.runIds(), QStringList{QStringLiteral("run-2")});
    typeAndClick(bar, bar.tagEdit(), QStringLiteral("keep"), bar.addButton());
    typeAndClick(bar, bar.noteEdit(), QStringLiteral("best so far; rerun with seed 2"),
                 bar.saveNoteButton());
    EXPECT_EQ(annotationOf(path, "run-2").tags, (std::vector<std::string>{"keep"}));
    EXPECT_EQ(annotationOf(path, "run-2").note, "best so far; rerun with seed 2");
    // The run filter finds it by the note's words once the list is re-read.
    page.filterEdit()->setText(QStringLiteral("seed 2"));
    ASSERT_TRUE(waitUntil([&] { return page.runsProxy()->rowCount() == 1; }, 10000));
    EXPECT_EQ(page.runsProxy()->index(0, 0).data(RunListModel::RunIdRole).toString(),
              QStringLiteral("run-2"));
    test::pump(100);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-annotations.png"))));

    // An empty note removes it.
    typeAndClick(bar, bar.noteEdit(), QString(), bar.saveNoteButton());
    EXPECT_EQ(annotationOf(path, "run-2").note, "");
}
