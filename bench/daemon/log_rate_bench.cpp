// The daemon's CPU while a run prints 2,000 log lines/s (issue 42: <= 2 % of one core), beside a
// reference in the same run.
//   A real runplaned (--sample-hz 1, --no-gpu, --kernel-log off) runs one run: this program in
//   --emit mode, printing the lines of the real fixtures (tests/agent/fixtures/logs/*.log, their
//   source headers left out, cycled: metric records, engine lines, tracebacks, OOM and NCCL
//   lines) at RATE lines/s in 10 ms batches. After WARMUP s the daemon's CPU time
//   (utime + stime of /proc/PID/stat) is read over WINDOW s:
//     daemon_cpu_pct = 100 x delta(cpu seconds) / window
//   Reference, same run, same window: `tail -F` of the run's stdout file to /dev/null (the
//   cheapest follower of the same stream), ref_cpu_pct by the same formula.
//   lines_per_s is what the emitter really wrote (its own count / its own time).
//   records_per_s: spool records the daemon stored in the window (max(seq) of its spool file,
//   read-only, at both ends).
// Prints one JSON object. Usage: daemon_log_rate_bench [RATE] [WINDOW_S] [WARMUP_S]
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/agent/daemon_process.h"

namespace {

double cpuSeconds(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream in(text.substr(close + 2));
    std::vector<std::string> f;
    std::string field;
    while (in >> field) {
        f.push_back(field);
    }
    if (f.size() < 13) {
        return 0;
    }
    // Fields 14 and 15 of stat (utime, stime) are f[11] and f[12] after the command.
    return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::vector<std::string> corpus(const std::string& dir) {
    std::vector<std::string> lines;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
        std::ifstream in(p);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && !line.starts_with("# source:")) {
                lines.push_back(line);
            }
        }
    }
    return lines;
}

// The highest seq stored in the daemon's spool (0 when unreadable).
long long spoolMaxSeq(const std::string& path) {
    sqlite3* db = nullptr;
    long long seq = 0;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, "SELECT max(seq) FROM records", -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            seq = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return seq;
}

// --emit: RATE lines/s for SECONDS, in 10 ms batches on an absolute schedule.
int emit(const std::string& dir, int rate, int seconds) {
    const auto lines = corpus(dir);
    if (lines.empty()) {
        return 2;
    }
    const int perBatch = std::max(1, rate / 100);
    std::size_t next = 0;
    long written = 0;
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    const auto start = std::chrono::steady_clock::now();
    for (int batch = 0; batch < seconds * 100; ++batch) {
        for (int i = 0; i < perBatch; ++i) {
            std::fputs(lines[next].c_str(), stdout);
            std::fputc('\n', stdout);
            next = (next + 1) % lines.size();
            ++written;
        }
        std::fflush(stdout);
        t.tv_nsec += 10'000'000;
        if (t.tv_nsec >= 1'000'000'000) {
            t.tv_nsec -= 1'000'000'000;
            ++t.tv_sec;
        }
        ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr);
    }
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "emitted %ld lines in %.3f s\n", written, took);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 5 && std::string(argv[1]) == "--emit") {
        return emit(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    }
    const int rate = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int window = argc > 2 ? std::atoi(argv[2]) : 30;
    const int warmup = argc > 3 ? std::atoi(argv[3]) : 5;
    const std::string fixtures = std::string(RUNPLANE_SOURCE_DIR) + "/tests/agent/fixtures/logs";
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();

    runplane::testing::TempDir dir("runplane-lograte");
    runplane::testing::DaemonProcess daemon(
        dir.path() + "/state", {"--sample-hz", "1", "--kernel-log", "off", "--stall-seconds", "0"});
    if (!daemon.ok()) {
        std::fprintf(stderr, "daemon: %s\n", daemon.error().c_str());
        return 1;
    }
    auto stub = runplane::agent::testing::agentStub(daemon);
    {
        grpc::ClientContext ctx;
        runplane::v1::StartRunRequest req;
        req.set_run_id("lines");
        for (const std::string& a : {self, std::string("--emit"), fixtures, std::to_string(rate),
                                     std::to_string(warmup + window + 5)}) {
            req.add_argv(a);
        }
        req.set_role(runplane::v1::RUN_ROLE_STANDALONE);
        runplane::v1::RunStatus st;
        const auto status = stub->StartRun(&ctx, req, &st);
        if (!status.ok()) {
            std::fprintf(stderr, "StartRun: %s\n", status.error_message().c_str());
            return 1;
        }
    }
    // The run's stdout file, for the reference follower.
    std::string stdoutPath;
    for (int i = 0; i < 50 && stdoutPath.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() + "/state")) {
            if (e.path().filename() == "stdout.log" &&
                e.path().parent_path().filename() == "lines") {
                stdoutPath = e.path().string();
            }
        }
    }
    if (stdoutPath.empty()) {
        std::fprintf(stderr, "no stdout.log for the run\n");
        return 1;
    }
    const pid_t tail = ::fork();
    if (tail == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execlp("tail", "tail", "-F", "-n", "0", stdoutPath.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::seconds(warmup));
    const auto size0 = std::filesystem::file_size(stdoutPath);
    const std::string spoolPath = dir.path() + "/state/spool.sqlite";
    const long long seq0 = spoolMaxSeq(spoolPath);
    const double d0 = cpuSeconds(daemon.pid());
    const double r0 = cpuSeconds(tail);
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(window));
    const double d1 = cpuSeconds(daemon.pid());
    const double r1 = cpuSeconds(tail);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto size1 = std::filesystem::file_size(stdoutPath);
    const long long seq1 = spoolMaxSeq(spoolPath);
    ::kill(tail, SIGTERM);
    ::waitpid(tail, nullptr, 0);
    {
        // End the run while its daemon still runs (a supervisor outlives a vanished daemon).
        grpc::ClientContext ctx;
        runplane::v1::StopRunRequest stop;
        stop.set_run_id("lines");
        stop.set_grace_seconds(1);
        runplane::v1::RunStatus st;
        stub->StopRun(&ctx, stop, &st);
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    std::ifstream load("/proc/loadavg");
    std::string loadavg;
    std::getline(load, loadavg);
    std::printf(
        "{\"rate_asked\": %d, \"window_s\": %.1f, \"bytes_per_s\": %.0f, \"daemon_cpu_pct\": %.2f, "
        "\"ref_tail_cpu_pct\": %.2f, \"records_per_s\": %.0f, \"loadavg\": \"%s\"}\n",
        rate, secs, static_cast<double>(size1 - size0) / secs, 100.0 * (d1 - d0) / secs,
        100.0 * (r1 - r0) / secs, static_cast<double>(seq1 - seq0) / secs, loadavg.c_str());
    return 0;
}
