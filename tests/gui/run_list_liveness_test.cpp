// issue 46: the run list's own "unreachable" state. A running run whose nodes stopped sending
// samples reads "running · daemon unreachable since HH:MM" in the Runs list too, the same words
// as its header; a running run whose samples arrive reads "running". Real RunsPage (offscreen),
// a real SQLite history written through the history's ingest API.
#include <gtest/gtest.h>

#include <QDateTime>
#include <QLabel>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "gui/pages/run_view.h"
#include "gui/pages/runs_page.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

QString stateCell(RunsPage& page, const QString& runId) {
    RunListModel* m = page.runsModel();
    const int row = m->indexOf(runId);
    return row < 0 ? QString()
                   : m->data(m->index(row, RunListModel::StateColumn), Qt::DisplayRole).toString();
}

QString headerOf(const QWidget& view) {
    for (const QLabel* l : view.findChildren<QLabel*>()) {
        if (l->text().contains(QStringLiteral("NCCL gate"))) {
            return l->text();
        }
    }
    return QString();
}

}  // namespace

TEST(RunListLiveness, ARunWhoseDaemonIsUnreachableSaysSoInTheListAsInItsHeader) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    {
        auto h = db::History::open(path.toStdString());
        ASSERT_TRUE(h) << h.error();
        // Sampled for 60 s from 5 minutes ago, then nothing: its daemon went away.
        test::SyntheticRunSpec silent;
        silent.runId = "silent-1";
        silent.name = "silent run";
        silent.finished = false;
        silent.seconds = 60;
        silent.nodes = {"node-s"};
        silent.startNs = (nowMs - 300'000) * 1'000'000LL;
        ASSERT_TRUE(test::writeSyntheticRun(**h, silent));
        // Sampled up to now.
        test::SyntheticRunSpec live = silent;
        live.runId = "live-1";
        live.name = "live run";
        live.nodes = {"node-l"};
        live.startNs = (nowMs - 60'000) * 1'000'000LL;
        ASSERT_TRUE(test::writeSyntheticRun(**h, live));
    }
    RunsPage page(path);
    page.resize(1400, 900);
    page.show();
    ASSERT_TRUE(waitUntil([&] { return page.runsModel()->rowCount() == 2; }, 10000));

    const QString last =
        QDateTime::fromMSecsSinceEpoch(nowMs - 300'000 + 59'000).toString(QStringLiteral("HH:mm"));
    const QString silentText = stateCell(page, QStringLiteral("silent-1"));
    EXPECT_EQ(silentText, QStringLiteral("running · daemon unreachable since ") + last);
    EXPECT_EQ(stateCell(page, QStringLiteral("live-1")), QStringLiteral("running"));

    // The header of the selected run says the same.
    ASSERT_TRUE(page.selectRun(QStringLiteral("silent-1")));
    ASSERT_TRUE(waitUntil([&] { return headerOf(*page.runView()).contains(silentText); }, 10000))
        << headerOf(*page.runView()).toStdString() << " vs list: " << silentText.toStdString();
    // The list and the header (the strip above the plots).
    page.grab(QRect(0, 0, page.width(), 120))
        .save(test::screenshotPath(QStringLiteral("runs-unreachable.png")));
}
