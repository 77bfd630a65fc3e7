// Footprint of runplaned (issue 5): a real daemon samples host memory at 1 Hz or 10 Hz, supervises
// a run that prints a framework-style metric line (3 metrics) every 100 ms (run:1; run:0 = no
// run, the daemon alone), and streams everything to a client that acknowledges once per second,
// as the controller does. Over a measurement window (after a
// warm-up) we read the daemon's CPU time (utime + stime, /proc/PID/stat) and resident memory
// (VmRSS, VmHWM), and the same for a reference process running beside it: a shell loop that
// reads /proc/meminfo at the same rate (`cat /proc/meminfo > /dev/null; sleep 1/hz`), the
// cheapest thing that "samples host memory". Counters:
//   daemon_cpu_pct   = 100 * daemon CPU seconds / window seconds   (percent of one core)
//   ref_cpu_pct      = the same for the reference loop (its reaped children included)
//   cpu_ratio        = daemon_cpu_pct / ref_cpu_pct
//   daemon_rss_mb, daemon_hwm_mb, supervisor_rss_mb, ref_rss_mb (MiB)
//   records_per_s    = telemetry records the client received per second
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/agent/daemon_process.h"

extern char** environ;

namespace {

using runplane::agent::testing::DaemonProcess;
using runplane::agent::testing::TempDir;

struct ProcUsage {
    double cpuSeconds = 0;  // utime + stime (+ cutime + cstime when withChildren)
    double rssMiB = 0, hwmMiB = 0;
};

ProcUsage usage(pid_t pid, bool withChildren) {
    ProcUsage u;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) {
        return u;
    }
    std::istringstream in(text.substr(close + 2));
    std::string field;
    std::vector<std::string> f;
    while (in >> field) {
        f.push_back(field);
    }
    // f[0] is field 3 (state); utime = field 14 -> f[11], stime f[12], cutime f[13], cstime f[14].
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    double ticks = std::stod(f[11]) + std::stod(f[12]);
    if (withChildren) {
        ticks += std::stod(f[13]) + std::stod(f[14]);
    }
    u.cpuSeconds = ticks / tick;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            u.rssMiB = std::stod(line.substr(6)) / 1024.0;
        } else if (line.rfind("VmHWM:", 0) == 0) {
            u.hwmMiB = std::stod(line.substr(6)) / 1024.0;
        }
    }
    return u;
}

pid_t spawnShell(const std::string& script) {
    std::string a0 = "/bin/sh", a1 = "-c", a2 = script;
    char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
    pid_t pid = 0;
    ::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ);
    return pid;
}

void BM_DaemonFootprint(benchmark::State& state) {
    const double hz = static_cast<double>(state.range(0));
    const int windowSeconds = static_cast<int>(state.range(1));
    const bool withRun = state.range(2) != 0;
    ::setenv("RUNPLANE_BINARY_DIR", RUNPLANE_BUILD_DIR, 0);
    for (auto _ : state) {
        TempDir dir;
        std::ostringstream hzText;
        hzText << hz;
        DaemonProcess daemon(dir.path() + "/state", {"--sample-hz", hzText.str()});
        if (!daemon.ok()) {
            state.SkipWithError(daemon.error().c_str());
            return;
        }
        auto stub = runplane::agent::testing::agentStub(daemon);
        // The attached run: a metric line every 100 ms, like a fast trainer.
        if (withRun) {
            grpc::ClientContext ctx;
            runplane::v1::StartRunRequest req;
            req.set_run_id("bench");
            req.add_argv("/bin/sh");
            req.add_argv("-c");
            req.add_argv(
                "i=0; while :; do echo \"step $i: {'train/loss': 0.5, 'train/grad_norm': "
                "0.08, 'perf/step_time': 1.5}\"; i=$((i+1)); sleep 0.1; done");
            runplane::v1::RunStatus st;
            if (!stub->StartRun(&ctx, req, &st).ok()) {
                state.SkipWithError("StartRun failed");
                return;
            }
        }
        // The client: stream and acknowledge once per second, like the controller.
        std::atomic<bool> stop{false};
        std::atomic<std::uint64_t> received{0};
        grpc::ClientContext watchCtx;
        std::thread client([&] {
            auto reader = stub->WatchTelemetry(&watchCtx, {});
            runplane::v1::TelemetryBatch batch;
            auto lastAck = std::chrono::steady_clock::now();
            std::uint64_t lastSeq = 0;
            while (reader->Read(&batch)) {
                received += static_cast<std::uint64_t>(batch.records_size());
                if (batch.records_size() > 0) {
                    lastSeq = batch.records(batch.records_size() - 1).seq();
                }
                if (std::chrono::steady_clock::now() - lastAck > std::chrono::seconds(1) &&
                    lastSeq > 0) {
                    grpc::ClientContext ackCtx;
                    runplane::v1::AckTelemetryRequest ack;
                    ack.set_committed_through_seq(lastSeq);
                    runplane::v1::AckTelemetryResponse resp;
                    stub->AckTelemetry(&ackCtx, ack, &resp);
                    lastAck = std::chrono::steady_clock::now();
                }
            }
            reader->Finish();
        });
        std::ostringstream ref;
        ref << "while :; do cat /proc/meminfo > /dev/null; sleep " << 1.0 / hz << "; done";
        const pid_t reference = spawnShell(ref.str());
        std::this_thread::sleep_for(std::chrono::seconds(3));  // warm-up: startup excluded

        const std::string sup =
            runplane::agent::testing::slurp(dir.path() + "/state/runs.d/bench/supervisor.json");
        const auto at = sup.find("\"supervisor_pid\":");
        const pid_t supervisor = at == std::string::npos ? 0 : std::atoi(sup.c_str() + at + 17);

        const ProcUsage d0 = usage(daemon.pid(), false);
        const ProcUsage r0 = usage(reference, true);
        const std::uint64_t rec0 = received;
        const auto t0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::seconds(windowSeconds));
        const double window =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const ProcUsage d1 = usage(daemon.pid(), false);
        const ProcUsage r1 = usage(reference, true);
        const ProcUsage s1 = supervisor > 0 ? usage(supervisor, false) : ProcUsage{};
        const std::uint64_t rec1 = received;

        ::kill(reference, SIGKILL);
        ::waitpid(reference, nullptr, 0);
        watchCtx.TryCancel();
        client.join();
        if (withRun) {
            grpc::ClientContext ctx;
            runplane::v1::StopRunRequest stopReq;
            stopReq.set_run_id("bench");
            stopReq.set_grace_seconds(1);
            runplane::v1::RunStatus st;
            stub->StopRun(&ctx, stopReq, &st);
        }
        const double daemonPct = 100.0 * (d1.cpuSeconds - d0.cpuSeconds) / window;
        const double refPct = 100.0 * (r1.cpuSeconds - r0.cpuSeconds) / window;
        state.counters["daemon_cpu_pct"] = daemonPct;
        state.counters["ref_cpu_pct"] = refPct;
        state.counters["cpu_ratio"] = refPct > 0 ? daemonPct / refPct : 0;
        state.counters["daemon_rss_mb"] = d1.rssMiB;
        state.counters["daemon_hwm_mb"] = d1.hwmMiB;
        state.counters["supervisor_rss_mb"] = s1.rssMiB;
        state.counters["ref_rss_mb"] = r1.rssMiB;
        state.counters["records_per_s"] = static_cast<double>(rec1 - rec0) / window;
        state.SetIterationTime(window);
    }
}
BENCHMARK(BM_DaemonFootprint)
    ->ArgNames({"hz", "window_s", "run"})
    ->Args({1, 30, 0})
    ->Args({1, 30, 1})
    ->Args({10, 20, 1})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
