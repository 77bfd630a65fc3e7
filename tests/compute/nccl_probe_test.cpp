// The probe driver: report parsing, config validation, child failures, the real probe binary
// without a GPU, and the ncclUniqueId lease.
#include <gtest/gtest.h>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "compute/gpu/nccl_probe.h"
#include "tests/compute/test_util.h"

namespace runplane::compute {
namespace {

// A report as runplane-nccl-probe prints it for 8 H200 on one node.
nlohmann::json sampleReport() {
    nlohmann::json report = {{"tool", "runplane-nccl-probe"},
                             {"schema", 1},
                             {"argv", {"runplane-nccl-probe", "--collectives", "all_reduce"}},
                             {"env", {{"NCCL_NVLS_ENABLE", "0"}, {"NCCL_DEBUG", "WARN"}}},
                             {"nccl_version", "2.28.9"},
                             {"nccl_version_code", 22809},
                             {"nccl_library", "/venv/nvidia/nccl/lib/libnccl.so.2"},
                             {"mode", "single-process"},
                             {"world_size", 8},
                             {"first_rank", 0},
                             {"local_ranks", 8},
                             {"nics", nlohmann::json::array()},
                             {"rows",
                              {{{"collective", "all_reduce"},
                                {"bytes", 1073741824},
                                {"count", 268435456},
                                {"time_us_p50", 4900.5},
                                {"time_us_p95", 5100.25},
                                {"algbw_gbps", 219.1},
                                {"busbw_gbps", 383.4},
                                {"correct", true}}}},
                             {"unavailable", ""},
                             {"error", ""}};
    report["gpus"] = nlohmann::json::array();
    for (int k = 0; k < 8; ++k) {
        report["gpus"].push_back({{"device", k}, {"name", "NVIDIA H200"}});
    }
    return report;
}

TEST(NcclProbeReport, ParsesRowsAndContext) {
    const auto outcome = parseNcclProbeReport(sampleReport().dump());
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->ncclVersion, "2.28.9");
    EXPECT_EQ(outcome->ranks, 8u);
    EXPECT_EQ(outcome->ncclLibraryPath, "/venv/nvidia/nccl/lib/libnccl.so.2");
    EXPECT_EQ(outcome->gpuNames.size(), 8u);
    EXPECT_EQ(outcome->ncclEnv.at("NCCL_NVLS_ENABLE"), "0");
    ASSERT_EQ(outcome->rows.size(), 1u);
    const NcclProbeRow& row = outcome->rows[0];
    EXPECT_EQ(row.collective, "all_reduce");
    EXPECT_EQ(row.bytes, 1073741824u);
    EXPECT_DOUBLE_EQ(row.timeUsP50, 4900.5);
    EXPECT_DOUBLE_EQ(row.timeUsP95, 5100.25);
    EXPECT_DOUBLE_EQ(row.busbwGBps, 383.4);
    EXPECT_TRUE(row.correct);
    EXPECT_EQ(outcome->verdict.rfind("healthy:", 0), 0u) << outcome->verdict;
    EXPECT_TRUE(outcome->unavailableReason.empty());
    EXPECT_FALSE(outcome->rawJson.empty());
}

TEST(NcclProbeReport, NamesTheBadField) {
    auto report = sampleReport();
    report["rows"][0]["busbw_gbps"] = "fast";
    auto outcome = parseNcclProbeReport(report.dump());
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(), "probe report: rows[0].busbw_gbps: wrong type (string)");

    report = sampleReport();
    report["rows"][0].erase("correct");
    outcome = parseNcclProbeReport(report.dump());
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(), "probe report: rows[0].correct: missing");

    report = sampleReport();
    report.erase("world_size");
    outcome = parseNcclProbeReport(report.dump());
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(), "probe report: world_size: missing");

    outcome = parseNcclProbeReport("{\"rows\": [");
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("not JSON"), std::string::npos) << outcome.error();
}

TEST(NcclProbeReport, UnavailableAndErrorReports) {
    auto outcome = parseNcclProbeReport(
        R"json({"unavailable":"unavailable: no CUDA device (cudaGetDeviceCount: cudaErrorInsufficientDriver)","rows":[]})json");
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->unavailableReason,
              "unavailable: no CUDA device (cudaGetDeviceCount: cudaErrorInsufficientDriver)");
    EXPECT_TRUE(outcome->rows.empty());

    outcome =
        parseNcclProbeReport(R"json({"error":"ncclCommInitAll: unhandled system error (2)"})json");
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(),
              "runplane-nccl-probe failed: ncclCommInitAll: unhandled system error (2)");
}

TEST(NcclProbeConfig, RejectsBadConfigNamingTheField) {
    NcclProbeConfig config;
    config.collectives = {"all_reduce", "broadcast"};
    auto outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().rfind("collectives[1]: unknown collective 'broadcast'", 0), 0u)
        << outcome.error();

    config = {};
    config.minBytes = 2u << 20;
    config.maxBytes = 1u << 20;
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("minBytes"), std::string::npos);

    config = {};
    config.uniqueId.assign(100, 0);
    config.worldSize = 2;
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(), "uniqueId: must be 128 bytes, got 100");

    config = {};
    config.uniqueId.assign(128, 1);
    config.worldSize = 2;
    config.firstRank = 2;
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("firstRank"), std::string::npos);

    config = {};
    config.worldSize = 4;
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("only meaningful with a uniqueId"), std::string::npos);
}

TEST(NcclUniqueIdHex, RoundTripsAndNamesBadCharacters) {
    std::vector<unsigned char> id(128);
    for (std::size_t k = 0; k < id.size(); ++k)
        id[k] = static_cast<unsigned char>(k * 7);
    const std::string hex = formatNcclUniqueIdHex(id);
    EXPECT_EQ(hex.size(), 256u);
    EXPECT_EQ(hex.substr(0, 6), "00070e");
    const auto back = parseNcclUniqueIdHex(hex);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, id);
    std::string bad = hex;
    bad[9] = 'g';
    EXPECT_EQ(parseNcclUniqueIdHex(bad).error(),
              "unique id: character 10 ('g') is not a hex digit");
    EXPECT_FALSE(parseNcclUniqueIdHex("abcd").ok());
}

// Fake probes (shell scripts) stand in for the CUDA child's failure modes.
class FakeProbe : public ::testing::Test {
  protected:
    std::string script(const std::string& body) {
        const auto path = m_dir.path() / ("probe-" + std::to_string(m_count++));
        test::writeFile(path, "#!/bin/sh\n" + body, true);
        return path.string();
    }
    test::ScratchDir m_dir;
    int m_count = 0;
};

TEST_F(FakeProbe, PassesArgumentsAndKeepsNvlsOff) {
    NcclProbeConfig config;
    config.collectives = {"all_reduce", "all_to_all"};
    config.minBytes = 1 << 20;
    config.maxBytes = 4 << 20;
    config.ncclLibrary = "/x/libnccl.so.2";
    config.uniqueId.assign(128, 0xab);
    config.worldSize = 16;
    config.firstRank = 8;
    config.env = {{"NCCL_SOCKET_IFNAME", "ib0"}};
    // The fake echoes what it got as the one "error" field, so the test sees it verbatim.
    config.probeBinaryPath = script(
        "printf '{\"error\":\"%s|%s|%s\"}\\n' \"$*\" \"$NCCL_NVLS_ENABLE\" "
        "\"$NCCL_SOCKET_IFNAME\"\n");
    const auto outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().rfind(
                  "runplane-nccl-probe failed: --collectives all_reduce,all_to_all --min-bytes "
                  "1048576 --max-bytes 4194304 --warmup 5 --iters 20 ",
                  0),
              0u)
        << outcome.error();
    EXPECT_NE(outcome.error().find("--nccl-lib /x/libnccl.so.2 --unique-id abab"),
              std::string::npos)
        << outcome.error();
    EXPECT_NE(outcome.error().find("--world-size 16 --first-rank 8|0|ib0"), std::string::npos)
        << outcome.error();

    config.env["NCCL_NVLS_ENABLE"] = "1";  // an explicit choice is kept
    const auto explicitNvls = runNcclProbe(config);
    EXPECT_NE(explicitNvls.error().find("|1|ib0"), std::string::npos) << explicitNvls.error();
}

TEST_F(FakeProbe, CrashHangAndGarbageAreErrors) {
    NcclProbeConfig config;
    config.probeBinaryPath = script("echo 'cuda: something broke' >&2\nkill -SEGV $$\n");
    auto outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("killed by signal 11"), std::string::npos) << outcome.error();
    EXPECT_NE(outcome.error().find("cuda: something broke"), std::string::npos) << outcome.error();

    config.probeBinaryPath = script("sleep 30\n");
    config.timeoutSeconds = 1;
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("did not finish within 1 s"), std::string::npos)
        << outcome.error();

    config.timeoutSeconds = 30;
    config.probeBinaryPath = script("echo 'not json'\nexit 1\n");
    outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("exit code 1"), std::string::npos) << outcome.error();
}

TEST_F(FakeProbe, ExplicitMissingBinaryIsAnError) {
    NcclProbeConfig config;
    config.probeBinaryPath = "/nonexistent/runplane-nccl-probe";
    const auto outcome = runNcclProbe(config);
    ASSERT_FALSE(outcome.ok());  // an explicit path that cannot start is an error naming it
    EXPECT_NE(outcome.error().find("/nonexistent/runplane-nccl-probe"), std::string::npos);
}

// The real probe binary, on this GPU-less machine, reports unavailable (no CUDA device); on a GPU
// machine it measures and every row must be correct.
TEST(RealProbe, RunsAndReportsHonestly) {
    const std::string binary = COMPUTE_PROBE_BINARY;
    if (binary.empty())
        GTEST_SKIP() << "built without CUDA: no runplane-nccl-probe";
    NcclProbeConfig config;
    config.probeBinaryPath = binary;
    config.collectives = {"all_reduce"};
    config.minBytes = config.maxBytes = 8u << 20;
    config.iters = 3;
    const auto outcome = runNcclProbe(config);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    if (!outcome->unavailableReason.empty()) {
        EXPECT_EQ(outcome->unavailableReason.rfind("unavailable: ", 0), 0u);
        EXPECT_TRUE(outcome->rows.empty());
        return;
    }
    ASSERT_EQ(outcome->rows.size(), 1u);
    EXPECT_TRUE(outcome->rows[0].correct);
}

TEST(RealProbe, UniqueIdLeaseHoldsTheBootstrapRoot) {
    const std::string binary = COMPUTE_PROBE_BINARY;
    if (binary.empty())
        GTEST_SKIP() << "built without CUDA: no runplane-nccl-probe";
    NcclProbeConfig config;
    config.probeBinaryPath = binary;
    int pid = 0;
    {
        auto lease = createNcclUniqueId(config, std::chrono::seconds(60));
        ASSERT_TRUE(lease.ok()) << lease.error();  // ncclGetUniqueId needs no GPU
        EXPECT_EQ((*lease)->id().size(), 128u);
        EXPECT_EQ((*lease)->hex().size(), 256u);
        pid = (*lease)->pid();
        EXPECT_EQ(::kill(pid, 0), 0) << "the id's process must stay alive";
    }
    EXPECT_NE(::kill(pid, 0), 0) << "destroying the lease ends the process";
}

}  // namespace
}  // namespace runplane::compute
