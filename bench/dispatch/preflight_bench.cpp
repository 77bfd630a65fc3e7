// preflight_bench [--nodes N] [--rounds R] [--ray-venv DIR]: the wall time of one preflight of N
// daemons (issue 47: 64 daemons <= 500 ms with Ray installed on every node), beside the reference
// in the same run: one `ray --version`, the Python start each daemon paid per preflight before the
// version was read from the package's metadata. The daemons listen on 127.0.0.x:0, share one
// PATH with the Ray venv first, and are started before timing. Each round times preflightAll
// ("pooled": channels kept between preflights) and, beside it under the same load, the way before
// ("fresh": a new channel per daemon per preflight). Prints one JSON line, with the
// CPU time the timed rounds cost (the daemons' from /proc/PID/stat, the controller's from
// getrusage), per preflight of one node: unlike the wall time it does not grow with the load other
// processes put on the machine, so it is the figure to compare across loaded runs; and the load
// average before and after.
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/control/dispatch.h"
#include "tests/support/daemon_process.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// utime + stime of a process (all its threads), in seconds.
double processCpuSeconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // comm may hold blanks
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // field 3 is the state
        if (i == 14 || i == 15) {
            ticks += std::atof(field.c_str());
        }
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double selfCpuSeconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double loadAverage() {
    std::ifstream in("/proc/loadavg");
    double one = 0;
    in >> one;
    return one;
}

}  // namespace

int main(int argc, char** argv) {
    int nodes = 64;
    int rounds = 10;
    const char* binDir = std::getenv("RUNPLANE_BINARY_DIR");
    std::string venv = std::string(binDir != nullptr ? binDir : ".") + "/ray-venv";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--nodes") {
            nodes = std::atoi(argv[i + 1]);
        } else if (flag == "--rounds") {
            rounds = std::atoi(argv[i + 1]);
        } else if (flag == "--ray-venv") {
            venv = argv[i + 1];
        } else {
            std::fprintf(stderr, "preflight_bench: unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    const std::string path = venv + "/bin:/usr/bin:/bin";
    std::string rayOut;
    const auto r0 = Clock::now();
    const int rayRc = runplane::testing::runCommand({venv + "/bin/ray", "--version"}, &rayOut);
    const double referenceMs = msSince(r0);
    if (rayRc != 0) {
        std::fprintf(stderr, "preflight_bench: %s/bin/ray --version failed: %s\n", venv.c_str(),
                     rayOut.c_str());
        return 1;
    }

    runplane::testing::TempDir dir("runplane-preflight-bench");
    std::vector<std::unique_ptr<runplane::testing::DaemonProcess>> daemons;
    std::vector<std::string> addresses;
    for (int i = 0; i < nodes; ++i) {
        runplane::testing::DaemonSpec spec;
        spec.stateDir = dir.path() + "/n" + std::to_string(i);
        spec.listen = "127.0.0." + std::to_string(10 + i % 200) + ":0";
        spec.args = {"--node-id", "bench-" + std::to_string(i)};
        spec.env = {"PATH=" + path};
        daemons.push_back(std::make_unique<runplane::testing::DaemonProcess>(spec));
        if (!daemons.back()->ok()) {
            std::fprintf(stderr, "preflight_bench: daemon %d: %s\n", i,
                         daemons.back()->error().c_str());
            return 1;
        }
        addresses.push_back(daemons.back()->address());
    }
    runplane::control::PreflightSpec spec;
    spec.env = {{"PATH", path}};
    spec.multiNode = true;
    spec.masterAddr = "198.18.0.1";
    runplane::control::NodeClientOptions client;
    client.callTimeout = std::chrono::seconds(30);
    // Two ways, alternating round by round under the same load: "pooled" is preflightAll as
    // built (one channel per daemon kept between preflights); "fresh" is the reference of the
    // way before it, a new channel (TCP connect + HTTP/2 set-up) per daemon per preflight.
    struct Mode {
        const char* name;
        std::vector<double> wallMs;
        double daemonCpu = 0;
        double selfCpu = 0;
    };
    Mode pooled{"pooled", {}, 0, 0};
    Mode fresh{"fresh", {}, 0, 0};
    auto freshPreflight = [&] {
        std::vector<std::future<runplane::control::PreflightRow>> pending;
        for (const auto& a : addresses) {
            pending.push_back(std::async(std::launch::async, [&a, &spec, &client] {
                runplane::control::PreflightRow row;
                row.address = a;
                auto c = runplane::control::NodeClient::create(a, client);
                auto r = c ? (*c)->preflight(spec)
                           : runplane::Result<runplane::control::PreflightResult>(c.failure());
                row.reachable = r.ok();
                if (r.ok()) {
                    row.checks = r->checks;
                }
                return row;
            }));
        }
        runplane::control::PreflightTable t;
        for (auto& f : pending) {
            t.rows.push_back(f.get());
        }
        return t;
    };
    auto daemonsCpu = [&] {
        double sum = 0;
        for (const auto& d : daemons) {
            sum += processCpuSeconds(d->pid());
        }
        return sum;
    };
    int failedRows = 0;
    const double loadBefore = loadAverage();
    for (int round = 0; round <= rounds; ++round) {
        for (Mode* mode : {&pooled, &fresh}) {
            const double d0 = daemonsCpu();
            const double s0 = selfCpuSeconds();
            const auto t0 = Clock::now();
            const auto table = mode == &pooled
                                   ? runplane::control::preflightAll(addresses, spec, client)
                                   : freshPreflight();
            const double ms = msSince(t0);
            const double selfCpu = selfCpuSeconds() - s0;
            const double daemonCpu = daemonsCpu() - d0;
            for (const auto& row : table.rows) {
                const auto* ray = row.find("ray.installed");
                const bool failed = !row.reachable || ray == nullptr ||
                                    ray->status != runplane::control::CheckState::Pass;
                if (failed && failedRows == 0) {
                    std::fprintf(stderr, "preflight_bench: %s: %s: %s\n", mode->name,
                                 row.address.c_str(),
                                 ray == nullptr ? "no ray.installed check" : ray->message.c_str());
                }
                failedRows += failed ? 1 : 0;
            }
            if (round > 0) {  // the first round fills caches and pools; report it apart
                mode->wallMs.push_back(ms);
                mode->daemonCpu += daemonCpu;
                mode->selfCpu += selfCpu;
            } else {
                std::fprintf(stderr, "preflight_bench: %s first round (cold) %.1f ms\n", mode->name,
                             ms);
            }
        }
    }
    const double loadAfter = loadAverage();
    // What the daemons spend with no preflight (their telemetry collectors: 64 of them on one
    // host here, one per host in a cluster), over a quiet spell as long as the pooled rounds.
    double timedMs = 0;
    for (double ms : pooled.wallMs) {
        timedMs += ms;
    }
    const double q0 = daemonsCpu();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(timedMs));
    const double quietCpu = daemonsCpu() - q0;
    const double perPreflight = 1000.0 / (static_cast<double>(nodes) * std::max(rounds, 1));
    std::printf(
        "{\"nodes\": %d, \"rounds\": %d, \"reference_ray_version_ms\": %.1f, "
        "\"rows_without_ray_pass\": %d, \"load_avg_1m_before\": %.2f, "
        "\"load_avg_1m_after\": %.2f, \"cores\": %ld, "
        "\"daemon_cpu_ms_per_node_quiet_same_span\": %.2f",
        nodes, rounds, referenceMs, failedRows, loadBefore, loadAfter,
        ::sysconf(_SC_NPROCESSORS_ONLN), quietCpu * perPreflight);
    for (const Mode* mode : {&pooled, &fresh}) {
        std::printf(
            ", \"%s\": {\"wall_ms_p50\": %.1f, \"wall_ms_max\": %.1f, "
            "\"ratio_p50_to_reference\": %.3f, \"daemon_cpu_ms_per_node\": %.2f, "
            "\"controller_cpu_ms_per_node\": %.2f}",
            mode->name, percentile(mode->wallMs, 0.5), percentile(mode->wallMs, 1.0),
            percentile(mode->wallMs, 0.5) / referenceMs, mode->daemonCpu * perPreflight,
            mode->selfCpu * perPreflight);
    }
    std::printf("}\n");
    return failedRows == 0 ? 0 : 1;
}
