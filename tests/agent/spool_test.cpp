// The durable spool: seq assignment, persistence across reopen, resume, ack/trim, bound + gap.
// issue 5
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <set>

#include "backend/agent/spool.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

std::vector<v1::TelemetryRecord> samples(int n, const std::string& series = "s") {
    std::vector<v1::TelemetryRecord> out;
    for (int i = 0; i < n; ++i) {
        v1::TelemetryRecord r;
        r.mutable_sample()->set_series(series);
        r.mutable_sample()->set_value(i);
        out.push_back(r);
    }
    return out;
}

TEST(Spool, AssignsConsecutiveSeqsThatSurviveReopen) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    {
        auto spool = Spool::open({path, 1 << 20});
        ASSERT_TRUE(spool.ok()) << spool.error();
        auto batch = samples(5);
        auto last = (*spool)->append(batch, {{"k", "v"}});
        ASSERT_TRUE(last.ok()) << last.error();
        EXPECT_EQ(*last, 5u);
        EXPECT_EQ(batch.front().seq(), 1u);
        EXPECT_EQ(batch.back().seq(), 5u);
        EXPECT_GT(batch.front().t_unix_ns(), 0);
    }
    auto spool = Spool::open({path, 1 << 20});
    ASSERT_TRUE(spool.ok());
    EXPECT_EQ((*spool)->meta("k").value_or(""), "v");
    auto batch = samples(2);
    ASSERT_TRUE((*spool)->append(batch).ok());
    EXPECT_EQ(batch.front().seq(), 6u);
    auto read = (*spool)->read(3, 100);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->size(), 5u);
    for (std::size_t i = 0; i < read->size(); ++i) {
        EXPECT_EQ((*read)[i].seq(), 3 + i);
    }
}

TEST(Spool, AcknowledgeTrimsAndSeqNeverGoesBack) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    {
        auto spool = Spool::open({path, 1 << 20});
        auto batch = samples(10);
        ASSERT_TRUE((*spool)->append(batch).ok());
        auto t = (*spool)->acknowledge(10);
        ASSERT_TRUE(t.ok()) << t.error();
        EXPECT_EQ((*spool)->stats().records, 0u);
        EXPECT_FALSE((*spool)->acknowledge(11).ok());  // never issued
    }
    // Empty spool after a full trim: the next seq still continues from 11.
    auto spool = Spool::open({path, 1 << 20});
    auto batch = samples(1);
    ASSERT_TRUE((*spool)->append(batch).ok());
    EXPECT_EQ(batch.front().seq(), 11u);
    EXPECT_EQ((*spool)->read(0, 10)->front().seq(), 11u);
}

// Two watchers (issue 18): records go only when both acknowledged them.
TEST(SpoolCursors, TrimsOnlyBelowTheSlowestLiveCursor) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    {
        auto spool = Spool::open({path, 1 << 20});
        ASSERT_TRUE(spool.ok()) << spool.error();
        ASSERT_TRUE((*spool)->openCursor("gui", 0).ok());
        ASSERT_TRUE((*spool)->openCursor("cli", 0).ok());
        auto batch = samples(20);
        ASSERT_TRUE((*spool)->append(batch).ok());
        EXPECT_EQ(*(*spool)->acknowledge("gui", 20), 0u) << "cli has acknowledged nothing";
        EXPECT_EQ((*spool)->stats().records, 20u);
        EXPECT_EQ(*(*spool)->acknowledge("cli", 5), 5u);
        EXPECT_EQ((*spool)->stats().records, 15u);
        EXPECT_EQ(*(*spool)->acknowledge("gui", 3), 5u) << "a cursor never goes back";
    }
    // Cursors are durable: after a reopen the slow watcher still holds its records.
    auto spool = Spool::open({path, 1 << 20});
    const auto cursors = (*spool)->cursors();
    ASSERT_EQ(cursors.size(), 2u);
    EXPECT_EQ(cursors[0].consumer, "cli");
    EXPECT_EQ(cursors[0].ackedThrough, 5u);
    EXPECT_EQ(cursors[1].ackedThrough, 20u);
    auto rest = (*spool)->read(6, 100);
    ASSERT_TRUE(rest.ok());
    EXPECT_EQ(rest->size(), 15u);
    EXPECT_EQ(*(*spool)->acknowledge("cli", 20), 20u);
    EXPECT_EQ((*spool)->stats().records, 0u);
}

TEST(SpoolCursors, AWatchHoldsItsRecordsBeforeItsFirstAck) {
    testing::TempDir dir;
    auto spool = Spool::open({dir.path() + "/spool.sqlite", 1 << 20});
    auto batch = samples(10);
    ASSERT_TRUE((*spool)->append(batch).ok());
    ASSERT_TRUE((*spool)->openCursor("late", 4).ok());  // it will read from seq 4
    EXPECT_EQ(*(*spool)->acknowledge("fast", 10), 3u) << "trimmed up to just before seq 4";
    ASSERT_TRUE((*spool)->openCursor("late", 4).ok()) << "re-opening does not move it";
    EXPECT_EQ((*spool)->cursors().front().ackedThrough, 10u) << "fast";
    EXPECT_EQ((*spool)->cursors().back().ackedThrough, 3u) << "late";
    // The unnamed (protocol v1) client is "default".
    EXPECT_EQ(*(*spool)->acknowledge(10), 3u);
    EXPECT_EQ((*spool)->cursors().front().consumer, kDefaultConsumer);
}

TEST(SpoolCursors, IdleCursorIsDroppedWithAnEventAndNoLongerHoldsTheTrim) {
    testing::TempDir dir;
    std::int64_t now = 1'000'000'000'000;
    SpoolOptions o;
    o.path = dir.path() + "/spool.sqlite";
    o.cursorIdleLimit = std::chrono::hours(24);
    o.nowUnixMs = [&now] { return now; };
    auto spool = Spool::open(o);
    ASSERT_TRUE((*spool)->openCursor("laptop", 0).ok());
    auto batch = samples(10);
    ASSERT_TRUE((*spool)->append(batch).ok());
    EXPECT_EQ(*(*spool)->acknowledge("server", 10), 0u);
    now += 25ll * 3600 * 1000;  // the laptop was closed for 25 h
    EXPECT_EQ(*(*spool)->acknowledge("server", 10), 10u);
    ASSERT_EQ((*spool)->cursors().size(), 1u);
    auto notice = (*spool)->read(11, 10);
    ASSERT_TRUE(notice.ok());
    ASSERT_EQ(notice->size(), 1u);
    const auto& ev = notice->front().event();
    EXPECT_EQ(ev.kind(), v1::EVENT_INFO);
    EXPECT_EQ(ev.attrs().at("what"), "cursor_dropped");
    EXPECT_EQ(ev.attrs().at("consumer"), "laptop");
    EXPECT_EQ(ev.attrs().at("acked_through"), "0");
    EXPECT_NE(ev.message().find("25 h"), std::string::npos) << ev.message();
}

TEST(SpoolCursors, NumberOfCursorsIsBounded) {
    testing::TempDir dir;
    std::int64_t now = 1'000'000'000'000;
    SpoolOptions o;
    o.path = dir.path() + "/spool.sqlite";
    o.maxCursors = 3;
    o.nowUnixMs = [&now] { return now; };
    auto spool = Spool::open(o);
    for (const char* name : {"a", "b", "c", "d"}) {
        now += 1000;
        ASSERT_TRUE((*spool)->openCursor(name, 0).ok());
    }
    const auto cursors = (*spool)->cursors();
    ASSERT_EQ(cursors.size(), 3u);
    EXPECT_EQ(cursors.front().consumer, "b") << "the least recently seen went";
    auto notice = (*spool)->read(0, 10);
    ASSERT_EQ(notice->size(), 1u);
    EXPECT_EQ(notice->front().event().attrs().at("consumer"), "a");
}

TEST(Spool, BoundDropsOldestAndWritesGapEvent) {
    testing::TempDir dir;
    auto spool = Spool::open({dir.path() + "/spool.sqlite", 4096});
    ASSERT_TRUE(spool.ok());
    for (int i = 0; i < 20; ++i) {
        auto batch = samples(10, "a.rather.long.series.name.to.fill.the.spool");
        ASSERT_TRUE((*spool)->append(batch).ok());
    }
    const SpoolStats st = (*spool)->stats();
    EXPECT_LE(st.payloadBytes, 4096u);
    EXPECT_GT(st.droppedRecords, 0u);
    auto all = (*spool)->read(0, 100000);
    ASSERT_TRUE(all.ok());
    // Every gap names a range that is really absent, and gaps plus kept records cover 1..last.
    std::set<std::uint64_t> covered;  // gap ranges may overlap (a later gap absorbs dropped gaps)
    std::uint64_t gaps = 0;
    std::uint64_t expectNext = 1;
    for (const auto& r : *all) {
        if (r.has_event() && r.event().kind() == v1::EVENT_GAP) {
            ++gaps;
            const auto first = std::stoull(r.event().attrs().at("first_seq"));
            const auto last = std::stoull(r.event().attrs().at("last_seq"));
            EXPECT_LE(first, last);
            for (auto seq = first; seq <= last; ++seq) {
                covered.insert(seq);
            }
        }
        EXPECT_GE(r.seq(), expectNext);
        expectNext = r.seq() + 1;
    }
    for (const auto& r : *all) {
        EXPECT_EQ(covered.count(r.seq()), 0u) << "a kept record inside a gap range";
        covered.insert(r.seq());
    }
    EXPECT_GT(gaps, 0u);
    EXPECT_EQ(covered.size(), st.nextSeq - 1)
        << "kept records and gap ranges must account for every seq ever issued";
}

// issue #17: the incarnation id is made with the file, kept in it, and new for a new file.
TEST(Spool, IncarnationIsMadeWithTheFileAndKept) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    std::uint64_t first = 0;
    {
        auto spool = Spool::open({path, 1 << 20});
        ASSERT_TRUE(spool.ok()) << spool.error();
        first = (*spool)->incarnation();
        EXPECT_NE(first, 0u);
    }
    auto again = Spool::open({path, 1 << 20});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->incarnation(), first);
    auto other = Spool::open({dir.path() + "/other.sqlite", 1 << 20});
    ASSERT_TRUE(other.ok());
    EXPECT_NE((*other)->incarnation(), first);
}

// issue #23 item 4: records dropped before they reached the spool burn their seqs, and one gap
// event names them, so a consumer sees exactly which seqs are lost.
TEST(Spool, AppendGapBurnsSeqsAndNamesThem) {
    testing::TempDir dir;
    auto spool = Spool::open({dir.path() + "/spool.sqlite", 1 << 20});
    ASSERT_TRUE(spool.ok());
    auto batch = samples(3);
    ASSERT_TRUE((*spool)->append(batch).ok());
    auto gap = (*spool)->appendGap(10, "test");
    ASSERT_TRUE(gap.ok()) << gap.error();
    EXPECT_EQ(*gap, 14u);
    auto after = samples(1);
    ASSERT_TRUE((*spool)->append(after).ok());
    EXPECT_EQ(after.front().seq(), 15u);
    auto read = (*spool)->read(4, 100);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->size(), 2u);
    const auto& ev = read->front().event();
    EXPECT_EQ(ev.kind(), v1::EVENT_GAP);
    EXPECT_EQ(ev.attrs().at("first_seq"), "4");
    EXPECT_EQ(ev.attrs().at("last_seq"), "13");
    EXPECT_EQ(ev.attrs().at("count"), "10");
    EXPECT_EQ((*spool)->stats().droppedRecords, 10u);
}

TEST(Spool, CorruptFileIsAClearError) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        std::fputs("this is not a database, just text that is long enough to be a header......", f);
        std::fclose(f);
    }
    auto spool = Spool::open({path, 1 << 20});
    ASSERT_FALSE(spool.ok());
    EXPECT_NE(spool.error().find(path), std::string::npos) << spool.error();
}

// Issue #20 (found by tests/fuzz/spool_fuzz.cpp): a counter in the meta table that is not a number
// threw std::invalid_argument out of Spool::open (runplaned aborted at start); now an error names
// the file and the key.
TEST(Spool, DamagedMetaCounterIsAClearError) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    for (const char* key : {"next_seq", "trimmed_through", "dropped_records"}) {
        {
            auto spool = Spool::open({path, 1 << 20});
            ASSERT_TRUE(spool.ok()) << spool.error();
            auto batch = samples(2);
            ASSERT_TRUE((*spool)->append(batch).ok());
        }
        {
            auto db = sqlite::Database::open(path);
            ASSERT_TRUE(db.ok()) << db.error();
            ASSERT_TRUE((*db)
                            ->exec(std::string("INSERT OR REPLACE INTO meta VALUES('") + key +
                                   "', '18446744073709551616')")
                            .ok());
        }
        auto spool = Spool::open({path, 1 << 20});
        ASSERT_FALSE(spool.ok()) << key;
        EXPECT_NE(spool.error().find(path), std::string::npos) << spool.error();
        EXPECT_NE(spool.error().find(std::string("meta ") + key), std::string::npos)
            << spool.error();
        std::remove(path.c_str());
        std::remove((path + "-wal").c_str());
        std::remove((path + "-shm").c_str());
    }
}

}  // namespace
}  // namespace runplane::agent

namespace runplane::agent {
namespace {

unsigned modeOf(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777u;
}

// Issue 23 item 5: the spool holds run telemetry and events; it and its WAL are owner-only, and
// a wider existing file is tightened with one note.
TEST(Spool, FilesAreOwnerOnlyAndAWideOneIsTightened) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    const mode_t old = ::umask(022);
    {
        auto spool = Spool::open({path, 1 << 20});
        ASSERT_TRUE(spool.ok()) << spool.error();
        auto batch = samples(3);
        ASSERT_TRUE((*spool)->append(batch).ok());
        EXPECT_TRUE((*spool)->permissionNotes().empty());
        EXPECT_EQ(modeOf(path), 0600u);
        EXPECT_EQ(modeOf(path + "-wal"), 0600u);
    }
    ::umask(old);
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    auto spool = Spool::open({path, 1 << 20});
    ASSERT_TRUE(spool.ok()) << spool.error();
    ASSERT_EQ((*spool)->permissionNotes().size(), 1u);
    EXPECT_NE((*spool)->permissionNotes()[0].find("mode 0644"), std::string::npos);
    EXPECT_EQ(modeOf(path), 0600u);
    EXPECT_EQ((*spool)->lastSeq(), 3u);  // same data
}

}  // namespace
}  // namespace runplane::agent
