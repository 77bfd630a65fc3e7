// The statement cache of sqlite::Database (db/sqlite/sqlite.h): a reused statement answers what
// a freshly compiled one answers, never carries bindings or rows over, is never shared by two
// live Statements, and the cache stays within its bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::sqlite {
namespace {

std::unique_ptr<Database> openDb(const std::string& path, std::size_t cache) {
    Database::Options options;
    options.statementCache = cache;
    auto db = Database::open(path, options);
    EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error());
    return db.ok() ? std::move(*db) : nullptr;
}

// Every value of column 0 for `sql` with ?1 bound to `bound`.
std::vector<std::int64_t> column(Database& db, const std::string& sql, std::int64_t bound) {
    auto stmt = db.prepare(sql);
    EXPECT_TRUE(stmt.ok());
    std::vector<std::int64_t> values;
    if (!stmt.ok()) {
        return values;
    }
    stmt->bind(1, bound);
    for (;;) {
        auto row = stmt->step();
        EXPECT_TRUE(row.ok());
        if (!row.ok() || !*row) {
            break;
        }
        values.push_back(stmt->columnInt(0));
    }
    return values;
}

class StatementCacheTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_path = m_dir.file("stmt_cache.sqlite");
        m_db = openDb(m_path, 64);
        ASSERT_NE(m_db, nullptr);
        ASSERT_TRUE(m_db->exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER);").ok());
        auto insert = m_db->prepare("INSERT INTO t(k, v) VALUES (?1, ?2);");
        ASSERT_TRUE(insert.ok());
        for (std::int64_t k = 0; k < 100; ++k) {
            insert->bind(1, k).bind(2, k * 10);
            ASSERT_TRUE(insert->run().ok());
        }
    }
    testing::ScratchDir m_dir;
    std::string m_path;
    std::unique_ptr<Database> m_db;
};

TEST_F(StatementCacheTest, AReusedStatementAnswersWhatAFreshOneAnswers) {
    const std::string sql = "SELECT v FROM t WHERE k >= ?1 ORDER BY k;";
    auto uncached = openDb(m_path, 0);
    ASSERT_NE(uncached, nullptr);
    const auto before = m_db->statementCacheCounts();
    for (std::int64_t from : {0, 50, 99, 100, 7}) {
        EXPECT_EQ(column(*m_db, sql, from), column(*uncached, sql, from)) << "from " << from;
    }
    const auto after = m_db->statementCacheCounts();
    EXPECT_EQ(after.misses - before.misses, 1);  // compiled once, then reused four times
    EXPECT_EQ(after.hits - before.hits, 4);
    EXPECT_EQ(uncached->statementCacheCounts().hits, 0);
    EXPECT_EQ(uncached->statementCacheCounts().idle, 0u);
}

TEST_F(StatementCacheTest, AStatementGivenBackMidRowsStartsOverWithoutItsBindings) {
    const std::string sql = "SELECT count(*) FROM t WHERE v >= ?1;";
    {
        auto stmt = m_db->prepare("SELECT v FROM t WHERE k >= ?1 ORDER BY k;");
        ASSERT_TRUE(stmt.ok());
        stmt->bind(1, std::int64_t{10});
        ASSERT_TRUE(*stmt->step());  // left mid-rows: given back reset
    }
    EXPECT_EQ(column(*m_db, "SELECT v FROM t WHERE k >= ?1 ORDER BY k;", 98),
              (std::vector<std::int64_t>{980, 990}));
    {
        auto stmt = m_db->prepare(sql);
        ASSERT_TRUE(stmt.ok());
        stmt->bind(1, std::int64_t{500});
        ASSERT_TRUE(*stmt->step());
        EXPECT_EQ(stmt->columnInt(0), 50);
    }
    auto again = m_db->prepare(sql);  // reused, nothing bound: v >= NULL holds for no row
    ASSERT_TRUE(again.ok());
    ASSERT_TRUE(*again->step());
    EXPECT_EQ(again->columnInt(0), 0);
    // A write while an idle statement is held: it is reset, so it holds no read snapshot.
    ASSERT_TRUE(m_db->exec("DELETE FROM t WHERE k >= 50;").ok());
    EXPECT_EQ(column(*m_db, "SELECT v FROM t WHERE k >= ?1 ORDER BY k;", 48),
              (std::vector<std::int64_t>{480, 490}));
}

TEST_F(StatementCacheTest, TwoLiveStatementsOfOneTextAreTwoStatements) {
    const std::string sql = "SELECT v FROM t WHERE k >= ?1 ORDER BY k;";
    auto a = m_db->prepare(sql);
    auto b = m_db->prepare(sql);
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    a->bind(1, std::int64_t{0});
    b->bind(1, std::int64_t{90});
    ASSERT_TRUE(*a->step());
    ASSERT_TRUE(*b->step());
    EXPECT_EQ(a->columnInt(0), 0);
    EXPECT_EQ(b->columnInt(0), 900);
    ASSERT_TRUE(*a->step());
    EXPECT_EQ(a->columnInt(0), 10);
    ASSERT_TRUE(*b->step());
    EXPECT_EQ(b->columnInt(0), 910);
}

TEST_F(StatementCacheTest, StaysWithinItsBound) {
    auto small = openDb(m_path, 8);
    ASSERT_NE(small, nullptr);
    for (int i = 0; i < 100; ++i) {
        const std::string sql = "SELECT v + " + std::to_string(i) + " FROM t WHERE k = ?1;";
        EXPECT_EQ(column(*small, sql, 3), (std::vector<std::int64_t>{30 + i}));
        EXPECT_LE(small->statementCacheCounts().idle, 8u);
    }
    EXPECT_EQ(small->statementCacheCounts().idle, 8u);
    // The most recently used texts are the ones kept.
    const auto before = small->statementCacheCounts();
    EXPECT_EQ(column(*small, "SELECT v + 99 FROM t WHERE k = ?1;", 1),
              (std::vector<std::int64_t>{109}));
    EXPECT_EQ(small->statementCacheCounts().hits, before.hits + 1);
    EXPECT_EQ(column(*small, "SELECT v + 0 FROM t WHERE k = ?1;", 1),
              (std::vector<std::int64_t>{10}));
    EXPECT_EQ(small->statementCacheCounts().misses, before.misses + 1);
}

TEST_F(StatementCacheTest, AStatementMayOutliveItsDatabase) {
    auto other = openDb(m_path, 64);
    ASSERT_NE(other, nullptr);
    auto stmt = other->prepare("SELECT count(*) FROM t;");
    ASSERT_TRUE(stmt.ok());
    other.reset();  // the connection closes once the statement is gone
    ASSERT_TRUE(*stmt->step());
    EXPECT_EQ(stmt->columnInt(0), 100);
}

}  // namespace
}  // namespace runplane::sqlite
