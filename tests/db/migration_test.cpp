// Forward migrations: each step in its own transaction, data kept, newer versions refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "db/history/history.h"
#include "db/history/schema.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using runplane::testing::ScratchDir;

const Migration kV1{1, "t", "CREATE TABLE t(a INTEGER);"};
const Migration kV2{2, "t.b", "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'x';"};
const Migration kV3{3, "index", "CREATE INDEX t_b ON t(b);"};
const Migration kBroken{3, "broken", "CREATE TABLE t(a);"};  // t exists: fails

std::unique_ptr<sqlite::Database> open(const std::string& path) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    return std::move(*db);
}

std::int64_t count(sqlite::Database& db, const char* sql) {
    auto stmt = db.prepare(sql);
    EXPECT_TRUE(stmt.ok()) << (stmt.ok() ? "" : stmt.error());
    EXPECT_TRUE(stmt->step().ok());
    return stmt->columnInt(0);
}

TEST(Migrations, AppliesEveryStepFromEmpty) {
    ScratchDir dir;
    auto db = open(dir.file("m.sqlite"));
    const Migration list[] = {kV1, kV2, kV3};
    auto version = applyMigrations(*db, list, false);
    ASSERT_TRUE(version.ok()) << version.error();
    EXPECT_EQ(*version, 3);
    EXPECT_EQ(count(*db, "SELECT count(*) FROM schema_version;"), 3);
}

TEST(Migrations, UpgradesAnOldFileAndKeepsItsData) {
    ScratchDir dir;
    auto db = open(dir.file("m.sqlite"));
    const Migration v1Only[] = {kV1};
    ASSERT_TRUE(applyMigrations(*db, v1Only, false).ok());
    ASSERT_TRUE(db->exec("INSERT INTO t(a) VALUES (1), (2);").ok());
    const Migration list[] = {kV1, kV2, kV3};
    auto readOnly = applyMigrations(*db, list, true);
    ASSERT_FALSE(readOnly.ok());
    EXPECT_NE(readOnly.error().find("needs migrating"), std::string::npos);
    auto version = applyMigrations(*db, list, false);
    ASSERT_TRUE(version.ok()) << version.error();
    EXPECT_EQ(*version, 3);
    EXPECT_EQ(count(*db, "SELECT count(*) FROM t WHERE b = 'x';"), 2);
}

TEST(Migrations, FailedStepRollsBackToThePreviousVersion) {
    ScratchDir dir;
    const std::string path = dir.file("m.sqlite");
    auto db = open(path);
    const Migration list[] = {kV1, kV2, kBroken};
    auto version = applyMigrations(*db, list, false);
    ASSERT_FALSE(version.ok());
    EXPECT_NE(version.error().find(path), std::string::npos);
    EXPECT_NE(version.error().find("schema version 3"), std::string::npos) << version.error();
    EXPECT_EQ(count(*db, "SELECT max(version) FROM schema_version;"), 2);
}

TEST(Migrations, NewerFileIsRefused) {
    ScratchDir dir;
    auto db = open(dir.file("m.sqlite"));
    const Migration list[] = {kV1, kV2, kV3};
    ASSERT_TRUE(applyMigrations(*db, list, false).ok());
    const Migration older[] = {kV1, kV2};
    auto version = applyMigrations(*db, older, false);
    ASSERT_FALSE(version.ok());
    EXPECT_NE(version.error().find("newer than this build understands (2)"), std::string::npos)
        << version.error();
}

TEST(Migrations, ShippedListEndsAtTheCurrentVersion) {
    ASSERT_FALSE(migrations().empty());
    int previous = 0;
    for (const Migration& m : migrations()) {
        EXPECT_EQ(m.version, previous + 1);
        previous = m.version;
    }
    EXPECT_EQ(previous, kSchemaVersion);
}

}  // namespace
}  // namespace runplane::db

namespace runplane::db {
namespace {

// A version-1 file with samples is migrated to the current version on open, and the rollup
// backfill makes wide queries over the old data correct.
TEST(Migrations, Version1HistoryIsUpgradedWithItsSamples) {
    ScratchDir dir;
    const std::string path = dir.file("v1.sqlite");
    {
        auto db = open(path);
        ASSERT_TRUE(applyMigrations(*db, migrations().first(1), false).ok());
        ASSERT_TRUE(db->exec("INSERT INTO series(id, node_id, run_id, name, unit) "
                             "VALUES (1, 'n1', '', 'host.mem.used_bytes', 'bytes');")
                        .ok());
        auto insert = db->prepare(
            "INSERT INTO samples(series_id, t_ns, seq, value, min, max, step) "
            "VALUES (1, ?1, ?2, ?3, ?3, ?3, -1);");
        ASSERT_TRUE(insert.ok());
        ASSERT_TRUE(db->exec("BEGIN;").ok());
        for (std::int64_t seq = 1; seq <= 50'000; ++seq) {
            insert->bind(1, seq * 100'000'000).bind(2, seq).bind(3, seq == 31'337 ? 1e9 : 1.0);
            ASSERT_TRUE(insert->run().ok());
        }
        ASSERT_TRUE(db->exec("COMMIT;").ok());
    }
    auto history = History::open(path);
    ASSERT_TRUE(history.ok()) << history.error();
    EXPECT_EQ(*(*history)->schemaVersion(), kSchemaVersion);
    auto points =
        (*history)->querySeries(SeriesQuery{1, 0, std::numeric_limits<std::int64_t>::max(), 20});
    ASSERT_TRUE(points.ok()) << points.error();
    EXPECT_TRUE(points->decimated);
    EXPECT_EQ(points->sourceCount, 50'000);
    const bool spike = std::any_of(points->points.begin(), points->points.end(),
                                   [](const SeriesPoint& p) { return p.value == 1e9; });
    EXPECT_TRUE(spike);
    auto raw = open(path);
    EXPECT_GT(count(*raw, "SELECT count(*) FROM sample_rollup;"), 0);
}

}  // namespace
}  // namespace runplane::db
