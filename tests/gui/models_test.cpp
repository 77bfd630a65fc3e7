// Item models (QAbstractItemModelTester), the worker's stale-result rule, and the history
// queries the pages use, against a real SQLite history written through runplane_db.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/thread_role.h"
#include "db/history/decimate.h"
#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/models/history_reader.h"
#include "gui/models/log_tailer.h"
#include "gui/models/metric_views.h"
#include "gui/models/node_table_model.h"
#include "gui/models/run_derivations.h"
#include "gui/models/run_models.h"
#include "gui/models/serial_worker.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"
#include "tests/support/thread_nice.h"

using namespace runplane;
using namespace runplane::gui;
using runplane::gui::test::waitUntil;

namespace {

NodeRow row(const QString& address, const QString& nodeId = {}) {
    NodeRow r;
    r.address = address;
    r.state = QStringLiteral("streaming");
    r.nodeId = nodeId;
    r.hostname = QStringLiteral("host-") + address;
    r.cpuArch = QStringLiteral("x86_64");
    r.cpuCores = 2;
    r.ramBytes = 24e9;
    return r;
}

}  // namespace

TEST(NodeTableModel, PassesTheModelTesterThroughInsertUpdateRemove) {
    NodeTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.addPending(QStringLiteral("127.0.0.1:1"));
    EXPECT_EQ(model.rowCount(), 1);
    EXPECT_EQ(model.index(0, NodeTableModel::StateColumn).data().toString(),
              QStringLiteral("connecting"));
    model.upsert(row(QStringLiteral("127.0.0.1:1"), QStringLiteral("n1")));
    model.upsert(row(QStringLiteral("127.0.0.1:2"), QStringLiteral("n2")));
    EXPECT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.nodeIds(), (QStringList{QStringLiteral("n1"), QStringLiteral("n2")}));
    model.setMemoryUsed(QStringLiteral("127.0.0.1:2"), 12.5e9, 100);  // by daemon (issue 46)
    EXPECT_EQ(model.index(1, NodeTableModel::MemUsedColumn).data().toString(),
              QStringLiteral("12.5 GB"));
    // A status update without inventory (reconnecting) keeps what we knew, and the memory value.
    NodeRow reconnecting;
    reconnecting.address = QStringLiteral("127.0.0.1:2");
    reconnecting.state = QStringLiteral("backoff");
    reconnecting.error = QStringLiteral("cannot reach runplaned at 127.0.0.1:2");
    model.upsert(reconnecting);
    EXPECT_EQ(model.row(1).hostname, QStringLiteral("host-127.0.0.1:2"));
    EXPECT_EQ(model.row(1).usedBytes, 12.5e9);
    EXPECT_TRUE(model.index(1, NodeTableModel::StateColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("cannot reach")));
    EXPECT_TRUE(model.remove(QStringLiteral("127.0.0.1:1")));
    EXPECT_FALSE(model.remove(QStringLiteral("127.0.0.1:1")));
    EXPECT_EQ(model.rowCount(), 1);
    EXPECT_EQ(model.displayName(QStringLiteral("n2")),
              QStringLiteral("host-127.0.0.1:2 (127.0.0.1:2)"));
}

TEST(SerialWorker, OnlyTheNewestResultPerKeyIsApplied) {
    SerialWorker worker;
    QObject context;
    std::atomic<bool> release{false};
    std::atomic<bool> started{false};
    std::vector<int> applied;
    // Job 1 blocks the worker; jobs 2 and 3 queue under the same key: 2 is superseded before it
    // starts, 1's result arrives stale.
    worker.run(
        QStringLiteral("k"), &context,
        [&] {
            started = true;
            while (!release) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            return 1;
        },
        [&](int v) { applied.push_back(v); });
    while (!started) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    worker.run(
        QStringLiteral("k"), &context, [] { return 2; }, [&](int v) { applied.push_back(v); });
    worker.run(
        QStringLiteral("k"), &context, [] { return 3; }, [&](int v) { applied.push_back(v); });
    worker.run(
        QStringLiteral("other"), &context, [] { return 10; }, [&](int v) { applied.push_back(v); });
    release = true;
    ASSERT_TRUE(waitUntil([&] { return applied.size() >= 2; }, 5000));
    runplane::gui::test::pump(50);
    EXPECT_EQ(applied, (std::vector<int>{3, 10}));  // 1 stale, 2 superseded
    EXPECT_EQ(worker.supersededCount(), 1u);
}

TEST(SerialWorker, ResultForADeletedContextIsDropped) {
    SerialWorker worker;
    auto* context = new QObject;
    bool applied = false;
    worker.run(
        QStringLiteral("k"), context, [] { return 1; }, [&](int) { applied = true; });
    delete context;
    worker.drain();
    runplane::gui::test::pump(50);
    EXPECT_FALSE(applied);
}

// One synthetic history for the whole suite (writing it takes about a second).
class HistoryQueries : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = new QTemporaryDir;
        s_path = s_dir->filePath(QStringLiteral("history.sqlite")).toStdString();
        auto h = db::History::open(s_path);
        ASSERT_TRUE(h) << h.error();
        s_history = h->release();
        test::SyntheticRunSpec spec;
        spec.recipeYaml = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
        auto spike = test::writeSyntheticRun(*s_history, spec);
        ASSERT_TRUE(spike) << spike.error();
        s_spikeNs = *spike;
    }
    static void TearDownTestSuite() {
        delete s_history;
        delete s_dir;
    }
    void SetUp() override {
        ASSERT_NE(s_history, nullptr);
        m_history = s_history;
        m_path = s_path;
        m_spikeNs = s_spikeNs;
    }
    static inline QTemporaryDir* s_dir = nullptr;
    static inline std::string s_path;
    static inline db::History* s_history = nullptr;
    static inline std::int64_t s_spikeNs = 0;
    std::string m_path;
    db::History* m_history = nullptr;
    std::int64_t m_spikeNs = 0;
};

TEST_F(HistoryQueries, RunListHasPeaksAndEvalSummaries) {
    auto runs = loadRunList(*m_history);
    ASSERT_TRUE(runs) << runs.error();
    ASSERT_EQ(runs->size(), 1u);
    const RunRow& r = runs->front();
    EXPECT_EQ(r.id, QStringLiteral("run-synthetic-1"));
    EXPECT_EQ(r.state, telemetry::RunState::Finished);
    EXPECT_EQ(r.nodes.size(), 2);
    EXPECT_NEAR(r.durationSeconds(0), 3600, 1e-6);
    ASSERT_EQ(r.peaks.size(), 2u);
    EXPECT_NEAR(r.maxPeakBytes(), 900e9, 1e6);  // the one-sample spike is the peak
    // The list shows the highest node's peak and how many nodes; the tooltip lists each node.
    RunListModel model;
    model.setRuns(*runs);
    const QModelIndex peak = model.index(0, RunListModel::PeakColumn);
    EXPECT_EQ(peak.data().toString(),
              formatGB(r.maxPeakBytes()) + QStringLiteral(" (max of 2 nodes)"));
    const QString perNode = peak.data(Qt::ToolTipRole).toString();
    EXPECT_TRUE(perNode.contains(QStringLiteral("node-a: ")) &&
                perNode.contains(QStringLiteral("node-b: ")))
        << perNode.toStdString();
    bool sawGsm = false;
    for (const MetricValue& m : r.metrics) {
        if (m.name == QStringLiteral("eval/gsm8k")) {
            sawGsm = true;
            EXPECT_EQ(m.lastStep, 40);
            EXPECT_NEAR(m.last, 0.75, 0.02);
        }
    }
    EXPECT_TRUE(sawGsm);
}

TEST_F(HistoryQueries, SnapshotKeepsTheSpikeThroughDecimationAndFindsPhasesAndPeaks) {
    auto snap = loadRunSnapshot(*m_history, QStringLiteral("run-synthetic-1"), 0, 0, 200);
    ASSERT_TRUE(snap) << snap.error();
    ASSERT_EQ(snap->hostMemory.size(), 2u);
    const PointSeries& nodeB = snap->hostMemory[1];
    EXPECT_EQ(nodeB.nodeId, QStringLiteral("node-b"));
    EXPECT_TRUE(nodeB.decimated);
    EXPECT_EQ(nodeB.sourceCount, 3600);
    EXPECT_LE(nodeB.t.size(), 200u);
    EXPECT_NEAR(*std::max_element(nodeB.max.begin(), nodeB.max.end()), 900e9, 1);
    // Lines: RAM 956 GB measured, the daemon's alarm threshold from its memory_alarm event; no
    // catalog here, so no plan and no band.
    EXPECT_NEAR(snap->lines.ramBytes, 956e9, 1);
    EXPECT_NEAR(snap->lines.alarmBytes, 750e9, 1);
    EXPECT_EQ(snap->lines.healthyLowBytes, 0);
    // Phases: load, then rollout/train/weight_sync cycles of 300 s.
    ASSERT_GE(snap->phases.size(), 30u);
    EXPECT_EQ(snap->phases[0].phase, QStringLiteral("load"));
    EXPECT_EQ(snap->phases[1].phase, QStringLiteral("rollout"));
    EXPECT_NEAR(snap->phases[1].t1 - snap->phases[1].t0, 170, 1e-6);
    // Peaks: node-b peaks at the spike; it stayed above 750 GB for ~12 minutes (720 s).
    ASSERT_EQ(snap->peaks.size(), 2u);
    const NodePeakRow& peakB =
        snap->peaks[1].nodeId == QStringLiteral("node-b") ? snap->peaks[1] : snap->peaks[0];
    EXPECT_NEAR(peakB.peakT, nsToSeconds(m_spikeNs), 1e-6);
    EXPECT_FALSE(peakB.phase.isEmpty());
    EXPECT_GT(peakB.secondsAboveAlarm, 600);
    EXPECT_LT(peakB.secondsAboveAlarm, 800);
    const NodePeakRow& peakA = &peakB == &snap->peaks[0] ? snap->peaks[1] : snap->peaks[0];
    EXPECT_EQ(peakA.secondsAboveAlarm, 0);
    // GPU memory: 4 per node; RSS per node; metrics by step.
    EXPECT_EQ(snap->gpuMemory.size(), 8u);
    EXPECT_EQ(snap->processRss.size(), 2u);
    EXPECT_GE(snap->metrics.size(), 3u);
    // NCCL: 2.28.9 fails the 2.30.7 gate; one probe; warning + error + stall on the timeline.
    EXPECT_EQ(snap->nccl.verdict, QStringLiteral("fail"));
    ASSERT_EQ(snap->nccl.probes.size(), 1u);
    EXPECT_NEAR(snap->nccl.probes[0].busbwGbps, 341.5, 1e-9);
    EXPECT_EQ(snap->nccl.events.size(), 3u);
}

TEST_F(HistoryQueries, ZoomedRangeReturnsRawSamplesWithTheirOwnMinMax) {
    const double spike = nsToSeconds(m_spikeNs);
    auto snap =
        loadRunSnapshot(*m_history, QStringLiteral("run-synthetic-1"), spike - 30, spike + 30, 200);
    ASSERT_TRUE(snap) << snap.error();
    const PointSeries& nodeB = snap->hostMemory[1];
    EXPECT_FALSE(nodeB.decimated);
    EXPECT_EQ(nodeB.t.size(), 61u);
    EXPECT_NEAR(nodeB.max[30], 900e9, 1);
}

TEST_F(HistoryQueries, UnknownRunIsAnErrorNamingIt) {
    auto snap = loadRunSnapshot(*m_history, QStringLiteral("nope"), 0, 0, 100);
    ASSERT_FALSE(snap);
    EXPECT_NE(snap.error().find("nope"), std::string::npos);
}

TEST_F(HistoryQueries, ReaderDeliversOnTheGuiThread) {
    HistoryReader reader(QString::fromStdString(m_path));
    QObject context;
    std::optional<Result<std::vector<RunRow>>> got;
    reader.run(
        QStringLiteral("runs"), &context, [](db::History& h) { return loadRunList(h); },
        [&](Result<Result<std::vector<RunRow>>> r) {
            ASSERT_TRUE(r);
            got.emplace(std::move(*r));
        });
    ASSERT_TRUE(waitUntil([&] { return got.has_value(); }, 5000));
    ASSERT_TRUE(*got);
    EXPECT_EQ((*got)->size(), 1u);
}

// runplane lowers its background threads below the GUI thread (common/thread_role.h): the
// reader's worker is one of them.
TEST_F(HistoryQueries, ReaderThreadRunsBelowTheGuiThreadWhereTheProcessAsks) {
    const int base = threads::currentThreadNice();
    threads::setBackgroundNice(threads::kGuiBackgroundNice);
    {
        HistoryReader reader(QString::fromStdString(m_path));
        const int expected = std::min(base + threads::kGuiBackgroundNice, 19);
        EXPECT_TRUE(waitUntil(
            [&] { return runplane::testing::niceOfThreadNamed("history-reader") == expected; },
            5000))
            << runplane::testing::niceOfThreadNamed("history-reader");
        EXPECT_EQ(threads::currentThreadNice(), base);
    }
    threads::setBackgroundNice(0);  // process-wide: the other tests' threads stay as they were
}

TEST(SecondsAbove, CountsIntervalsAboveTheLineWithGapsCapped) {
    PointSeries s;
    s.t = {0, 1, 2, 3, 100, 101};
    s.value = {5, 20, 20, 5, 20, 20};
    s.min = s.value;
    s.max = s.value;
    // 1->2 (1 s), 2->3 (1 s), 100->101 (1 s), last point counts the median spacing (1 s); the
    // gap 3->100 starts below the line.
    EXPECT_DOUBLE_EQ(secondsAbove(s, 10), 4);
    EXPECT_DOUBLE_EQ(secondsAbove(s, 30), 0);
}

TEST(NcclVersion, Codes) {
    EXPECT_EQ(ncclVersionCode(QStringLiteral("2.28.9")), 22809);
    EXPECT_EQ(ncclVersionCode(QStringLiteral("2.30.7")), 23007);
    EXPECT_EQ(ncclVersionCode(QStringLiteral("x")), 0);
}

// Issue 18: a finished run's output outlives its daemon. With no daemon (unknown address, or a
// port nobody listens on) the Log tab shows what the history stored, and says so.
TEST(LogTailer, FallsBackToTheOutputStoredInTheHistory) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    {
        auto h = runplane::db::History::open(path.toStdString());
        ASSERT_TRUE(h.ok()) << h.error();
        ASSERT_TRUE(
            (*h)->appendRunLog(RunId{"done-run"}, "stdout", 0, "stored line 1\nstored line 2\n")
                .ok());
    }
    for (const QString& address : {QString(), QStringLiteral("127.0.0.1:1")}) {
        runplane::gui::LogTailer tailer;
        tailer.setHistoryPath(path);
        QString text, note;
        bool ended = false;
        QObject::connect(&tailer, &runplane::gui::LogTailer::text,
                         [&](const QString& t) { text += t; });
        QObject::connect(&tailer, &runplane::gui::LogTailer::ended, [&](const QString& e) {
            note = e;
            ended = true;
        });
        tailer.start(address, QStringLiteral("done-run"), false);
        ASSERT_TRUE(waitUntil([&] { return ended; }, 20000)) << address.toStdString();
        EXPECT_EQ(text, QStringLiteral("stored line 1\nstored line 2\n")) << address.toStdString();
        EXPECT_TRUE(note.contains(QStringLiteral("stored in the history"))) << note.toStdString();
    }
    // Nothing stored: the daemon's error alone.
    runplane::gui::LogTailer tailer;
    tailer.setHistoryPath(path);
    QString note;
    bool ended = false;
    QObject::connect(&tailer, &runplane::gui::LogTailer::ended, [&](const QString& e) {
        note = e;
        ended = true;
    });
    tailer.start(QString(), QStringLiteral("other-run"), false);
    ASSERT_TRUE(waitUntil([&] { return ended; }, 20000));
    EXPECT_FALSE(note.contains(QStringLiteral("stored in the history"))) << note.toStdString();
}

namespace {

// Every drawn value of two snapshots' series, compared exactly.
void expectSameSeries(const std::vector<PointSeries>& a, const std::vector<PointSeries>& b,
                      const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE(std::string(what) + " " + a[i].nodeId.toStdString() + " " +
                     a[i].name.toStdString());
        EXPECT_EQ(a[i].nodeId, b[i].nodeId);
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].unit, b[i].unit);
        EXPECT_EQ(a[i].t, b[i].t);
        EXPECT_EQ(a[i].value, b[i].value);
        EXPECT_EQ(a[i].min, b[i].min);
        EXPECT_EQ(a[i].max, b[i].max);
        EXPECT_EQ(a[i].step, b[i].step);
        EXPECT_EQ(a[i].decimated, b[i].decimated);
        EXPECT_EQ(a[i].sourceCount, b[i].sourceCount);
    }
}

void expectSameSnapshot(const RunSnapshot& cached, const RunSnapshot& full) {
    expectSameSeries(cached.hostMemory, full.hostMemory, "host memory");
    expectSameSeries(cached.gpuMemory, full.gpuMemory, "gpu memory");
    expectSameSeries(cached.processRss, full.processRss, "process rss");
    expectSameSeries(cached.metrics, full.metrics, "metrics");
    EXPECT_EQ(cached.peaks.size(), full.peaks.size());
    EXPECT_EQ(cached.run.metrics.size(), full.run.metrics.size());
}

// Appends samples of node-a after its stored cursor (one batch).
Status appendSamples(db::History& history, std::vector<db::IngestSample> samples) {
    auto cursor = history.latestCursor(db::NodeId{"node-a"});
    if (!cursor) {
        return Error{cursor.error()};
    }
    db::IngestBatch batch;
    batch.nodeId = db::NodeId{"node-a"};
    std::uint64_t seq = 1;
    if (*cursor) {
        batch.incarnation = (*cursor)->incarnation;
        seq = (*cursor)->lastSeq + 1;
    }
    for (db::IngestSample& s : samples) {
        s.seq = seq++;
        batch.samples.push_back(std::move(s));
    }
    batch.throughSeq = seq - 1;
    auto stored = history.ingest(batch);
    return stored ? Status{} : Status{Error{stored.error()}};
}

}  // namespace

// A live run refreshed through a SeriesCache (what the Runs page does once a second) shows
// exactly what a full read shows, after new samples arrive at the end of its series and after
// one arrives out of order (before the last one read), while reading only the new tail or
// nothing for series that did not change.
TEST(IncrementalRefresh, ShowsTheSameAsAFullReadAfterNewData) {
    QTemporaryDir dir;
    auto opened = db::History::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
    ASSERT_TRUE(opened) << opened.error();
    db::History& history = **opened;
    test::SyntheticRunSpec spec;
    spec.seconds = 900;
    spec.finished = false;  // live: the range is [start, now]
    auto written = test::writeSyntheticRun(history, spec);
    ASSERT_TRUE(written) << written.error();
    const QString run = QString::fromStdString(spec.runId);
    constexpr int kBuckets = 200;

    SeriesCache cache;
    auto first = loadRunSnapshot(history, run, 0, 0, kBuckets, nullptr, &cache);
    ASSERT_TRUE(first) << first.error();
    auto full = loadRunSnapshot(history, run, 0, 0, kBuckets);
    ASSERT_TRUE(full) << full.error();
    expectSameSnapshot(*first, *full);
    ASSERT_FALSE(first->metrics.empty());
    const std::int64_t readsAtFirst = cache.counts().full;
    EXPECT_GT(readsAtFirst, 0);
    EXPECT_EQ(cache.counts().tail, 0);

    // Nothing new: nothing is read again.
    auto same = loadRunSnapshot(history, run, 0, 0, kBuckets, nullptr, &cache);
    ASSERT_TRUE(same) << same.error();
    expectSameSnapshot(*same, *full);
    EXPECT_EQ(cache.counts().full, readsAtFirst);
    EXPECT_GT(cache.counts().reused, 0);

    // New samples at the end: node-a's host memory and two eval curves grow, node-b does not.
    auto all = history.listSeries({});
    ASSERT_TRUE(all) << all.error();
    std::int64_t end = 0;  // after every stored sample (the eval curves outlast the 900 s)
    for (const db::SeriesInfo& info : *all) {
        end = std::max(end, info.lastNs);
    }
    std::vector<db::IngestSample> more;
    for (int k = 1; k <= 5; ++k) {
        const std::int64_t t = end + k * 1'000'000'000LL;
        more.push_back(db::IngestSample{0, t, db::RunId{}, "host.mem.used_bytes", "bytes",
                                        7e11 + k * 1e9, 6.9e11, 7.1e11 + k * 1e9, -1});
        more.push_back(db::IngestSample{0, t, db::RunId{spec.runId}, "eval/gsm8k", "",
                                        0.76 + k * 0.01, 0.76 + k * 0.01, 0.76 + k * 0.01, 40 + k});
        more.push_back(db::IngestSample{0, t, db::RunId{spec.runId}, "train/loss", "",
                                        0.5 - k * 0.01, 0.4, 0.6, 40 + k});
    }
    ASSERT_TRUE(appendSamples(history, more).ok());
    const auto before = cache.counts();
    auto grown = loadRunSnapshot(history, run, 0, 0, kBuckets, nullptr, &cache);
    ASSERT_TRUE(grown) << grown.error();
    auto grownFull = loadRunSnapshot(history, run, 0, 0, kBuckets);
    ASSERT_TRUE(grownFull) << grownFull.error();
    expectSameSnapshot(*grown, *grownFull);
    EXPECT_GE(cache.counts().tail - before.tail, 2);      // the two eval curves: only their tail
    EXPECT_GT(cache.counts().reused - before.reused, 0);  // node-b, the GPUs: not read
    bool sawGsm = false;
    for (const PointSeries& m : grown->metrics) {
        if (m.name == QStringLiteral("eval/gsm8k")) {
            sawGsm = true;
            ASSERT_FALSE(m.value.empty());
            EXPECT_DOUBLE_EQ(m.value.back(), 0.81);
            EXPECT_FALSE(m.decimated);
        }
    }
    EXPECT_TRUE(sawGsm);

    // A sample older than the last one read (a late resend): a full read, still the same.
    ASSERT_TRUE(appendSamples(history, {db::IngestSample{0, spec.startNs + 1'500'000'000LL,
                                                         db::RunId{spec.runId}, "eval/gsm8k", "",
                                                         0.1, 0.1, 0.1, 0}})
                    .ok());
    const auto beforeLate = cache.counts();
    auto late = loadRunSnapshot(history, run, 0, 0, kBuckets, nullptr, &cache);
    ASSERT_TRUE(late) << late.error();
    auto lateFull = loadRunSnapshot(history, run, 0, 0, kBuckets);
    ASSERT_TRUE(lateFull) << lateFull.error();
    expectSameSnapshot(*late, *lateFull);
    EXPECT_GT(cache.counts().full, beforeLate.full);
}

namespace {

// The last and best of every metric value, compared exactly.
void expectSameMetricValues(const std::vector<MetricValue>& a, const std::vector<MetricValue>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE(a[i].name.toStdString());
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].last, b[i].last);
        EXPECT_EQ(a[i].lastStep, b[i].lastStep);
        EXPECT_EQ(a[i].hasBest(), b[i].hasBest());
        if (a[i].hasBest()) {
            EXPECT_EQ(a[i].best, b[i].best);
        }
        EXPECT_EQ(a[i].bestStep, b[i].bestStep);
        EXPECT_EQ(a[i].info.kind, b[i].info.kind);
        EXPECT_EQ(a[i].info.direction, b[i].info.direction);
    }
}

const db::SeriesInfo* findSeries(const std::vector<db::SeriesInfo>& all, const std::string& name,
                                 const std::string& runId) {
    for (const db::SeriesInfo& info : all) {
        if (info.name == name && info.runId.value() == runId && info.nodeId.value() == "node-a") {
            return &info;
        }
    }
    return nullptr;
}

}  // namespace

// A whole series past the raw limit is followed on a fixed grid: after new samples only its last
// bucket onward is read again, and the answer is what a full read (loadSeries) gives, also
// across a change of grid (the span doubled) and after a late sample (full read). The eval
// metrics' last/best through the cache equal runMetricsByKind's after each step.
TEST(IncrementalRefresh, DecimatedFollowingAndMetricValuesMatchFullReads) {
    QTemporaryDir dir;
    auto opened = db::History::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
    ASSERT_TRUE(opened) << opened.error();
    db::History& history = **opened;
    const std::string run = "follow-run";
    constexpr int kBuckets = 64;  // raw limit 256 samples
    const std::int64_t t0 = 1'700'000'000'000'000'000LL;
    std::int64_t next = t0;
    std::int64_t step = 0;
    // n samples of host memory and eval/acc, 100 ms apart (a node at 10 Hz).
    auto grow = [&](int n) {
        std::vector<db::IngestSample> samples;
        for (int i = 0; i < n; ++i, ++step, next += 100'000'000LL) {
            const double v = 1e9 + static_cast<double>((step * 7919) % 1000) * 1e6;
            samples.push_back(db::IngestSample{0, next, db::RunId{}, "host.mem.used_bytes", "bytes",
                                               v, v - 1, v + 1, -1});
            const double acc = 0.5 + static_cast<double>((step * 31) % 97) / 200.0;
            samples.push_back(
                db::IngestSample{0, next, db::RunId{run}, "eval/acc", "", acc, acc, acc, step});
        }
        return appendSamples(history, std::move(samples));
    };
    SeriesCache cache;
    auto check = [&](const char* when) {
        SCOPED_TRACE(when);
        auto all = history.listSeries({});
        ASSERT_TRUE(all) << all.error();
        for (const char* name : {"host.mem.used_bytes", "eval/acc"}) {
            const db::SeriesInfo* info =
                findSeries(*all, name, name[0] == 'e' ? run : std::string());
            ASSERT_NE(info, nullptr) << name;
            auto cached = cache.load(history, *info, 0, 0, kBuckets);
            ASSERT_TRUE(cached) << cached.error();
            auto full = loadSeries(history, *info, 0, 0, kBuckets);
            ASSERT_TRUE(full) << full.error();
            expectSameSeries({*cached}, {*full}, name);
            EXPECT_TRUE(cached->decimated);
            EXPECT_LE(cached->t.size(), static_cast<size_t>(kBuckets));
            EXPECT_EQ(cache.followWidthNs(info->id),
                      db::followBucketWidth(info->firstNs, info->lastNs, kBuckets));
        }
        auto viaCache = loadMetricValues(history, RunId{run}, "eval/", {}, &cache);
        ASSERT_TRUE(viaCache) << viaCache.error();
        auto direct = loadMetricValues(history, RunId{run}, "eval/", {});
        ASSERT_TRUE(direct) << direct.error();
        ASSERT_EQ(viaCache->size(), 1u);
        expectSameMetricValues(*viaCache, *direct);
    };

    ASSERT_TRUE(grow(300).ok());  // past the raw limit
    check("first read");
    const auto first = cache.counts();

    ASSERT_TRUE(grow(7).ok());
    check("grown a little");
    EXPECT_EQ(cache.counts().tail - first.tail, 3);  // both series and the metric: tails only
    EXPECT_EQ(cache.counts().full, first.full);

    // Grow well past a doubling of the span: the grid changes once (a full read), then tails.
    for (int k = 0; k < 12; ++k) {
        ASSERT_TRUE(grow(50).ok());
        check("growing");
    }
    EXPECT_GT(cache.counts().tail - first.tail, 20);

    // Nothing new: nothing read.
    const auto idle = cache.counts();
    check("unchanged");
    EXPECT_EQ(cache.counts().full, idle.full);
    EXPECT_EQ(cache.counts().tail, idle.tail);

    // A late sample inside an earlier bucket (and a better eval value than any): full reads.
    ASSERT_TRUE(
        appendSamples(history, {db::IngestSample{0, t0 + 1'234'567LL, db::RunId{},
                                                 "host.mem.used_bytes", "bytes", 5e9, 5e9, 5e9, -1},
                                db::IngestSample{0, t0 + 1'234'567LL, db::RunId{run}, "eval/acc",
                                                 "", 0.999, 0.999, 0.999, 0}})
            .ok());
    const auto beforeLate = cache.counts();
    check("late sample");
    EXPECT_GE(cache.counts().full - beforeLate.full, 2);
}

// A fixed-grid read from a bucket boundary gives exactly the buckets a read of everything gives
// from there, also where the history answers from rollup cells (buckets of 2 cells and more).
TEST(IncrementalRefresh, FixedGridReadsAgreeFromAnyBucketBoundary) {
    QTemporaryDir dir;
    auto opened = db::History::open(dir.filePath(QStringLiteral("history.sqlite")).toStdString());
    ASSERT_TRUE(opened) << opened.error();
    db::History& history = **opened;
    const std::int64_t t0 = 1'700'000'000'000'000'000LL;
    std::vector<db::IngestSample> samples;
    for (int i = 0; i < 6 * 3600; ++i) {  // 6 h at 1 Hz, with spikes
        const double v = (i % 997 == 0) ? 9e9 : 1e9 + static_cast<double>((i * 7919) % 1000) * 1e6;
        samples.push_back(db::IngestSample{0, t0 + i * 1'000'000'000LL, db::RunId{},
                                           "host.mem.used_bytes", "bytes", v, v - 5, v + 5, -1});
    }
    ASSERT_TRUE(appendSamples(history, std::move(samples)).ok());
    auto all = history.listSeries({});
    ASSERT_TRUE(all) << all.error();
    const db::SeriesInfo* info = findSeries(*all, "host.mem.used_bytes", "");
    ASSERT_NE(info, nullptr);
    for (int buckets : {1000, 200, 64, 16}) {
        const std::int64_t w = db::followBucketWidth(info->firstNs, info->lastNs, buckets);
        SCOPED_TRACE("width " + std::to_string(w));
        db::SeriesQuery q;
        q.seriesId = info->id;
        q.bucketWidthNs = w;
        auto whole = history.querySeries(q);
        ASSERT_TRUE(whole) << whole.error();
        ASSERT_TRUE(whole->decimated);
        EXPECT_LE(whole->buckets.size(), static_cast<size_t>(buckets));
        EXPECT_EQ(whole->sourceCount, info->count);
        for (size_t from : {size_t{1}, whole->buckets.size() / 3, whole->buckets.size() - 1}) {
            q.t0Ns = whole->buckets[from].t0Ns;
            auto tail = history.querySeries(q);
            ASSERT_TRUE(tail) << tail.error();
            ASSERT_EQ(tail->buckets.size(), whole->buckets.size() - from);
            for (size_t i = 0; i < tail->buckets.size(); ++i) {
                const db::SeriesBucket& a = tail->buckets[i];
                const db::SeriesBucket& b = whole->buckets[from + i];
                EXPECT_EQ(a.t0Ns, b.t0Ns);
                EXPECT_EQ(a.count, b.count);
                EXPECT_EQ(a.min, b.min);
                EXPECT_EQ(a.max, b.max);
                EXPECT_EQ(a.last.value, b.last.value);
                EXPECT_EQ(a.last.tNs, b.last.tNs);
                EXPECT_EQ(a.first.tNs, b.first.tNs);
            }
        }
    }
}

// The Runs page's own series share one budget of points.
TEST(IncrementalRefresh, RunSeriesShareAPointBudget) {
    EXPECT_EQ(runSeriesBuckets(1400, 4), 1400);
    EXPECT_EQ(runSeriesBuckets(1400, 1024), kRunPointBudget / (4 * 1024));
    EXPECT_EQ(runSeriesBuckets(1400, 1'000'000), kHostMemoryMinBuckets);  // a floor per series
    EXPECT_EQ(runSeriesBuckets(20, 1'000'000), 20);                       // never over the width
    for (size_t n : {size_t{1}, size_t{7}, size_t{300}, size_t{1024}, size_t{8192}}) {
        EXPECT_LE(
            4 * static_cast<std::int64_t>(runSeriesBuckets(1400, n)) * static_cast<std::int64_t>(n),
            kRunPointBudget)
            << n;
    }
}
