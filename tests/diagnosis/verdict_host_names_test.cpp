// One name per host in a verdict (issue #44, docs/diagnosis.md "One name per host"): NCCL's RAS
// names a rank's host by its address, the daemons by their hostname. On the stored diagnosis
// recorded on the H100 host on 2026-12-06 (RAS said `192.0.2.2`, the daemon `vm`) a rank is
// named the same way in the RAS findings, the stack groups and the headline.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/host_names.h"
#include "backend/diagnosis/ras.h"
#include "tests/diagnosis/recorded_fixture.h"

namespace runplane::diagnosis {
namespace {

using test::recordedFixture;

const Finding* findingOf(const Verdict& v, const std::string& kind) {
    for (const auto& f : v.findings) {
        if (f.kind == kind) {
            return &f;
        }
    }
    return nullptr;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

TEST(VerdictHostNames, TheRecordedRasAddressAndTheDaemonsHostnameNameARankOneWay) {
    auto d = runDiagnosisFromJson(
        nlohmann::json::parse(recordedFixture("diagnosis_h100_hang_job_20261206.json")));
    ASSERT_TRUE(d.ok()) << d.error();
    ASSERT_EQ(d->nodes.size(), 1u);
    NodeDiagnosis& node = d->nodes[0];
    ASSERT_EQ(node.hostname, "vm");
    // The recorded report: rank 0 (pid 614) on 192.0.2.2. Rank 1 (pid 613, whose recorded stack
    // is in skip_all_reduce) goes missing from it, on the same host.
    ASSERT_EQ(node.ras.communicators.size(), 1u);
    RasCommunicator& c = node.ras.communicators[0];
    ASSERT_EQ(c.ranks.at(0).host, "192.0.2.2");
    RasMissingRank gone;
    gone.rank = 1;
    gone.pid = 613;
    gone.host = "192.0.2.2";
    gone.unresponsive = true;
    c.missingRanks = {gone};
    c.missingRanksCount = 1;

    const Verdict v = judge(d->nodes);
    const Finding* missing = findingOf(v, "missing_rank");
    const Finding* stacks = findingOf(v, "stack_outlier");
    ASSERT_TRUE(missing && stacks) << v.headline;
    EXPECT_NE(missing->text.find("rank 1 (pid 613 on vm, 192.0.2.2) unresponsive"),
              std::string::npos)
        << missing->text;
    EXPECT_EQ(stacks->text,
              "rank 1 (pid 613 on vm, 192.0.2.2) in skip_all_reduce, rank 0 (pid 614 on vm, "
              "192.0.2.2) in all_reduce");
    // The headline holds both findings, and rank 1 reads the same in each.
    EXPECT_EQ(v.headline, missing->text + "; " + stacks->text);
    EXPECT_EQ(count(v.headline, "rank 1 (pid 613 on vm, 192.0.2.2)"), 2u) << v.headline;
    EXPECT_EQ(count(v.headline, "on 192.0.2.2"), 0u) << v.headline;
    EXPECT_EQ(count(v.headline, "on vm)"), 0u) << v.headline;
}

// The rules, in order: hostname, the daemon's address, the run's pids; a host no node is stays
// as RAS named it, and so does one whose pids two nodes share as often.
TEST(VerdictHostNames, EachRuleOnTheRecordedReportsLayout) {
    const std::string text = recordedFixture("ras_missing_rank.json");
    auto report = parseRasReport(text);
    ASSERT_TRUE(report.ok()) << report.error();
    NodeDiagnosis a;  // RAS's 10.0.0.1 is its daemon's address
    a.hostname = "gpu-a";
    a.address = "10.0.0.1:7070";
    a.rasAvailable = true;
    a.ras = *report;
    NodeDiagnosis b;  // 10.0.0.2's live ranks 4, 6, 7 are its processes (rank 5 is dead)
    b.hostname = "gpu-b";
    b.address = "127.0.0.1:7071";
    b.rasAvailable = true;
    b.ras = *report;
    for (std::int64_t pid : {4104, 4106, 4107}) {
        b.processes.push_back({pid, "python3 train.py", -1, -1});
    }
    Verdict v = judge({a, b});
    ASSERT_EQ(v.findings.at(0).kind, "missing_rank");
    EXPECT_NE(v.headline.find("rank 5 (pid 4105 on gpu-b, 10.0.0.2) considered dead"),
              std::string::npos)
        << v.headline;
    const HostNames names({a, b}, report->communicators);
    EXPECT_EQ(names.ofRasHost("10.0.0.1"), "gpu-a, 10.0.0.1");
    EXPECT_EQ(names.ofRasHost("10.0.0.2"), "gpu-b, 10.0.0.2");
    EXPECT_EQ(names.ofNode(1), "gpu-b, 10.0.0.2");
    EXPECT_EQ(names.ofRasHost("10.0.0.9"), "10.0.0.9");

    // A RAS host that is its node's hostname needs no address after it.
    NodeDiagnosis named = b;
    named.hostname = "10.0.0.2";
    EXPECT_EQ(HostNames({a, named}, report->communicators).ofRasHost("10.0.0.2"), "10.0.0.2");
    // Two nodes holding as many of 10.0.0.2's pids: neither is it.
    NodeDiagnosis twin = b;
    twin.hostname = "gpu-c";
    const HostNames tied({a, b, twin}, report->communicators);
    EXPECT_EQ(tied.ofRasHost("10.0.0.2"), "10.0.0.2");
    v = judge({b, twin});
    EXPECT_NE(v.headline.find("rank 5 (pid 4105 on 10.0.0.2) considered dead"), std::string::npos)
        << v.headline;

    EXPECT_EQ(hostOfAddress("gpu-a:7070"), "gpu-a");
    EXPECT_EQ(hostOfAddress("[::1]:7070"), "::1");
    EXPECT_EQ(hostOfAddress("gpu-a"), "gpu-a");
}

}  // namespace
}  // namespace runplane::diagnosis
