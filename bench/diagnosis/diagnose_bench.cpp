// Trigger to stored diagnosis with 16 nodes (issue #44; target <= 15 s). 16 real runplaned on
// loopback each run one rank of the same run: a real Python process blocked in barrier (one in
// all_gather_into_tensor), py-spy on the daemons' PATH, the run's NCCL_RAS_ADDR pointing at a RAS
// server of the test's that answers a recorded report. Measured, each --reps times (median):
//   parallel16   DiagnosisTrigger fired by a stall event -> every node's diagnosis judged and
//                stored in the history (what Runplane does)
//   sequential16 the reference: the same 16 nodes asked one after another, then stored
//   single       one node alone (the per-node collection cost)
// With --ras silent every node's RAS accepts the connection and never answers (the worst case a
// hung job offers): each node's collection then waits out its RAS bound (--timeout-ms, default
// 8000), in parallel with its stacks.
// Usage: diagnose_bench [--nodes N] [--reps R] [--ras answer|silent] [--timeout-ms T].
// Prints RESULT lines.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>

#include "backend/control/diagnose.h"
#include "tests/diagnosis/diagnosis_cluster.h"
#include "tests/diagnosis/fake_ras.h"

namespace {

using namespace runplane;
using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int nodes = 16, reps = 3, timeoutMs = 8000;
    bool silent = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--nodes") == 0) {
            nodes = std::atoi(argv[i + 1]);
        } else if (std::strcmp(argv[i], "--reps") == 0) {
            reps = std::atoi(argv[i + 1]);
        } else if (std::strcmp(argv[i], "--ras") == 0) {
            silent = std::strcmp(argv[i + 1], "silent") == 0;
        } else if (std::strcmp(argv[i], "--timeout-ms") == 0) {
            timeoutMs = std::atoi(argv[i + 1]);
        }
    }
    const auto collect = std::chrono::milliseconds(timeoutMs);
    if (!diagnosis::testing::haveVenv()) {
        std::cerr << "no py-spy venv at " << diagnosis::testing::pySpyVenv()
                  << " (scripts/setup-pyspy-venv.sh)\n";
        return 2;
    }
    std::ifstream in(testing::sourceDir() + "/tests/diagnosis/fixtures/ras_healthy.json");
    std::ostringstream report;
    report << in.rdbuf();
    diagnosis::testing::FakeRas ras(report.str(), silent
                                                      ? diagnosis::testing::FakeRas::Mode::Silent
                                                      : diagnosis::testing::FakeRas::Mode::Answer);
    diagnosis::testing::ClusterOptions o;
    o.nodes = nodes;
    o.functionOf = [](int i) { return i == 3 ? "all_gather_into_tensor" : "barrier"; };
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    diagnosis::testing::DiagnosisCluster cluster(o);
    if (auto e = cluster.start(); !e.empty()) {
        std::cerr << e << "\n";
        return 2;
    }
    const std::string history = cluster.scratch() + "/history.sqlite";
    std::vector<double> parallel, sequential, single;
    std::string headline;
    for (int r = 0; r < reps; ++r) {
        // parallel: a stall event through the trigger, to the stored row
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
        control::DiagnosisTrigger::Options to;
        to.historyPath = history;
        to.base.collectTimeout = collect;
        to.base.callTimeout = collect + std::chrono::seconds(6);
        to.addressesOf = [&](const RunId&) { return cluster.addresses(); };
        to.onDone = [&](const RunId&, const std::string&,
                        const Result<diagnosis::RunDiagnosis>& d) {
            std::lock_guard lock(mutex);
            headline = d ? d->verdict.headline : d.error();
            done = true;
            cv.notify_all();
        };
        {
            control::DiagnosisTrigger trigger(to);
            const auto t0 = Clock::now();
            trigger.fire(RunId("hung-run"), "stall-" + std::to_string(r));
            std::unique_lock lock(mutex);
            cv.wait(lock, [&] { return done; });
            parallel.push_back(ms(Clock::now() - t0));
        }
        // reference: one node after another
        {
            const auto t0 = Clock::now();
            diagnosis::RunDiagnosis all;
            all.runId = "hung-run";
            all.trigger = "sequential";
            for (const auto& a : cluster.addresses()) {
                control::DiagnoseSpec spec;
                spec.runId = RunId("hung-run");
                spec.addresses = {a};
                spec.collectTimeout = collect;
                spec.callTimeout = collect + std::chrono::seconds(6);
                auto one = control::diagnoseAcross(spec);
                all.nodes.push_back(one.nodes.front());
            }
            all.verdict = diagnosis::judge(all.nodes);
            (void)control::storeDiagnosis(history, all);
            sequential.push_back(ms(Clock::now() - t0));
        }
        {
            control::DiagnoseSpec spec;
            spec.runId = RunId("hung-run");
            spec.trigger = "single";
            spec.addresses = {cluster.addresses().front()};
            spec.collectTimeout = collect;
            spec.callTimeout = collect + std::chrono::seconds(6);
            const auto t0 = Clock::now();
            (void)control::diagnoseAndStore(history, spec);
            single.push_back(ms(Clock::now() - t0));
        }
    }
    std::cout << "RESULT diagnose nodes=" << nodes << " reps=" << reps
              << " ras=" << (silent ? "silent" : "answer") << " timeout_ms=" << timeoutMs
              << " parallel_trigger_to_stored_ms=" << median(parallel)
              << " sequential_reference_ms=" << median(sequential)
              << " single_node_ms=" << median(single) << " target_ms=15000\n";
    std::cout << "RESULT headline=\"" << headline << "\"\n";
    return median(parallel) <= 15000 ? 0 : 1;
}
