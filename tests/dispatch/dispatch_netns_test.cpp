// issue 47: dispatch across hosts that are hosts. Three network namespaces on one bridge
// (tests/support/netns_hosts.h), each with its own 198.18.0.0/15 address, hostname, hosts file and
// process table, one runplaned per host secured as `runplanectl cluster init` makes it (TLS with
// client certificates and a token: the daemons listen off loopback). Real Ray from PyPI (the
// ray_venv fixture) is brought up across the interfaces: the head on host 1, workers on hosts 2
// and 3, each with --node-ip-address = its own address. Checked: preflight passes on every host
// without an override (MASTER_ADDR is the head's LAN address, NCCL_SOCKET_IFNAME names an
// interface that exists there, no stale Ray is seen through the PID namespaces); the job places a
// task on every host's declared GPU; a host whose link is cut reads "daemon lost" while the run
// goes on, and reads reachable again when the link is back; stop tears the run and Ray down.
// Needs root (CI runs as root); skipped with the reason elsewhere.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "backend/control/dispatch.h"
#include "backend/control/dispatch_membership.h"
#include "tests/dispatch/netns_cluster.h"
#include "tests/dispatch/node_process.h"
#include "tests/dispatch/ray_test_support.h"
#include "tests/support/netns_hosts.h"

using namespace runplane::control;
using namespace runplane::dispatch_testing;
using runplane::testing::NetnsHosts;

TEST(NetnsHosts, ThreeHostsRealRayAcrossInterfacesWithALinkCut) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray"))
        << venv << "/bin/ray is missing: the ray_venv fixture (scripts/setup-ray-venv.sh) makes it";
    const std::string source = envOr("RUNPLANE_SOURCE_DIR", ".");

    // Three hosts, one daemon each, secured as `runplanectl cluster init` makes them.
    SecuredHosts c(3);
    const std::map<std::string, std::string> env{{"PATH", venv + "/bin:/usr/bin:/bin"},
                                                 {"RAY_USAGE_STATS_ENABLED", "0"},
                                                 {"NCCL_SOCKET_IFNAME", NetnsHosts::kInterface},
                                                 {"GLOO_SOCKET_IFNAME", NetnsHosts::kInterface}};
    std::string error;
    ASSERT_TRUE(c.start(env, &error)) << error;
    NetnsHosts& hosts = c.hosts;
    const auto& daemons = c.daemons;
    const NodeClientOptions& client = c.client;
    for (int i = 0; i < hosts.count(); ++i) {
        // The daemon bound the host's own address, not loopback.
        EXPECT_EQ(daemons[static_cast<std::size_t>(i)]->address().rfind(hosts.ip(i) + ":", 0), 0u)
            << daemons[static_cast<std::size_t>(i)]->address();
    }

    LaunchRequest r;
    r.head = daemons[0]->address();
    r.workers = {daemons[1]->address(), daemons[2]->address()};
    r.gpusPerNode = 1;
    r.rayPort = 6379;  // each host has its own port space: the default port, as users run it
    r.clusterTimeout = std::chrono::seconds(180);
    r.pollInterval = std::chrono::milliseconds(500);
    r.preflight.expectedGpus = 0;  // --no-gpu daemons: Ray is told about GPUs that do not exist
    r.preflight.multiNode = true;
    r.preflight.masterAddr = hosts.ip(0);
    r.preflight.env = env;
    r.client = client;
    r.run.runId = runplane::RunId{"netns-run-1"};
    r.run.argv = {venv + "/bin/python", source + "/tests/dispatch/ray_job.py"};
    r.run.env = env;

    std::vector<DispatchEvent> progress;
    const auto result = launchMultiNode(r, [&](const DispatchEvent& e) {
        if (!e.done) {
            progress.push_back(e);
        }
    });
    if (!result.launched) {
        for (const auto& d : daemons) {
            ADD_FAILURE() << d->address() << " stderr:\n" << d->stderrText();
        }
    }
    ASSERT_TRUE(result.launched) << result.error << "\n" << formatPreflightTable(result.preflight);
    EXPECT_FALSE(result.preflightOverridden);
    EXPECT_TRUE(result.preflight.failures().empty()) << formatPreflightTable(result.preflight);
    ASSERT_EQ(result.preflight.rows.size(), 3u);
    for (const auto& row : result.preflight.rows) {
        for (const char* id : {"net.ifname", "net.master_addr", "net.hosts", "proc.stale_ray"}) {
            const auto* check = row.find(id);
            ASSERT_NE(check, nullptr) << row.address << " " << id;
            EXPECT_EQ(check->status, CheckState::Pass) << row.address << " " << check->message;
        }
    }
    ASSERT_FALSE(progress.empty());
    EXPECT_NE(progress.back().message.find("3/3 GPUs"), std::string::npos)
        << progress.back().message;

    // The job ran on all three hosts, each seen by Ray at its own interface address.
    std::string out;
    ASSERT_TRUE(waitFor(
        [&] {
            out = stdoutOf(r.head, r.run.runId.value(), client);
            return out.find("eval 3:") != std::string::npos;
        },
        std::chrono::seconds(120)))
        << out;
    EXPECT_NE(
        out.find("placed 3 tasks on nodes " + hosts.ip(0) + "," + hosts.ip(1) + "," + hosts.ip(2)),
        std::string::npos)
        << out;
    EXPECT_NE(out.find("env ACTOR_NUM_NODES=3 ACTOR_NUM_GPUS_PER_NODE=1"), std::string::npos)
        << out;

    // Host 3's cable cut: its daemon is lost, the run on the head goes on.
    ASSERT_TRUE(hosts.setLinkUp(2, false)) << hosts.error();
    NodeClientOptions quick = client;
    quick.callTimeout = std::chrono::seconds(5);
    const auto cut = preflightAll({r.head, r.workers[0], r.workers[1]}, r.preflight, quick);
    ASSERT_EQ(cut.rows.size(), 3u);
    EXPECT_TRUE(cut.rows[0].reachable);
    EXPECT_TRUE(cut.rows[1].reachable);
    EXPECT_FALSE(cut.rows[2].reachable);
    ASSERT_NE(cut.rows[2].find("daemon"), nullptr);
    EXPECT_NE(cut.rows[2].find("daemon")->message.find("daemon lost"), std::string::npos)
        << cut.rows[2].find("daemon")->message;
    EXPECT_NE(cut.rows[2].find("daemon")->message.find(hosts.ip(2)), std::string::npos)
        << "the lost row names the host";
    EXPECT_EQ(runState(r.head, r.run.runId.value(), client), NodeRunState::Running);

    // The link back: the same daemon answers again (it never stopped).
    ASSERT_TRUE(hosts.setLinkUp(2, true)) << hosts.error();
    EXPECT_TRUE(waitFor(
        [&] {
            const auto back = preflightAll({r.workers[1]}, r.preflight, quick);
            return back.rows.size() == 1 && back.rows[0].reachable;
        },
        std::chrono::seconds(30)));

    // Stop: the run, then Ray on every host (each host's `ray stop` sees only its own processes).
    StopRequest s;
    s.head = r.head;
    s.workers = r.workers;
    s.runId = r.run.runId.value();
    s.graceSeconds = 5;
    s.force = true;
    s.client = client;
    const auto stopped = stopMultiNode(s);
    EXPECT_TRUE(stopped.ok) << (stopped.errors.empty() ? "" : stopped.errors.front());
    EXPECT_EQ(runState(r.head, r.run.runId.value(), client), NodeRunState::Stopped);
    const auto status = rayStatus(r.head, s.client);
    ASSERT_TRUE(status.ok()) << status.error();
    EXPECT_FALSE(status->reachable) << status->raw;
}

namespace {

std::map<std::string, std::string> rayEnv(const std::string& venv) {
    return {{"PATH", venv + "/bin:/usr/bin:/bin"},
            {"RAY_USAGE_STATS_ENABLED", "0"},
            {"NCCL_SOCKET_IFNAME", NetnsHosts::kInterface},
            {"GLOO_SOCKET_IFNAME", NetnsHosts::kInterface}};
}

// `ray start` through host i's daemon on host i's address, Ray's token auth off: a head on port
// when headAddress is empty, else a worker joining headAddress. A start that fails fails the test
// (call it inside ASSERT_NO_FATAL_FAILURE).
void startRayOn(SecuredHosts& c, int i, const std::string& headAddress, int port = 6379) {
    RayStartSpec spec;
    spec.head = headAddress.empty();
    spec.nodeIp = c.hosts.ip(i);
    if (spec.head) {
        spec.port = port;
    } else {
        spec.headAddress = headAddress;
    }
    spec.env = {{"RAY_AUTH_MODE", "disabled"}};
    const auto started = rayStart(c.daemons[i]->address(), spec, c.client);
    ASSERT_TRUE(started.ok()) << started.error();
    ASSERT_EQ(started->exitCode, 0) << started->output;
}

// From the controller (the root namespace, on the bridge): does host:port accept a connection?
bool answersFromController(const std::string& ip, int port) {
    return runplane::testing::runCommand(
               {"bash", "-c",
                "exec 3<>/dev/tcp/" + ip + "/" + std::to_string(port) + " 2>/dev/null"},
               nullptr) == 0;
}

}  // namespace

// issue 47, "a foreign Ray head started on the head's port before bring-up": another container
// with host networking on the head host (its own PID namespace, so the head's daemon sees no
// raylet of it) runs a Ray head on the port this run asked for. Ray's own `ray start --head`
// would connect to that GCS and die on an assertion about session names; workers told the address
// would join the stranger. Dispatch refuses before starting anything, naming the port that
// answers, and leaves the stranger alone.
TEST(NetnsHosts, ForeignRayHeadOnTheHeadsPortIsRefusedBeforeBringUp) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray")) << venv << "/bin/ray is missing";
    SecuredHosts c(2);
    const auto env = rayEnv(venv);
    std::string error;
    ASSERT_TRUE(c.start(env, &error)) << error;
    const std::string headIp = c.hosts.ip(0);

    // The stranger: `ray start --head --block` in a second container of host 1.
    auto stranger = runplane::testing::Child::spawn(
        c.hosts.onHost(0,
                       {venv + "/bin/ray", "start", "--head", "--block", "--port=6379",
                        "--node-ip-address=" + headIp, "--num-cpus=1", "--include-dashboard=false"},
                       "stranger"),
        c.dir.path() + "/stranger.out", c.dir.path() + "/stranger.err",
        {"HOME=" + c.dir.path(), "RAY_AUTH_MODE=disabled", "RAY_USAGE_STATS_ENABLED=0",
         "PATH=" + venv + "/bin:/usr/bin:/bin"});
    ASSERT_TRUE(
        waitFor([&] { return answersFromController(headIp, 6379); }, std::chrono::seconds(120)))
        << stranger.stderrText();
    // The head's daemon cannot see it: no raylet in its process table.
    const auto seen = rayStatus(c.daemons[0]->address(), c.client, true);
    ASSERT_TRUE(seen.ok()) << seen.error();
    EXPECT_TRUE(seen->localRaylets.empty());

    LaunchRequest r;
    r.head = c.daemons[0]->address();
    r.workers = {c.daemons[1]->address()};
    r.gpusPerNode = 1;
    r.rayPort = 6379;
    r.clusterTimeout = std::chrono::seconds(60);
    r.preflight.expectedGpus = 0;
    r.preflight.multiNode = true;
    r.preflight.masterAddr = headIp;
    r.preflight.env = env;
    r.client = c.client;
    r.run.runId = runplane::RunId{"netns-foreign-head"};
    r.run.argv = {venv + "/bin/python", "-c", "print('never')"};
    r.run.env = env;
    const auto result = launchMultiNode(r);
    EXPECT_FALSE(result.launched);
    EXPECT_NE(result.error.find(headIp + ":6379 already answers"), std::string::npos)
        << result.error;
    EXPECT_NE(result.error.find("foreign Ray GCS"), std::string::npos) << result.error;
    ASSERT_FALSE(result.events.empty());
    EXPECT_EQ(result.events.back().step, DispatchStep::RayStartHead);
    EXPECT_FALSE(result.events.back().ok);
    for (const auto& e : result.events) {
        EXPECT_NE(e.step, DispatchStep::RayStartWorker) << "no worker was started";
    }
    // Nothing of ours was started on either host, and the stranger still runs.
    for (const auto& d : c.daemons) {
        const auto after = rayStatus(d->address(), c.client, true);
        ASSERT_TRUE(after.ok()) << after.error();
        EXPECT_TRUE(after->localRaylets.empty()) << d->address();
    }
    EXPECT_TRUE(stranger.running());
    EXPECT_TRUE(answersFromController(headIp, 6379));
}

// issue 47, "a worker namespace whose hostname maps to 127.0.0.1": host 2's /etc/hosts carries the
// Debian/container line that maps its own hostname to loopback. Preflight FAILs that host's row
// (multi-node) naming the hostname and the file, the other rows pass, and launch is refused with
// that host named before any Ray process starts.
TEST(NetnsHosts, HostnameMappedToLoopbackFailsThatHostsPreflightRow) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray")) << venv << "/bin/ray is missing";
    SecuredHosts c(3);
    ASSERT_TRUE(c.hosts.ok()) << c.hosts.error();
    ASSERT_TRUE(c.hosts.writeHostsFile(
        1, "127.0.0.1 localhost\n127.0.1.1 " + c.hosts.hostname(1) + "\n" + c.hosts.ip(0) + " " +
               c.hosts.hostname(0) + "\n" + c.hosts.ip(2) + " " + c.hosts.hostname(2) + "\n"));
    const auto env = rayEnv(venv);
    std::string error;
    ASSERT_TRUE(c.start(env, &error)) << error;

    PreflightSpec spec;
    spec.multiNode = true;
    spec.masterAddr = c.hosts.ip(0);
    spec.env = env;
    std::vector<std::string> all;
    for (const auto& d : c.daemons) {
        all.push_back(d->address());
    }
    const auto table = preflightAll(all, spec, c.client);
    ASSERT_EQ(table.rows.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto* hostsCheck = table.rows[i].find("net.hosts");
        ASSERT_NE(hostsCheck, nullptr) << table.rows[i].address;
        if (i == 1) {
            EXPECT_EQ(hostsCheck->status, CheckState::Fail) << formatPreflightTable(table);
            EXPECT_NE(hostsCheck->message.find("maps hostname " + c.hosts.hostname(1) +
                                               " to a loopback address"),
                      std::string::npos)
                << hostsCheck->message;
            EXPECT_NE(hostsCheck->detail.find("remove the hostname"), std::string::npos);
        } else {
            EXPECT_EQ(hostsCheck->status, CheckState::Pass) << formatPreflightTable(table);
        }
    }

    LaunchRequest r;
    r.head = all[0];
    r.workers = {all[1], all[2]};
    r.gpusPerNode = 1;
    r.preflight = spec;
    r.client = c.client;
    r.run.runId = runplane::RunId{"netns-loopback-hostname"};
    r.run.argv = {venv + "/bin/python", "-c", "print('never')"};
    r.run.env = env;
    const auto result = launchMultiNode(r);
    EXPECT_FALSE(result.launched);
    EXPECT_NE(result.error.find(all[1] + ": net.hosts"), std::string::npos) << result.error;
    for (const auto& e : result.events) {
        EXPECT_EQ(e.step, DispatchStep::Preflight) << "nothing past preflight";
    }
}

// issue 47: `runplanectl dispatch preflight` shows which Ray cluster each host's raylets belong
// to. Ray's head runs on host 1 and host 2 joined it; host 3 is in no cluster. The command runs
// as a user runs it (the built runplanectl, the files `cluster init` wrote), from the controller.
// Its output is the table docs/dispatch.md shows.
TEST(NetnsHosts, DispatchPreflightShowsWhichRayClusterEachHostIsIn) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray")) << venv << "/bin/ray is missing";
    SecuredHosts c(3);
    const auto env = rayEnv(venv);
    std::string error;
    ASSERT_TRUE(c.start(env, &error)) << error;
    const std::string headIp = c.hosts.ip(0);

    ASSERT_NO_FATAL_FAILURE(startRayOn(c, 0, ""));
    ASSERT_NO_FATAL_FAILURE(startRayOn(c, 1, headIp + ":6379"));

    // A three-node recipe whose MASTER_ADDR is the head's LAN address.
    std::string recipe = readFile(runplane::testing::sourceDir() + "/recipes/smoke-local.yaml");
    recipe.replace(recipe.find("nodes: 1"), 8, "nodes: 3");
    recipe.replace(recipe.find("master_addr: 127.0.0.1"), 22, "master_addr: " + headIp);
    recipe += "environment:\n  env:\n    PATH: " + venv + "/bin:/usr/bin:/bin\n";
    const std::string recipeFile = c.dir.path() + "/recipe.yaml";
    {
        std::ofstream out(recipeFile);
        out << recipe;
    }
    const std::string pki = c.dir.path() + "/pki";
    std::vector<std::string> argv{runplane::testing::builtBinary("backend/cli/runplanectl"),
                                  "dispatch",
                                  "preflight",
                                  "--recipe",
                                  recipeFile,
                                  "--tls-ca",
                                  pki + "/ca.pem",
                                  "--tls-cert",
                                  pki + "/client.pem",
                                  "--tls-key",
                                  pki + "/client.key",
                                  "--token-file",
                                  pki + "/token"};
    for (const auto& d : c.daemons) {
        argv.push_back(d->address());
    }
    std::string out;
    runplane::testing::runCommand(argv, &out);
    std::cout << "$ runplanectl dispatch preflight --recipe recipe.yaml --tls-ca ca.pem --tls-cert "
                 "client.pem --tls-key client.key --token-file token";
    for (const auto& d : c.daemons) {
        std::cout << " " << d->address();
    }
    std::cout << "\n" << out << std::endl;

    const std::string gcs = headIp + ":6379";
    ASSERT_NE(out.find("Ray membership"), std::string::npos) << out;
    // The membership lines are the last lines naming each daemon (the preflight table's first).
    const auto lastLineOf = [&out](const std::string& start) {
        const auto at = out.rfind("\n" + start);
        return at == std::string::npos ? std::string()
                                       : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    };
    EXPECT_NE(lastLineOf(c.daemons[0]->address()).find(headIp), std::string::npos) << out;
    EXPECT_NE(lastLineOf(c.daemons[0]->address()).find(gcs), std::string::npos) << out;
    EXPECT_NE(lastLineOf(c.daemons[1]->address()).find(c.hosts.ip(1)), std::string::npos) << out;
    EXPECT_NE(lastLineOf(c.daemons[1]->address()).find(gcs), std::string::npos) << out;
    EXPECT_NE(lastLineOf(c.daemons[2]->address()).find("no raylet"), std::string::npos) << out;
    EXPECT_NE(out.find("one Ray cluster: GCS " + gcs), std::string::npos) << out;
    // The recipe runs on CPUs (gpus_per_node 0): no node may fail for lacking "cpu GPUs".
    EXPECT_EQ(out.find("gpu.model: expected"), std::string::npos) << out;
    EXPECT_EQ(out.find("ray.installed: ray not found"), std::string::npos) << out;

    for (int i = 0; i < 2; ++i) {
        EXPECT_TRUE(
            rayStop(c.daemons[static_cast<std::size_t>(i)]->address(), true, c.client).ok());
    }
}

// issue 47, a raylet already running on the head host that its daemon sees (not only another
// head holding the port): (1) host 1's raylet is a member of a stranger's cluster, whose head
// runs on host 3 (a node left joined to another user's GCS); (2) after that is stopped, a stale
// head of an earlier run on host 1 at another port. Each time the launch is refused at the head
// step, naming the raylet, its GCS and the fix, before any worker starts; nothing is stopped.
TEST(NetnsHosts, RayletAlreadyOnTheHeadHostIsRefusedNamingItsCluster) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray")) << venv << "/bin/ray is missing";
    SecuredHosts c(3);
    const auto env = rayEnv(venv);
    std::string error;
    ASSERT_TRUE(c.start(env, &error)) << error;
    const std::string headIp = c.hosts.ip(0);
    const std::string strangerGcs = c.hosts.ip(2) + ":6379";

    ASSERT_NO_FATAL_FAILURE(startRayOn(c, 2, ""));           // the stranger's head
    ASSERT_NO_FATAL_FAILURE(startRayOn(c, 0, strangerGcs));  // host 1 joins it
    const auto seen = rayStatus(c.daemons[0]->address(), c.client, true);
    ASSERT_TRUE(seen.ok()) << seen.error();
    ASSERT_FALSE(seen->localRaylets.empty());
    EXPECT_EQ(seen->localRaylets.front().gcsAddress, strangerGcs);

    auto launch = [&](const std::string& runId) {
        LaunchRequest r;
        r.head = c.daemons[0]->address();
        r.workers = {c.daemons[1]->address()};
        r.gpusPerNode = 1;
        r.rayPort = 6379;
        r.clusterTimeout = std::chrono::seconds(60);
        r.preflight.expectedGpus = 0;
        r.preflight.multiNode = true;
        r.preflight.masterAddr = headIp;
        r.preflight.env = env;
        r.client = c.client;
        r.run.runId = runplane::RunId{runId};
        r.run.argv = {venv + "/bin/python", "-c", "print('never')"};
        r.run.env = env;
        return launchMultiNode(r);
    };
    auto refusedAtTheHead = [&](const DispatchResult& result) {
        EXPECT_FALSE(result.launched);
        EXPECT_EQ(result.error.rfind("head " + c.daemons[0]->address() + ": ", 0), 0u)
            << result.error;
        EXPECT_NE(result.error.find("ray stop --force"), std::string::npos) << result.error;
        ASSERT_FALSE(result.events.empty());
        EXPECT_EQ(result.events.back().step, DispatchStep::RayStartHead);
        EXPECT_FALSE(result.events.back().ok);
        for (const auto& e : result.events) {
            EXPECT_NE(e.step, DispatchStep::RayStartWorker) << "no worker was started";
        }
        const auto worker = rayStatus(c.daemons[1]->address(), c.client, true);
        ASSERT_TRUE(worker.ok()) << worker.error();
        EXPECT_TRUE(worker->localRaylets.empty());
    };

    // (1) a member of the stranger's cluster: another port would not help
    const auto foreign = launch("netns-foreign-raylet");
    refusedAtTheHead(foreign);
    EXPECT_NE(foreign.error.find("already belongs to the Ray cluster at GCS " + strangerGcs),
              std::string::npos)
        << foreign.error;
    EXPECT_NE(foreign.error.find("another Ray port does not help"), std::string::npos)
        << foreign.error;
    const auto still = rayStatus(c.daemons[0]->address(), c.client, true);
    ASSERT_TRUE(still.ok()) << still.error();
    EXPECT_FALSE(still->localRaylets.empty()) << "the stranger's raylet was left alone";

    // (2) a stale head of an earlier run on this host, on another port
    ASSERT_TRUE(rayStop(c.daemons[0]->address(), true, c.client).ok());
    ASSERT_TRUE(rayStop(c.daemons[2]->address(), true, c.client).ok());
    ASSERT_NO_FATAL_FAILURE(startRayOn(c, 0, "", 6380));
    const auto staleHead = launch("netns-stale-head");
    refusedAtTheHead(staleHead);
    EXPECT_NE(staleHead.error.find("a Ray head already runs on this host"), std::string::npos)
        << staleHead.error;
    EXPECT_NE(staleHead.error.find("GCS " + headIp + ":6380"), std::string::npos)
        << staleHead.error;
    EXPECT_TRUE(rayStop(c.daemons[0]->address(), true, c.client).ok());
}

// issue 47, "whether MASTER_ADDR is reachable from that host": each host's daemon asks its own
// kernel for a route to MASTER_ADDR. The head's LAN address is routed from every namespace host
// (the head's row says it is its own address); an address on none of their networks (TEST-NET-3,
// the hosts have no default route) FAILs every row with "no route", before anything starts.
TEST(NetnsHosts, MasterAddrWithoutARouteFromAHostFailsItsRow) {
    if (const std::string why = NetnsHosts::unavailableReason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const std::string venv = rayVenv();
    ASSERT_TRUE(std::filesystem::exists(venv + "/bin/ray")) << venv << "/bin/ray is missing";
    SecuredHosts c(3);
    std::string error;
    ASSERT_TRUE(c.start(rayEnv(venv), &error)) << error;
    std::vector<std::string> all;
    for (const auto& d : c.daemons) {
        all.push_back(d->address());
    }
    PreflightSpec spec;
    spec.multiNode = true;
    spec.env = rayEnv(venv);

    spec.masterAddr = c.hosts.ip(0);
    auto table = preflightAll(all, spec, c.client);
    ASSERT_EQ(table.rows.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto* m = table.rows[i].find("net.master_addr");
        ASSERT_NE(m, nullptr) << formatPreflightTable(table);
        EXPECT_EQ(m->status, CheckState::Pass) << m->message;
        EXPECT_NE(m->message.find(i == 0 ? "is an address of this node"
                                         : "routed from this node's " + c.hosts.ip(i)),
                  std::string::npos)
            << m->message;
    }

    spec.masterAddr = "203.0.113.7";
    table = preflightAll(all, spec, c.client);
    ASSERT_EQ(table.rows.size(), 3u);
    for (const auto& row : table.rows) {
        const auto* m = row.find("net.master_addr");
        ASSERT_NE(m, nullptr) << formatPreflightTable(table);
        EXPECT_EQ(m->status, CheckState::Fail) << m->message;
        EXPECT_NE(m->message.find("has no route from this node"), std::string::npos) << m->message;
    }
    std::cout << formatPreflightTable(table) << std::endl;
}
