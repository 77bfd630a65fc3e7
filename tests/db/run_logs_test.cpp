// A run's stdout/stderr stored in the history (issue #18): appends at offsets, resends skipped,
// reads from an offset, the per-stream bound keeps the tail.
#include <gtest/gtest.h>

#include "db/history/history.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using testing::ScratchDir;

TEST(RunLogs, AppendsResendsAndReadsFromAnOffset) {
    ScratchDir dir;
    auto h = History::open(dir.file("h.sqlite"));
    ASSERT_TRUE(h.ok()) << h.error();
    History& history = **h;
    EXPECT_EQ(*history.runLogEnd(RunId{"r1"}, "stdout"), 0u);
    ASSERT_TRUE(history.appendRunLog(RunId{"r1"}, "stdout", 0, "line one\n").ok());
    ASSERT_TRUE(history.appendRunLog(RunId{"r1"}, "stdout", 9, "line two\n").ok());
    // A resumed tail resends from an earlier offset: only the new bytes are added.
    ASSERT_TRUE(history.appendRunLog(RunId{"r1"}, "stdout", 9, "line two\nline three\n").ok());
    ASSERT_TRUE(history.appendRunLog(RunId{"r1"}, "stdout", 0, "line one\n").ok());
    ASSERT_TRUE(history.appendRunLog(RunId{"r1"}, "stderr", 0, "warning\n").ok());
    EXPECT_EQ(*history.runLogEnd(RunId{"r1"}, "stdout"), 29u);
    auto all = history.readRunLog(RunId{"r1"}, "stdout");
    ASSERT_TRUE(all.ok()) << all.error();
    EXPECT_EQ(all->text, "line one\nline two\nline three\n");
    EXPECT_FALSE(all->truncated);
    auto tail = history.readRunLog(RunId{"r1"}, "stdout", 14);
    EXPECT_EQ(tail->text, "two\nline three\n");
    EXPECT_EQ(tail->firstOffset, 14u);
    EXPECT_EQ(history.readRunLog(RunId{"r1"}, "stderr")->text, "warning\n");
    EXPECT_EQ(history.readRunLog(RunId{"other"}, "stdout")->text, "");
    EXPECT_FALSE(history.appendRunLog(RunId{"r1"}, "stdin", 0, "x").ok());
}

TEST(RunLogs, TheBoundKeepsTheTailAndSaysSo) {
    ScratchDir dir;
    auto h = History::open(dir.file("h.sqlite"));
    ASSERT_TRUE(h.ok()) << h.error();
    std::uint64_t offset = 0;
    for (int i = 0; i < 10; ++i) {
        const std::string chunk = "chunk " + std::to_string(i) + std::string(94, '.') + "\n";
        ASSERT_TRUE((*h)->appendRunLog(RunId{"r"}, "stdout", offset, chunk, 350).ok());
        offset += chunk.size();
    }
    auto stored = (*h)->readRunLog(RunId{"r"}, "stdout");
    ASSERT_TRUE(stored.ok());
    EXPECT_TRUE(stored->truncated);
    EXPECT_LE(stored->text.size(), 350u);
    EXPECT_EQ(stored->endOffset, offset);
    EXPECT_EQ(stored->text.substr(stored->text.size() - 102, 8), "chunk 9.");
    EXPECT_EQ(stored->firstOffset, offset - stored->text.size());
}

TEST(RunLogs, OutputIsStoredCompressed) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    {
        auto h = History::open(path);
        std::string text;
        for (int i = 0; i < 2000; ++i) {
            text += "step " + std::to_string(i) + ": {'train/loss': 0.5, 'train/lr': 1e-06}\n";
        }
        ASSERT_TRUE((*h)->appendRunLog(RunId{"r"}, "stdout", 0, text).ok());
        EXPECT_EQ((*h)->readRunLog(RunId{"r"}, "stdout")->text, text);
    }
    // 2000 similar lines (~100 kB) are stored in a fraction of their size.
    auto db = sqlite::Database::open(path);
    ASSERT_TRUE(db.ok()) << db.error();
    auto q = (*db)->prepare("SELECT sum(length(data)), sum(raw_bytes) FROM run_logs;");
    ASSERT_TRUE(q.ok()) << q.error();
    ASSERT_TRUE(q->step().ok());
    const std::int64_t stored = q->columnInt(0);
    const std::int64_t raw = q->columnInt(1);
    EXPECT_GT(raw, 90'000);
    EXPECT_LT(stored * 5, raw) << stored << " bytes stored for " << raw;
}

}  // namespace
}  // namespace runplane::db
