// issue 43: process roles as a table, and memory by role from the real process table. The
// titled processes are real: `exec -a TITLE` puts the title in argv[0], exactly where SGLang's
// and vLLM's setproctitle and Ray's worker titles put it (/proc/PID/cmdline), and each holds a
// known number of written bytes. Titles are the frameworks' own: SGLang
// `setproctitle(f"sglang::scheduler{prefix}")` with prefix "_TP0" / "_DP1_TP3" and
// `setproctitle("sglang::detokenizer")`; vLLM `set_process_title("EngineCore")` /
// `("Worker", suffix="TP0")` with the default prefix "VLLM" ("VLLM::EngineCore"); Ray names an
// actor's process "ray::Class.method" and an idle worker "ray::IDLE".
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "backend/agent/process_roles.h"
#include "backend/agent/role_memory.h"
#include "backend/plan/role_budget.h"
#include "common/telemetry/series.h"
#include "tests/agent/daemon_process.h"
#include "tests/agent/titled_process.h"

namespace runplane::agent {
namespace {

using namespace testing;

std::string roleName(const RoleTable& t, int index) {
    return index < 0 ? std::string("(none)") : t.roles()[static_cast<std::size_t>(index)];
}

std::string ruleRole(const RoleTable& t, std::string_view cmdline, std::string_view comm = "") {
    const int rule = t.match(cmdline, comm);
    return rule < 0 ? std::string("(none)") : t.rules()[static_cast<std::size_t>(rule)].role;
}

TEST(RoleTable, BuiltinRowsClassifyTheFrameworksRealTitles) {
    const RoleTable& t = RoleTable::builtin();
    using namespace std::string_literals;
    struct Case {
        std::string cmdline, comm, role;
    };
    const std::vector<Case> cases = {
        {"ray::MegatronTrainRayActor.train\0\0\0"s, "ray::MegatronTr", "trainer"},
        {"ray::MegatronTrainRayActor"s, "python3", "trainer"},
        {"ray::FSDPTrainRayActor.train_step"s, "python", "trainer"},
        {"sglang::scheduler_TP0\0\0"s, "python3", "rollout"},
        {"sglang::scheduler_DP1_TP3"s, "python3", "rollout"},
        {"sglang::detokenizer"s, "python3", "rollout"},
        {"VLLM::EngineCore"s, "python3", "rollout"},
        {"VLLM::EngineCore_DP0"s, "python3", "rollout"},
        {"VLLM::Worker_TP1"s, "python3", "rollout"},
        {"ray::SGLangEngine.init"s, "python3", "rollout"},
        {"ray::VLLMEngine"s, "python3", "rollout"},
        {"ray::RolloutManager.generate"s, "python3", "rollout"},
        {"/opt/venv/bin/python3\0/opt/venv/bin/vllm\0serve\0/models/Qwen3-8B\0--port\0000"s, "vllm",
         "rollout"},
        {"python3\0-m\0sglang.launch_server\0--model-path\0/m"s, "python3", "rollout"},
        {"python3\0-m\0sglang_router.launch_router\0--worker-urls\0http://a:1"s, "python3",
         "router"},
        {"/usr/local/bin/vllm-router\0--policy\0consistent_hash"s, "vllm-router", "router"},
        {"ray::IDLE"s, "ray::IDLE", "ray"},
        {"/v/lib/python3.11/site-packages/ray/core/src/ray/raylet/raylet\0--raylet_socket_name=/tmp/r"s,
         "raylet", "ray"},
        {"/v/lib/python3.11/site-packages/ray/core/src/ray/gcs/gcs_server\0--gcs_server_port=6379"s,
         "gcs_server", "ray"},
        {"/v/bin/python3\0-u\0/v/lib/python3.11/site-packages/ray/dashboard/agent.py\0--node-ip-address=1.2.3.4"s,
         "python3", "ray"},
        {"/v/bin/python3\0/v/lib/python3.11/site-packages/ray/_private/workers/default_worker.py"s,
         "python3", "ray"},
        {"ray::JobSupervisor.run"s, "python3", "driver"},
        {"ray::SomeHelperActor.ping"s, "python3", "ray"},
        {"/usr/sbin/sshd\0-D"s, "sshd", "(none)"},
        {""s, "kworker/0:1", "(none)"},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(ruleRole(t, c.cmdline, c.comm), c.role) << printableTitle(c.cmdline);
    }
    // The raylet's row is the object store's.
    const int raylet = t.match("/x/raylet", "raylet");
    ASSERT_GE(raylet, 0);
    EXPECT_TRUE(t.rules()[static_cast<std::size_t>(raylet)].objectStore);
    EXPECT_EQ(t.roles(),
              (std::vector<std::string>{"trainer", "rollout", "router", "ray", "driver", "other"}));
}

TEST(RoleTable, SiteRowsComeFirstAndErrorsNameTheLine) {
    TempDir dir;
    const std::string path = dir.path() + "/roles.txt";
    std::ofstream(path) << "# my framework\n"
                           "trainer title ray::MyPolicyTrainer*\n"
                           "reward  cmdline *reward_server.py*\n"
                           "rollout title ray::MegatronTrainRayActor*\n"
                           "ray comm my-store object_store\n";
    auto t = RoleTable::load(path);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(ruleRole(*t, "ray::MyPolicyTrainer.step"), "trainer");
    EXPECT_EQ(ruleRole(*t, std::string("python\0/srv/reward_server.py", 28)), "reward");
    EXPECT_EQ(ruleRole(*t, "ray::MegatronTrainRayActor.train"), "rollout") << "site rows win";
    EXPECT_EQ(ruleRole(*t, "sglang::detokenizer"), "rollout") << "built-in rows follow";
    EXPECT_EQ(t->roles().back(), "reward");
    const int store = t->match("x", "my-store");
    ASSERT_GE(store, 0);
    EXPECT_TRUE(t->rules()[static_cast<std::size_t>(store)].objectStore);

    struct Bad {
        std::string text, error;
    };
    for (const auto& b : std::vector<Bad>{
             {"\n\nTrainer title x\n", "roles:3: role 'Trainer'"},
             {"trainer argv x\n", "roles:1: field 'argv' is not title, cmdline or comm"},
             {"trainer title\n", "roles:1: no pattern"},
             {"other title x*\n", "roles:1: 'other' is what no row matches"},
             {"a_very_long_role_name_over_thirty_two x title y\n", "roles:1: role"},
         }) {
        auto r = RoleTable::parse(b.text, "roles");
        ASSERT_FALSE(r.ok()) << b.text;
        EXPECT_NE(r.error().find(b.error), std::string::npos) << r.error();
    }
    auto missing = RoleTable::load(dir.path() + "/nope.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("nope.txt"), std::string::npos);
}

TEST(RoleSeries, RoleSeriesHaveTheirUnits) {
    namespace s = telemetry::series;
    using telemetry::Unit;
    EXPECT_EQ(s::sampledUnit(s::role("trainer", s::kRoleRss)), Unit::Bytes);
    EXPECT_EQ(s::sampledUnit("role.my_role2.pss_bytes"), Unit::Bytes);
    EXPECT_EQ(s::sampledUnit(s::role("ray", s::kRoleObjectStore)), Unit::Bytes);
    EXPECT_EQ(s::sampledUnit(s::role("rollout", s::kRoleUnreadable)), Unit::None);
    EXPECT_EQ(s::sampledUnit(s::roleEngineRss("4242")), Unit::Bytes);
    EXPECT_EQ(s::sampledUnit(s::gpuRoleMemUsed(3, "trainer")), Unit::Bytes);
    EXPECT_EQ(s::sampledUnit(s::kRolesScanSeconds), Unit::Seconds);
    EXPECT_EQ(s::sampledUnit("role.Trainer.rss_bytes"), std::nullopt);
    EXPECT_EQ(s::sampledUnit("role.trainer.bogus"), std::nullopt);
    EXPECT_EQ(s::sampledUnit("gpu.0.role.trainer.util_percent"), std::nullopt);
}

// One SGLang engine (its Ray actor with two schedulers and a detokenizer), one vLLM engine core,
// a Megatron train actor with a helper child whose title says nothing, a raylet-named process,
// and a run whose launcher matches no row: every process lands in its role, the engines are told
// apart, and each role's RSS holds the bytes its processes wrote.
TEST(RoleMemory, RealTitledProcessesLandInTheirRolesWithTheirMemory) {
    TempDir dir;
    const std::string d = dir.path();
    const std::string hold = writeHolder(d);
    Group sglang("exec -a 'ray::SGLangEngine' bash -c '(" +
                 holder(hold, "sglang::scheduler_TP0", 48, d + "/s0") + ") & (" +
                 holder(hold, "sglang::scheduler_TP1", 48, d + "/s1") + ") & (" +
                 holder(hold, "sglang::detokenizer", 8, d + "/s2") + ") & wait'");
    Group vllm(holder(hold, "VLLM::EngineCore", 40, d + "/v0"));
    Group trainer("exec -a 'ray::MegatronTrainRayActor.train' bash -c 'python3 " + hold + " 96 " +
                  d + "/t0 & python3 " + hold + " 16 " + d + "/t1 & wait'");
    Group launcher("python3 " + hold + " 24 " + d + "/d0 & wait");
    ASSERT_TRUE(
        waitFiles({d + "/s0", d + "/s1", d + "/s2", d + "/v0", d + "/t0", d + "/t1", d + "/d0"}));

    // `exec -a` replaced bash with bash: the group leader itself is the titled actor.
    ASSERT_EQ(titleOfPid(sglang.pid()), "ray::SGLangEngine");
    const pid_t s0 = findTitled(sglang.pid(), "sglang::scheduler_TP0");
    const pid_t s1 = findTitled(sglang.pid(), "sglang::scheduler_TP1");
    const pid_t s2 = findTitled(sglang.pid(), "sglang::detokenizer");
    ASSERT_TRUE(s0 > 0 && s1 > 0 && s2 > 0);
    const auto trainerKids = childrenOf(trainer.pid());
    ASSERT_EQ(trainerKids.size(), 2u);
    const auto launcherKids = childrenOf(launcher.pid());
    ASSERT_EQ(launcherKids.size(), 1u);

    RoleMemory rm(RoleTable::builtin());
    std::vector<pid_t> runPids{launcher.pid(), launcherKids[0]};
    const RoleMemorySample s = rm.sample(runPids);
    const RoleTable& t = rm.table();
    for (pid_t p : {sglang.pid(), s0, s1, s2, vllm.pid()}) {
        EXPECT_EQ(roleName(t, rm.roleOf(p)), "rollout") << titleOfPid(p);
    }
    for (pid_t p : {trainer.pid(), trainerKids[0], trainerKids[1]}) {
        EXPECT_EQ(roleName(t, rm.roleOf(p)), "trainer") << p << " " << titleOfPid(p);
    }
    for (pid_t p : {launcher.pid(), launcherKids[0]}) {
        EXPECT_EQ(roleName(t, rm.roleOf(p)), "driver") << p;
    }
    EXPECT_EQ(roleName(t, rm.roleOf(::getpid())), "other");
    // Engines: the SGLang actor and everything under it are one engine; vLLM's core another.
    for (pid_t p : {s0, s1, s2}) {
        EXPECT_EQ(rm.engineOf(p), sglang.pid());
    }
    EXPECT_EQ(rm.engineOf(vllm.pid()), vllm.pid());
    EXPECT_EQ(rm.engineOf(trainer.pid()), 0);

    auto usage = [&](std::string_view role) {
        return s.roles[static_cast<std::size_t>(t.roleIndex(role))];
    };
    const std::uint64_t mib = 1 << 20;
    // Lower bounds from the bytes written; other helpers' processes on this host may add more.
    EXPECT_GE(usage("rollout").rssBytes, (48 + 48 + 8 + 40) * mib);
    EXPECT_GE(usage("trainer").rssBytes, (96 + 16) * mib);
    EXPECT_GE(usage("driver").rssBytes, 24 * mib);
    EXPECT_GE(usage("rollout").processes, 5u);
    EXPECT_GE(usage("trainer").processes, 3u);
    // Our processes are ours to read: the trainer's PSS and swap are complete numbers, and PSS
    // of a process that wrote its pages privately is close to its RSS.
    EXPECT_EQ(usage("trainer").pssReadable + usage("trainer").unreadable,
              usage("trainer").processes);
    std::uint64_t ourRollout = 0;
    for (pid_t p : {sglang.pid(), s0, s1, s2, vllm.pid()}) {
        ourRollout += rssOf(p);
    }
    EXPECT_GE(usage("rollout").rssBytes, ourRollout * 95 / 100);
    std::uint64_t sglangRss = 0;
    for (const auto& [engine, rss] : s.engines) {
        if (engine == sglang.pid()) {
            sglangRss = rss;
        }
    }
    EXPECT_GE(sglangRss, (48 + 48 + 8) * mib);
    EXPECT_LT(sglangRss, (48 + 48 + 8 + 120) * mib);
    EXPECT_GT(s.scanned, 10u);
    EXPECT_EQ(s.skipped, 0u);

    // A later walk reuses the cached rows and sees the same roles.
    const RoleMemorySample again = rm.sample(runPids);
    EXPECT_EQ(roleName(t, rm.roleOf(s1)), "rollout");
    EXPECT_GE(again.roles[static_cast<std::size_t>(t.roleIndex("trainer"))].rssBytes,
              (96 + 16) * mib);
}

// Titles with bytes that are not text (0xff, control characters, a tab) are matched as bytes
// and never break the walk; a process of another user, whose smaps_rollup this daemon cannot
// read without CAP_SYS_PTRACE, is counted as unreadable instead of adding a wrong PSS.
TEST(RoleMemory, OddTitleBytesAndUnreadableSmapsRollup) {
    TempDir dir;
    const std::string d = dir.path();
    ::chmod(d.c_str(), 0777);
    const std::string hold = writeHolder(d);
    Group odd("exec -a $'ray::MegatronTrainRayActor\\xff\\x01\\t\\x7f\\xc3(' " + realPython() +
              " " + hold + " 0 " + d + "/odd");
    // Another user (nobody) cannot run the interpreter under /root: a titled `sleep` it is.
    Group other("touch " + d + "/other && exec -a sglang::detokenizer /bin/sleep 300",
                {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
    ASSERT_TRUE(waitFiles({d + "/odd", d + "/other"}));
    RoleMemory rm(RoleTable::builtin());
    const RoleMemorySample s = rm.sample({});
    const RoleTable& t = rm.table();
    EXPECT_EQ(roleName(t, rm.roleOf(odd.pid())), "trainer");
    EXPECT_EQ(roleName(t, rm.roleOf(other.pid())), "rollout");
    EXPECT_EQ(printableTitle(titleOfPid(odd.pid())),
              "ray::MegatronTrainRayActor?????"
              "(");

    auto unreadableFile = [](pid_t pid) {
        std::ifstream f("/proc/" + std::to_string(pid) + "/smaps_rollup");
        return !f || f.peek() == std::char_traits<char>::eof();
    };
    if (unreadableFile(other.pid())) {
        const RoleUsage& rollout = s.roles[static_cast<std::size_t>(t.roleIndex("rollout"))];
        EXPECT_GE(rollout.unreadable, 1u);
        EXPECT_LT(rollout.pssReadable, rollout.processes) << "the PSS sum is known to be partial";
        EXPECT_GE(rollout.rssBytes, rssOf(other.pid())) << "RSS (from stat) is still counted";
        return;
    }
    // With CAP_SYS_PTRACE another user's smaps_rollup is readable; a process outside this one's
    // reach may still not be (pid 1 of a container): give it a role of its own by a row on its
    // comm and check that it is counted as unreadable.
    std::string comm = slurp("/proc/1/comm");
    while (!comm.empty() && comm.back() == '\n') {
        comm.pop_back();
    }
    if (!unreadableFile(1) || comm.empty() || comm.find_first_of("*?[ ") != std::string::npos) {
        GTEST_SKIP() << "every smaps_rollup is readable here (CAP_SYS_PTRACE, no foreign pid 1)";
    }
    auto table = RoleTable::parse("init_probe comm " + comm + "\n", "test");
    ASSERT_TRUE(table.ok()) << table.error();
    table->append(RoleTable::builtin());
    RoleMemory probe(*table);
    const RoleMemorySample p = probe.sample({});
    const RoleUsage& init =
        p.roles[static_cast<std::size_t>(probe.table().roleIndex("init_probe"))];
    EXPECT_GE(init.processes, 1u);
    EXPECT_GE(init.unreadable, 1u);
    EXPECT_LT(init.pssReadable, init.processes) << "the PSS sum is known to be partial";
}

// A fake /proc: a stat that is garbage, a pid directory without files, a comm with ')' and
// spaces, and 10,000 entries: every one is accounted for (scanned, vanished) in bounded time,
// and a zero time budget skips instead of hanging.
TEST(RoleMemory, HostileProcTableIsCountedAndBounded) {
    // On tmpfs where there is one: 10,000 directories on a loaded overlay disk take minutes.
    std::string base = "/dev/shm/runplane-roles-" + std::to_string(::getpid());
    std::error_code ec;
    if (!std::filesystem::is_directory("/dev/shm") ||
        !std::filesystem::create_directories(base, ec)) {
        base = std::filesystem::temp_directory_path() /
               ("runplane-roles-" + std::to_string(::getpid()));
        std::filesystem::create_directories(base);
    }
    struct Cleanup {
        std::string path;
        ~Cleanup() {
            std::error_code e;
            std::filesystem::remove_all(path, e);
        }
    } cleanup{base};
    const std::string root = base + "/proc";
    std::filesystem::create_directories(root);
    auto put = [&](int pid, const std::string& file, const std::string& text) {
        std::filesystem::create_directories(root + "/" + std::to_string(pid));
        std::ofstream(root + "/" + std::to_string(pid) + "/" + file) << text;
    };
    auto stat = [](int pid, int ppid, const std::string& comm, int rssPages) {
        std::string s = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) +
                        " 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(1000 + pid) +
                        " 1000000 " + std::to_string(rssPages) + " 0 0\n";
        return s;
    };
    put(1, "stat", stat(1, 0, "init", 10));
    put(2, "stat", "garbage without parentheses");
    std::filesystem::create_directories(root + "/3");  // vanished: no files
    put(4, "stat", stat(4, 1, "a) (b c", 25));
    put(4, "cmdline", std::string("ray::MegatronTrainRayActor.train\0\0", 34));
    put(4, "status", "Name:\tx\nVmLck:\t   8 kB\nVmPin:\t4 kB\nVmSwap:\t  100 kB\n");
    put(4, "smaps_rollup", "00400000-7fff [rollup]\nRss:  100 kB\nPss:   60 kB\n");
    put(5, "stat", stat(5, 4, "child", 5));  // no cmdline: inherits the trainer
    put(6, "stat", stat(6, 1, "raylet", 7));
    put(6, "cmdline", std::string("/x/raylet\0--a\0", 14));
    put(6, "status", "VmSwap:\t0 kB\nRssShmem:\t  2048 kB\n");
    put(6, "smaps_rollup", "Pss: 12 kB\n");
    std::filesystem::create_directories(root + "/self");
    RoleMemory rm(RoleTable::builtin(), RoleMemoryOptions{.procRoot = root});
    const RoleMemorySample s = rm.sample({});
    const RoleTable& t = rm.table();
    EXPECT_EQ(s.scanned, 4u);
    EXPECT_EQ(s.vanished, 2u);
    EXPECT_EQ(roleName(t, rm.roleOf(4)), "trainer");
    EXPECT_EQ(roleName(t, rm.roleOf(5)), "trainer");
    EXPECT_EQ(roleName(t, rm.roleOf(6)), "ray");
    EXPECT_EQ(roleName(t, rm.roleOf(1)), "other");
    const long page = ::sysconf(_SC_PAGESIZE);
    const RoleUsage& tr = s.roles[static_cast<std::size_t>(t.roleIndex("trainer"))];
    EXPECT_EQ(tr.processes, 2u);
    EXPECT_EQ(tr.rssBytes, 30u * static_cast<std::uint64_t>(page));
    EXPECT_EQ(tr.pssBytes, 60u * 1024);
    EXPECT_EQ(tr.swapBytes, 100u * 1024);
    EXPECT_EQ(tr.lockedBytes, 12u * 1024);
    EXPECT_EQ(tr.unreadable, 1u) << "pid 5 has neither status nor smaps_rollup";
    const RoleUsage& ray = s.roles[static_cast<std::size_t>(t.roleIndex("ray"))];
    EXPECT_EQ(ray.objectStoreBytes, 2048u * 1024);
    EXPECT_EQ(ray.objectStoreProcesses, 1u);

    for (int pid = 100; pid < 10100; ++pid) {
        put(pid, "stat", stat(pid, pid - 1, "w", 1));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const RoleMemorySample big = rm.sample({});
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(big.scanned + big.vanished + big.skipped, 10006u);
    EXPECT_LT(secs, 5.0);
    // A chain 10,000 deep: the parent walk stops at its bound, every process still gets a role.
    for (int pid : {100, 5000, 10099}) {
        EXPECT_GE(rm.roleOf(pid), 0) << pid;
    }
    RoleMemory hurried(
        RoleTable::builtin(),
        RoleMemoryOptions{.procRoot = root, .timeBudget = std::chrono::milliseconds(0)});
    const RoleMemorySample cut = hurried.sample({});
    EXPECT_GT(cut.skipped, 0u);
    EXPECT_EQ(cut.scanned + cut.vanished + cut.skipped, 10006u);
    RoleMemory capped(RoleTable::builtin(),
                      RoleMemoryOptions{.procRoot = root, .maxProcesses = 100});
    EXPECT_EQ(capped.sample({}).skipped, 10006u - 100u);
    RoleMemory missing(RoleTable::builtin(), RoleMemoryOptions{.procRoot = root + "/none"});
    EXPECT_EQ(missing.sample({}).scanned, 0u);
}

// Processes that exit while the table is walked (a shell starting and reaping short-lived
// children as fast as it can): every walk completes, and its counts add up.
TEST(RoleMemory, ProcessesVanishingMidWalk) {
    Group churn(
        "while :; do for i in 1 2 3 4 5 6 7 8; do (exec -a sglang::scheduler_TP$i true) & "
        "done; wait; done");
    RoleMemory rm(RoleTable::builtin());
    std::size_t vanished = 0;
    for (int i = 0; i < 40; ++i) {
        const RoleMemorySample s = rm.sample({});
        vanished += s.vanished;
        std::uint64_t processes = 0;
        for (const auto& u : s.roles) {
            processes += u.processes;
            EXPECT_LE(u.pssReadable, u.processes);
            EXPECT_LE(u.unreadable, u.processes);
        }
        EXPECT_LE(processes, s.scanned);
    }
    RecordProperty("vanished", static_cast<int>(vanished));
}

// issue 43's acceptance: a run whose trainer keeps its backup during train raises the
// two-backups alarm, one that drops it does not. Real processes with the frameworks' titles hold
// the bytes (the trainer actor its backup or not, an SGLang scheduler the engines' mirror); the
// daemon's walk classifies them; the plan of one node (a trainer rank and an engine GPU, 24 MiB
// of runtime per process, a 96 MiB trainer backup in rollout, a 64 MiB engine mirror in train)
// gives the thresholds.
plan::NodeMemory smallNode() {
    using plan::Component;
    using plan::Phase;
    const double mib = 1 << 20;
    plan::NodeMemory n;
    n.node = 7;
    n.trainerRanks = 1;
    n.engineGpus = 1;
    for (Phase p : plan::kPhases) {
        n.phases[std::size_t(p)].add(Component::ProcessRuntime, 2, 24 * mib);
    }
    n.phases[std::size_t(Phase::Rollout)].add(Component::TrainerBackup, 1, 96 * mib);
    n.phases[std::size_t(Phase::Train)].add(Component::EngineMirror, 1, 64 * mib);
    return n;
}

std::vector<plan::RoleAlarm> alarmsDuringTrain(int trainerMib) {
    TempDir dir;
    const std::string d = dir.path();
    const std::string hold = writeHolder(d);
    Group trainer(holder(hold, "ray::MegatronTrainRayActor.train", trainerMib, d + "/t"));
    Group engine(holder(hold, "sglang::scheduler_TP0", 64, d + "/e"));
    EXPECT_TRUE(waitFiles({d + "/t", d + "/e"}));
    RoleMemory rm(RoleTable::builtin());
    rm.sample({});
    const RoleTable& t = rm.table();
    EXPECT_EQ(roleName(t, rm.roleOf(trainer.pid())), "trainer");
    EXPECT_EQ(roleName(t, rm.roleOf(engine.pid())), "rollout");
    // This node's run is these two processes (other tests may run titled processes here too).
    plan::RoleMeasured m;
    m.trainer = static_cast<double>(rssOf(trainer.pid()));
    m.rollout = static_cast<double>(rssOf(engine.pid()));
    return plan::roleAlarms(smallNode(), plan::Phase::Train, m);
}

bool hasKind(const std::vector<plan::RoleAlarm>& alarms, const std::string& kind) {
    for (const auto& a : alarms) {
        if (a.kind == kind) {
            return true;
        }
    }
    return false;
}

TEST(RoleAlarms, TrainerKeepingItsBackupDuringTrainIsTwoBackups) {
    const auto kept = alarmsDuringTrain(96);
    ASSERT_TRUE(hasKind(kept, "two_backups"));
    for (const auto& a : kept) {
        if (a.kind == "two_backups") {
            EXPECT_NE(a.message.find("during train both the trainer backup"), std::string::npos)
                << a.message;
            EXPECT_NE(a.message.find("resident on node 7: two backups"), std::string::npos)
                << a.message;
        }
    }
    const auto dropped = alarmsDuringTrain(4);
    EXPECT_FALSE(hasKind(dropped, "two_backups"));
    for (const auto& a : dropped) {
        ADD_FAILURE() << "unexpected alarm: " << a.message;
    }
}

std::vector<v1::TelemetryRecord> watch(
    v1::Agent::Stub& stub,
    const std::function<bool(const std::vector<v1::TelemetryRecord>&)>& enough,
    std::chrono::seconds timeout = std::chrono::seconds(30)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    auto reader = stub.WatchTelemetry(&ctx, {});
    std::vector<v1::TelemetryRecord> out;
    v1::TelemetryBatch batch;
    while (reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            out.push_back(r);
        }
        if (enough(out)) {
            ctx.TryCancel();
            break;
        }
    }
    reader->Finish();
    return out;
}

const v1::Sample* last(const std::vector<v1::TelemetryRecord>& rs, const std::string& series) {
    const v1::Sample* found = nullptr;
    for (const auto& r : rs) {
        if (r.has_sample() && r.sample().series() == series) {
            found = &r.sample();
        }
    }
    return found;
}

// The real daemon: role series on the telemetry stream (a site's own role from --role-table
// among them), and NVML's per-process GPU memory summed by role. NVML is the tests' fake
// libnvidia-ml.so.1 (tests/compute/fake_nvml.cpp), told through FAKE_NVML_GPU0_PIDS that GPU 0's
// three processes (1, 2 and 3 GiB) are a train actor, a vLLM worker and an untitled process.
TEST(RoleTelemetry, DaemonSendsRoleSeriesAndGpuMemoryByRole) {
    const std::string fake =
        std::string(std::getenv("RUNPLANE_BINARY_DIR")) + "/tests/compute/fake_nvml/1";
    ASSERT_TRUE(std::filesystem::exists(fake + "/libnvidia-ml.so.1")) << fake;
    TempDir dir;
    const std::string d = dir.path();
    const std::string hold = writeHolder(d);
    Group trainer(holder(hold, "ray::MegatronTrainRayActor.train", 32, d + "/t"));
    Group worker(holder(hold, "VLLM::Worker_TP0", 8, d + "/w"));
    Group plain(holder(hold, "python3", 1, d + "/p"));
    Group reward(holder(hold, "my::reward_server", 4, d + "/r"));
    ASSERT_TRUE(waitFiles({d + "/t", d + "/w", d + "/p", d + "/r"}));
    std::ofstream(d + "/roles.txt") << "reward title my::reward*\n";

    const std::string pids = std::to_string(trainer.pid()) + "," + std::to_string(worker.pid()) +
                             "," + std::to_string(plain.pid());
    const char* old = std::getenv("LD_LIBRARY_PATH");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("LD_LIBRARY_PATH", fake.c_str(), 1);  // inherited by the daemon we spawn
    ::setenv("FAKE_NVML_GPU0_PIDS", pids.c_str(), 1);
    DaemonProcess daemon(d + "/state", {"--sample-hz", "2", "--role-table", d + "/roles.txt"},
                         "127.0.0.1:0", true);
    if (old != nullptr) {
        ::setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
    } else {
        ::unsetenv("LD_LIBRARY_PATH");
    }
    ::unsetenv("FAKE_NVML_GPU0_PIDS");
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    auto stub = agentStub(daemon);
    const auto rs = watch(*stub, [](const auto& v) {
        return last(v, "gpu.0.role.trainer.mem.used_bytes") != nullptr &&
               last(v, "role.reward.rss_bytes") != nullptr;
    });
    const double gib = 1024.0 * 1024 * 1024;
    const v1::Sample* gt = last(rs, "gpu.0.role.trainer.mem.used_bytes");
    const v1::Sample* gr = last(rs, "gpu.0.role.rollout.mem.used_bytes");
    const v1::Sample* go = last(rs, "gpu.0.role.other.mem.used_bytes");
    ASSERT_TRUE(gt != nullptr && gr != nullptr && go != nullptr);
    EXPECT_EQ(gt->value(), 1 * gib);
    EXPECT_EQ(gr->value(), 2 * gib);
    EXPECT_EQ(go->value(), 3 * gib);
    EXPECT_EQ(gt->unit(), v1::UNIT_BYTES);
    const v1::Sample* rss = last(rs, "role.trainer.rss_bytes");
    ASSERT_NE(rss, nullptr);
    EXPECT_GE(rss->value(), 32.0 * (1 << 20));
    EXPECT_EQ(rss->unit(), v1::UNIT_BYTES);
    const v1::Sample* rewardRss = last(rs, "role.reward.rss_bytes");
    ASSERT_NE(rewardRss, nullptr);
    EXPECT_GE(rewardRss->value(), 4.0 * (1 << 20));
    ASSERT_NE(last(rs, "role.rollout.processes"), nullptr);
    EXPECT_GE(last(rs, "role.rollout.processes")->value(), 1);
    ASSERT_NE(last(rs, "roles.scanned"), nullptr);
    EXPECT_GT(last(rs, "roles.scanned")->value(), 4);
    for (const auto& r : rs) {
        if (r.has_sample() && r.sample().series().rfind("role.", 0) == 0) {
            EXPECT_TRUE(r.run_id().empty()) << r.sample().series();
        }
    }
}

TEST(RoleTelemetry, ABadRoleTableStopsTheDaemonNamingTheLine) {
    TempDir dir;
    std::ofstream(dir.path() + "/roles.txt") << "# ok\ntrainer title ray::T*\nTrainer argv x\n";
    std::string out;
    const int rc = runCommand({daemonBinary(), "--state-dir", dir.path() + "/state", "--listen",
                               "127.0.0.1:0", "--role-table", dir.path() + "/roles.txt"},
                              &out);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("--role-table: " + dir.path() + "/roles.txt:3: role 'Trainer'"),
              std::string::npos)
        << out;
}

// Ray's pooled worker starts as "ray::IDLE" and takes an actor's title later, in place (Ray's
// setproctitle rewrites the argv area; same pid, same start time). This process does the same
// with ctypes: the walk must see the new title at its next full read, not keep `ray` forever.
// And between full reads a known `other` process is not read at all (its last RSS counts).
TEST(RoleMemory, ARayWorkerRetitledAsAnActorIsReclassifiedAtItsNextFullRead) {
    TempDir dir;
    const std::string d = dir.path();
    const std::string script = d + "/retitle.py";
    std::ofstream(script) << "import ctypes, os, sys, time\n"
                             "f = open('/proc/self/stat').read().rsplit(')', 1)[1].split()\n"
                             "start, end = int(f[45]), int(f[46])  # arg_start, arg_end\n"
                             "open(sys.argv[1], 'w').close()\n"
                             "while not os.path.exists(sys.argv[2]):\n"
                             "    time.sleep(0.05)\n"
                             "title = b'ray::MegatronTrainRayActor.train'\n"
                             "n = end - start\n"
                             "ctypes.memmove(start, title + b'\\0' * (n - len(title)), n)\n"
                             "open(sys.argv[3], 'w').close()\n"
                             "time.sleep(120)\n";
    Group worker("exec -a 'ray::IDLE' " + realPython() + " " + script + " " + d + "/up " + d +
                 "/go " + d + "/done");
    ASSERT_TRUE(waitFiles({d + "/up"}));
    RoleMemory rm(RoleTable::builtin(), RoleMemoryOptions{.refreshEvery = 3});
    const RoleTable& t = rm.table();
    rm.sample({});
    EXPECT_EQ(roleName(t, rm.roleOf(worker.pid())), "ray");
    std::ofstream(d + "/go").close();
    ASSERT_TRUE(waitFiles({d + "/done"}));
    ASSERT_EQ(titleOfPid(worker.pid()), "ray::MegatronTrainRayActor.train");
    int walks = 0;
    while (walks < 6 && roleName(t, rm.roleOf(worker.pid())) != "trainer") {
        rm.sample({});
        ++walks;
    }
    EXPECT_EQ(roleName(t, rm.roleOf(worker.pid())), "trainer");
    EXPECT_LE(walks, 3) << "at its next full read (every 3 walks)";

    // This host's own processes (this test at least) are `other`: most walks read none of them.
    std::size_t reused = 0;
    for (int i = 0; i < 3; ++i) {
        reused += rm.sample({}).reused;
    }
    EXPECT_GT(reused, 0u);
    RoleMemory every(RoleTable::builtin(), RoleMemoryOptions{.reuseOtherRss = false});
    every.sample({});
    EXPECT_EQ(every.sample({}).reused, 0u);
}

// A run's launcher that `exec`s its trainer under the train actor's title (bash -c "...; exec -a
// TITLE python ...") keeps its pid and start time: the walk saw it as the run's driver before
// the exec and must see the trainer at its next full read, not keep `driver` for the run's life.
TEST(RoleMemory, ALauncherThatExecsItsTrainerIsReclassifiedAtItsNextFullRead) {
    TempDir dir;
    const std::string d = dir.path();
    Group launcher("while [ ! -e " + d +
                   "/go ]; do sleep 0.05; done; exec -a "
                   "'ray::MegatronTrainRayActor.train' " +
                   realPython() + " -c \"import time; open('" + d +
                   "/done', 'w').close(); time.sleep(120)\"");
    RoleMemory rm(RoleTable::builtin(), RoleMemoryOptions{.refreshEvery = 3});
    const RoleTable& t = rm.table();
    rm.sample({launcher.pid()});
    EXPECT_EQ(roleName(t, rm.roleOf(launcher.pid())), "driver");
    std::ofstream(d + "/go").close();
    ASSERT_TRUE(waitFiles({d + "/done"}));
    ASSERT_EQ(titleOfPid(launcher.pid()), "ray::MegatronTrainRayActor.train");
    int walks = 0;
    while (walks < 6 && roleName(t, rm.roleOf(launcher.pid())) != "trainer") {
        rm.sample({launcher.pid()});
        ++walks;
    }
    EXPECT_EQ(roleName(t, rm.roleOf(launcher.pid())), "trainer");
    EXPECT_LE(walks, 3) << "at its next full read (every 3 walks)";
}

// smaps_rollup (PSS) walks the process's page tables, the dearest read of a walk: it is read at a
// process's first full read and then at every pssEvery-th, its last reading counting between
// (RSS from statm / stat stays fresh every walk). A process of a role of its own (so no other
// process on this host is summed with it) grows by 64 MiB after the first walk.
TEST(RoleMemory, PssIsReadAtEveryThirdFullReadAndItsLastReadingCountsBetween) {
    TempDir dir;
    const std::string d = dir.path();
    const std::string title = "pss-probe-" + std::to_string(::getpid());
    auto own = RoleTable::parse("pss_probe title " + title + "*\n", "test rows");
    ASSERT_TRUE(own.ok()) << own.error();
    RoleTable table = std::move(own).value();
    table.append(RoleTable::builtin());
    Group probe("exec -a '" + title + "' " + realPython() + " -c \"import os, time\n" +
                "a = bytearray(b'\\x01') * (16 << 20)\nopen('" + d + "/up', 'w').close()\n" +
                "while not os.path.exists('" + d + "/go'): time.sleep(0.05)\n" +
                "b = bytearray(b'\\x01') * (64 << 20)\nopen('" + d + "/grown', 'w').close()\n" +
                "time.sleep(120)\"");
    ASSERT_TRUE(waitFiles({d + "/up"}));
    RoleMemory rm(std::move(table), RoleMemoryOptions{.refreshEvery = 1, .pssEvery = 3});
    const int role = rm.table().roleIndex("pss_probe");
    ASSERT_GE(role, 0);
    auto usage = [&](const RoleMemorySample& s) { return s.roles[static_cast<std::size_t>(role)]; };
    const RoleUsage first = usage(rm.sample({}));
    ASSERT_EQ(first.processes, 1u);
    ASSERT_EQ(first.pssReadable, 1u);
    const std::uint64_t mib = 1 << 20;
    EXPECT_GE(first.pssBytes, 16 * mib);
    std::ofstream(d + "/go").close();
    ASSERT_TRUE(waitFiles({d + "/grown"}));
    // Full reads 2 and 3: RSS sees the 64 MiB at once, PSS is the first reading.
    for (int walk = 2; walk <= 3; ++walk) {
        const RoleUsage u = usage(rm.sample({}));
        EXPECT_EQ(u.pssReadable, 1u) << walk;
        EXPECT_EQ(u.pssBytes, first.pssBytes) << walk;
        EXPECT_GE(u.rssBytes, first.rssBytes + 60 * mib) << walk;
    }
    // Full read 4 (the third since the first): smaps_rollup again.
    const RoleUsage fourth = usage(rm.sample({}));
    EXPECT_GE(fourth.pssBytes, first.pssBytes + 60 * mib);
}

}  // namespace
}  // namespace runplane::agent
