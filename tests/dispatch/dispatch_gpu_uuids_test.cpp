// issue 47, "Bring-up that proves who joined": every daemon's preflight reports the GPU UUIDs
// NVML sees on its host; two daemons that report the same UUID are one machine joined twice
// (gpu.distinct FAIL naming both nodes, launch refused). Real daemons on two loopback addresses,
// each loading the tests' fake libnvidia-ml.so.1 (tests/compute/fake_nvml.cpp) through
// LD_LIBRARY_PATH; FAKE_NVML_UUID_TAG gives a daemon the GPUs of another machine.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backend/control/dispatch.h"
#include "tests/dispatch/dispatch_test_support.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;

namespace {

std::string fakeNvmlDir() {
    const char* bin = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(bin != nullptr ? bin : ".") + "/tests/compute/fake_nvml/1";
}

/// Node i's environment: the fake NVML, and (when tag is not empty) its own GPU UUIDs.
std::map<std::string, std::string> nvmlEnv(const std::string& tag) {
    std::map<std::string, std::string> env{{"LD_LIBRARY_PATH", fakeNvmlDir()}};
    if (!tag.empty()) {
        env["FAKE_NVML_UUID_TAG"] = tag;
    }
    return env;
}

PreflightSpec spec() {
    PreflightSpec s;
    s.multiNode = true;
    s.env["PATH"] = fakeRayDir() + ":/usr/bin:/bin";
    s.plannedPeakHostBytes = 1ull << 20;
    return s;
}

NodeClientOptions fast() {
    NodeClientOptions o;
    o.callTimeout = std::chrono::milliseconds(3000);
    return o;
}

const PreflightCheckInfo* clusterCheck(const PreflightTable& t, const std::string& id) {
    for (const auto& c : t.clusterChecks) {
        if (c.id == id) {
            return &c;
        }
    }
    return nullptr;
}

LaunchRequest launchRequest(const Cluster& c) {
    LaunchRequest r;
    r.head = c.nodes[0]->address();
    r.workers.push_back(c.nodes[1]->address());
    r.gpusPerNode = 2;
    r.clusterTimeout = std::chrono::seconds(10);
    r.pollInterval = std::chrono::milliseconds(200);
    r.preflight.env["PATH"] = fakeRayDir() + ":/usr/bin:/bin";
    r.client.callTimeout = std::chrono::milliseconds(3000);
    r.run.runId = runplane::RunId{"uuid-1"};
    r.run.argv = {"/bin/sh", "-c", "exec sleep 60"};
    return r;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
    for (const auto& l : lines) {
        if (l.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST(DispatchGpuUuids, TwoDaemonsOnOneMachineReportTheSameUuidsAndTheLaunchIsRefused) {
    ASSERT_TRUE(std::filesystem::exists(fakeNvmlDir() + "/libnvidia-ml.so.1")) << fakeNvmlDir();
    Cluster c;
    c.start({"2.40.0", "2.40.0"}, {nvmlEnv(""), nvmlEnv("")}, {true, true});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    const auto table = preflightAll(c.addresses(), spec(), fast());
    ASSERT_EQ(table.rows.size(), 2u);
    for (const auto& row : table.rows) {
        ASSERT_TRUE(row.reachable) << row.error;
        EXPECT_EQ(row.gpuUuids, (std::vector<std::string>{"GPU-0000aaaa", "GPU-1111bbbb"}));
    }
    const PreflightCheckInfo* distinct = clusterCheck(table, "gpu.distinct");
    ASSERT_NE(distinct, nullptr) << formatPreflightTable(table);
    EXPECT_EQ(distinct->status, CheckState::Fail);
    EXPECT_NE(distinct->message.find(c.nodes[0]->address()), std::string::npos)
        << distinct->message;
    EXPECT_NE(distinct->message.find(c.nodes[1]->address()), std::string::npos)
        << distinct->message;
    EXPECT_NE(distinct->message.find("GPU-0000aaaa, GPU-1111bbbb"), std::string::npos)
        << distinct->message;
    EXPECT_NE(distinct->detail.find("one runplaned per machine"), std::string::npos);
    EXPECT_TRUE(mentions(table.failures(), "cluster: gpu.distinct: "));

    // dispatch preflight's outputs: a gpus line per node, the cluster row with its fix; JSON
    // carries the UUIDs per node.
    const auto text = formatPreflightTable(table);
    EXPECT_NE(text.find("gpus  " + c.nodes[1]->address() + "  GPU-0000aaaa GPU-1111bbbb"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cluster  gpu.distinct  FAIL"), std::string::npos) << text;
    EXPECT_NE(text.find("fix: two daemons run on one host"), std::string::npos) << text;
    const auto doc = nlohmann::json::parse(preflightTableToJson(table));
    EXPECT_EQ(doc["nodes"][0]["gpu_uuids"], (nlohmann::json{"GPU-0000aaaa", "GPU-1111bbbb"}));
    EXPECT_TRUE(doc["fail"].get<bool>());

    // The launch is refused before any `ray start`, and the refusal names the duplicate.
    const auto blocked = launchMultiNode(launchRequest(c));
    EXPECT_FALSE(blocked.launched);
    EXPECT_NE(blocked.error.find("launch blocked"), std::string::npos) << blocked.error;
    EXPECT_TRUE(mentions(blocked.preflight.failures(), "gpu.distinct"));
    EXPECT_EQ(c.calls().find("start"), std::string::npos) << c.calls();
}

TEST(DispatchGpuUuids, TwoMachinesWithTheirOwnGpusPassAndNodesWithoutNvmlAddNoColumn) {
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.40.0"}, {nvmlEnv("hostA"), nvmlEnv("hostB"), {}},
            {true, true, false});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    const auto table = preflightAll(c.addresses(), spec(), fast());
    ASSERT_EQ(table.rows.size(), 3u);
    EXPECT_EQ(table.rows[0].gpuUuids,
              (std::vector<std::string>{"GPU-hostA-0000aaaa", "GPU-hostA-1111bbbb"}));
    EXPECT_EQ(table.rows[1].gpuUuids,
              (std::vector<std::string>{"GPU-hostB-0000aaaa", "GPU-hostB-1111bbbb"}));
    EXPECT_TRUE(table.rows[2].gpuUuids.empty()) << "node 2 runs with --no-gpu";
    const PreflightCheckInfo* distinct = clusterCheck(table, "gpu.distinct");
    ASSERT_NE(distinct, nullptr);
    EXPECT_EQ(distinct->status, CheckState::Pass) << distinct->message;
    EXPECT_EQ(distinct->message, "4 distinct GPUs on 2 nodes");
    EXPECT_FALSE(mentions(table.failures(), "gpu.distinct"));

    // No node with NVML: no gpu.distinct row at all (the table is what it was before UUIDs).
    const auto none = preflightAll({c.nodes[2]->address(), c.nodes[2]->address()}, spec(), fast());
    EXPECT_EQ(clusterCheck(none, "gpu.distinct"), nullptr);

    // One daemon listed twice is the same machine twice too.
    const auto twice = preflightAll({c.nodes[0]->address(), c.nodes[0]->address()}, spec(), fast());
    const PreflightCheckInfo* dup = clusterCheck(twice, "gpu.distinct");
    ASSERT_NE(dup, nullptr);
    EXPECT_EQ(dup->status, CheckState::Fail);
    EXPECT_NE(dup->message.find(c.nodes[0]->address() + " ("), std::string::npos) << dup->message;
    EXPECT_NE(dup->message.find("listed twice"), std::string::npos) << dup->message;
}

// `runplaned --no-gpu` reads no NVML anywhere, preflight included: on a GPU machine every test
// daemon of one host would otherwise report the host's GPUs and gpu.distinct would refuse their
// launch. Three --no-gpu daemons that WOULD find the fake NVML (it is on their LD_LIBRARY_PATH,
// as the real one is on a GPU machine) report no GPU and no UUID, the GPU count names --no-gpu,
// no gpu.distinct row is made, and their launch is not refused.
TEST(DispatchGpuUuids, NoGpuDaemonsReadNoNvmlSoSeveralOnOneMachineAreNotOneMachineJoinedTwice) {
    ASSERT_TRUE(std::filesystem::exists(fakeNvmlDir() + "/libnvidia-ml.so.1")) << fakeNvmlDir();
    Cluster c;
    c.start({"2.40.0", "2.40.0", "2.40.0"}, {nvmlEnv(""), nvmlEnv(""), nvmlEnv("")},
            {false, false, false});
    for (const auto& n : c.nodes) {
        ASSERT_TRUE(n->ok()) << n->error();
    }
    PreflightSpec s = spec();
    s.expectedGpus = 2;
    const auto table = preflightAll(c.addresses(), s, fast());
    ASSERT_EQ(table.rows.size(), 3u);
    for (const auto& row : table.rows) {
        ASSERT_TRUE(row.reachable) << row.error;
        EXPECT_TRUE(row.gpuUuids.empty()) << row.address << " read NVML under --no-gpu";
        const auto* count = row.find("gpu.count");
        ASSERT_NE(count, nullptr) << row.address;
        EXPECT_EQ(count->status, CheckState::Fail);
        EXPECT_EQ(count->message, "expected 2 GPUs, found 0 (GPU telemetry disabled (--no-gpu))");
    }
    EXPECT_EQ(clusterCheck(table, "gpu.distinct"), nullptr) << formatPreflightTable(table);
    EXPECT_FALSE(mentions(table.failures(), "gpu.distinct"));
    const auto doc = nlohmann::json::parse(preflightTableToJson(table));
    for (const auto& node : doc["nodes"]) {
        EXPECT_TRUE(!node.contains("gpu_uuids") || node["gpu_uuids"].empty()) << node.dump();
    }

    // The launch goes ahead with nothing about GPUs to accept: one machine's loopback daemons
    // fail net.hosts / net.master_addr here (overridden, as the loopback launch tests do), but
    // gpu.distinct is not among what the override accepted.
    LaunchRequest r = launchRequest(c);
    r.workers.push_back(c.nodes[2]->address());
    r.overridePreflight = true;
    const auto launched = launchMultiNode(r);
    EXPECT_TRUE(launched.launched) << launched.error;
    EXPECT_FALSE(mentions(launched.overriddenFailures, "gpu.distinct"))
        << formatPreflightTable(launched.preflight);
    StopRequest stop;
    stop.head = r.head;
    stop.workers = r.workers;
    stop.runId = r.run.runId.value();
    stop.graceSeconds = 1;
    stop.force = true;
    stop.client = r.client;
    stopMultiNode(stop);
}
