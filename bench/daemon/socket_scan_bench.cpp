// Cost of the engines' socket scan (issue 42, proc_sockets.h) beside the role walk it follows, in
// the same run. PROCESSES real processes (`sleep`, argv[0] set to a framework's title as in
// role_bench.cpp: per ten one trainer, one SGLang scheduler, one vLLM worker, one ray::IDLE, six
// untitled), so a fifth are rollout engines'. Each rollout process holds FDS open fds, LISTEN of
// them listening TCP sockets on 127.0.0.1 (inherited through exec, as an engine holds its NCCL,
// gloo and HTTP ports), the rest /dev/null; the bench process holds CONNS established loopback
// connections (2 x CONNS rows in /proc/net/tcp after the listening section). Per walk:
//   walk_cpu_ms        RoleMemory::sample() (the role walk, as the daemon runs it every report)
//   scan_cpu_ms        listeningSocketsOf(enginePids()): every engine process's fds read
//   scanner_kept_cpu_ms  ListenerScanner::scan as the daemon runs it every 5 s, when no new
//                      LISTEN socket appeared: the tables only, fds remembered (a new listener
//                      anywhere, or every 12th scan, costs a full scan_cpu_ms)
//   scan_full_table_cpu_ms  the same scan's table part with /proc/net/tcp{,6} read to the end
//                      (what the scan would cost without stopping at the established hash)
//   ref_cpu_ms         one /proc walk reading statm only (role_bench's reference)
// CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), medians. The daemon's cost at 1 Hz:
// walk + (kept + (scan - kept) / 12) / 5 per second; worst case (a new listener on the node
// every 5 s) walk + scan / 5. Prints one JSON object.
// Usage: daemon_socket_scan_bench [PROCESSES] [WALKS] [FDS] [LISTEN] [CONNS]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/proc_sockets.h"
#include "backend/agent/proc_tree.h"
#include "backend/agent/role_memory.h"

namespace {

using namespace runplane::agent;

double threadCpuMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

int listenLoopback(int* port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // no CLOEXEC: kept through exec
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd, 8) != 0) {
        return -1;
    }
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    if (port != nullptr) {
        *port = ntohs(a.sin_port);
    }
    return fd;
}

// The whole of a /proc table, read and parsed (the scan's table part without the early stop).
std::size_t fullTables() {
    std::size_t n = 0;
    for (const bool v6 : {false, true}) {
        const int fd = ::open(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", O_RDONLY | O_CLOEXEC);
        std::string text;
        char buf[16384];
        ssize_t r;
        while (fd >= 0 && (r = ::read(fd, buf, sizeof buf)) > 0) {
            text.append(buf, static_cast<std::size_t>(r));
        }
        if (fd >= 0) {
            ::close(fd);
        }
        // parseTcpListeners stops at the established hash too; count the rows as a full
        // parser would have to.
        n += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
        n += parseTcpListeners(text, v6).size();
    }
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    const int processes = argc > 1 ? std::atoi(argv[1]) : 1000;
    const int walks = argc > 2 ? std::atoi(argv[2]) : 20;
    const int fds = argc > 3 ? std::atoi(argv[3]) : 128;
    const int listens = argc > 4 ? std::atoi(argv[4]) : 4;
    const int conns = argc > 5 ? std::atoi(argv[5]) : 2000;
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);

    const char* titles[] = {"ray::MegatronTrainRayActor.train", "sglang::scheduler_TP0",
                            "VLLM::Worker_TP1", "ray::IDLE"};
    std::vector<pid_t> kids;
    for (int i = 0; i < processes; ++i) {
        const int kind = i % 10;
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (kind == 1 || kind == 2) {  // rollout: an engine's fds
                for (int k = 0; k < fds; ++k) {
                    if (k < listens) {
                        listenLoopback(nullptr);
                    } else {
                        ::open("/dev/null", O_RDONLY);
                    }
                }
            }
            std::string title = kind < 4 ? titles[kind] : "sleep";
            char* args[] = {title.data(), const_cast<char*>("600"), nullptr};
            ::execv("/bin/sleep", args);
            ::_exit(127);
        }
        kids.push_back(pid);
    }
    // Established connections on the node: rows after the listening section.
    int port = 0;
    const int server = listenLoopback(&port);
    std::vector<int> held;
    for (int i = 0; i < conns && server >= 0; ++i) {
        const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(c);
            break;
        }
        held.push_back(c);
        held.push_back(::accept(server, nullptr, nullptr));
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));

    RoleMemory roles(RoleTable::builtin());
    ListenerScanner scanner;
    std::vector<double> walkMs, scanMs, fullMs, refMs, keptMs;
    std::size_t keptFdReads = 0;
    SocketScanStats last;
    std::size_t engines = 0, listeners = 0;
    for (int w = 0; w < walks; ++w) {
        double t0 = threadCpuMs();
        roles.sample({});
        const double walk = threadCpuMs() - t0;
        const auto pids = roles.enginePids();
        t0 = threadCpuMs();
        SocketScanStats stats;
        const auto found = listeningSocketsOf(pids, {}, &stats);
        const double scan = threadCpuMs() - t0;
        t0 = threadCpuMs();
        scanner.scan(pids);  // as the daemon runs it: fds read only when something is new
        const double kept = threadCpuMs() - t0;
        if (w > 1) {  // w == 1: its first scan (every fd read)
            keptMs.push_back(kept);
            keptFdReads = std::max(keptFdReads, scanner.lastFdReads());
        }
        t0 = threadCpuMs();
        const std::size_t rows = fullTables();
        const double full = threadCpuMs() - t0;
        (void)rows;
        t0 = threadCpuMs();
        const auto m = treeMemory(listPids(), false);
        const double ref = threadCpuMs() - t0;
        (void)m;
        if (w > 0) {  // the first walk reads every process in full
            walkMs.push_back(walk);
            scanMs.push_back(scan);
            fullMs.push_back(full);
            refMs.push_back(ref);
        }
        last = stats;
        engines = pids.size();
        listeners = found.size();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (const pid_t k : kids) {
        ::kill(k, SIGKILL);
    }
    for (const pid_t k : kids) {
        ::waitpid(k, nullptr, 0);
    }
    const double walk = median(walkMs), scan = median(scanMs), full = median(fullMs),
                 ref = median(refMs), kept = median(keptMs);
    // The daemon's scanner: a remembered scan every 5 s, every fd read again every 12th (60 s).
    const double daemonScanPer5s = kept + (scan - kept) / 12.0;
    std::printf(
        "{\"processes_started\": %d, \"engine_pids\": %zu, \"fds_per_engine\": %d, "
        "\"listeners_found\": %zu, \"established_rows\": %zu, \"walks\": %d,\n"
        " \"fds_read\": %zu, \"socket_fds\": %zu, \"table_bytes_read\": %zu,\n"
        " \"walk_cpu_ms\": %.3f, \"scan_cpu_ms\": %.3f, \"scan_full_table_part_cpu_ms\": %.3f, "
        "\"ref_cpu_ms\": %.3f,\n"
        " \"scanner_kept_cpu_ms\": %.3f, \"scanner_kept_max_fd_reads\": %zu,\n"
        " \"walk_core_pct_at_1hz\": %.3f, \"walk_plus_full_scan_every_5s_core_pct\": %.3f, "
        "\"walk_plus_daemon_scanner_core_pct\": %.3f, \"scan_every_walk_core_pct\": %.3f}\n",
        processes, engines, fds, listeners, held.size(), walks, last.fdsRead, last.socketFds,
        last.tableBytes, walk, scan, full, ref, kept, keptFdReads, walk / 10.0,
        (walk + scan / 5.0) / 10.0, (walk + daemonScanPer5s / 5.0) / 10.0, (walk + scan) / 10.0);
    return 0;
}
