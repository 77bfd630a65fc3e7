// The diagnosis library (issue #44): the RAS client against a RAS server of ours speaking the
// protocol with recorded reports, the loopback rule, the verdict over several nodes, kernel log
// lines from public issues, py-spy's JSON and the bounded stored form.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/kernel_log.h"
#include "backend/diagnosis/ras.h"
#include "backend/diagnosis/stacks.h"
#include "fake_ras.h"

namespace runplane::diagnosis {
namespace {

using testing::FakeRas;

std::string fixture(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src ? src : ".") + "/tests/diagnosis/fixtures/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

RasClientOptions at(const FakeRas& ras,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    RasClientOptions o;
    o.endpoint = *rasEndpoint(ras.address());
    o.timeout = timeout;
    return o;
}

TEST(RasClient, ReadsAHealthyReportOverTheProtocol) {
    FakeRas ras(fixture("ras_healthy.json"));
    auto fetched = fetchRasReport(at(ras));
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    EXPECT_EQ(ras.received(), "CLIENT PROTOCOL 2|SET FORMAT json|VERBOSE STATUS");
    const RasReport& r = fetched->report;
    EXPECT_EQ(r.ncclVersion, "2.28.9");
    EXPECT_EQ(r.communicatorsCount, 1);
    ASSERT_EQ(r.communicators.size(), 1u);
    const auto& c = r.communicators[0];
    EXPECT_EQ(c.hash, "0xfa93daea854b060b");
    EXPECT_EQ(c.size, 8);
    EXPECT_EQ(c.ranksCount, 8);
    EXPECT_EQ(c.missingRanksCount, 0);
    ASSERT_EQ(c.ranks.size(), 8u);
    EXPECT_EQ(c.ranks[6].rank, 6);
    EXPECT_EQ(c.ranks[6].host, "10.0.0.2");
    EXPECT_EQ(c.ranks[6].pid, 4106);
    EXPECT_EQ(c.ranks[6].cudaDev, 6);
    EXPECT_TRUE(c.ranks[6].status.present);
    EXPECT_EQ(c.ranks[6].status.asyncError, 0);
    EXPECT_EQ(c.ranks[6].collectiveCounts.at("AllGather"), 641u);
    EXPECT_EQ(fetched->raw.size(), fixture("ras_healthy.json").size());

    NodeDiagnosis node;
    node.rasAvailable = true;
    node.ras = r;
    const Verdict v = judge({node});
    EXPECT_EQ(v.findings.front().kind, "no_data") << v.headline;
}

TEST(RasClient, AMissingRankLeadsTheVerdict) {
    FakeRas ras(fixture("ras_missing_rank.json"));
    auto fetched = fetchRasReport(at(ras));
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    const auto& c = fetched->report.communicators.at(0);
    EXPECT_EQ(c.missingRanksCount, 1);
    ASSERT_EQ(c.missingRanks.size(), 1u);
    EXPECT_EQ(c.missingRanks[0].rank, 5);
    EXPECT_TRUE(c.missingRanks[0].consideredDead);

    NodeDiagnosis node;
    node.rasAvailable = true;
    node.ras = fetched->report;
    const Verdict v = judge({node});
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, "missing_rank");
    EXPECT_NE(v.headline.find("rank 5 (pid 4105 on 10.0.0.2) considered dead"), std::string::npos)
        << v.headline;
}

TEST(RasClient, ARankWhoseCountsLagIsNamed) {
    FakeRas ras(fixture("ras_lagging_rank.json"));
    auto fetched = fetchRasReport(at(ras));
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    NodeDiagnosis node;
    node.rasAvailable = true;
    node.ras = fetched->report;
    const Verdict v = judge({node});
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, "behind");
    EXPECT_NE(v.headline.find("1 of 8 ranks behind their peers in AllGather (peers at 641): "
                              "rank 3 (pid 4103 on 10.0.0.1) at 640"),
              std::string::npos)
        << v.headline;
}

TEST(RasClient, ARasThatNeverAnswersCostsOnlyTheTimeout) {
    FakeRas ras("", FakeRas::Mode::Silent);
    const auto t0 = std::chrono::steady_clock::now();
    auto fetched = fetchRasReport(at(ras, std::chrono::milliseconds(400)));
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(fetched.ok());
    EXPECT_NE(fetched.error().find("no complete answer to CLIENT PROTOCOL 2 within 0.4 s"),
              std::string::npos)
        << fetched.error();
    EXPECT_LT(took, std::chrono::milliseconds(1500));
}

TEST(RasClient, NothingListeningIsUnavailable) {
    std::uint16_t port = 0;
    {
        FakeRas ras("");
        port = ras.port();
    }
    RasClientOptions o;
    o.endpoint.port = port;
    auto fetched = fetchRasReport(o);
    ASSERT_FALSE(fetched.ok());
    EXPECT_EQ(fetched.code(), ErrorCode::Unavailable) << fetched.error();
    EXPECT_NE(fetched.error().find("no NCCL process with RAS on this host"), std::string::npos);
}

TEST(RasClient, AnotherProtocolVersionIsRefused) {
    FakeRas ras(fixture("ras_healthy.json"), FakeRas::Mode::WrongProtocol);
    auto fetched = fetchRasReport(at(ras));
    ASSERT_FALSE(fetched.ok());
    EXPECT_NE(fetched.error().find("'SERVER PROTOCOL 3'; this client speaks protocol 2"),
              std::string::npos)
        << fetched.error();
}

TEST(RasClient, AReportBeyondTheByteBoundIsCutOff) {
    FakeRas ras(std::string(300000, ' ') + fixture("ras_healthy.json"));
    RasClientOptions o = at(ras);
    o.maxBytes = 64 * 1024;
    auto fetched = fetchRasReport(o);
    ASSERT_FALSE(fetched.ok());
    EXPECT_NE(fetched.error().find("larger than 65536 bytes"), std::string::npos)
        << fetched.error();
}

TEST(RasEndpoint, OnlyLoopbackIsAccepted) {
    EXPECT_EQ(rasEndpoint("")->text(), "127.0.0.1:28028");
    EXPECT_EQ(rasEndpoint("localhost:29000")->text(), "127.0.0.1:29000");
    EXPECT_EQ(rasEndpoint("127.0.0.5")->text(), "127.0.0.5:28028");
    EXPECT_EQ(rasEndpoint("[::1]:28029")->text(), "[::1]:28029");
    for (const char* bad :
         {"10.0.0.2:28028", "example.com:28028", "0.0.0.0:28028", "[fe80::1]:28028"}) {
        auto e = rasEndpoint(bad);
        ASSERT_FALSE(e.ok()) << bad;
        EXPECT_NE(e.error().find("is not a loopback address"), std::string::npos) << e.error();
    }
    for (const char* bad : {"127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:x", "::1:28028"}) {
        EXPECT_FALSE(rasEndpoint(bad).ok()) << bad;
    }
    RasClientOptions o;
    o.endpoint.host = "10.1.2.3";
    auto refused = fetchRasReport(o);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("not a loopback address; refused"), std::string::npos);
}

TEST(RasReportParse, NamesTheWrongPlace) {
    auto r = parseRasReport(R"({"communicators":[{"ranks":[{"rank":0},{"rank":1,"pid":[]}]}]})");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "RAS report: communicators[0].ranks[1].pid: expected a number, got array");
    auto notJson = parseRasReport("Job summary\n===");
    ASSERT_FALSE(notJson.ok());
    EXPECT_NE(notJson.error().find("not valid JSON"), std::string::npos);
    // NCCL 2.29.7 can send a null status (NVIDIA/nccl#2346): read as absent, not an error.
    auto nullStatus = parseRasReport(R"({"communicators":[{"ranks":[{"rank":0,"status":null}]}]})");
    ASSERT_TRUE(nullStatus.ok()) << nullStatus.error();
    EXPECT_FALSE(nullStatus->communicators[0].ranks[0].status.present);
}

TEST(RasReportParse, AsyncErrorsAndAbortsAreFindings) {
    auto r = parseRasReport(
        R"({"nccl_version":"2.28.9","communicators":[{"hash":"0xab","size":2,"ranks_count":2,
        "ranks":[{"rank":0,"pid":10,"status":{"async_error":0,"init_state":0}},
                 {"rank":1,"pid":11,"status":{"async_error":6,"abort_flag":true}}]}]})");
    ASSERT_TRUE(r.ok()) << r.error();
    NodeDiagnosis n;
    n.rasAvailable = true;
    n.ras = *r;
    const Verdict v = judge({n});
    ASSERT_GE(v.findings.size(), 2u);
    EXPECT_EQ(v.findings[0].kind, "async_error");
    EXPECT_NE(v.findings[0].text.find("rank 1 (pid 11) error 6"), std::string::npos);
    EXPECT_EQ(v.findings[1].kind, "aborted");
}

// 64 ranks on 8 nodes: one rank in all_gather_into_tensor, the others in barrier.
TEST(Verdict, TheStackOutlierStandsOut) {
    std::vector<NodeDiagnosis> nodes;
    for (int node = 0; node < 8; ++node) {
        NodeDiagnosis n;
        n.hostname = "gpu-" + std::to_string(node);
        for (int local = 0; local < 8; ++local) {
            const int rank = node * 8 + local;
            n.processes.push_back({1000 + local, "python train.py", rank, local});
            ProcessStacks s;
            s.pid = 1000 + local;
            ThreadStack t;
            t.threadName = "MainThread";
            if (rank == 3) {
                t.frames = {
                    {"all_gather_into_tensor", "torch/distributed/distributed_c10d.py", 3912},
                    {"wrapper", "torch/distributed/c10d_logger.py", 81}};
            } else {
                t.frames = {{"barrier", "torch/distributed/distributed_c10d.py", 4680},
                            {"wrapper", "torch/distributed/c10d_logger.py", 81}};
            }
            s.threads.push_back(t);
            n.stacks.push_back(s);
        }
        // a launcher without a rank is not a peer of the ranks
        n.processes.push_back({999, "bash run.sh", -1, -1});
        n.stacks.push_back({999, "", {{0, "MainThread", false, false, {{"main", "run.py", 1}}}}});
        nodes.push_back(n);
    }
    const Verdict v = judge(nodes);
    EXPECT_EQ(v.headline,
              "rank 3 (pid 1003 on gpu-0) in all_gather_into_tensor, 63 ranks in barrier");
    ASSERT_EQ(v.stackGroups.size(), 2u);
    EXPECT_EQ(v.stackGroups[0].frame, "all_gather_into_tensor");
    EXPECT_EQ(v.stackGroups[1].members.size(), 63u);
}

TEST(Verdict, NodesThatFailedAreSaid) {
    NodeDiagnosis ok, lost;
    ok.hostname = "a";
    lost.address = "127.0.0.1:1";
    lost.error = "cannot reach runplaned";
    const Verdict v = judge({ok, lost});
    EXPECT_EQ(v.findings.front().kind, "node_error");
    EXPECT_NE(v.headline.find("1 of 2 nodes gave no diagnosis: 127.0.0.1:1: cannot reach"),
              std::string::npos);
}

TEST(KernelLog, XidLinesFromAPublicIssue) {
    const auto text = fixture("kernel_xid.txt");
    std::vector<KernelLine> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const auto close = line.find("] ");
        if (auto k = classifyKernelMessage(line.substr(close + 2))) {
            found.push_back(*k);
        }
    }
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].kind, "xid");
    EXPECT_EQ(found[0].xid, 13);
    EXPECT_EQ(found[0].pid, 0);  // pid='<unknown>'
    EXPECT_EQ(found[1].xid, 109);
    EXPECT_EQ(found[1].pid, 1797828);
}

TEST(KernelLog, OomKillsInTheWindowFromDmesgText) {
    const auto text = fixture("kernel_oom.txt");
    auto all = filterDmesgText(text, 0);
    ASSERT_EQ(all.lines.size(), 1u);  // the oom_reaper line is not a kill
    EXPECT_EQ(all.lines[0].kind, "oom_kill");
    EXPECT_EQ(all.lines[0].pid, 935);
    EXPECT_DOUBLE_EQ(all.lines[0].bootSeconds, 4018.45);
    EXPECT_TRUE(filterDmesgText(text, 4019).lines.empty());  // before the run's window
}

TEST(KernelLog, ReadsDevKmsgOrSaysWhyNot) {
    auto read = readKmsg("/dev/kmsg", 0);
    if (!read.ok()) {
        EXPECT_NE(read.error().find("/dev/kmsg: "), std::string::npos);
        GTEST_SKIP() << "kernel log unreadable here: " << read.error();
    }
    EXPECT_EQ(read->source, "/dev/kmsg");
    EXPECT_GT(read->scanned, 0u);
    auto missing = readKmsg("/nonexistent/kmsg", 0);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("No such file"), std::string::npos);
}

TEST(Stacks, PySpyJsonAndTheGroupingFrame) {
    // The shape py-spy 0.4.3 prints for `dump --json` (checked on this machine).
    const char* text = R"([{"pid":12,"thread_id":1,"thread_name":"pt_autograd_0","active":false,
      "owns_gil":false,"frames":[{"name":"run","filename":"/x/threading.py","short_filename":
      "threading.py","line":9}]},{"pid":12,"thread_id":2,"thread_name":"MainThread","active":true,
      "owns_gil":true,"frames":[{"name":"clock_nanosleep","filename":"libc.so.6","short_filename":
      "libc.so.6","line":0},{"name":"barrier","filename":"/t/distributed_c10d.py","short_filename":
      "torch/distributed/distributed_c10d.py","line":4680}]}])";
    auto threads = parsePySpyJson(text);
    ASSERT_TRUE(threads.ok()) << threads.error();
    ASSERT_EQ(threads->size(), 2u);
    EXPECT_EQ((*threads)[1].frames[1].file, "torch/distributed/distributed_c10d.py");
    const StackFrame f = signatureFrame(*threads);
    EXPECT_EQ(f.name, "barrier");  // the native frame is skipped, the main thread chosen
    EXPECT_FALSE(parsePySpyJson("Error: Failed to find python version").ok());
}

TEST(RunDiagnosisJson, RoundTripsAndStaysWithinItsBound) {
    RunDiagnosis d;
    d.runId = "r1";
    d.trigger = "stall";
    NodeDiagnosis n;
    n.hostname = "h";
    n.rasAvailable = true;
    n.ras = *parseRasReport(fixture("ras_lagging_rank.json"));
    n.kernelLines.push_back({12.5, "xid", "NVRM: Xid (PCI:0000:cb:00): 109, pid=1", 109, 1});
    for (int p = 0; p < 50; ++p) {
        ProcessStacks s;
        s.pid = p;
        for (int t = 0; t < 10; ++t) {
            ThreadStack th;
            th.threadName = t == 0 ? "MainThread" : "worker";
            for (int f = 0; f < 30; ++f) {
                th.frames.push_back({"frame" + std::to_string(f), "mod.py", f});
            }
            s.threads.push_back(th);
        }
        n.stacks.push_back(s);
    }
    d.nodes.push_back(n);
    d.verdict = judge(d.nodes);
    const std::string full = boundedJsonText(d, 64u << 20);
    auto back = runDiagnosisFromJson(nlohmann::json::parse(full));
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->verdict.headline, d.verdict.headline);
    EXPECT_EQ(back->nodes[0].stacks[7].threads[3].frames[29].name, "frame29");
    EXPECT_EQ(back->nodes[0].ras.communicators[0].ranks[3].collectiveCounts.at("AllGather"), 640u);
    EXPECT_EQ(back->nodes[0].kernelLines[0].xid, 109);

    const std::string small = boundedJsonText(d, 64 * 1024);
    EXPECT_LE(small.size(), 64u * 1024);
    auto cut = nlohmann::json::parse(small);
    EXPECT_TRUE(cut.contains("trimmed"));
    EXPECT_EQ(cut["verdict"]["headline"], d.verdict.headline);
    EXPECT_GT(full.size(), small.size());
    EXPECT_NE(formatDiagnosis(*back).find("NCCL RAS"), std::string::npos);
}

}  // namespace
}  // namespace runplane::diagnosis

namespace runplane::diagnosis {
namespace {

// The report and stack recorded on the H100 host (scripts/gpu/ras-diagnose.sh).
TEST(RecordedOnGpuHost, TheRealReportAndStackParse) {
    auto r = parseRasReport(fixture("ras_h100_one_rank_nccl2289.json"));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->ncclVersion, "2.28.9");
    EXPECT_EQ(r->communicatorsCount, 1);
    const auto& c = r->communicators.at(0);
    EXPECT_EQ(c.hash, "0x2d9cc5fe3b2c1c64");
    EXPECT_EQ(c.size, 1);
    ASSERT_EQ(c.ranks.size(), 1u);
    EXPECT_EQ(c.ranks[0].pid, 611);
    EXPECT_TRUE(c.ranks[0].status.present);
    EXPECT_EQ(c.ranks[0].collectiveCounts.size(), 5u);  // one rank: NCCL counted no launch
    EXPECT_TRUE(c.missingRanks.empty());
    FakeRas ras(fixture("ras_h100_one_rank_nccl2289.json"));
    auto fetched = fetchRasReport(at(ras));
    ASSERT_TRUE(fetched.ok()) << fetched.error();
    auto stack = parsePySpyJson(fixture("pyspy_h100_wait_for_peer.json"));
    ASSERT_TRUE(stack.ok()) << stack.error();
    NodeDiagnosis n;
    n.rasAvailable = true;
    n.ras = fetched->report;
    n.stacks.push_back({611, "", *stack});
    const Verdict v = judge({n});
    // One rank: named, not "all 1 ranks".
    EXPECT_EQ(v.headline,
              "rank 0 (pid 611 on 192.0.2.2), the only rank, in wait_for_peer (ras_job.py:28)");
    // Without RAS the process has no rank; a one-rank communicator is "1 rank".
    NodeDiagnosis bare;
    bare.hostname = "vm";
    bare.stacks = n.stacks;
    EXPECT_EQ(judge({bare}).headline,
              "pid 611 on vm, the only process, in wait_for_peer (ras_job.py:28)");
    n.ras.communicators.at(0).ranks.at(0).status.asyncError = 5;
    EXPECT_EQ(judge({n}).findings.at(0).text,
              "NCCL communicator 0x2d9cc5fe3b2c1c64 (1 rank): asynchronous error on rank 0 (pid "
              "611 on 192.0.2.2) error 5");
}

}  // namespace
}  // namespace runplane::diagnosis
