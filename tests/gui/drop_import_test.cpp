// issue 49: drag and drop import. Real files — TensorBoard event files written by TensorBoard's
// own writer (tests/db/imports/write_tensorboard_runs.py in the imports_venv fixture's venv), a
// W&B offline run folder written by the wandb package (write_wandb_run.py), a CSV export, a CSV cut
// mid-row and a path that does not exist — dropped with real QDragEnter / QDrop events on the
// Compare and Runs pages; the import runs on the page's worker into a real SQLite history, and the
// page reports each run imported, what was already there, and each error with its file, then lists
// the new runs.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QMimeData>
#include <QProcess>
#include <QTemporaryDir>
#include <QUrl>

#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/run_drop_import.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate)) << path.toStdString();
    f.write(bytes);
}

/// Drags `paths` over `target` and drops them there, as a file manager does; true when the
/// page accepted both events.
bool dropFiles(QWidget& target, const QStringList& paths) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& p : paths) {
        urls << QUrl::fromLocalFile(p);
    }
    mime.setUrls(urls);
    const QPoint at(target.width() / 3, target.height() / 2);
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&target, &enter);
    if (!enter.isAccepted()) {
        return false;
    }
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&target, &drop);
    return drop.isAccepted();
}

QString lineWith(const QStringList& lines, const QString& part) {
    for (const QString& l : lines) {
        if (l.contains(part)) {
            return l;
        }
    }
    return {};
}

/// "imported import-0123456789abcdef NAME (...)" -> the run id.
QString runIdOf(const QString& line) {
    const QStringList words = line.split(QLatin1Char(' '));
    return words.size() > 1 ? words[1] : QString();
}

}  // namespace

TEST(DropImport, FilesDroppedOnTheComparePageAreImported) {
    QTemporaryDir dir;
    const QString python =
        test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/imports-venv/bin/python");
    ASSERT_TRUE(QFile::exists(python))
        << python.toStdString() << " is missing: the imports_venv fixture makes it";
    const QString tb = dir.filePath(QStringLiteral("tb"));
    QProcess writer;
    writer.setStandardOutputFile(QProcess::nullDevice());
    writer.start(python, {test::envPath("RUNPLANE_SOURCE_DIR") +
                              QStringLiteral("/tests/db/imports/write_tensorboard_runs.py"),
                          tb});
    ASSERT_TRUE(writer.waitForFinished(120000));
    ASSERT_EQ(writer.exitCode(), 0) << writer.readAllStandardError().toStdString();
    const QString csv = dir.filePath(QStringLiteral("sweep.csv"));
    writeFile(csv,
              "step,wall_time,train/loss,eval/gsm8k\n"
              "0,1796553600.5,2.25,\n"
              "100,1796553700.25,1.0,0.5\n");
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));

    ComparePage page(history);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    RunDropImport& drop = *page.dropImport();
    EXPECT_TRUE(page.acceptDrops());

    // Text without files is not taken.
    {
        QMimeData text;
        text.setText(QStringLiteral("hello"));
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&page, &enter);
        EXPECT_FALSE(enter.isAccepted());
    }

    ASSERT_TRUE(dropFiles(page, {tb, csv}));
    ASSERT_TRUE(waitUntil([&] { return drop.importsDone() == 1; }, 60000));
    const QStringList lines = drop.lastReport();
    EXPECT_TRUE(drop.lastOk()) << lines.join(QLatin1Char('\n')).toStdString();
    ASSERT_EQ(lines.size(), 3) << lines.join(QLatin1Char('\n')).toStdString();
    const QString tf1 = lineWith(lines, QStringLiteral(" tf1 (tensorboard, "));
    const QString tf2 = lineWith(lines, QStringLiteral(" tf2 (tensorboard, "));
    const QString sweep =
        lineWith(lines, QStringLiteral(" sweep (csv, 2 series, 3 points) from ") + csv);
    ASSERT_TRUE(tf1.startsWith(QStringLiteral("imported import-"))) << tf1.toStdString();
    ASSERT_TRUE(tf2.startsWith(QStringLiteral("imported import-"))) << tf2.toStdString();
    ASSERT_TRUE(sweep.startsWith(QStringLiteral("imported import-")))
        << lines.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(drop.reportLabel()->isVisible());
    EXPECT_EQ(drop.reportLabel()->text(), lines.join(QLatin1Char('\n')));

    // The runs are in the history and the page lists them.
    const QStringList ids{runIdOf(tf1), runIdOf(tf2), runIdOf(sweep)};
    ASSERT_TRUE(waitUntil(
        [&] {
            for (const QString& id : ids) {
                if (page.runsModel()->indexOf(id) < 0) {
                    return false;
                }
            }
            return true;
        },
        10000));
    {
        db::OpenOptions ro;
        ro.readOnly = true;
        auto h = db::History::open(history.toStdString(), ro);
        ASSERT_TRUE(h) << h.error();
        for (const QString& id : ids) {
            auto run = (*h)->run(RunId{id.toStdString()});
            ASSERT_TRUE(run && run->has_value()) << id.toStdString();
        }
    }
    // Compared like any other run: the CSV's eval/gsm8k at step 100.
    ASSERT_TRUE(page.selectRuns({ids[0], ids[2]}));
    ASSERT_TRUE(waitUntil([&] { return page.comparisonsApplied() > 0; }, 10000));
    EXPECT_TRUE(page.data().metricNames.contains(QStringLiteral("eval/gsm8k")));
    EXPECT_TRUE(page.data().metricNames.contains(QStringLiteral("train/loss")));

    // Dropping the same files again adds nothing.
    ASSERT_TRUE(dropFiles(page, {csv}));
    ASSERT_TRUE(waitUntil([&] { return drop.importsDone() == 2; }, 60000));
    ASSERT_EQ(drop.lastReport().size(), 1);
    EXPECT_TRUE(drop.lastReport()[0].startsWith(QStringLiteral("already imported: ") + ids[2]))
        << drop.lastReport()[0].toStdString();
    EXPECT_TRUE(drop.lastOk());
}

TEST(DropImport, ErrorsNameTheFileOnTheRunsPage) {
    QTemporaryDir dir;
    const QString cut = dir.filePath(QStringLiteral("cut.csv"));
    // The last row has one cell too few: reading stops there, the first row is imported.
    writeFile(cut,
              "step,wall_time,train/loss\n"
              "0,1796553600.5,2.25\n"
              "1,1796553601.5\n");
    const QString missing = dir.filePath(QStringLiteral("no-such-run.csv"));
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    RunsPage page(history);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    RunDropImport& drop = *page.dropImport();
    ASSERT_TRUE(dropFiles(page, {cut, missing}));
    ASSERT_TRUE(waitUntil([&] { return drop.importsDone() == 1; }, 60000));
    const QStringList lines = drop.lastReport();
    EXPECT_FALSE(drop.lastOk());
    const QString joined = lines.join(QLatin1Char('\n'));
    const QString imported = lineWith(lines, QStringLiteral("imported import-"));
    EXPECT_TRUE(imported.contains(QStringLiteral(" cut (csv, 1 series, 1 points)")))
        << joined.toStdString();
    EXPECT_FALSE(lineWith(lines, cut + QStringLiteral(": stopped at byte")).isEmpty())
        << joined.toStdString();
    EXPECT_FALSE(lineWith(lines, missing).isEmpty()) << joined.toStdString();
    EXPECT_TRUE(drop.reportLabel()->isVisible());
    EXPECT_TRUE(drop.reportLabel()->text().contains(missing));
    ASSERT_TRUE(
        waitUntil([&] { return page.runsModel()->indexOf(runIdOf(imported)) >= 0; }, 10000));
    test::pump(100);
    EXPECT_TRUE(page.grab().save(test::screenshotPath(QStringLiteral("runs-drop-import.png"))));
}

// A W&B offline run folder written by the `wandb` package itself (WANDB_MODE=offline,
// tests/db/imports/write_wandb_run.py), dropped on the Compare page.
TEST(DropImport, WandbOfflineRunFolderDroppedOnTheComparePage) {
    QTemporaryDir dir;
    const QString python =
        test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/imports-venv/bin/python");
    ASSERT_TRUE(QFile::exists(python))
        << python.toStdString() << " is missing: the imports_venv fixture makes it";
    const QString w = dir.filePath(QStringLiteral("w"));
    QProcess writer;
    writer.setStandardOutputFile(QProcess::nullDevice());
    writer.start(python, {test::envPath("RUNPLANE_SOURCE_DIR") +
                              QStringLiteral("/tests/db/imports/write_wandb_run.py"),
                          w});
    ASSERT_TRUE(writer.waitForFinished(180000));
    ASSERT_EQ(writer.exitCode(), 0) << writer.readAllStandardError().toStdString();

    ComparePage page(dir.filePath(QStringLiteral("history.sqlite")));
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runListsApplied() > 0; }, 10000));
    RunDropImport& drop = *page.dropImport();
    ASSERT_TRUE(dropFiles(page, {w}));
    ASSERT_TRUE(waitUntil([&] { return drop.importsDone() == 1; }, 60000));
    const QStringList lines = drop.lastReport();
    const QString joined = lines.join(QLatin1Char('\n'));
    EXPECT_TRUE(drop.lastOk()) << joined.toStdString();
    ASSERT_EQ(lines.size(), 1) << joined.toStdString();
    EXPECT_TRUE(lines[0].startsWith(QStringLiteral("imported import-"))) << joined.toStdString();
    EXPECT_TRUE(lines[0].contains(QStringLiteral(" (wandb, "))) << joined.toStdString();
    EXPECT_TRUE(lines[0].endsWith(QStringLiteral(" from ") + w)) << joined.toStdString();
    const QString id = runIdOf(lines[0]);
    ASSERT_TRUE(waitUntil([&] { return page.runsModel()->indexOf(id) >= 0; }, 10000));
}
