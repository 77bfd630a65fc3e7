// preflight_bench [--nodes N] [--rounds R] [--ray-venv DIR]: the wall time of one preflight of N
// daemons (issue 47: 64 daemons <= 500 ms with Ray installed on every node), beside the reference
// in the same run: one `ray --version`, the Python start each daemon paid per preflight before the
// version was read from the package's metadata. The daemons listen on 127.0.0.x:0, share one
// PATH with the Ray venv first, and are started before timing. Prints one JSON line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
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
    std::vector<double> wallMs;
    int failedRows = 0;
    for (int round = 0; round <= rounds; ++round) {
        const auto t0 = Clock::now();
        const auto table = runplane::control::preflightAll(addresses, spec, client);
        const double ms = msSince(t0);
        for (const auto& row : table.rows) {
            const auto* ray = row.find("ray.installed");
            const bool failed = !row.reachable || ray == nullptr ||
                                ray->status != runplane::control::CheckState::Pass;
            if (failed && failedRows == 0) {
                std::fprintf(stderr, "preflight_bench: %s: %s\n", row.address.c_str(),
                             ray == nullptr ? "no ray.installed check" : ray->message.c_str());
                for (const auto& c : row.checks) {
                    std::fprintf(stderr, "  %s: %s\n", c.id.c_str(), c.message.c_str());
                }
            }
            failedRows += failed ? 1 : 0;
        }
        if (round > 0) {  // the first round fills each daemon's cache; report it apart
            wallMs.push_back(ms);
        } else {
            std::fprintf(stderr, "preflight_bench: first round (cold caches) %.1f ms\n", ms);
        }
    }
    std::printf(
        "{\"nodes\": %d, \"rounds\": %d, \"preflight_wall_ms_p50\": %.1f, "
        "\"preflight_wall_ms_max\": %.1f, \"reference_ray_version_ms\": %.1f, "
        "\"ratio_p50_to_reference\": %.3f, \"rows_without_ray_pass\": %d}\n",
        nodes, rounds, percentile(wallMs, 0.5), percentile(wallMs, 1.0), referenceMs,
        percentile(wallMs, 0.5) / referenceMs, failedRows);
    return failedRows == 0 ? 0 : 1;
}
