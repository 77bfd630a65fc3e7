// The verdict of a two-rank hang (issue #44, docs/diagnosis.md "Grouping frame"), on the stored
// diagnosis recorded on the H100 host on 2026-12-06 (scripts/gpu/diagnose-daemon.sh): rank 1
// skipped an all_reduce that rank 0 waits in. Each stack group has one member, so the order of
// the groups is what names the outlier: RAS's counts (or a missing rank) decide it, not the
// functions' names, and a group of one names its member.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"
#include "tests/diagnosis/recorded_fixture.h"

namespace runplane::diagnosis {
namespace {

using test::recordedFixture;

std::vector<NodeDiagnosis> recordedNodes() {
    auto d = runDiagnosisFromJson(
        nlohmann::json::parse(recordedFixture("diagnosis_h100_hang_job_20261206.json")));
    EXPECT_TRUE(d.ok()) << d.error();
    return d.ok() ? d->nodes : std::vector<NodeDiagnosis>{};
}

const Finding* findingOf(const Verdict& v, const std::string& kind) {
    for (const auto& f : v.findings) {
        if (f.kind == kind) {
            return &f;
        }
    }
    return nullptr;
}

// The one NCCL communicator the job would have with both ranks on NCCL: rank 0 (pid 614) has
// launched the all_reduce, rank 1 (pid 613) has not. Host as RAS named it in the recording.
RasCommunicator twoRankCommunicator() {
    RasCommunicator c;
    c.hash = "0x25a6ce69021e078d";
    c.size = c.ranksCount = 2;
    for (const auto& [rank, pid, allReduce] : {std::tuple{0, 614, 21u}, std::tuple{1, 613, 20u}}) {
        RasRank r;
        r.rank = rank;
        r.pid = pid;
        r.host = "192.0.2.2";
        r.status.present = true;
        r.collectiveCounts = {{"AllGather", 5},
                              {"AllReduce", allReduce},
                              {"Broadcast", 0},
                              {"Reduce", 0},
                              {"ReduceScatter", 0}};
        c.ranks.push_back(r);
    }
    return c;
}

TEST(VerdictTwoRanks, TheRecordedReportRejudgedNamesEachRankOfTheTie) {
    auto nodes = recordedNodes();
    ASSERT_EQ(nodes.size(), 1u);
    // The recording's RAS saw rank 0's one-rank communicator only (counts 0): no rank is named,
    // so neither group is the outlier; each names its member.
    const Verdict v = judge(nodes);
    const Finding* stacks = findingOf(v, "stack_outlier");
    ASSERT_NE(stacks, nullptr);
    // Each rank named as the daemon's host, with RAS's address for it (docs/diagnosis.md "One
    // name per host").
    EXPECT_EQ(stacks->text,
              "rank 0 (pid 614 on vm, 192.0.2.2) in all_reduce, rank 1 (pid 613 on vm, 192.0.2.2) "
              "in skip_all_reduce");
    EXPECT_EQ(findingOf(v, "behind"), nullptr);
}

TEST(VerdictTwoRanks, TheRankBehindInRasCountsLeadsTheStacks) {
    auto nodes = recordedNodes();
    ASSERT_EQ(nodes.size(), 1u);
    nodes[0].ras.communicators = {twoRankCommunicator()};
    nodes[0].ras.communicatorsCount = 1;
    const Verdict v = judge(nodes);
    ASSERT_GE(v.findings.size(), 2u);
    EXPECT_EQ(v.findings[0].kind, "behind");
    EXPECT_EQ(v.findings[0].text,
              "NCCL communicator 0x25a6ce69021e078d (2 ranks): 1 of 2 ranks behind their peers in "
              "AllReduce (peers at 21): rank 1 (pid 613 on vm, 192.0.2.2) at 20");
    const Finding* stacks = findingOf(v, "stack_outlier");
    ASSERT_NE(stacks, nullptr);
    // The same rank leads the stacks (before: the waiting rank 0, "all_reduce" < "skip_...").
    EXPECT_EQ(stacks->text,
              "rank 1 (pid 613 on vm, 192.0.2.2) in skip_all_reduce, rank 0 (pid 614 on vm, "
              "192.0.2.2) in all_reduce");
    ASSERT_EQ(v.stackGroups.size(), 2u);
    EXPECT_EQ(v.stackGroups[0].frame, "skip_all_reduce");
    EXPECT_EQ(v.stackGroups[0].file, "hang_job.py:49");
    EXPECT_EQ(v.headline, v.findings[0].text + "; " + stacks->text);
}

TEST(VerdictTwoRanks, AMissingRankLeadsTheStacksToo) {
    auto nodes = recordedNodes();
    ASSERT_EQ(nodes.size(), 1u);
    RasCommunicator c = twoRankCommunicator();
    for (auto& r : c.ranks) {
        r.collectiveCounts["AllReduce"] = 20;
    }
    RasMissingRank gone;
    gone.rank = 1;
    gone.pid = 613;
    gone.host = "192.0.2.2";
    gone.unresponsive = true;
    c.ranks.pop_back();
    c.ranksCount = 1;
    c.missingRanksCount = 1;
    c.missingRanks = {gone};
    nodes[0].ras.communicators = {c};
    const Verdict v = judge(nodes);
    EXPECT_EQ(v.findings.at(0).kind, "missing_rank");
    ASSERT_EQ(v.stackGroups.size(), 2u);
    EXPECT_EQ(v.stackGroups[0].frame, "skip_all_reduce");
}

// Size still comes first: a named rank in the larger group does not make it the outlier.
TEST(VerdictTwoRanks, TheSmallerGroupStaysFirst) {
    auto nodes = recordedNodes();
    ASSERT_EQ(nodes.size(), 1u);
    // A third rank (pid 615) waits where rank 1 does; RAS names rank 1 behind.
    nodes[0].processes.push_back({615, "python3 hang_job.py", 2, -1});
    ProcessStacks third = nodes[0].stacks[1];
    ASSERT_EQ(third.pid, 613);
    third.pid = 615;
    nodes[0].stacks.push_back(third);
    nodes[0].ras.communicators = {twoRankCommunicator()};
    const Verdict v = judge(nodes);
    ASSERT_EQ(v.stackGroups.size(), 2u);
    EXPECT_EQ(v.stackGroups[0].frame, "all_reduce");
    EXPECT_EQ(findingOf(v, "stack_outlier")->text,
              "rank 0 (pid 614 on vm, 192.0.2.2) in all_reduce, 2 ranks in skip_all_reduce");
}

}  // namespace
}  // namespace runplane::diagnosis
