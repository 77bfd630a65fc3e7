// The last output per role through a real daemon (issue #44, docs/diagnosis.md "Last output per
// role"): a real run (tests/diagnosis/roles_run.sh) whose trainer process (titled as slime's
// train actor) printed once and went quiet while its rollout engine (titled as SGLang's scheduler)
// keeps printing; the daemon's Diagnose names each role's last line and its age, and the verdict
// carries it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "backend/diagnosis/diagnosis.h"
#include "runplane/v1/agent.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

using namespace runplane;
using namespace runplane::diagnosis;

namespace {

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// A file whose presence keeps a test run going (tests/diagnosis/*_run.sh); removed at the end.
struct Sentinel {
    explicit Sentinel(std::string p) : path(std::move(p)) {
        std::ofstream(path) << "run while this exists\n";
    }
    ~Sentinel() { std::remove(path.c_str()); }
    std::string path;
};

/// Starts tests/diagnosis/`script` with the sentinel's path as run `runId` (its own `roleRows`).
void startScriptRun(v1::Agent::Stub& stub, const std::string& runId, const std::string& script,
                    const Sentinel& sentinel, const std::string& roleRows = "") {
    v1::StartRunRequest req;
    req.set_run_id(runId);
    req.add_argv("/bin/bash");
    req.add_argv(runplane::testing::sourceDir() + "/tests/diagnosis/" + script);
    req.add_argv(sentinel.path);
    req.set_role(v1::RUN_ROLE_STANDALONE);
    req.set_role_rows(roleRows);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::RunStatus st;
    const grpc::Status s = stub.StartRun(&ctx, req, &st);
    ASSERT_TRUE(s.ok()) << s.error_message();
}

/// The daemon's diagnosis of run `runId` (its JSON in `json`, for messages).
void diagnoseRun(v1::Agent::Stub& stub, const std::string& runId, NodeDiagnosis* out,
                 std::string* json) {
    v1::DiagnoseRequest req;
    req.set_run_id(runId);
    req.set_timeout_ms(3000);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::DiagnoseReport resp;
    const grpc::Status s = stub.Diagnose(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    *json = resp.json();
    auto node = nodeDiagnosisFromJson(nlohmann::json::parse(resp.json()));
    ASSERT_TRUE(node) << node.error();
    *out = std::move(*node);
}

const RoleOutput* roleOf(const NodeDiagnosis& n, const std::string& role) {
    for (const auto& r : n.roleOutput) {
        if (r.role == role) {
            return &r;
        }
    }
    return nullptr;
}

}  // namespace

TEST(LastOutputDaemon, EachRolesLastLineAndItsAgeFromARealRun) {
    runplane::testing::TempDir dir("runplane-last-output");
    runplane::testing::DaemonSpec spec;
    spec.stateDir = dir.path() + "/state";
    runplane::testing::DaemonProcess daemon(spec);
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    const Sentinel sentinel(dir.path() + "/alive");
    auto stub = v1::Agent::NewStub(
        grpc::CreateChannel(daemon.address(), grpc::InsecureChannelCredentials()));
    ASSERT_NO_FATAL_FAILURE(startScriptRun(*stub, "roles-run", "roles_run.sh", sentinel));
    const std::string out = spec.stateDir + "/runs.d/roles-run/stdout.log";
    ASSERT_TRUE(runplane::testing::waitUntil(
        [&] {
            return runplane::testing::readFile(out).find("Timer actor_train") != std::string::npos;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(50)))
        << out;
    // The trainer stays quiet; the rollout keeps printing.
    std::this_thread::sleep_for(std::chrono::seconds(4));

    NodeDiagnosis diagnosed;
    std::string json;
    ASSERT_NO_FATAL_FAILURE(diagnoseRun(*stub, "roles-run", &diagnosed, &json));
    const NodeDiagnosis* node = &diagnosed;
    const std::int64_t at = node->tUnixNs;
    ASSERT_GT(at, 0);
    EXPECT_LE(at, nowNs());

    const RoleOutput* trainer = roleOf(*node, "trainer");
    const RoleOutput* rollout = roleOf(*node, "rollout");
    const RoleOutput* driver = roleOf(*node, "driver");
    ASSERT_TRUE(trainer && rollout && driver) << json;
    // Roles from the live processes' titles (the role table), lines from their prefixes.
    EXPECT_NE(trainer->line.find("Timer actor_train start"), std::string::npos);
    EXPECT_EQ(trainer->source.rfind("MegatronTrainRayActor pid ", 0), 0u) << trainer->source;
    EXPECT_EQ(trainer->timeFrom, "line");
    EXPECT_NE(rollout->line.find("Decode batch"), std::string::npos);
    EXPECT_EQ(rollout->source.rfind("SGLangEngine pid ", 0), 0u) << rollout->source;
    EXPECT_EQ(driver->line, "driver: waiting for the train and rollout actors");
    EXPECT_EQ(driver->stream, "stderr");
    EXPECT_EQ(driver->timeFrom, "stream");  // the stream's last line: its file's last write
    // Ages: the trainer went quiet >= 3 s before (its line's time is whole seconds), the rollout
    // printed within the last 2 s.
    const double trainerAge = static_cast<double>(at - trainer->tUnixNs) / 1e9;
    const double rolloutAge = static_cast<double>(at - rollout->tUnixNs) / 1e9;
    EXPECT_GE(trainerAge, 3.0);
    EXPECT_LT(trainerAge, 30.0);
    EXPECT_LE(rolloutAge, 2.0);
    EXPECT_GE(rolloutAge, -1.0);

    // The verdict's evidence says it.
    const Verdict v = judge({*node});
    bool found = false;
    for (const auto& f : v.findings) {
        if (f.kind == "last_output") {
            found = true;
            EXPECT_NE(f.text.find("trainer: `(MegatronTrainRayActor pid="), std::string::npos)
                << f.text;
            // A quoted line is cut to a fixed width, so where the cut falls moves with the pid's
            // digits: the line's start and the ellipsis, not the exact cut.
            EXPECT_NE(f.text.find("] timer.py:24 - Timer a"), std::string::npos) << f.text;
            EXPECT_NE(f.text.find("...` "), std::string::npos) << f.text;
            EXPECT_NE(f.text.find("rollout: `(SGLangEngine pid="), std::string::npos) << f.text;
        }
    }
    EXPECT_TRUE(found) << json;
}

// The role table of a diagnosis is the one the memory-by-role walk uses for the run: the run's
// own role_rows (StartRun, from the recipe's analysis.role_rows), then the daemon's --role-table
// rows, then the built-in ones. A site's reward model (a row only in --role-table) and a judge (a
// row only in the run's role_rows) are named by their roles, not the built-in `ray`.
TEST(LastOutputDaemon, TheSitesAndTheRunsRoleRowsNameTheirProcesses) {
    runplane::testing::TempDir dir("runplane-last-output-site");
    const std::string table = dir.path() + "/roles.txt";
    std::ofstream(table) << "# this site's reward model\nreward_srv title ray::RewardModel*\n";
    runplane::testing::DaemonSpec spec;
    spec.stateDir = dir.path() + "/state";
    spec.args = {"--role-table", table};
    runplane::testing::DaemonProcess daemon(spec);
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    const Sentinel sentinel(dir.path() + "/alive");
    auto stub = v1::Agent::NewStub(
        grpc::CreateChannel(daemon.address(), grpc::InsecureChannelCredentials()));
    ASSERT_NO_FATAL_FAILURE(startScriptRun(*stub, "site-roles-run", "site_roles_run.sh", sentinel,
                                           "judge title ray::JudgeActor*\n"));
    const std::string out = spec.stateDir + "/runs.d/site-roles-run/stdout.log";
    ASSERT_TRUE(runplane::testing::waitUntil(
        [&] {
            const std::string text = runplane::testing::readFile(out);
            return text.find("reward batch 3") != std::string::npos &&
                   text.find("judge graded") != std::string::npos;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(50)))
        << out;

    NodeDiagnosis diagnosed;
    std::string json;
    ASSERT_NO_FATAL_FAILURE(diagnoseRun(*stub, "site-roles-run", &diagnosed, &json));
    const NodeDiagnosis* node = &diagnosed;
    const RoleOutput* reward = roleOf(*node, "reward_srv");
    const RoleOutput* judge = roleOf(*node, "judge");
    ASSERT_TRUE(reward && judge) << json;
    EXPECT_NE(reward->line.find("reward batch 3 scored"), std::string::npos) << reward->line;
    EXPECT_EQ(reward->source.rfind("RewardModel pid ", 0), 0u) << reward->source;
    EXPECT_NE(judge->line.find("judge graded 16 samples"), std::string::npos) << judge->line;
    EXPECT_EQ(judge->source.rfind("JudgeActor pid ", 0), 0u) << judge->source;
    // Neither is left to the built-in catch-all `ray::*`.
    EXPECT_EQ(roleOf(*node, "ray"), nullptr) << json;
}
