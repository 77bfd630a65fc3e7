#include "tests/gui/synthetic_history.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "db/history/history.h"

namespace runplane::gui::test {

namespace {

constexpr double kGB = 1e9;
constexpr std::int64_t kSecond = 1000000000LL;

// Deterministic noise in [-1, 1].
double noise(std::uint64_t i) {
    std::uint64_t x = i * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return static_cast<double>(x % 20001) / 10000.0 - 1.0;
}

struct PhasePlan {
    const char* name;
    int seconds;
    double baseGB;
};

// One training iteration: rollout (trainer asleep, its tms backup on the host), train (engines
// asleep, their NVFP4 mirror on the host), weight sync (briefly both plus staging).
const PhasePlan kCycle[] = {{"rollout", 170, 630}, {"train", 100, 612}, {"weight_sync", 30, 700}};

}  // namespace

std::string sourceRecipe(const std::string& file) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    if (src == nullptr) {
        return {};
    }
    std::ifstream in(std::string(src) + "/recipes/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<std::int64_t> writeSyntheticRun(db::History& history, const SyntheticRunSpec& spec) {
    db::RunRecord run;
    run.id = RunId{spec.runId};
    run.name = spec.name;
    run.recipeYaml = spec.recipeYaml;
    run.provenanceJson = R"({"argv":["synthetic"],"git_rev":"test"})";
    run.state = spec.finished ? db::RunState::Finished : db::RunState::Running;
    run.startedNs = spec.startNs;
    run.endedNs = spec.finished ? spec.startNs + spec.seconds * kSecond : 0;
    run.nodes = spec.nodes;
    run.message = spec.finished ? "exit 0" : "";
    if (Status s = history.upsertRun(run); !s) {
        return Error{s.error()};
    }

    std::int64_t spikeNs = 0;
    for (size_t n = 0; n < spec.nodes.size(); ++n) {
        const std::string& node = spec.nodes[n];
        db::NodeRecord rec;
        rec.nodeId = NodeId{node};
        rec.address = "127.0.0.1:" + std::to_string(7070 + n);
        rec.hostname = node;
        rec.infoJson =
            R"({"hostname":")" + node + R"(","host_ram_bytes":)" +
            std::to_string(static_cast<std::int64_t>(spec.ramGB * kGB)) +
            R"(,"nccl_libraries":[{"path":"/usr/lib/libnccl.so.2","source":"system","version":")" +
            spec.ncclVersion + R"(","error":"","selected":true}]})";
        rec.lastSeenNs = spec.startNs + spec.seconds * kSecond;
        if (Status s = history.upsertNode(rec); !s) {
            return Error{s.error()};
        }

        std::uint64_t seq = 1;
        if (auto cursor = history.ingestCursor(db::NodeId{node})) {
            seq = *cursor + 1;
        }
        db::IngestBatch batch;
        batch.nodeId = db::NodeId{node};
        auto flush = [&]() -> Status {
            if (batch.samples.empty() && batch.events.empty()) {
                return {};
            }
            batch.throughSeq = seq - 1;
            auto r = history.ingest(batch);
            batch.samples.clear();
            batch.events.clear();
            if (!r) {
                return Error{r.error()};
            }
            return {};
        };
        auto sample = [&](std::int64_t t, const std::string& runId, const std::string& series,
                          const std::string& unit, double v, double lo, double hi,
                          std::int64_t step = -1) {
            db::IngestSample s;
            s.seq = seq++;
            s.tNs = t;
            s.runId = db::RunId{runId};
            s.series = series;
            s.unit = unit;
            s.value = v;
            s.min = lo;
            s.max = hi;
            s.step = step;
            batch.samples.push_back(std::move(s));
        };
        auto event = [&](std::int64_t t, const std::string& kind, const std::string& message,
                         const db::EventAttrs& attrs) {
            db::IngestEvent e;
            e.seq = seq++;
            e.tNs = t;
            e.runId = db::RunId{spec.runId};
            e.kind = kind;
            e.message = message;
            e.attrs = attrs;
            batch.events.push_back(std::move(e));
        };

        // Load phase: the checkpoint read fills the page cache, then it is dropped.
        const int loadSeconds = 120;
        std::string phase;
        int inPhase = 0;
        int cycleIndex = -1;
        int phaseLeft = 0;
        bool alarmRaised = false;
        for (int s = 0; s < spec.seconds; ++s) {
            const std::int64_t t = spec.startNs + s * kSecond;
            double base = 0;
            if (s < loadSeconds) {
                if (s == 0) {
                    phase = "load";
                    event(t, "phase", "load", {{"phase", "load"}});
                }
                base = 80 + 4.5 * s;  // page cache grows while reading the checkpoint
            } else {
                if (phaseLeft == 0) {
                    cycleIndex = (cycleIndex + 1) % 3;
                    phase = kCycle[cycleIndex].name;
                    phaseLeft = kCycle[cycleIndex].seconds;
                    inPhase = 0;
                    event(t, "phase", phase, {{"phase", phase}});
                }
                base = kCycle[cycleIndex].baseGB + 8 * std::sin(inPhase * 0.05);
                --phaseLeft;
                ++inPhase;
            }
            // node-b: from 40 % of the run a second backup is held (the regression).
            const bool regress = spec.regressNodeB && n == 1 && s > spec.seconds * 2 / 5 &&
                                 s < spec.seconds * 3 / 5 && s >= loadSeconds;
            if (regress) {
                base += 150;
            }
            double v = (base + 3 * noise(s * 7 + n)) * kGB * spec.hostScale;
            double lo = v - 2 * kGB * spec.hostScale;
            double hi = v + 2 * kGB * spec.hostScale;
            if (spec.plantSpike && n == 1 && s == spec.seconds / 2) {
                hi = 900 * kGB;  // a one-sample spike inside one interval
                spikeNs = t;
            }
            if (regress && !alarmRaised) {
                event(t + kSecond * 60, "memory_alarm", "above 750 GB for 60 s",
                      {{"threshold_bytes", "750000000000"}});
                alarmRaised = true;
            }
            sample(t, "", "host.mem.used_bytes", "bytes", v, lo, hi);
            if (s % 10 == 0) {
                const double ram = spec.ramGB * kGB;
                sample(t, "", "host.mem.total_bytes", "bytes", ram, ram, ram);
            }
            // Process tree RSS of the run: most of the used memory.
            const double rss = v * 0.85;
            sample(t, spec.runId, "proc.rss_bytes", "bytes", rss, rss, rss);
            for (int g = 0; g < spec.gpusPerNode; ++g) {
                double gpu = (phase == "rollout" ? 70
                              : phase == "train" ? 62
                                                 : 40) +
                             2 * g + noise(s * 13 + g) * 1.5;
                gpu *= kGB;
                sample(t, "", "gpu." + std::to_string(g) + ".mem.used_bytes", "bytes", gpu,
                       gpu - 0.5 * kGB, gpu + 0.5 * kGB);
            }
            if (s % 200 == 0) {
                if (Status st = flush(); !st) {
                    return Error{st.error()};
                }
            }
        }
        // NCCL trouble and a stall, on node-a.
        if (n == 0) {
            event(spec.startNs + 900 * kSecond, "nccl_warning",
                  "NCCL WARN Call to ibv_reg_mr failed, retrying", {});
            event(spec.startNs + 1500 * kSecond, "stall", "no progress for 120 s in train", {});
            event(spec.startNs + 2400 * kSecond, "nccl_error",
                  "NCCL WARN NET/IB : Got completion with error 12", {});
            event(spec.startNs + 200 * kSecond, "info", "nccl all_reduce probe",
                  {{"collective", "all_reduce"},
                   {"bytes", "1073741824"},
                   {"busbw_gbps", "341.5"},
                   {"expected_busbw_gbps", "360"}});
        }
        // Eval metrics (run-level) by step, on the head node only.
        if (n == 0 && spec.standardEvals) {
            for (int step = 0; step <= spec.evalSteps; step += 5) {
                const std::int64_t t = spec.startNs + (loadSeconds + step * 80) * kSecond;
                const double f = static_cast<double>(step) / spec.evalSteps;
                const double gsm = spec.evalStart +
                                   (spec.evalEnd - spec.evalStart) * (1 - std::exp(-3 * f)) /
                                       (1 - std::exp(-3.0)) +
                                   0.01 * noise(step);
                sample(t, spec.runId, "eval/gsm8k", "", gsm, gsm, gsm, step);
                const double aime = 0.633 + 0.3 * f + 0.015 * noise(step + 100);
                sample(t, spec.runId, "eval/aime", "", aime, aime, aime, step);
                const double loss = 1.2 * std::exp(-1.5 * f) + 0.02 * noise(step + 7);
                sample(t, spec.runId, "train/loss", "", loss, loss, loss, step);
            }
        }
        if (n == 0) {
            for (const ExtraSeries& e : spec.extra) {
                for (const auto& [step, value] : e.points) {
                    const std::int64_t t = spec.startNs + (loadSeconds + step * 80) * kSecond;
                    sample(t, spec.runId, e.name, e.unit, value, value, value, step);
                }
            }
        }
        if (Status st = flush(); !st) {
            return Error{st.error()};
        }
    }
    return spikeNs;
}

}  // namespace runplane::gui::test
