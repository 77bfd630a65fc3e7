// The periodic phase-overrun check of `runplanectl watch` (issue #44, docs/diagnosis.md "Phase
// overrun"): a real run on a real daemon prints rollout/train markers, then its train phase goes
// quiet twice; the watch diagnoses it once per quiet train (episode), not again while it stays
// quiet, and stores each diagnosis with the run.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "db/history/history.h"
#include "tests/support/daemon_process.h"
#include "tests/support/process.h"

namespace runplane::diagnosis {
namespace {

using runplane::testing::Daemon;
using runplane::testing::runCtl;
using runplane::testing::TempDir;

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) {
        ++n;
    }
    return n;
}

TEST(PhaseOverrunWatch, ARunWhosePhaseMarkersStopIsDiagnosedOncePerEpisode) {
    TempDir dir("runplane-phase-watch");
    Daemon daemon(dir.file("state"), "node-p");
    const std::string address = daemon.start();
    ASSERT_FALSE(address.empty()) << daemon.error();
    const std::string history = dir.file("history.sqlite");
    const auto submit =
        runCtl({"submit", address, "--history", history, "--run-id", "phased", "--", "/bin/bash",
                runplane::testing::sourceDir() + "/tests/diagnosis/phase_loop.sh", "9"},
               dir.path());
    ASSERT_EQ(submit.exitCode, 0) << submit.err;
    // Train took ~1 s four times: limit max(3 x 1, 1 + 2) = 3 s; each quiet train (9 s) passes it.
    const auto watch = runCtl({"watch", address, "--history", history, "--seconds", "36",
                               "--phase-check-seconds", "0.5", "--phase-margin", "2"},
                              dir.path(), std::chrono::seconds(90));
    EXPECT_EQ(watch.exitCode, 0) << watch.err;
    EXPECT_EQ(count(watch.err, "run phased: phase 'train' has lasted"), 2u) << watch.err;
    EXPECT_EQ(count(watch.err, "diagnosis of run phased (phase_overrun)"), 2u) << watch.err;
    EXPECT_EQ(count(watch.err, "phase 'rollout'"), 0u) << watch.err;
    auto h = db::History::open(history);
    ASSERT_TRUE(h.ok()) << h.error();
    auto stored = (*h)->listDiagnoses(RunId("phased"), false);
    ASSERT_TRUE(stored.ok()) << stored.error();
    ASSERT_EQ(stored->size(), 2u);
    for (const auto& d : *stored) {
        EXPECT_EQ(d.trigger, "phase_overrun");
        EXPECT_FALSE(d.headline.empty());
    }
    // The run ended in the watch: nothing more to check.
    auto run = (*h)->run(RunId("phased"));
    ASSERT_TRUE(run.ok() && *run);
    EXPECT_NE((*run)->endedNs, 0);
}

}  // namespace
}  // namespace runplane::diagnosis
