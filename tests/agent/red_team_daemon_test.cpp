// Issue 41, the red-team round's hostile inputs against a real runplaned (daemon side): text
// that is not UTF-8 in a run's output, deep and NUL-carrying working directories, credential
// paths that are devices, FIFOs or huge, and ListRuns with megabytes of argv. Each test is
// named for its item; docs/security.md, "Red-team round (issue 41): daemon", lists them.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "backend/control/cluster_profile.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;
using testing::waitFor;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "s3cret-token-0123456789abcdef";

grpc::Status startRun(v1::Agent::Stub& stub, const std::string& id,
                      const std::vector<std::string>& argv, const std::string& workdir = "") {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::StartRunRequest req;
    req.set_run_id(id);
    for (const auto& a : argv) {
        req.add_argv(a);
    }
    req.set_workdir(workdir);
    req.set_role(v1::RUN_ROLE_STANDALONE);
    v1::RunStatus st;
    return stub.StartRun(&ctx, req, &st);
}

class RedTeam41 : public ::testing::Test {
  protected:
    void SetUp() override {
        daemon = std::make_unique<DaemonProcess>(dir.path() + "/state",
                                                 std::vector<std::string>{"--sample-hz", "10"});
        ASSERT_TRUE(daemon->ok()) << daemon->error();
        stub = testing::agentStub(*daemon);
    }
    std::string runRoot() const { return dir.path() + "/state/runs"; }
    TempDir dir;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<v1::Agent::Stub> stub;
};

// Item 1: `step 1: {"a\377b": 1}` made a spool record whose protobuf string was not UTF-8;
// every later read failed with DATA_LOSS and no record of any run reached a controller. Now
// the key is stored with U+FFFD in place of the byte and the stream goes on to later records.
TEST_F(RedTeam41, InvalidUtf8InRunOutputDoesNotStopTelemetry) {
    const std::string script =
        "printf 'step 1: {\"a\\377b\": 1}\\n'; sleep 0.3; echo 'step 2: {\"loss\": 0.5}'";
    ASSERT_TRUE(startRun(*stub, "bad-utf8", {"/bin/sh", "-c", script}).ok());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto reader = stub->WatchTelemetry(&ctx, {});
    v1::TelemetryBatch batch;
    bool sawKey = false, sawLater = false, sawExit = false;
    while (!(sawKey && sawLater && sawExit) && reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            if (r.run_id() != "bad-utf8") {
                continue;
            }
            if (r.has_sample() && r.sample().series() ==
                                      "a\xEF\xBF\xBD"
                                      "b") {
                sawKey = true;
                EXPECT_EQ(r.sample().value(), 1);
                EXPECT_EQ(r.sample().step(), 1);
            }
            sawLater = sawLater || (r.has_sample() && r.sample().series() == "loss");
            sawExit = sawExit || (r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT);
        }
    }
    if (sawKey && sawLater && sawExit) {
        ctx.TryCancel();
    }
    const grpc::Status status = reader->Finish();
    EXPECT_NE(status.error_code(), grpc::StatusCode::DATA_LOSS) << status.error_message();
    EXPECT_TRUE(sawKey) << "the key with the bad byte, as a\\uFFFDb";
    EXPECT_TRUE(sawLater) << "the record after it";
    EXPECT_TRUE(sawExit) << "the run's exit event";
}

// Item 4: a 2,000-level working directory in a 4 KB request took 95 s of daemon CPU and
// created the directories before a 2,100-level one was refused. Now the text is bounded first.
TEST_F(RedTeam41, DeepWorkdirIsRefusedBeforeTheFileSystemIsTouched) {
    std::string deep;
    for (int i = 0; i < 2000; ++i) {
        deep += "d/";
    }
    const auto t0 = Clock::now();
    const grpc::Status s = startRun(*stub, "deep", {"/bin/true"}, deep);
    const auto took = Clock::now() - t0;
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("workdir is 4000 bytes long; at most 1024"), std::string::npos)
        << s.error_message();
    EXPECT_LT(took, std::chrono::seconds(2));
    EXPECT_FALSE(std::filesystem::exists(runRoot() + "/d")) << "nothing was created";
    // Depth alone (33 short levels), a long name (over NAME_MAX) and a long path are refused
    // the same way.
    std::string levels;
    for (int i = 0; i < 33; ++i) {
        levels += "e/";
    }
    const grpc::Status tooDeep = startRun(*stub, "too-deep", {"/bin/true"}, levels);
    EXPECT_EQ(tooDeep.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(tooDeep.error_message().find("33 levels; at most 32"), std::string::npos)
        << tooDeep.error_message();
    EXPECT_FALSE(std::filesystem::exists(runRoot() + "/e"));
    EXPECT_EQ(startRun(*stub, "long-name", {"/bin/true"}, std::string(300, 'n')).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(
        startRun(*stub, "long-path", {"/bin/true"}, std::string(2000, 'p') + "/x").error_code(),
        grpc::StatusCode::INVALID_ARGUMENT);
    // Within the bounds it still works.
    std::string ok;
    for (int i = 0; i < 32; ++i) {
        ok += "k/";
    }
    EXPECT_TRUE(startRun(*stub, "deep-ok", {"/bin/true"}, ok).ok());
    EXPECT_TRUE(std::filesystem::is_directory(runRoot() + "/" + ok));
}

// Item 10: a NUL in the working directory was silently cut (`q\0r` became `q`) while argv and
// env refuse it.
TEST_F(RedTeam41, NulInWorkdirIsRefused) {
    const grpc::Status s = startRun(*stub, "nul", {"/bin/true"}, std::string("q\0r", 3));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("NUL"), std::string::npos) << s.error_message();
    EXPECT_FALSE(std::filesystem::exists(runRoot() + "/q"));
}

// Item 9: two runs with 3.9 MB of argv made a 9.4 MB ListRuns reply, over the client's default
// 4 MB limit. Now each run's argv is summarised (64 arguments, 4 KiB) with a marker.
TEST_F(RedTeam41, ListRunsBoundsTheArgvItCarries) {
    std::vector<std::string> big{"/bin/true"};
    for (int i = 0; i < 1900; ++i) {
        big.push_back(std::string(1000, static_cast<char>('a' + i % 26)));
    }
    ASSERT_TRUE(startRun(*stub, "big-1", big).ok());
    ASSERT_TRUE(startRun(*stub, "big-2", big).ok());
    ASSERT_TRUE(startRun(*stub, "small", {"/bin/echo", "hello"}).ok());
    grpc::ClientContext ctx;
    v1::ListRunsResponse resp;
    const grpc::Status s = stub->ListRuns(&ctx, {}, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LT(resp.ByteSizeLong(), 32u << 10) << "two summaries and one small run";
    int seen = 0;
    for (const auto& r : resp.runs()) {
        if (r.run_id() == "small") {
            ++seen;
            ASSERT_EQ(r.argv_size(), 2);
            EXPECT_EQ(r.argv(1), "hello") << "a small argv is kept whole";
            continue;
        }
        ++seen;
        ASSERT_GE(r.argv_size(), 2);
        EXPECT_EQ(r.argv(0), "/bin/true");
        EXPECT_EQ(r.argv(1), big[1]) << "whole arguments while they fit";
        const std::string& marker = r.argv(r.argv_size() - 1);
        EXPECT_EQ(marker.rfind("... (argv summarised: ", 0), 0u) << marker;
        EXPECT_NE(marker.find("of 1901 arguments"), std::string::npos) << marker;
    }
    EXPECT_EQ(seen, 3);
    // StartRun stays idempotent on the full argv (it is kept, only the reply is summarised).
    EXPECT_TRUE(startRun(*stub, "big-1", big).ok());
}

// Item 8: a credential path to /dev/zero grew the daemon to 3.9 GB; a FIFO blocked its start
// (and SIGTERM was ignored). Regular files only, size-capped, never blocking.
TEST(RedTeam41Credentials, DevicesFifosAndHugeFilesAreRefusedAtOnce) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string huge = dir.path() + "/huge";
    std::ofstream(huge) << std::string(8192, 'x') << "\n";
    struct Case {
        std::string name;
        std::vector<std::string> args;
        std::string needle;
    };
    const auto web = [&](const std::string& name, const std::string& body) {
        std::ofstream(dir.path() + "/" + name) << body;
        return dir.path() + "/" + name;
    };
    const std::vector<Case> cases = {
        {"token /dev/zero", {"--token-file", "/dev/zero"}, "a character device"},
        {"token FIFO", {"--token-file", fifo}, "a FIFO"},
        {"token huge", {"--token-file", huge}, "more than the 4096 allowed"},
        {"token directory", {"--token-file", dir.path()}, "a directory"},
        {"web config FIFO",
         {"--metrics-listen", "127.0.0.1:0", "--metrics-web-config", fifo},
         "a FIFO"},
        {"web bearer_token_file /dev/zero",
         {"--metrics-listen", "127.0.0.1:0", "--metrics-web-config",
          web("w1.yml", "bearer_token_file: /dev/zero\n")},
         "a character device"},
        {"web bearer_token_file FIFO",
         {"--metrics-listen", "127.0.0.1:0", "--metrics-web-config",
          web("w2.yml", "bearer_token_file: " + fifo + "\n")},
         "a FIFO"},
        {"web cert_file /dev/zero",
         {"--metrics-listen", "127.0.0.1:0", "--metrics-web-config",
          web("w3.yml", "tls_server_config:\n  cert_file: /dev/zero\n  key_file: /dev/zero\n")},
         "a character device"},
        {"--tls-cert FIFO", {"--tls-cert", fifo, "--tls-key", fifo}, "a FIFO"},
    };
    for (const auto& c : cases) {
        const auto t0 = Clock::now();
        DaemonProcess d(dir.path() + "/state-" + std::to_string(&c - cases.data()), c.args);
        EXPECT_FALSE(d.ok()) << c.name;
        EXPECT_NE(d.error().find(c.needle), std::string::npos) << c.name << ": " << d.error();
        EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5)) << c.name;
    }
}

// Item 8, runplanectl's side: the same paths in a cluster profile hung the CLI.
TEST(RedTeam41Credentials, ClusterProfilePathsAreRefusedAtOnce) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto t0 = Clock::now();
    auto fromFifo = control::readClientTokenFile(fifo, "token_file");
    ASSERT_FALSE(fromFifo.ok());
    EXPECT_NE(fromFifo.error().find("a FIFO"), std::string::npos) << fromFifo.error();
    auto fromZero = control::readClientTokenFile("/dev/zero", "token_file");
    ASSERT_FALSE(fromZero.ok());
    EXPECT_NE(fromZero.error().find("a character device"), std::string::npos) << fromZero.error();
    // The profile itself as a FIFO.
    const std::string profile = dir.path() + "/p.yaml";
    ASSERT_EQ(::mkfifo(profile.c_str(), 0600), 0);
    auto p = control::loadClusterProfile(profile);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("a FIFO"), std::string::npos) << p.error();
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

}  // namespace
}  // namespace runplane::agent
