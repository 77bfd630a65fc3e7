// Staged rows (schema 8, issue #20): a node's new samples are one `staged` row per transaction
// until a head fills; then the node's heads are sealed chunks and its rows are gone. Every read
// sees each sample exactly once, across connections, rollbacks, a writer that dies without its
// close, and a damaged row is a clear error (docs/history.md, "Chunks").
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/history/retention.h"
#include "db/history/rollup.h"
#include "db/history/schema.h"
#include "db/history/staged.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using testing::ScratchDir;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t scalar(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << stmt.error();
    if (!stmt.ok()) {
        return -1;
    }
    auto row = stmt->step();
    EXPECT_TRUE(row.ok()) << row.error();
    return stmt->columnInt(0);
}

std::int64_t stagedRows(const std::string& path, const std::string& node) {
    return scalar(path, "SELECT count(*) FROM staged WHERE node_id = '" + node + "';");
}

IngestSample sample(std::uint64_t seq, std::int64_t t, double v, const std::string& name) {
    return IngestSample{seq, t, RunId{}, name, "", v, v, v, -1};
}

// Writes batches for one node: `perSeries[i]` samples of series "s<i>" each batch, 10 s apart,
// values varying so chunks fill by bytes as well as by count.
class NodeFeed {
  public:
    NodeFeed(std::string node, std::vector<int> perSeries)
        : m_node(std::move(node)),
          m_perSeries(std::move(perSeries)),
          m_counts(m_perSeries.size(), 0) {}
    IngestBatch next() {
        IngestBatch batch;
        batch.nodeId = NodeId{m_node};
        for (std::size_t s = 0; s < m_perSeries.size(); ++s) {
            for (int i = 0; i < m_perSeries[s]; ++i) {
                ++m_seq;
                const std::int64_t t = 1'700'000'000'000'000'000 +
                                       static_cast<std::int64_t>(m_counts[s]++) * 10'000'000'000;
                batch.samples.push_back(sample(m_seq, t,
                                               m_constant ? 1.0 : static_cast<double>(m_seq) * 0.37,
                                               "s" + std::to_string(s)));
            }
        }
        batch.throughSeq = m_seq;
        return batch;
    }
    void constantValues() { m_constant = true; }
    std::int64_t stored(std::size_t series) const { return m_counts[series]; }
    std::int64_t total() const { return static_cast<std::int64_t>(m_seq); }
    const std::string& node() const { return m_node; }

  private:
    std::string m_node;
    std::vector<int> m_perSeries;
    std::vector<std::uint64_t> m_counts;
    std::uint64_t m_seq = 0;
    bool m_constant = false;
};

std::int64_t seriesId(History& h, const std::string& node, const std::string& name) {
    auto id = h.findSeries(NodeId{node}, RunId(), name);
    EXPECT_TRUE(id.ok() && id->has_value());
    return id.ok() && id->has_value() ? **id : 0;
}

// Every way of reading a series counts `expected` samples, each once: a raw range read, its
// extent in listSeries, a decimated read over cells, and the samples view (distinct seqs).
void expectEachSampleOnce(History& reader, const std::string& path, std::int64_t id,
                          std::int64_t expected, const std::string& where) {
    SCOPED_TRACE(where);
    auto raw = reader.querySeries(SeriesQuery{id, kMin, kMax, 1'000'000});
    ASSERT_TRUE(raw.ok()) << raw.error();
    ASSERT_FALSE(raw->decimated);
    ASSERT_EQ(static_cast<std::int64_t>(raw->points.size()), expected);
    for (std::size_t i = 1; i < raw->points.size(); ++i) {
        ASSERT_LT(raw->points[i - 1].tNs, raw->points[i].tNs) << i;  // times are distinct
    }
    // A range cut inside the data holds exactly the samples whose time is in it.
    if (expected > 4) {
        const std::int64_t t0 = raw->points[1].tNs;
        const std::int64_t t1 = raw->points[static_cast<std::size_t>(expected) - 2].tNs;
        auto cut = reader.querySeries(SeriesQuery{id, t0, t1, 1'000'000});
        ASSERT_TRUE(cut.ok()) << cut.error();
        EXPECT_EQ(static_cast<std::int64_t>(cut->points.size()), expected - 2);
    }
    auto list = reader.listSeries(SeriesFilter{});
    ASSERT_TRUE(list.ok()) << list.error();
    auto info =
        std::find_if(list->begin(), list->end(), [&](const SeriesInfo& s) { return s.id == id; });
    ASSERT_NE(info, list->end());
    EXPECT_EQ(info->count, expected);
    if (expected > 0) {
        EXPECT_EQ(info->firstNs, raw->points.front().tNs);
        EXPECT_EQ(info->lastNs, raw->points.back().tNs);
    }
    auto wide = reader.querySeries(SeriesQuery{id, kMin, kMax, 10});
    ASSERT_TRUE(wide.ok()) << wide.error();
    EXPECT_EQ(wide->sourceCount, expected);
    const std::string series = std::to_string(id);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples WHERE series_id = " + series + ";"),
              expected);
    EXPECT_EQ(
        scalar(path, "SELECT count(DISTINCT seq) FROM samples WHERE series_id = " + series + ";"),
        expected);
}

// Level-2 cells plus the samples not in cells (the staged ones) = every sample, once.
void expectCellsPlusStagedAreAll(const std::string& path, std::int64_t total) {
    const std::int64_t staged = scalar(path, "SELECT count(*) FROM samples;") -
                                scalar(path, "SELECT coalesce(sum(count), 0) FROM chunks;");
    EXPECT_EQ(
        scalar(path, "SELECT coalesce(sum(count), 0) FROM sample_rollup WHERE level = 2;") + staged,
        total);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), total);
}

// A node's batches are staged rows (one per transaction) until a head fills; the batch that
// fills it seals the node: no staged row left, every sample in a chunk once. Another node's
// rows are not touched; a node past 64 staged rows is sealed too.
TEST(Staged, RowsHoldANodesSamplesUntilAHeadFills) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto opened = History::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error();
    History& h = **opened;
    NodeFeed fast("n1", {64, 1});  // s0 fills 1,024 samples after 16 batches; s1 is slow
    fast.constantValues();         // a few bits a sample: filled by count, not bytes
    NodeFeed other("n2", {3});
    for (int b = 1; b <= 15; ++b) {
        ASSERT_TRUE(h.ingest(fast.next()).ok());
        ASSERT_TRUE(h.ingest(other.next()).ok());
        EXPECT_EQ(stagedRows(path, "n1"), b);
        EXPECT_EQ(scalar(path, "SELECT count(*) FROM chunks;"), 0);
    }
    ASSERT_TRUE(h.ingest(fast.next()).ok());  // s0's head is full now
    EXPECT_EQ(stagedRows(path, "n1"), 0);
    EXPECT_EQ(stagedRows(path, "n2"), 15);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM chunks;"), 2);  // s0: 1,024, s1: 16 (short)
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), 1024 + 16);
    EXPECT_EQ(scalar(path, "SELECT max(count) FROM chunks;"), 1024);
    EXPECT_EQ(scalar(path, "SELECT sum(unrolled) FROM chunks;"), 0);
    expectEachSampleOnce(h, path, seriesId(h, "n1", "s0"), fast.stored(0), "s0 sealed");
    expectEachSampleOnce(h, path, seriesId(h, "n1", "s1"), fast.stored(1), "s1 sealed");
    expectEachSampleOnce(h, path, seriesId(h, "n2", "s0"), other.stored(0), "n2 staged");
    expectCellsPlusStagedAreAll(path, fast.total() + other.total());

    // A slow node alone: sealed at its 65th batch (64 staged rows at most).
    NodeFeed slow("n3", {1});
    for (int b = 1; b <= 64; ++b) {
        ASSERT_TRUE(h.ingest(slow.next()).ok());
    }
    EXPECT_EQ(stagedRows(path, "n3"), 64);
    ASSERT_TRUE(h.ingest(slow.next()).ok());
    EXPECT_EQ(stagedRows(path, "n3"), 0);
    expectEachSampleOnce(h, path, seriesId(h, "n3", "s0"), 65, "n3 sealed");

    // A batch larger than a head: full chunks, the rest of the batch staged (not a short chunk).
    NodeFeed big("n4", {2500});
    big.constantValues();
    ASSERT_TRUE(h.ingest(big.next()).ok());
    EXPECT_EQ(stagedRows(path, "n4"), 1);
    const std::int64_t n4 = seriesId(h, "n4", "s0");
    EXPECT_EQ(
        scalar(path, "SELECT min(count) FROM chunks WHERE series_id = " + std::to_string(n4) + ";"),
        1024);
    EXPECT_EQ(
        scalar(path, "SELECT count(*) FROM chunks WHERE series_id = " + std::to_string(n4) + ";"),
        2);
    expectEachSampleOnce(h, path, n4, 2500, "n4 staged remainder");

    // A clean close seals what is left.
    opened->reset();
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM staged;"), 0);
    const std::int64_t total = fast.total() + other.total() + slow.total() + big.total();
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), total);
    expectCellsPlusStagedAreAll(path, total);
}

// A second connection reading while the first ingests (seals included) sees every sample once,
// through every read path; a new incarnation seals the node first.
TEST(Staged, AReaderDuringTheRunSeesEverySampleOnce) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto writer = History::open(path);
    auto reader = History::open(path);
    ASSERT_TRUE(writer.ok() && reader.ok());
    NodeFeed feed("n1", {7, 3, 1});
    std::int64_t ids[3] = {};
    for (int b = 0; b < 150; ++b) {
        IngestBatch batch = feed.next();
        if (b >= 100) {
            batch.incarnation = 42;  // a new spool: the old heads are sealed first
        }
        ASSERT_TRUE((*writer)->ingest(batch).ok());
        if (b == 0) {
            for (int s = 0; s < 3; ++s) {
                ids[s] = seriesId(**reader, "n1", "s" + std::to_string(s));
            }
        }
        if (b % 7 == 0 || b == 100) {
            for (int s = 0; s < 3; ++s) {
                expectEachSampleOnce(**reader, path, ids[s], feed.stored(s),
                                     "batch " + std::to_string(b) + " series " + std::to_string(s));
            }
        }
    }
    EXPECT_GT(scalar(path, "SELECT count(*) FROM chunks;"), 3);  // seals happened
    EXPECT_GT(scalar(path, "SELECT count(*) FROM staged;"), 0);  // and rows are staged
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples WHERE incarnation = 42;"),
              50 * (7 + 3 + 1));
    expectCellsPlusStagedAreAll(path, feed.total());
    writer->reset();
    for (int s = 0; s < 3; ++s) {
        expectEachSampleOnce(**reader, path, ids[s], feed.stored(s), "after close");
    }
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM staged;"), 0);
    expectCellsPlusStagedAreAll(path, feed.total());
}

// A reader thread racing a writer thread (seals committed between any two statements): every
// read is a prefix of the series, no sample missing or doubled, and within beginRead/endRead
// the count, the raw read and the cell-based read agree.
TEST(Staged, AConcurrentReaderNeverSeesASampleTwiceOrMissing) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto writer = History::open(path);
    auto reader = History::open(path);
    ASSERT_TRUE(writer.ok() && reader.ok());
    NodeFeed feed("n1", {9, 4});
    ASSERT_TRUE((*writer)->ingest(feed.next()).ok());
    const std::int64_t id = seriesId(**reader, "n1", "s0");
    std::atomic<bool> done{false};
    std::thread write([&] {
        for (int i = 0; i < 400; ++i) {
            EXPECT_TRUE((*writer)->ingest(feed.next()).ok());
        }
        done = true;
    });
    int reads = 0;
    while (!done || reads < 5) {
        ++reads;
        ASSERT_TRUE((*reader)->beginRead().ok());
        SeriesFilter filter;
        filter.nodeId = NodeId{"n1"};
        filter.name = "s0";
        auto list = (*reader)->listSeries(filter);
        auto raw = (*reader)->querySeries(SeriesQuery{id, kMin, kMax, 1'000'000});
        auto wide = (*reader)->querySeries(SeriesQuery{id, kMin, kMax, 8});
        ASSERT_TRUE((*reader)->endRead().ok());
        ASSERT_TRUE(list.ok() && raw.ok() && wide.ok());
        ASSERT_EQ(list->size(), 1u);
        const auto n = static_cast<std::int64_t>(raw->points.size());
        ASSERT_EQ((*list)[0].count, n);
        ASSERT_EQ(wide->sourceCount, n);
        for (std::int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(raw->points[static_cast<std::size_t>(i)].tNs,
                      1'700'000'000'000'000'000 + i * 10'000'000'000)
                << "read " << reads << ", sample " << i << " of " << n;
        }
        // Without beginRead each call is still one snapshot: a prefix, once each.
        auto alone = (*reader)->querySeries(SeriesQuery{id, kMin, kMax, 1'000'000});
        ASSERT_TRUE(alone.ok());
        for (std::size_t i = 0; i < alone->points.size(); ++i) {
            ASSERT_EQ(alone->points[i].tNs,
                      1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 10'000'000'000);
        }
    }
    write.join();
    expectEachSampleOnce(**reader, path, id, feed.stored(0), "end");
}

// Two connections ingesting one node in turn: each has its own heads and staged rows; nothing
// is lost or doubled while they run and after they close.
TEST(Staged, TwoConnectionsIngestingOneNodeAlternately) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto a = History::open(path);
    auto b = History::open(path);
    ASSERT_TRUE(a.ok() && b.ok());
    NodeFeed feed("n1", {9, 2});
    for (int i = 0; i < 300; ++i) {
        History& h = (i % 3 == 0) ? **b : **a;
        auto stored = h.ingest(feed.next());
        ASSERT_TRUE(stored.ok()) << stored.error();
        if (i % 25 == 0) {
            expectEachSampleOnce(**a, path, seriesId(**a, "n1", "s0"), feed.stored(0),
                                 "round " + std::to_string(i));
        }
    }
    expectEachSampleOnce(**b, path, seriesId(**b, "n1", "s0"), feed.stored(0), "end");
    expectEachSampleOnce(**b, path, seriesId(**b, "n1", "s1"), feed.stored(1), "end");
    expectCellsPlusStagedAreAll(path, feed.total());
    a->reset();
    b->reset();
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM staged;"), 0);
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), feed.total());
    expectCellsPlusStagedAreAll(path, feed.total());
}

// A rolled-back transaction leaves the rows it staged before as orphans: read once, kept while
// another History is open, adopted (sealed into chunks) by the next one alone on the file.
TEST(Staged, RolledBackOrphansAreReadOnceAndAdoptedWhenAlone) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto a = History::open(path);
    ASSERT_TRUE(a.ok());
    NodeFeed feed("n1", {5, 1});
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE((*a)->ingest(feed.next()).ok());
    }
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE((*db)
                        ->exec("CREATE TRIGGER fail BEFORE INSERT ON staged BEGIN "
                               "SELECT RAISE(ABORT, 'injected'); END;")
                        .ok());
    }
    IngestBatch failed = feed.next();  // sent again below, once the fault is gone
    ASSERT_FALSE((*a)->ingest(failed).ok());
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE((*db)->exec("DROP TRIGGER fail;").ok());
    }
    const std::int64_t orphans = stagedRows(path, "n1");
    EXPECT_EQ(orphans, 10);
    ASSERT_TRUE((*a)->ingest(failed).ok());  // the retry: new heads, the orphans stay
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE((*a)->ingest(feed.next()).ok());
    }
    expectEachSampleOnce(**a, path, seriesId(**a, "n1", "s0"), feed.stored(0), "with orphans");
    expectCellsPlusStagedAreAll(path, feed.total());
    {
        // Another History opens while `a` is open: it is not alone, the orphans wait.
        auto b = History::open(path);
        ASSERT_TRUE(b.ok());
        EXPECT_GE(stagedRows(path, "n1"), orphans);
        expectEachSampleOnce(**b, path, seriesId(**b, "n1", "s1"), feed.stored(1), "second");
    }
    a->reset();  // seals its own heads; the orphans are not its rows
    EXPECT_EQ(stagedRows(path, "n1"), orphans);
    auto alone = History::open(path);
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM staged;"), 0);
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), feed.total());
    expectEachSampleOnce(**alone, path, seriesId(**alone, "n1", "s0"), feed.stored(0), "adopted");
    expectCellsPlusStagedAreAll(path, feed.total());
}

// A writer process that dies without closing (a crash) leaves its staged rows; the next
// History alone on the file adopts them, exactly once.
TEST(Staged, AWriterThatDiedLeavesRowsTheNextOpenAdopts) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    registerSamplesView();  // this process opens no History before it reads the view
    NodeFeed feed("n1", {6, 2, 1});
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto h = History::open(path);
        bool ok = h.ok();
        for (int i = 0; ok && i < 23; ++i) {
            ok = (*h)->ingest(feed.next()).ok();
        }
        ::_exit(ok ? 0 : 1);  // no destructor: the heads are never sealed
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 23; ++i) {
        (void)feed.next();  // what the child stored
    }
    const std::int64_t orphans = stagedRows(path, "n1");
    EXPECT_GT(orphans, 0);
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM samples;"), feed.total());
    auto h = History::open(path);
    ASSERT_TRUE(h.ok()) << h.error();
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM staged;"), 0);
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM chunks;"), feed.total());
    for (int s = 0; s < 3; ++s) {
        expectEachSampleOnce(**h, path, seriesId(**h, "n1", "s" + std::to_string(s)),
                             feed.stored(static_cast<std::size_t>(s)), "adopted");
    }
    expectCellsPlusStagedAreAll(path, feed.total());
    // Ingest continues after the adopted samples, exactly once.
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE((*h)->ingest(feed.next()).ok());
    }
    expectEachSampleOnce(**h, path, seriesId(**h, "n1", "s0"), feed.stored(0), "continued");
}

// A version-7 file whose writer left a head chunk with unrolled samples (v7 rewrote heads in
// place) migrates to 8 unchanged and reads every sample once; a new writer does not continue
// that chunk but begins its own.
TEST(Staged, AVersion7HeadWithUnrolledSamplesStaysReadable) {
    ScratchDir dir;
    const std::string path = dir.file("v7.sqlite");
    std::vector<ChunkSample> sealed;
    std::vector<ChunkSample> head;
    for (int i = 1; i <= 300; ++i) {
        ChunkSample s{
            1'700'000'000'000'000'000 + i * 10'000'000'000LL, i, i * 0.25, i * 0.25, i * 0.25, -1};
        (i <= 200 ? sealed : head).push_back(s);
    }
    {
        auto db = sqlite::Database::open(path);
        ASSERT_TRUE(db.ok()) << db.error();
        auto version = applyMigrations(**db, migrations().first(7), false);
        ASSERT_TRUE(version.ok() && *version == 7);
        ASSERT_TRUE((*db)
                        ->exec("INSERT INTO series(id, node_id, run_id, name, unit) VALUES "
                               "(1, 'n1', '', 's0', '');")
                        .ok());
        ASSERT_TRUE(insertChunks(**db, 1, 0, sealed).ok());
        auto upsert = (*db)->prepare(rollupUpsertSql());
        ASSERT_TRUE(upsert.ok());
        ASSERT_TRUE(rollSamples(*upsert, 1, sealed, kRetainedRollupLevel).ok());
        // The head: its first 40 samples rolled, the last 60 not (unrolled = 60).
        ASSERT_TRUE(insertChunks(**db, 1, 0, head).ok());
        ASSERT_TRUE(rollSamples(*upsert, 1, std::span(head).first(40), kRetainedRollupLevel).ok());
        ASSERT_TRUE((*db)
                        ->exec("UPDATE chunks SET unrolled = 60 WHERE id = "
                               "(SELECT max(id) FROM chunks);")
                        .ok());
    }
    auto h = History::open(path);
    ASSERT_TRUE(h.ok()) << h.error();
    EXPECT_EQ(*(*h)->schemaVersion(), kSchemaVersion);  // migrated to the current version
    EXPECT_EQ(scalar(path, "SELECT sum(unrolled) FROM chunks;"), 60);
    expectEachSampleOnce(**h, path, 1, 300, "migrated");
    // The 60 unrolled samples are in no cell yet.
    EXPECT_EQ(scalar(path, "SELECT sum(count) FROM sample_rollup WHERE level = 2;"), 300 - 60);
    IngestBatch batch;
    batch.nodeId = NodeId{"n1"};
    for (std::uint64_t seq = 301; seq <= 320; ++seq) {
        batch.samples.push_back(
            sample(seq, 1'700'000'000'000'000'000 + static_cast<std::int64_t>(seq) * 10'000'000'000,
                   1.0, "s0"));
    }
    batch.throughSeq = 320;
    ASSERT_TRUE((*h)->ingest(batch).ok());
    EXPECT_EQ(scalar(path, "SELECT count(*) FROM chunks;"), 2);  // the v7 head is not rewritten
    expectEachSampleOnce(**h, path, 1, 320, "ingested after");
    auto wide = (*h)->querySeries(SeriesQuery{1, kMin, kMax, 5});
    ASSERT_TRUE(wide.ok());
    EXPECT_TRUE(wide->decimated);
    EXPECT_EQ(wide->sourceCount, 320);
}

// A damaged staged row is an error naming the file and the row, for every reader; the format's
// decoder never reads outside the row, whatever the bytes.
TEST(Staged, ADamagedRowIsAClearError) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    auto h = History::open(path);
    ASSERT_TRUE(h.ok());
    NodeFeed feed("n1", {4});
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE((*h)->ingest(feed.next()).ok());
    }
    const std::int64_t id = seriesId(**h, "n1", "s0");
    {
        auto db = sqlite::Database::open(path);
        // Cut the last row short: its section claims more bytes than the row holds.
        ASSERT_TRUE((*db)
                        ->exec("UPDATE staged SET data = substr(data, 1, length(data) - 3) "
                               "WHERE id = (SELECT max(id) FROM staged);")
                        .ok());
    }
    auto read = (*h)->querySeries(SeriesQuery{id, kMin, kMax, 1000});
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().find(path), std::string::npos) << read.error();
    EXPECT_NE(read.error().find("damaged staged row"), std::string::npos) << read.error();
    auto list = (*h)->listSeries(SeriesFilter{});
    ASSERT_FALSE(list.ok());
    EXPECT_NE(list.error().find("damaged staged row"), std::string::npos) << list.error();
    {
        auto db = sqlite::Database::open(path);
        auto stmt = (*db)->prepare("SELECT count(*) FROM samples;");
        ASSERT_TRUE(stmt.ok());
        EXPECT_FALSE(stmt->step().ok());  // SQLITE_CORRUPT, not a wrong count
    }

    // Every prefix and many random corruptions of a valid row: an error or a result, never a
    // read past the row (ASan builds check the bounds).
    ChunkEncoder samples;
    for (int i = 0; i < 50; ++i) {
        samples.append(ChunkSample{i * 1000, i, i * 0.5, i * 0.5, i * 0.5, -1});
    }
    std::vector<std::uint8_t> row;
    appendStagedSection(row, 7, samples);
    appendStagedSection(row, 9, samples);
    auto decodeAll = [](std::span<const std::uint8_t> bytes) {
        Status decoded;
        std::int64_t n = 0;
        Status split = forEachStagedSection(bytes, [&](const StagedSection& s) {
            if (decoded.ok()) {
                decoded = forEachChunkSample(kChunkCodec, s.bytes, s.count,
                                             [&](const ChunkSample&) { ++n; });
            }
        });
        return split.ok() && decoded.ok() ? n : -1;
    };
    EXPECT_EQ(decodeAll(row), 100);
    for (std::size_t cut = 1; cut < row.size(); ++cut) {
        const auto n = decodeAll(std::span(row).first(cut));
        EXPECT_TRUE(n == -1 || n == 50) << cut;  // only the cut after the first section is whole
    }
    std::mt19937 rng(20);
    for (int i = 0; i < 2000; ++i) {
        std::vector<std::uint8_t> bad = row;
        bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        (void)decodeAll(bad);
    }
    std::vector<std::uint8_t> huge = {0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0x7f, 0x01, 0x00};
    EXPECT_EQ(decodeAll(huge), -1);  // a count past 64 bits
    Status split = forEachStagedSection(std::vector<std::uint8_t>{0x05, 0x02, 0x40, 0x00},
                                        [](const StagedSection&) {});
    ASSERT_FALSE(split.ok());
    EXPECT_NE(split.error().find("bytes"), std::string::npos) << split.error();
}

}  // namespace
}  // namespace runplane::db
