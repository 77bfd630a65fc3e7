// Issue 23 item 5: no secret reaches the history file's bytes, and the file, its -wal/-shm and
// the directories it creates are owner-only.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "db/history/history.h"
#include "tests/db/test_util.h"

namespace runplane::db {
namespace {

using runplane::testing::readAll;
using runplane::testing::ScratchDir;

unsigned modeOf(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777u;
}

// Every byte of the file and its WAL (where a fresh commit lives before a checkpoint).
std::string fileBytes(const std::string& path) {
    std::string bytes = readAll(path);
    std::error_code ec;
    if (std::filesystem::exists(path + "-wal", ec)) {
        bytes += readAll(path + "-wal");
    }
    return bytes;
}

TEST(HistorySecurity, SecretsNeverReachTheFile) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    {
        auto history = History::open(path);
        ASSERT_TRUE(history.ok()) << history.error();
        RunRecord run;
        run.id = RunId{"r1"};
        run.recipeYaml =
            "environment:\n  env:\n    WANDB_API_KEY: yamlSecret111\nextra_args:\n"
            "  - --hf-token argSecret222\n";
        run.provenanceJson =
            R"({"env":{"RUNPLANE_TOKEN":"envSecret333","NCCL_DEBUG":"INFO"},)"
            R"("argv":["python","--wandb-key","argvSecret444"],)"
            R"("controller_argv":["runplanectl","--env","HF_TOKEN=ctlSecret555"]})";
        run.message = "exited; password=msgSecret666";
        ASSERT_TRUE((*history)->upsertRun(run).ok());
        ASSERT_TRUE((*history)
                        ->updateRunState(RunId{"r1"}, RunState::Failed, 5, "token = msgSecret777")
                        .ok());
        auto stored = (*history)->run(RunId{"r1"});
        ASSERT_TRUE(stored.ok() && *stored);
        EXPECT_NE((*stored)->provenanceJson.find("NCCL_DEBUG"), std::string::npos);
        EXPECT_NE((*stored)->provenanceJson.find("<redacted>"), std::string::npos);
        // Checked while the connection is open: the commit is in the WAL.
        const std::string bytes = fileBytes(path);
        for (const char* secret : {"yamlSecret111", "argSecret222", "envSecret333", "argvSecret444",
                                   "ctlSecret555", "msgSecret666", "msgSecret777"}) {
            EXPECT_EQ(bytes.find(secret), std::string::npos) << secret;
        }
        EXPECT_NE(bytes.find("NCCL_DEBUG"), std::string::npos);  // the scan does see the data
    }
    const std::string bytes = fileBytes(path);  // after the last close's checkpoint
    EXPECT_EQ(bytes.find("envSecret333"), std::string::npos);
    EXPECT_NE(bytes.find("NCCL_DEBUG"), std::string::npos);
}

TEST(HistorySecurity, NewFileWalShmAndDirectoriesAreOwnerOnly) {
    ScratchDir dir;
    const std::string path = dir.file("deep/er/h.sqlite");
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    const mode_t old = ::umask(022);
    auto history = History::open(path);
    ::umask(old);
    ASSERT_TRUE(history.ok()) << history.error();
    RunRecord run;
    run.id = RunId{"r1"};
    ASSERT_TRUE((*history)->upsertRun(run).ok());
    EXPECT_EQ(modeOf(path), 0600u);
    EXPECT_EQ(modeOf(path + "-wal"), 0600u);
    EXPECT_EQ(modeOf(path + "-shm"), 0600u);
    EXPECT_EQ(modeOf(path + "-lock"), 0600u);
    EXPECT_EQ(modeOf(dir.file("deep")), 0700u);
    EXPECT_EQ(modeOf(dir.file("deep/er")), 0700u);
    EXPECT_EQ(modeOf(dir.path().string()), 0755u);  // an existing directory is left alone
}

TEST(HistorySecurity, ExistingWideFileIsTightenedOnOpen) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    {
        auto history = History::open(path);
        ASSERT_TRUE(history.ok()) << history.error();
    }
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    ASSERT_EQ(modeOf(path), 0644u);
    ::testing::internal::CaptureStderr();
    auto history = History::open(path);
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(history.ok()) << history.error();
    EXPECT_EQ(modeOf(path), 0600u);
    EXPECT_NE(err.find(path + ": mode 0644"), std::string::npos) << err;
    EXPECT_NE(err.find("tightened to 0600"), std::string::npos) << err;
    // Said once: a second open has nothing to tighten and says nothing.
    history->reset();
    ::testing::internal::CaptureStderr();
    auto again = History::open(path);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    ASSERT_TRUE(again.ok());
}

}  // namespace
}  // namespace runplane::db
