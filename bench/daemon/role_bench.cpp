// Cost of memory by role (issue 43), beside a reference in the same run. 1,000 real processes
// (`sleep`, started with argv[0] set to a framework's title: a tenth each trainer, SGLang,
// vLLM and Ray titles, the rest untitled) are walked at 1 Hz:
//   roles_cpu_ms      CPU time (user + system, this thread) of one RoleMemory::sample(): statm of
//                     the run's roles every walk, a tenth of the processes re-read in full (stat,
//                     status + smaps_rollup of the run's roles), `other`'s last RSS reused
//   roles_statm_all_cpu_ms  the same walk with statm of every process every walk
//                     (reuseOtherRss off: the walk before 2026-12-06)
//   roles_pss_each_full_read_cpu_ms  the walk with smaps_rollup at every full re-read
//                     (pssEvery = 1: the walk before 2026-12-06's third round)
//   ref_cpu_ms        the reference: one /proc walk reading statm only (listPids + treeMemory
//                     without PSS, what the daemon did for run trees before)
//   roles_core_pct    = roles_cpu_ms / 1000 ms x 100: percent of one core at 1 Hz (goal <= 1 %)
// and two real runplaned daemons at 1 Hz over the same process table, one with the role walk and
// one with --no-role-memory (the reference), over a 30 s window after 15 s:
//   daemon_rss_mb, daemon_cpu_pct, ref_daemon_rss_mb, ref_daemon_cpu_pct (goal: RSS <= 15 MB).
// Prints one JSON object. Usage: daemon_role_bench [PROCESSES] [WALKS] [WINDOW_S]
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/proc_tree.h"
#include "backend/agent/role_memory.h"
#include "tests/agent/daemon_process.h"

namespace {

using runplane::agent::RoleMemory;
using runplane::agent::RoleTable;

double threadCpuMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Usage {
    double cpuSeconds = 0, rssMiB = 0;
};

Usage usageOf(pid_t pid) {
    Usage u;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) {
        return u;
    }
    std::vector<std::string> f;
    std::string field;
    std::istringstream in(text.substr(close + 2));
    while (in >> field) {
        f.push_back(field);
    }
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    u.cpuSeconds = (std::stod(f[11]) + std::stod(f[12])) / tick;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            u.rssMiB = std::stod(line.substr(6)) / 1024.0;
        }
    }
    return u;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int processes = argc > 1 ? std::atoi(argv[1]) : 1000;
    const int walks = argc > 2 ? std::atoi(argv[2]) : 20;
    const int window = argc > 3 ? std::atoi(argv[3]) : 30;
    const char* titles[] = {"ray::MegatronTrainRayActor.train", "sglang::scheduler_TP0",
                            "VLLM::Worker_TP1", "ray::IDLE"};
    std::vector<pid_t> kids;
    for (int i = 0; i < processes; ++i) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const int kind = i % 10;
            std::string title = kind < 4 ? titles[kind] : "sleep";
            char* args[] = {title.data(), const_cast<char*>("600"), nullptr};
            ::execv("/bin/sleep", args);
            ::_exit(127);
        }
        kids.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));

    RoleMemory roles(RoleTable::builtin());
    runplane::agent::RoleMemoryOptions statmAll;
    statmAll.reuseOtherRss = false;
    RoleMemory rolesStatmAll(RoleTable::builtin(), statmAll);
    runplane::agent::RoleMemoryOptions pssEach;
    pssEach.pssEvery = 1;
    RoleMemory rolesPssEach(RoleTable::builtin(), pssEach);
    std::vector<double> rolesMs, refMs, firstMs, statmAllMs, pssEachMs;
    std::size_t reused = 0;
    std::size_t scanned = 0;
    for (int w = 0; w < walks; ++w) {
        double t0 = threadCpuMs();
        const auto s = roles.sample({});
        const double r = threadCpuMs() - t0;
        (w == 0 ? firstMs : rolesMs).push_back(r);
        scanned = s.scanned;
        reused = s.reused;
        t0 = threadCpuMs();
        const auto all = rolesStatmAll.sample({});
        if (w > 0) {
            statmAllMs.push_back(threadCpuMs() - t0);
        }
        (void)all;
        t0 = threadCpuMs();
        (void)rolesPssEach.sample({});
        if (w > 0) {
            pssEachMs.push_back(threadCpuMs() - t0);
        }
        t0 = threadCpuMs();
        const auto m = runplane::agent::treeMemory(runplane::agent::listPids(), false);
        refMs.push_back(threadCpuMs() - t0);
        (void)m;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }

    // Two real daemons at 1 Hz over this process table: with and without the role walk.
    runplane::testing::TempDir dirA("runplane-rolebench"), dirB("runplane-rolebench");
    Usage a0, a1, b0, b1;
    {
        runplane::testing::DaemonProcess withRoles(dirA.path() + "/state", {"--sample-hz", "1"});
        runplane::testing::DaemonProcess without(dirB.path() + "/state",
                                                 {"--sample-hz", "1", "--no-role-memory"});
        if (!withRoles.ok() || !without.ok()) {
            std::fprintf(stderr, "daemon failed: %s %s\n", withRoles.error().c_str(),
                         without.error().c_str());
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::seconds(15));
        a0 = usageOf(withRoles.pid());
        b0 = usageOf(without.pid());
        std::this_thread::sleep_for(std::chrono::seconds(window));
        a1 = usageOf(withRoles.pid());
        b1 = usageOf(without.pid());
    }
    for (pid_t k : kids) {
        ::kill(k, SIGKILL);
    }
    for (pid_t k : kids) {
        ::waitpid(k, nullptr, 0);
    }
    const double rolesMed = median(rolesMs), refMed = median(refMs);
    const double allMed = median(statmAllMs);
    const double pssEachMed = median(pssEachMs);
    std::printf(
        "{\"processes_started\": %d, \"processes_scanned\": %zu, \"other_reused_last_walk\": "
        "%zu, \"walks\": %d,\n"
        " \"roles_statm_all_cpu_ms_median\": %.3f, \"roles_statm_all_core_pct_at_1hz\": %.3f,\n"
        " \"roles_pss_each_full_read_cpu_ms_median\": %.3f, \"roles_pss_each_core_pct\": %.3f,\n"
        " \"roles_cpu_ms_median\": %.3f, \"roles_cpu_ms_first_walk\": %.3f,\n"
        " \"ref_cpu_ms_median\": %.3f, \"roles_core_pct_at_1hz\": %.3f, \"ref_core_pct_at_1hz\": "
        "%.3f,\n"
        " \"daemon_rss_mb\": %.1f, \"daemon_cpu_pct\": %.3f, \"ref_daemon_rss_mb\": %.1f, "
        "\"ref_daemon_cpu_pct\": %.3f, \"window_s\": %d}\n",
        processes, scanned, reused, walks, allMed, allMed / 10.0, pssEachMed, pssEachMed / 10.0,
        rolesMed, firstMs.empty() ? 0.0 : firstMs[0], refMed, rolesMed / 10.0, refMed / 10.0,
        a1.rssMiB * 1.048576, 100.0 * (a1.cpuSeconds - a0.cpuSeconds) / window,
        b1.rssMiB * 1.048576, 100.0 * (b1.cpuSeconds - b0.cpuSeconds) / window, window);
    return 0;
}
