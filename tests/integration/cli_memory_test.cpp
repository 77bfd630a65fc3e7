// issue 43: `runplanectl memory RUN` on a real history file: per node and role, the measured peak
// of the role series beside the planned peak of the components that role holds, from the run's
// recipe snapshot (the shipped Qwen3.8-2.4T-A95B `full` recipe: a ≈ 403 GB trainer backup and a
// ≈ 361 GB engine mirror on node 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "db/history/history.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {
namespace {

/// A run on node-0 (and node-1, which sends nothing) from `start` for 10 minutes with the full
/// recipe's snapshot: role samples every 30 s, the sixth at the given peaks, and a train phase
/// (the timer's start and end, as the daemon stores them) around it.
void addRun(db::History& h, const std::string& id, std::int64_t start, double trainerPeak,
            double pageCachePeak, std::uint64_t& seq) {
    db::RunRecord run;
    run.id = RunId{id};
    run.recipeYaml = readAll(sourceDir() + "/recipes/qwen3.8-2.4T-A95B-full.yaml");
    ASSERT_FALSE(run.recipeYaml.empty());
    run.startedNs = start;
    run.endedNs = start + 600'000'000'000;
    run.state = db::RunState::Finished;
    run.nodes = {"node-0", "node-1"};
    ASSERT_TRUE(h.upsertRun(run).ok());
    db::IngestBatch batch;
    batch.nodeId = db::NodeId{"node-0"};
    auto add = [&](const char* series, double peak) {
        for (int i = 0; i < 10; ++i) {
            db::IngestSample s;
            s.seq = ++seq;
            s.tNs = start + (i + 1) * 30'000'000'000LL;
            s.series = series;
            s.unit = "bytes";
            s.value = s.min = s.max = i == 5 ? peak : peak / 2;
            batch.samples.push_back(s);
        }
    };
    add("role.trainer.rss_bytes", trainerPeak);
    add("role.rollout.rss_bytes", 380e9);  // the engines' mirror, held during train as planned
    add("role.ray.object_store_bytes", 2e9);
    add("host.mem.page_cache_bytes", pageCachePeak);
    add("role.other.rss_bytes", 3e9);
    for (const char* edge : {"start", "end"}) {
        db::IngestEvent e;
        e.seq = ++seq;
        e.tNs = start + (std::string(edge) == "start" ? 100 : 250) * 1'000'000'000LL;
        e.runId = RunId{id};
        e.kind = "phase";
        e.message = std::string("timer actor_train ") + edge;
        e.attrs = db::eventAttrs({{"phase", "train"}, {"edge", edge}, {"timer", "actor_train"}});
        batch.events.push_back(e);
    }
    batch.throughSeq = seq;
    ASSERT_TRUE(h.ingest(batch).ok());
}

TEST(CliMemory, MeasuredPeakPerRoleBesideThePlan) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    const std::string recipes = sourceDir() + "/recipes";
    {
        auto h = db::History::open(path);
        ASSERT_TRUE(h.ok()) << h.error();
        std::uint64_t seq = 0;
        const std::int64_t start = 1'700'000'000'000'000'000;
        // The trainer keeps its ≈ 390 GB backup during train, and 310 GB of page cache stays.
        addRun(**h, "seed-run", start, 795e9, 310e9, seq);
        // The next run drops it: 4 GB of trainer during train (its runtime), 20 GB of page cache.
        addRun(**h, "healthy-run", start + 3'600'000'000'000, 4e9, 20e9, seq);
    }
    auto j = runCtl({"memory", "seed-run", "--history", path, "--recipes", recipes, "--json"},
                    dir.path().string());
    ASSERT_EQ(j.exitCode, 0) << j.err;
    const auto doc = nlohmann::json::parse(j.out);
    ASSERT_EQ(doc["nodes"].size(), 2u);
    EXPECT_EQ(doc["nodes"][0]["node_id"], "node-0");
    std::map<std::string, nlohmann::json> roles;
    for (const auto& r : doc["nodes"][0]["roles"]) {
        roles[r["role"].get<std::string>()] = r;
    }
    ASSERT_TRUE(roles.count("trainer"));
    EXPECT_EQ(roles["trainer"]["measured_peak_bytes"].get<double>(), 795e9);
    const double trainerPlan = roles["trainer"]["planned_peak_bytes"].get<double>();
    EXPECT_GT(trainerPlan, 380e9);  // the tms backup (≈ 403 GB on node 0) and the runtime
    EXPECT_LT(trainerPlan, 500e9);
    EXPECT_NE(roles["trainer"]["components"].get<std::string>().find("trainer tms backup"),
              std::string::npos);
    EXPECT_GT(roles["rollout"]["planned_peak_bytes"].get<double>(), 350e9);
    EXPECT_GT(roles["page cache"]["planned_peak_bytes"].get<double>(), 100e9);  // load phase
    EXPECT_EQ(roles["other"]["measured_peak_bytes"].get<double>(), 3e9);
    EXPECT_TRUE(roles["other"]["planned_peak_bytes"].is_null());
    // node-1 was planned but sent nothing: planned lines only.
    for (const auto& r : doc["nodes"][1]["roles"]) {
        EXPECT_TRUE(r["measured_peak_bytes"].is_null()) << r.dump();
    }

    auto table = runCtl({"memory", "seed-run", "--history", path, "--recipes", recipes},
                        dir.path().string());
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("MEASURED PEAK"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("795.0 GB"), std::string::npos) << table.out;

    // The alarms of the train phase name their cause; the healthy run has none.
    std::vector<std::string> kinds;
    for (const auto& a : doc["nodes"][0]["alarms"]) {
        kinds.push_back(a["kind"].get<std::string>());
        EXPECT_EQ(a["phase"], "train");
    }
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), "two_backups"), kinds.end()) << j.out;
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), "page_cache"), kinds.end()) << j.out;
    EXPECT_NE(table.out.find("alarm: during train both the trainer backup (≈ "), std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("resident on node 0: two backups"), std::string::npos) << table.out;
    auto healthy =
        runCtl({"memory", "healthy-run", "--history", path, "--recipes", recipes, "--json"},
               dir.path().string());
    ASSERT_EQ(healthy.exitCode, 0) << healthy.err;
    const auto hdoc = nlohmann::json::parse(healthy.out);
    EXPECT_TRUE(hdoc["nodes"][0]["alarms"].empty()) << healthy.out;

    auto missing = runCtl({"memory", "nope", "--history", path}, dir.path().string());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("no run 'nope'"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace runplane::testing
