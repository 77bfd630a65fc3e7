// Issue 41 (daemon side), the pieces under the red-team fixes, on their own: the UTF-8 repair
// at the spool boundary, the spool's reading past an unreadable record, its high-water mark,
// working-directory bounds, the credential-file reader and the web config's bcrypt checks.
// The end-to-end attacks are in red_team_daemon_test.cpp and tests/reliability/.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "backend/agent/daemon_config.h"
#include "backend/agent/metrics_web_config.h"
#include "backend/agent/record_text.h"
#include "backend/agent/spool.h"
#include "backend/agent/workdir.h"
#include "common/credential_file.h"
#include "common/utf8_text.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::TempDir;

const std::string kR = "\xEF\xBF\xBD";  // U+FFFD

TEST(RedTeam41Utf8, IllFormedBytesBecomeOneReplacementPerMaximalSubpart) {
    EXPECT_EQ(toValidUtf8("a\xFF"
                          "b"),
              "a" + kR + "b");
    EXPECT_EQ(toValidUtf8("plain ascii"), "plain ascii");
    EXPECT_EQ(toValidUtf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // été stays
    EXPECT_EQ(toValidUtf8("\xE2\x82"), kR);                            // truncated: one
    EXPECT_EQ(toValidUtf8("\xE2\x82x"), kR + "x");
    EXPECT_EQ(toValidUtf8("\xC0\xAF"), kR + kR);                     // overlong: each byte
    EXPECT_EQ(toValidUtf8("\xED\xA0\x80"), kR + kR + kR);            // a surrogate
    EXPECT_EQ(toValidUtf8("\xF4\x90\x80\x80"), kR + kR + kR + kR);   // above U+10FFFF
    EXPECT_EQ(toValidUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");  // an emoji stays
    EXPECT_EQ(toValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));
    EXPECT_TRUE(isValidUtf8(toValidUtf8("\x80\x81\xFE\xFF\xF0\x9F")));
}

TEST(RedTeam41Utf8, EveryStringOfARecordIsRepaired) {
    v1::TelemetryRecord r;
    r.set_run_id("run\xFF");
    r.mutable_sample()->set_series("a\377b");
    EXPECT_EQ(makeRecordTextValid(r), 2);
    EXPECT_EQ(r.run_id(), "run" + kR);
    EXPECT_EQ(r.sample().series(), "a" + kR + "b");
    v1::TelemetryRecord e;
    e.mutable_event()->set_message("bad \xC0");
    (*e.mutable_event()->mutable_attrs())["k\xFF"] = "v\xFE";
    (*e.mutable_event()->mutable_attrs())["ok"] = "fine";
    EXPECT_EQ(makeRecordTextValid(e), 3);
    EXPECT_EQ(e.event().message(), "bad " + kR);
    EXPECT_EQ(e.event().attrs().at("k" + kR), "v" + kR);
    EXPECT_EQ(e.event().attrs().at("ok"), "fine");
    std::string body;
    ASSERT_TRUE(e.SerializeToString(&body));
    v1::TelemetryRecord back;
    EXPECT_TRUE(back.ParseFromString(body));
}

// Item 1, at the spool: a record with a non-UTF-8 key is stored repaired and reads back, and
// the records after it too.
TEST(RedTeam41Spool, NonUtf8TextIsStoredRepairedAndReadBack) {
    TempDir dir;
    auto spool = Spool::open({.path = dir.path() + "/spool.sqlite"});
    ASSERT_TRUE(spool.ok()) << spool.error();
    std::vector<v1::TelemetryRecord> rs(3);
    rs[0].mutable_sample()->set_series("before");
    rs[1].mutable_sample()->set_series("a\377b");
    rs[2].mutable_sample()->set_series("after");
    ASSERT_TRUE((*spool)->append(rs).ok());
    auto back = (*spool)->read(0, 10);
    ASSERT_TRUE(back.ok()) << back.error();
    ASSERT_EQ(back->size(), 3u);
    EXPECT_EQ((*back)[1].sample().series(), "a" + kR + "b");
    EXPECT_EQ((*back)[2].sample().series(), "after");
    EXPECT_EQ((*spool)->stats().textRepaired, 1u);
}

// Item 1, second half: a stored record that cannot be parsed (damaged, or written by an older
// daemon with a non-UTF-8 string) is read back as a gap event in its own place.
TEST(RedTeam41Spool, AnUnreadableRecordIsReadAsAGapEventAndTheRestFollows) {
    TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    auto spool = Spool::open({.path = path});
    ASSERT_TRUE(spool.ok()) << spool.error();
    std::vector<v1::TelemetryRecord> rs(4);
    for (int i = 0; i < 4; ++i) {
        rs[i].mutable_sample()->set_series("s" + std::to_string(i));
    }
    ASSERT_TRUE((*spool)->append(rs).ok());
    {
        // Seq 2: bytes that are no record; seq 3: a record whose string is not UTF-8, as a
        // daemon before the text boundary stored it (serialized by hand: protobuf's own
        // serializer would complain).
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(db, "UPDATE records SET body = x'ffffffff0a' WHERE seq = 2", nullptr,
                               nullptr, nullptr),
                  SQLITE_OK);
        // field 1 (seq) = 3, field 4 (sample) { field 1 (series) = "a\xFFb" }
        ASSERT_EQ(sqlite3_exec(db, "UPDATE records SET body = x'080322050a0361ff62' WHERE seq = 3",
                               nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(db);
    }
    auto back = (*spool)->read(0, 10);
    ASSERT_TRUE(back.ok()) << back.error();
    ASSERT_EQ(back->size(), 4u);
    EXPECT_EQ((*back)[0].sample().series(), "s0");
    for (int i : {1, 2}) {
        const auto& gap = (*back)[i];
        EXPECT_EQ(gap.seq(), static_cast<std::uint64_t>(i + 1));
        ASSERT_TRUE(gap.has_event());
        EXPECT_EQ(gap.event().kind(), v1::EVENT_GAP);
        EXPECT_EQ(gap.event().attrs().at("why"), "unreadable_record");
        EXPECT_EQ(gap.event().attrs().at("first_seq"), std::to_string(i + 1));
    }
    EXPECT_EQ((*back)[3].sample().series(), "s3");
    // Acknowledging through the gap works: the damaged records can be trimmed.
    EXPECT_TRUE((*spool)->acknowledge(4).ok());
}

// Item 7 at the spool: a file put back behind what its incarnation issued (its WAL lost) never
// reuses those seqs; the gap is stored and said.
TEST(RedTeam41Spool, AFileBehindItsHighWaterMarkNeverReusesSeqs) {
    TempDir dir;
    const std::string path = dir.path() + "/spool.sqlite";
    const std::string copy = dir.path() + "/checkpointed.sqlite";
    std::uint64_t incarnation = 0;
    {
        auto spool = Spool::open({.path = path});
        ASSERT_TRUE(spool.ok()) << spool.error();
        incarnation = (*spool)->incarnation();
        std::vector<v1::TelemetryRecord> first(5);
        ASSERT_TRUE((*spool)->append(first).ok());
        (*spool)->reclaimWal();  // everything so far is in the main file
        std::filesystem::copy_file(path, copy);
        std::vector<v1::TelemetryRecord> more(7);
        ASSERT_EQ(*(*spool)->append(more), 12u);
    }
    // The main file as it was at the checkpoint, its WAL gone: seqs 6..12 are lost.
    std::filesystem::remove(path + "-wal");
    std::filesystem::copy_file(copy, path, std::filesystem::copy_options::overwrite_existing);
    auto spool = Spool::open({.path = path});
    ASSERT_TRUE(spool.ok()) << spool.error();
    EXPECT_EQ((*spool)->incarnation(), incarnation);
    EXPECT_NE((*spool)->rollbackNote().find("seq 6..12"), std::string::npos)
        << (*spool)->rollbackNote();
    auto back = (*spool)->read(6, 10);
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(back->size(), 1u);
    EXPECT_EQ((*back)[0].seq(), 13u) << "the gap event comes after every issued seq";
    EXPECT_EQ((*back)[0].event().kind(), v1::EVENT_GAP);
    EXPECT_EQ((*back)[0].event().attrs().at("why"), "spool_rolled_back");
    EXPECT_EQ((*back)[0].event().attrs().at("first_seq"), "6");
    EXPECT_EQ((*back)[0].event().attrs().at("last_seq"), "12");
    std::vector<v1::TelemetryRecord> next(1);
    EXPECT_EQ(*(*spool)->append(next), 14u);
    // A clean reopen says nothing.
    spool->reset();
    auto again = Spool::open({.path = path});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->rollbackNote(), "");
    EXPECT_EQ((*again)->lastSeq(), 14u);
}

TEST(RedTeam41Workdir, BoundsAreCheckedOnTheTextFirst) {
    TempDir dir;
    const std::string root = dir.path() + "/runs";
    std::string deep;
    for (int i = 0; i < 33; ++i) {
        deep += "x/";
    }
    auto r = confineWorkdir(root, deep, "fallback");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("33 levels"), std::string::npos) << r.error();
    EXPECT_FALSE(std::filesystem::exists(root)) << "not even the run root was made";
    auto nul = confineWorkdir(root, std::string("q\0r", 3), "fallback");
    ASSERT_FALSE(nul.ok());
    EXPECT_NE(nul.error().find("NUL byte at character 2"), std::string::npos) << nul.error();
    EXPECT_FALSE(confineWorkdir(root, std::string(256, 'n'), "f").ok());
    EXPECT_FALSE(confineWorkdir(root, std::string(1025, 'n'), "f").ok());
    EXPECT_TRUE(confineWorkdir(root, deep.substr(2), "fallback").ok()) << "32 levels are fine";
}

TEST(RedTeam41Credentials, OnlySmallRegularFilesAreRead) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto t0 = std::chrono::steady_clock::now();
    auto f = readCredentialFile(fifo, 4096, "--token-file");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error(),
              "--token-file " + fifo + ": a FIFO (named pipe), not a regular file; give a file");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    auto z = readCredentialFile("/dev/zero", 4096, "x");
    ASSERT_FALSE(z.ok());
    EXPECT_NE(z.error().find("a character device"), std::string::npos) << z.error();
    auto d = readCredentialFile(dir.path(), 4096, "x");
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().find("a directory"), std::string::npos) << d.error();
    std::ofstream(dir.path() + "/big") << std::string(5000, 'b');
    auto big = readCredentialFile(dir.path() + "/big", 4096, "x");
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().find("5000 bytes, more than the 4096 allowed"), std::string::npos)
        << big.error();
    EXPECT_FALSE(readCredentialFile(dir.path() + "/missing", 4096, "x").ok());
    std::ofstream(dir.path() + "/ok") << "token-0123456789abcdef\n";
    auto ok = readCredentialFile(dir.path() + "/ok", 4096, "x");
    ASSERT_TRUE(ok.ok()) << ok.error();
    EXPECT_EQ(*ok, "token-0123456789abcdef\n");
    // The daemon's token reader goes through it.
    auto token = readTokenFile("/dev/zero");
    ASSERT_FALSE(token.ok());
    EXPECT_NE(token.error().find("--token-file /dev/zero: a character device"), std::string::npos)
        << token.error();
}

// Item 10: the web config accepted a bcrypt cost of 31 (days of CPU per wrong password) and a
// malformed hash. Both are refused with file:line.
TEST(RedTeam41WebConfig, BcryptCostAndMalformedHashesAreRefusedWithFileAndLine) {
    TempDir dir;
    const auto load = [&](const std::string& hash) {
        const std::string path = dir.path() + "/web.yml";
        std::ofstream(path) << "# users\nbasic_auth_users:\n  prom: '" << hash << "'\n";
        return loadMetricsWebConfig(path);
    };
    const std::string salt53 = "abcdefghijklmnopqrstuuvwxyz0123456789ABCDEFGHIJKLMNOP";
    auto cost31 = load("$2y$31$" + salt53);
    ASSERT_FALSE(cost31.ok());
    EXPECT_NE(cost31.error().find("web.yml:3:9: basic_auth_users.prom: bcrypt cost 31 is outside "
                                  "4..14"),
              std::string::npos)
        << cost31.error();
    auto cost3 = load("$2y$03$" + salt53);
    EXPECT_FALSE(cost3.ok());
    const std::vector<std::string> malformed = {
        "$2y$10$short", "$2y$1x$" + salt53, "$2z$10$" + salt53, "$2y$10$" + salt53.substr(1) + "!",
        "$2y$10$" + salt53 + "Q"};
    for (const std::string& bad : malformed) {
        auto r = load(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().find("web.yml:3:9:"), std::string::npos) << r.error();
        EXPECT_NE(r.error().find("not a well-formed bcrypt hash"), std::string::npos) << r.error();
    }
    EXPECT_TRUE(load("$2y$10$" + salt53).ok());
    EXPECT_TRUE(load("$2b$14$" + salt53).ok());
}

}  // namespace
}  // namespace runplane::agent
