// Diagnose through real daemons (issue #44): a real Python process blocked in a known function
// whose py-spy stack must name it, the RAS report read over loopback from a RAS server of ours
// named by the run's NCCL_RAS_ADDR, a non-loopback NCCL_RAS_ADDR refused, py-spy missing said,
// and 16 daemons diagnosing one run at once, stored with the run and read back by runplanectl
// after the daemons are gone.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "backend/control/diagnose.h"
#include "backend/diagnosis/diagnosis.h"
#include "db/history/history.h"
#include "diagnosis_cluster.h"
#include "fake_ras.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::diagnosis {
namespace {

using testing::ClusterOptions;
using testing::DiagnosisCluster;
using testing::FakeRas;

std::string fixture(const std::string& name) {
    std::ifstream in(runplane::testing::sourceDir() + "/tests/diagnosis/fixtures/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<NodeDiagnosis> diagnoseRpc(const std::string& address, const std::string& runId,
                                  grpc::StatusCode* code = nullptr) {
    auto stub =
        v1::Agent::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    v1::DiagnoseRequest req;
    req.set_run_id(runId);
    req.set_timeout_ms(5000);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::DiagnoseReport resp;
    const grpc::Status s = stub->Diagnose(&ctx, req, &resp);
    if (code != nullptr) {
        *code = s.error_code();
    }
    if (!s.ok()) {
        return Error{s.error_message()};
    }
    return nodeDiagnosisFromJson(nlohmann::json::parse(resp.json()));
}

// py-spy needs ptrace of the run's process; where the sandbox refuses it, that is the only
// reason to skip.
bool ptraceRefused(const NodeDiagnosis& n, std::string& why) {
    for (const auto& s : n.stacks) {
        if (s.error.find("Permission denied") != std::string::npos ||
            s.error.find("Operation not permitted") != std::string::npos) {
            why = s.error;
            return true;
        }
    }
    return false;
}

#define REQUIRE_VENV()                                                      \
    if (!testing::haveVenv()) {                                             \
        FAIL() << "no py-spy venv at " << testing::pySpyVenv()              \
               << " (the pyspy_venv fixture: scripts/setup-pyspy-venv.sh)"; \
    }

TEST(DiagnoseDaemon, TheStackOfABlockedPythonProcessNamesItsFunction) {
    REQUIRE_VENV();
    FakeRas ras(fixture("ras_lagging_rank.json"));
    ClusterOptions o;
    o.functionOf = [](int) { return "all_gather_into_tensor"; };
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    auto node = diagnoseRpc(cluster.addresses()[0], "hung-run");
    ASSERT_TRUE(node.ok()) << node.error();
    std::string why;
    if (ptraceRefused(*node, why)) {
        GTEST_SKIP() << "py-spy cannot attach here (ptrace refused): " << why;
    }
    EXPECT_EQ(node->stackToolSource, "PATH");
    EXPECT_EQ(node->stackToolPath, testing::pySpyVenv() + "/bin/py-spy");
    EXPECT_EQ(node->stackTool, "py-spy 0.4.3");
    ASSERT_FALSE(node->processes.empty());
    EXPECT_EQ(node->processes[0].rank, 0);
    bool named = false;
    for (const auto& s : node->stacks) {
        if (!s.threads.empty()) {
            EXPECT_EQ(signatureFrame(s.threads).name, "all_gather_into_tensor");
            EXPECT_EQ(signatureFrame(s.threads).file, "blocked_rank.py");
            named = true;
        }
    }
    EXPECT_TRUE(named) << toJson(*node).dump(1);
    // RAS through the run's NCCL_RAS_ADDR, over loopback.
    EXPECT_TRUE(node->rasAvailable) << node->rasMissing;
    EXPECT_EQ(node->rasEndpoint, ras.address());
    EXPECT_EQ(node->ras.communicators.at(0).ranks.at(3).collectiveCounts.at("AllGather"), 640u);
    // The run's last output, the kernel log or why not, the GPUs or why not.
    ASSERT_FALSE(node->stdoutTail.empty());
    EXPECT_EQ(node->stdoutTail.back(), "rank 0 entering all_gather_into_tensor");
    EXPECT_TRUE(node->kernelLogMissing.empty() != node->kernelLogSource.empty());
    EXPECT_EQ(node->gpusMissing, "the daemon runs with --no-gpu");
    EXPECT_NE(node->flightRecorderMissing.find("TORCH_NCCL_TRACE_BUFFER_SIZE"), std::string::npos);
    // Collecting never stops the run.
    auto again = diagnoseRpc(cluster.addresses()[0], "hung-run");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->runState, "RUN_STATE_RUNNING");
}

TEST(DiagnoseDaemon, UnknownRunIsNotFound) {
    REQUIRE_VENV();
    DiagnosisCluster cluster(ClusterOptions{});
    ASSERT_EQ(cluster.start(), "");
    grpc::StatusCode code{};
    auto node = diagnoseRpc(cluster.addresses()[0], "no-such-run", &code);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(code, grpc::StatusCode::NOT_FOUND);
    EXPECT_NE(node.error().find("run 'no-such-run' is not known on this node"), std::string::npos);
}

TEST(DiagnoseDaemon, ANonLoopbackRasAddressIsRefusedAndPySpyMissingIsSaid) {
    REQUIRE_VENV();
    ClusterOptions o;
    o.pySpyOnPath = false;
    o.envOf = [](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", "10.0.0.2:28028"}};
    };
    DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    auto node = diagnoseRpc(cluster.addresses()[0], "hung-run");
    ASSERT_TRUE(node.ok()) << node.error();
    EXPECT_FALSE(node->rasAvailable);
    EXPECT_NE(node->rasMissing.find("'10.0.0.2' is not a loopback address"), std::string::npos)
        << node->rasMissing;
    EXPECT_TRUE(node->stacks.empty());
    EXPECT_NE(node->stacksMissing.find("py-spy not found"), std::string::npos)
        << node->stacksMissing;
}

// 16 daemons, one run, one rank each; rank 11 is stuck elsewhere. Trigger to stored <= 15 s.
TEST(DiagnoseAcross, SixteenDaemonsDiagnoseOneRunAtOnce) {
    REQUIRE_VENV();
    FakeRas ras(fixture("ras_healthy.json"));
    ClusterOptions o;
    o.nodes = 16;
    o.functionOf = [](int i) { return i == 11 ? "all_gather_into_tensor" : "barrier"; };
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    const std::string history = cluster.scratch() + "/history.sqlite";

    // The stall trigger, as the controller's ingest hands it over, to the stored diagnosis.
    std::mutex mutex;
    std::condition_variable cv;
    std::optional<Result<RunDiagnosis>> done;
    control::DiagnosisTrigger::Options to;
    to.historyPath = history;
    to.base.collectTimeout = std::chrono::seconds(8);
    to.addressesOf = [&](const RunId&) { return cluster.addresses(); };
    to.onDone = [&](const RunId&, const std::string&, const Result<RunDiagnosis>& r) {
        std::lock_guard lock(mutex);
        done = r;
        cv.notify_all();
    };
    control::DiagnosisTrigger trigger(to);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(trigger.onEvent(RunId("hung-run"), "stall", ""));
    EXPECT_FALSE(trigger.onEvent(RunId("hung-run"), "stall", ""));  // once per run and trigger
    {
        std::unique_lock lock(mutex);
        ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return done.has_value(); }));
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(done->ok()) << done->error();
    const RunDiagnosis& d = **done;
    std::cout << "RESULT diagnose nodes=16 trigger_to_stored_ms="
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
              << " collect_ms=" << d.tookMs << "\n";
    EXPECT_LE(took, std::chrono::seconds(15));
    ASSERT_EQ(d.nodes.size(), 16u);
    std::string why;
    for (const auto& n : d.nodes) {
        EXPECT_EQ(n.error, "") << n.address;
        EXPECT_TRUE(n.rasAvailable) << n.rasMissing;
        if (ptraceRefused(n, why)) {
            GTEST_SKIP() << "py-spy cannot attach here (ptrace refused): " << why;
        }
    }
    EXPECT_EQ(d.trigger, "stall");
    EXPECT_EQ(d.verdict.headline.rfind("rank 11 (pid ", 0), 0u) << d.verdict.headline;
    EXPECT_NE(d.verdict.headline.find(") in all_gather_into_tensor, 15 ranks in barrier"),
              std::string::npos)
        << d.verdict.headline;

    // Stored with the run, bounded, and readable once the daemons are gone.
    {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        auto stored = (*h)->listDiagnoses(RunId("hung-run"));
        ASSERT_TRUE(stored.ok()) << stored.error();
        ASSERT_EQ(stored->size(), 1u);
        EXPECT_EQ((*stored)[0].trigger, "stall");
        EXPECT_EQ((*stored)[0].headline, d.verdict.headline);
        EXPECT_LE((*stored)[0].json.size(), control::kDiagnosisMaxDocumentBytes);
    }
    for (int i = 0; i < 16; ++i) {
        cluster.daemon(i).kill9();
    }
    const auto shown = runplane::testing::runCtl(
        {"diagnose", "hung-run", "--stored", "--history", history}, cluster.scratch());
    EXPECT_EQ(shown.exitCode, 0) << shown.err;
    EXPECT_EQ(shown.out.rfind(d.verdict.headline + "\n", 0), 0u) << shown.out;
    EXPECT_NE(shown.out.find("16 nodes"), std::string::npos);
}

TEST(DiagnoseCli, AsksTheRunsNodesStoresAndPrintsJson) {
    REQUIRE_VENV();
    FakeRas ras(fixture("ras_missing_rank.json"));
    ClusterOptions o;
    o.nodes = 2;
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    const std::string history = cluster.scratch() + "/history.sqlite";
    auto args = std::vector<std::string>{"diagnose", "hung-run", "--json", "--history", history};
    for (const auto& a : cluster.addresses()) {
        args.push_back(a);
    }
    const auto r = runplane::testing::runCtl(args, cluster.scratch(), std::chrono::seconds(60));
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["trigger"], "on_demand");
    EXPECT_EQ(j["nodes"].size(), 2u);
    EXPECT_EQ(j["verdict"]["findings"][0]["kind"], "missing_rank");
    const auto listed = runplane::testing::runCtl(
        {"diagnose", "hung-run", "--list", "--history", history}, cluster.scratch());
    EXPECT_EQ(listed.exitCode, 0) << listed.err;
    EXPECT_NE(listed.out.find("on_demand  NCCL communicator 0xb3398875b8b2a063"), std::string::npos)
        << listed.out;
    // A node that is gone is said, the others still answer.
    cluster.daemon(1).kill9();
    const auto partial =
        runplane::testing::runCtl({"diagnose", "hung-run", "--no-store", "--history", history,
                                   cluster.addresses()[0], cluster.addresses()[1]},
                                  cluster.scratch(), std::chrono::seconds(60));
    EXPECT_EQ(partial.exitCode, 0) << partial.err;
    EXPECT_NE(partial.out.find("error: cannot reach runplaned at " + cluster.addresses()[1]),
              std::string::npos)
        << partial.out;
}

}  // namespace
}  // namespace runplane::diagnosis
