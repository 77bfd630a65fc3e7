// Issue 23 items 5 and 6 end to end: `runplanectl submit --env RUNPLANE_TOKEN=...` against a
// real daemon leaves no secret in the history file's bytes, the history and spool files are
// owner-only; `runplanectl history retention / prune / pin` on a real file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "db/history/history.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

unsigned modeOf(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777u;
}

std::string allBytes(const std::string& path) {
    std::string bytes;
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::error_code ec;
        if (std::filesystem::exists(path + suffix, ec)) {
            bytes += readAll(path + suffix);
        }
    }
    return bytes;
}

TEST(Secrets, SubmitWithASecretEnvStoresNoSecretAndFilesAreOwnerOnly) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    std::filesystem::create_directories(state);
    ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
    Daemon daemon(state, "node-secret");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("private/history.sqlite");
    const std::string token = "abcTokenValue0123456789";
    const std::string wandb = "wandbKeyValue9876543210";
    const std::string hf = "hfTokenValue5555555555";
    auto submit = runCtl({"submit", address, "--history", history, "--run-id", "secret-run",
                          "--env", "RUNPLANE_TOKEN=" + token, "--env", "WANDB_API_KEY=" + wandb,
                          "--json", "--", "/bin/sh", "-c", "exit 0", "--hf-token", hf},
                         dir.path().string());
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    auto watch =
        runCtl({"watch", address, "--history", history, "--seconds", "2"}, dir.path().string());
    EXPECT_EQ(watch.exitCode, 0) << watch.err;

    // Not in any byte of the file, its WAL or its shared memory.
    const std::string bytes = allBytes(history);
    ASSERT_FALSE(bytes.empty());
    for (const std::string& secret : {token, wandb, hf}) {
        EXPECT_EQ(bytes.find(secret), std::string::npos) << secret;
    }
    // What the history does say: the names, redacted.
    auto runs = runCtl({"runs", "--history", history, "--json"}, dir.path().string());
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    auto list = nlohmann::json::parse(runs.out);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["provenance"]["env"]["RUNPLANE_TOKEN"], "<redacted>");
    EXPECT_EQ(list[0]["provenance"]["env"]["WANDB_API_KEY"], "<redacted>");
    EXPECT_EQ(list[0]["provenance"]["argv"][3], "--hf-token");
    EXPECT_EQ(list[0]["provenance"]["argv"][4], "<redacted>");
    EXPECT_NE(runs.out.find("RUNPLANE_TOKEN=<redacted>"), std::string::npos);  // controller_argv

    // Owner-only: the history, its WAL/SHM and the directory it created; the daemon's spool.
    EXPECT_EQ(modeOf(history), 0600u);
    for (const char* suffix : {"-wal", "-shm"}) {
        std::error_code ec;
        if (std::filesystem::exists(history + suffix, ec)) {
            EXPECT_EQ(modeOf(history + suffix), 0600u) << suffix;
        }
    }
    EXPECT_EQ(modeOf(dir.file("private")), 0700u);
    EXPECT_EQ(modeOf(state), 0700u);
    EXPECT_EQ(modeOf(state + "/spool.sqlite"), 0600u);
    EXPECT_NE(daemon.child().stderrText().find("tightened to 0700"), std::string::npos)
        << daemon.child().stderrText();  // the test's state dir was made 0755 first
    daemon.stop();
    // Nor in what the daemon and the CLI printed.
    for (const std::string& secret : {token, wandb, hf}) {
        EXPECT_EQ(daemon.child().stderrText().find(secret), std::string::npos);
        EXPECT_EQ(watch.err.find(secret), std::string::npos);
        EXPECT_EQ(submit.out.find(secret), std::string::npos);
    }
}

std::int64_t count(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok());
    EXPECT_TRUE(stmt->step().ok());
    return stmt->columnInt(0);
}

// A history with 30 days of one-a-minute samples for a node, an old run and a pinned run.
void makeOldHistory(const std::string& path) {
    auto h = db::History::open(path);
    ASSERT_TRUE(h.ok()) << h.error();
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const std::int64_t day = 86'400'000'000'000;
    const std::int64_t start = now - 30 * day;
    for (const char* id : {"old-run", "kept-run"}) {
        db::RunRecord run;
        run.id = RunId{id};
        run.startedNs = start;
        run.endedNs = start + day;
        run.state = db::RunState::Finished;
        run.nodes = {"n1"};
        ASSERT_TRUE((*h)->upsertRun(run).ok());
    }
    db::IngestBatch batch;
    batch.nodeId = db::NodeId{"n1"};
    std::uint64_t seq = 0;
    for (std::int64_t t = start; t < now; t += 60'000'000'000) {
        for (const char* run : {"", "old-run", "kept-run"}) {
            if (*run && t > start + day) {
                continue;
            }
            db::IngestSample s;
            s.seq = ++seq;
            s.tNs = t;
            s.runId = db::RunId{run};
            s.series = *run ? "train/loss" : "host.mem.used_bytes";
            s.value = s.min = s.max = 1;
            batch.samples.push_back(s);
        }
    }
    batch.throughSeq = seq;
    ASSERT_TRUE((*h)->ingest(batch).ok());
}

TEST(Retention, HistoryRetentionPruneAndPinCommands) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    makeOldHistory(history);
    const std::string cwd = dir.path().string();
    const std::int64_t samples = count(history, "SELECT count(*) FROM samples;");
    const std::string keptSql =
        "SELECT count(*) FROM samples WHERE series_id = (SELECT id FROM series WHERE run_id = "
        "'kept-run');";
    const std::int64_t kept = count(history, keptSql);
    ASSERT_GT(kept, 1000);

    auto show = runCtl({"history", "retention", "--history", history, "--json"}, cwd);
    ASSERT_EQ(show.exitCode, 0) << show.err;
    EXPECT_EQ(nlohmann::json::parse(show.out)["raw_days"], 14);
    EXPECT_EQ(nlohmann::json::parse(show.out)["rollup_days"], 365);
    auto bad = runCtl({"history", "retention", "--history", history, "--raw-days", "0"}, cwd);
    EXPECT_EQ(bad.exitCode, 2) << bad.err;
    auto inverted =
        runCtl({"history", "retention", "--history", history, "--raw-days", "400"}, cwd);
    EXPECT_EQ(inverted.exitCode, 2);
    EXPECT_NE(inverted.err.find("must not exceed rollup days"), std::string::npos) << inverted.err;

    auto dry = runCtl({"history", "prune", "--history", history, "--dry-run", "--json"}, cwd);
    ASSERT_EQ(dry.exitCode, 0) << dry.err;
    auto dryReport = nlohmann::json::parse(dry.out);
    EXPECT_TRUE(dryReport["dry_run"].get<bool>());
    EXPECT_GT(dryReport["samples_deleted"].get<std::int64_t>(), 0);
    EXPECT_EQ(count(history, "SELECT count(*) FROM samples;"), samples);

    auto pin = runCtl({"history", "pin", "kept-run", "--history", history}, cwd);
    ASSERT_EQ(pin.exitCode, 0) << pin.err;
    auto unknown = runCtl({"history", "pin", "no-such-run", "--history", history}, cwd);
    EXPECT_EQ(unknown.exitCode, 1);
    EXPECT_NE(unknown.err.find("no run with id 'no-such-run'"), std::string::npos);
    auto usage = runCtl({"history", "pin", "--history", history}, cwd);
    EXPECT_EQ(usage.exitCode, 2);

    auto prune = runCtl({"history", "prune", "--history", history, "--json"}, cwd);
    ASSERT_EQ(prune.exitCode, 0) << prune.err;
    auto report = nlohmann::json::parse(prune.out);
    const auto deleted = report["samples_deleted"].get<std::int64_t>();
    EXPECT_GT(deleted, 0);
    EXPECT_EQ(count(history, "SELECT count(*) FROM samples;"), samples - deleted);
    EXPECT_EQ(count(history, keptSql), kept);  // pinned: intact
    // Freed pages go back to the file system (none left inside). The file need not shrink: since
    // schema 7 the prune first writes the rollup cells of the unsealed chunks it deletes, and
    // these constant series compress to chunks smaller than those cells.
    EXPECT_EQ(report["free_bytes_after"].get<std::int64_t>(), 0);
    EXPECT_EQ(
        report["bytes_before"].get<std::int64_t>() - report["bytes_after"].get<std::int64_t>(),
        report["bytes_freed"].get<std::int64_t>());
    auto text = runCtl({"history", "prune", "--history", history}, cwd);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("deleted 0 rows"), std::string::npos) << text.out;

    auto missing = runCtl({"history", "prune", "--history", dir.file("none.sqlite")}, cwd);
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_FALSE(std::filesystem::exists(dir.file("none.sqlite")));
}

}  // namespace
}  // namespace runplane::testing
