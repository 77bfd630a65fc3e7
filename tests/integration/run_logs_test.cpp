// Issue 18: a finished run's output outlives its daemon. `runplanectl watch` stores the run's
// stdout/stderr in the history as it streams; with the daemon gone, `runplanectl logs` prints the
// stored output (and says where it comes from).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

TEST(RunLogs, AFinishedRunsOutputIsReadFromTheHistoryOnceTheDaemonIsGone) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    std::filesystem::create_directories(state);
    Daemon daemon(state, "node-logs");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const std::string cwd = dir.path().string();
    auto submit =
        runCtl({"submit", address, "--history", history, "--run-id", "chatty", "--", "/bin/sh",
                "-c", "for i in 1 2 3; do echo \"out line $i\"; done; echo 'err line' >&2"},
               cwd);
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    auto watch = runCtl({"watch", address, "--history", history, "--seconds", "4"}, cwd);
    ASSERT_EQ(watch.exitCode, 0) << watch.err;
    auto live = runCtl({"logs", address, "chatty", "--history", history}, cwd);
    EXPECT_EQ(live.exitCode, 0) << live.err;
    EXPECT_EQ(live.out, "out line 1\nout line 2\nout line 3\n");

    daemon.stop();
    auto stored = runCtl({"logs", address, "chatty", "--history", history}, cwd);
    EXPECT_EQ(stored.exitCode, 0) << stored.err;
    EXPECT_EQ(stored.out, "out line 1\nout line 2\nout line 3\n");
    EXPECT_NE(stored.err.find("stored in " + history), std::string::npos) << stored.err;
    auto err = runCtl(
        {"logs", address, "chatty", "--stderr", "--from-history", "--history", history}, cwd);
    EXPECT_EQ(err.exitCode, 0) << err.err;
    EXPECT_EQ(err.out, "err line\n");
    auto unknown = runCtl({"logs", address, "no-such-run", "--history", history}, cwd);
    EXPECT_EQ(unknown.exitCode, 1);
}

}  // namespace
}  // namespace runplane::testing
