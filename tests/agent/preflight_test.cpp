// The per-node preflight checks on fixtures. issue 5
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "backend/agent/preflight.h"
#include "backend/agent/ray_control.h"
#include "backend/agent/ray_version.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

std::multimap<std::string, v1::PreflightCheck> checks(const v1::PreflightReport& r) {
    std::multimap<std::string, v1::PreflightCheck> out;
    for (const auto& c : r.checks()) {
        out.emplace(c.id(), c);
    }
    return out;
}

v1::CheckStatus statusOf(const v1::PreflightReport& r, const std::string& id) {
    for (const auto& c : r.checks()) {
        if (c.id() == id) {
            return c.status();
        }
    }
    return v1::CHECK_STATUS_UNSPECIFIED;
}

struct Fixture {
    Fixture() {
        std::filesystem::create_directories(dir.path() + "/net/eth0");
        std::filesystem::create_directories(dir.path() + "/net/ib0");
        std::filesystem::create_directories(dir.path() + "/ckpt/good");
        std::filesystem::create_directories(dir.path() + "/ckpt/bare");
        std::ofstream(dir.path() + "/ckpt/good/latest_checkpointed_iteration.txt") << "100\n";
        std::ofstream(dir.path() + "/hosts")
            << "127.0.0.1 localhost\n127.0.1.1 gpu-node-7 # docker\n"
            << "10.0.0.7 gpu-node-8\n";
        std::ofstream(dir.path() + "/meminfo") << "MemTotal: 1000000 kB\nMemAvailable: 800000 kB\n";
        env.hostname = "gpu-node-7";
        env.hostsFile = dir.path() + "/hosts";
        env.netClassDir = dir.path() + "/net";
        env.meminfoPath = dir.path() + "/meminfo";
        env.gpus = [](std::vector<std::string>* names, std::vector<int>* pids, std::string*) {
            for (int i = 0; i < 8; ++i) {
                names->push_back("NVIDIA H100 80GB HBM3");
            }
            pids->push_back(4242);
        };
        env.ncclGate = [](const std::vector<std::pair<std::string, std::string>>&, int min) {
            return std::make_pair(22803 >= min, std::string("selected libnccl 2.28.3"));
        };
        env.rayVersion = [](const std::string&) {
            return std::make_pair(true, std::string("ray, version 2.9.0"));
        };
        env.processes = [] {
            return std::vector<std::pair<int, std::string>>{{1, "init"}, {99, "raylet"}};
        };
    }
    testing::TempDir dir;
    PreflightEnvironment env;
};

TEST(Preflight, MultiNodeChecks) {
    Fixture f;
    v1::PreflightRequest req;
    req.set_expected_gpus(8);
    req.set_expected_gpu_model("H100");
    req.set_planned_peak_host_bytes(900000ull * 1024);  // more than available, less than total
    req.set_min_nccl_version_code(23007);
    req.set_multi_node(true);
    req.set_master_addr("127.0.0.1");
    (*req.mutable_env())["NCCL_SOCKET_IFNAME"] = "eth";
    (*req.mutable_env())["GLOO_SOCKET_IFNAME"] = "=ens5";
    req.add_required_paths(f.dir.path() + "/ckpt");
    req.add_required_paths(f.dir.path() + "/nope");
    req.add_checkpoint_dirs(f.dir.path() + "/ckpt/good");
    req.add_checkpoint_dirs(f.dir.path() + "/ckpt/bare");
    req.set_min_free_disk_bytes(1);
    req.set_disk_path(f.dir.path());
    const auto r = runPreflight(req, f.env);
    EXPECT_EQ(r.hostname(), "gpu-node-7");
    EXPECT_EQ(statusOf(r, "gpu.count"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "gpu.model"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "host.ram"), v1::CHECK_WARN);
    EXPECT_EQ(statusOf(r, "nccl.version"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "net.hosts"), v1::CHECK_FAIL) << "hostname on a 127.x line, multi-node";
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "disk.free"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "ray.installed"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "proc.stale_ray"), v1::CHECK_WARN);
    EXPECT_EQ(statusOf(r, "proc.stale_gpu"), v1::CHECK_WARN);
    auto all = checks(r);
    std::vector<v1::CheckStatus> ifnames, paths, ckpts;
    for (auto [it, end] = all.equal_range("net.ifname"); it != end; ++it) {
        ifnames.push_back(it->second.status());
    }
    for (auto [it, end] = all.equal_range("path.exists"); it != end; ++it) {
        paths.push_back(it->second.status());
    }
    for (auto [it, end] = all.equal_range("checkpoint.tracker"); it != end; ++it) {
        ckpts.push_back(it->second.status());
    }
    EXPECT_EQ(ifnames, (std::vector<v1::CheckStatus>{v1::CHECK_PASS, v1::CHECK_FAIL}));
    EXPECT_EQ(paths, (std::vector<v1::CheckStatus>{v1::CHECK_PASS, v1::CHECK_FAIL}));
    EXPECT_EQ(ckpts, (std::vector<v1::CheckStatus>{v1::CHECK_PASS, v1::CHECK_WARN}));
    for (const auto& c : r.checks()) {
        EXPECT_FALSE(c.message().empty()) << c.id();
    }
}

TEST(Preflight, SingleNodeAndMismatches) {
    Fixture f;
    f.env.hostname = "gpu-node-8";
    v1::PreflightRequest req;
    req.set_expected_gpus(16);
    req.set_expected_gpu_model("GB300");
    req.set_planned_peak_host_bytes(2000000ull * 1024);
    const auto r = runPreflight(req, f.env);
    EXPECT_EQ(statusOf(r, "gpu.count"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "gpu.model"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "host.ram"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "net.hosts"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_SKIP);
    EXPECT_EQ(statusOf(r, "nccl.version"), v1::CHECK_SKIP);
}

// issue 47: MASTER_ADDR set to this node's own hostname. net.master_addr used to warn "make sure
// it resolves to the LAN IP" even when net.master_addr.resolves proved it does; the rows agree
// now. A name that resolves to loopback or not at all keeps the warning (and the resolves FAIL).
TEST(Preflight, MasterAddrIsThisNodesHostnameAgreesWithItsResolution) {
    Fixture f;
    f.env.hostname = "gpu-node-8";
    std::vector<std::string> asked;
    Resolved answer;
    f.env.resolve = [&](const std::string& name) {
        asked.push_back(name);
        return answer;
    };
    v1::PreflightRequest req;
    req.set_multi_node(true);
    req.set_master_addr("gpu-node-8");
    auto message = [](const v1::PreflightReport& r, const std::string& id) {
        for (const auto& c : r.checks()) {
            if (c.id() == id) {
                return c.message();
            }
        }
        return std::string();
    };

    answer = Resolved{{"10.0.0.7"}, ""};
    auto r = runPreflight(req, f.env);
    EXPECT_EQ(asked, std::vector<std::string>{"gpu-node-8"}) << "resolved once, on this node";
    EXPECT_EQ(statusOf(r, "net.master_addr.resolves"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_PASS) << message(r, "net.master_addr");
    EXPECT_EQ(message(r, "net.master_addr"),
              "MASTER_ADDR=gpu-node-8 is this node's hostname and resolves to 10.0.0.7 on this "
              "node");
    ASSERT_EQ(r.master_addr_resolved_size(), 1);
    EXPECT_EQ(r.master_addr_resolved(0), "10.0.0.7");
    // The row order is unchanged: net.master_addr, then the resolution from this node.
    int masterRow = -1, resolvesRow = -1;
    for (int i = 0; i < r.checks_size(); ++i) {
        masterRow = r.checks(i).id() == "net.master_addr" ? i : masterRow;
        resolvesRow = r.checks(i).id() == "net.master_addr.resolves" ? i : resolvesRow;
    }
    EXPECT_LT(masterRow, resolvesRow);

    const std::string warning =
        "MASTER_ADDR=gpu-node-8 is this node's hostname; make sure it resolves to the LAN IP";
    answer = Resolved{{"127.0.1.1"}, ""};  // a hosts file mapping the name to loopback
    r = runPreflight(req, f.env);
    EXPECT_EQ(statusOf(r, "net.master_addr.resolves"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_WARN);
    EXPECT_EQ(message(r, "net.master_addr"), warning);

    answer = Resolved{{}, "Name or service not known"};
    r = runPreflight(req, f.env);
    EXPECT_EQ(statusOf(r, "net.master_addr.resolves"), v1::CHECK_FAIL);
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_WARN);
    EXPECT_EQ(message(r, "net.master_addr"), warning);

    // Loopback literals fail as before, without asking the resolver.
    asked.clear();
    for (const std::string loop : {"127.0.0.1", "localhost"}) {
        req.set_master_addr(loop);
        r = runPreflight(req, f.env);
        EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_FAIL) << loop;
        EXPECT_EQ(message(r, "net.master_addr"),
                  "MASTER_ADDR=" + loop + " is a loopback address; other nodes cannot reach it");
        EXPECT_EQ(statusOf(r, "net.master_addr.resolves"), v1::CHECK_STATUS_UNSPECIFIED);
    }
    EXPECT_TRUE(asked.empty());

    // Another node's hostname: not this node's, so no hostname warning either way.
    req.set_master_addr("gpu-node-1");
    answer = Resolved{{"10.0.0.1"}, ""};
    r = runPreflight(req, f.env);
    EXPECT_EQ(statusOf(r, "net.master_addr"), v1::CHECK_PASS);
    EXPECT_EQ(statusOf(r, "net.master_addr.resolves"), v1::CHECK_PASS);
}

TEST(Preflight, LoopbackHostnames) {
    const auto names =
        loopbackHostnames("127.0.0.1 localhost a\n# 127.0.0.1 c\n10.0.0.1 b\n::1 ip6-localhost\n");
    EXPECT_EQ(names, (std::vector<std::string>{"localhost", "a", "ip6-localhost"}));
}

TEST(Ray, StartArgvAndStatusParsing) {
    v1::RayStartRequest head;
    head.set_head(true);
    head.set_node_ip("10.0.0.1");
    head.set_num_gpus(8);
    head.set_dashboard_port(8265);
    auto a = rayStartArgv(head);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(*a, (std::vector<std::string>{"ray", "start", "--head", "--port=6379",
                                            "--dashboard-port=8265", "--node-ip-address=10.0.0.1",
                                            "--num-gpus=8", "--disable-usage-stats"}));
    v1::RayStartRequest worker;
    worker.set_head_address("10.0.0.1:6379");
    worker.set_num_gpus(8);
    ASSERT_TRUE(rayStartArgv(worker).ok());
    worker.set_head_address("");
    EXPECT_FALSE(rayStartArgv(worker).ok());
    worker.set_head_address("10.0.0.1:6379");
    worker.set_node_ip("10.0.0.2; rm -rf /");
    EXPECT_FALSE(rayStartArgv(worker).ok());

    const std::string status =
        "======== Autoscaler status: 2024-01-01 ========\n"
        "Node status\n"
        "---------------------------------------------------------------\n"
        "Active:\n"
        " 1 node_5e6f7a\n"
        " 1 node_8b9c0d\n"
        "Pending:\n"
        " (no pending nodes)\n"
        "Recent failures:\n"
        " (no failures)\n\n"
        "Resources\n"
        "---------------------------------------------------------------\n"
        "Usage:\n"
        " 0.0/256.0 CPU\n"
        " 0.0/16.0 GPU\n"
        " 0B/1.50TiB memory\n";
    v1::RayClusterStatus st;
    parseRayStatus(status, &st);
    EXPECT_EQ(st.alive_nodes(), 2u);
    EXPECT_DOUBLE_EQ(st.gpus_total(), 16.0);
}

}  // namespace
}  // namespace runplane::agent

namespace runplane::agent {
namespace {

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// issue 47: Ray's version from the installed package's metadata (no Python start), cached, and
// read again when the package changes; `ray --version` only where no metadata exists.
TEST(RayVersion, ReadFromTheInstalledPackagesMetadata) {
    runplane::testing::TempDir dir("runplane-rayver");
    const std::filesystem::path venv = dir.path() + "/venv";
    const auto site = venv / "lib/python3.11/site-packages";
    // The script is never run: it would fail loudly if it were.
    writeText(venv / "bin/ray", "#!" + (venv / "bin/python3").string() + "\nexit 3\n");
    std::filesystem::permissions(venv / "bin/ray", std::filesystem::perms::owner_all);
    writeText(site / "ray-2.60.0.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: ray\nVersion: 2.60.0\nSummary: Ray\n");
    const std::string path = (venv / "bin").string() + ":/usr/bin:/bin";

    const auto first = rayVersionOnPath(path);
    EXPECT_TRUE(first.ok) << first.message;
    EXPECT_EQ(first.message, (venv / "bin/ray").string() + ": ray, version 2.60.0");
    EXPECT_EQ(first.source.rfind("metadata ", 0), 0u) << first.source;

    // An upgrade replaces the dist-info directory: the cache notices.
    std::filesystem::rename(site / "ray-2.60.0.dist-info", site / "ray-2.61.0.dist-info");
    writeText(site / "ray-2.61.0.dist-info/METADATA", "Name: ray\nVersion: 2.61.0\n");
    EXPECT_EQ(rayVersionOnPath(path).message,
              (venv / "bin/ray").string() + ": ray, version 2.61.0");

    // No ray on PATH.
    const auto none = rayVersionOnPath("/nonexistent-dir");
    EXPECT_FALSE(none.ok);
    EXPECT_NE(none.message.find("ray not found on PATH=/nonexistent-dir"), std::string::npos);
}

// issue 47: the raylet's own command line says which cluster this node joined.
TEST(RayVersion, RayletArgumentsNameItsClusterInEitherSpelling) {
    const auto dashes =
        parseRayletArgs({"/venv/lib/python3.11/site-packages/ray/core/src/ray/raylet/raylet",
                         "--node_ip_address=198.18.0.12", "--gcs-address=198.18.0.11:6379",
                         "--cluster-id", "4f2a", "--num_cpus=2"});
    EXPECT_EQ(dashes.gcs_address(), "198.18.0.11:6379");
    EXPECT_EQ(dashes.node_ip(), "198.18.0.12");
    EXPECT_EQ(dashes.cluster_id(), "4f2a");
    const auto underscores = parseRayletArgs(
        {"raylet", "--gcs_address", "198.19.2.3:6380", "--node-ip-address=198.19.2.4"});
    EXPECT_EQ(underscores.gcs_address(), "198.19.2.3:6380");
    EXPECT_EQ(underscores.node_ip(), "198.19.2.4");
    EXPECT_EQ(underscores.cluster_id(), "");
}

TEST(RayVersion, FallsBackToRunningRayWithoutMetadata) {
    runplane::testing::TempDir dir("runplane-rayver");
    const std::filesystem::path bin = dir.path() + "/bin";
    writeText(bin / "ray", "#!/bin/sh\necho 'ray, version 9.9.9'\n");
    std::filesystem::permissions(bin / "ray", std::filesystem::perms::owner_all);
    const auto answer = rayVersionOnPath(bin.string());
    EXPECT_TRUE(answer.ok) << answer.message;
    EXPECT_EQ(answer.message, (bin / "ray").string() + ": ray, version 9.9.9");
    EXPECT_EQ(answer.source, "ray --version");
}

}  // namespace
}  // namespace runplane::agent
