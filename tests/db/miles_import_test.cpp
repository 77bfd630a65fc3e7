// miles' `--dump-details` dashboard data imported as a run (issue 49, docs/imports.md "miles
// dashboard"). The fixture tests/db/imports/miles-dump-details/ is our own, written in the format
// miles documents (its README says how); every point is checked exactly, a truncated stream imports
// what is whole and names where it stopped, and `runplanectl import-runs` stores it once.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "db/history/history.h"
#include "db/imports/run_import.h"
#include "tests/db/test_util.h"

namespace {

namespace fs = std::filesystem;
using runplane::testing::readAll;
using runplane::testing::ScratchDir;
using runplane::testing::writeAll;

constexpr std::int64_t kStartNs = 1796551200LL * 1000000000LL;
constexpr std::int64_t kSec = 1000000000LL;

std::string fixture() {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    return std::string(src != nullptr ? src : ".") + "/tests/db/imports/miles-dump-details";
}

using Points = std::vector<std::tuple<std::int64_t, std::int64_t, double>>;  // step, t, value
std::map<std::string, Points> bySeries(const runplane::imports::ImportedRun& run) {
    std::map<std::string, Points> out;
    for (const auto& s : run.series) {
        for (const auto& p : s.points) {
            out[s.name].emplace_back(p.step, p.tNs, p.value);
        }
    }
    return out;
}

TEST(MilesImport, DumpDetailsDashboardIsOneRunWithEveryPoint) {
    auto sources = runplane::imports::findImportSources(fixture());
    ASSERT_TRUE(sources.ok()) << sources.error();
    ASSERT_EQ(sources->size(), 1u);  // the .jsonl streams are not CSV/JSON-lines runs of their own
    EXPECT_EQ((*sources)[0].format, "miles");
    EXPECT_EQ((*sources)[0].name, "miles-dump-details");
    // The dashboard folder itself names the same run.
    auto direct = runplane::imports::findImportSources(fixture() + "/dashboard");
    ASSERT_TRUE(direct.ok()) << direct.error();
    ASSERT_EQ(direct->size(), 1u);
    EXPECT_EQ((*direct)[0].name, "miles-dump-details");

    auto run = runplane::imports::readImportSource((*sources)[0]);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_EQ(run->name, "qwen3-4b-grpo-dump");  // meta.json's run_name
    EXPECT_EQ(run->extra["folder"], "miles-dump-details");
    EXPECT_EQ(run->extra["args"]["rollout_batch_size"], 32);
    EXPECT_TRUE(run->stopped.empty()) << run->stopped;
    EXPECT_EQ(run->files.size(), 7u);
    EXPECT_EQ(run->records, 4 + 4 + 3 + 2 + 1 + 4);
    // "warmup" (text), the open phase line and the topology snapshot are not scalars.
    EXPECT_EQ(run->skippedValues, 3);
    const auto s = bySeries(*run);
    EXPECT_EQ(s.at("rollout/raw_reward"), (Points{{0, kStartNs + 60 * kSec + 250000000, 0.5},
                                                  {1, kStartNs + 180 * kSec + 750000000, 0.625}}));
    EXPECT_EQ(s.at("train/loss"), (Points{{0, kStartNs + 120 * kSec + 500000000, 0.125}}));
    EXPECT_EQ(s.at("eval/gsm8k"), (Points{{1, kStartNs + 200 * kSec, 0.75}}));
    EXPECT_EQ(s.at("miles/phase/rollout/rank0/seconds"),
              (Points{{-1, kStartNs + 58 * kSec + 500000000, 48.5}}));
    EXPECT_EQ(s.at("miles/phase/train/rank0/seconds"),
              (Points{{-1, kStartNs + 118 * kSec + 250000000, 58.25}}));
    EXPECT_EQ(s.at("miles/phase/train/rank1/seconds"), (Points{{-1, kStartNs + 119 * kSec, 59}}));
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:0/mem_mb"),
              (Points{{-1, kStartNs + 30 * kSec, 71234}, {-1, kStartNs + 31 * kSec, 30210}}));
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:1/util"), (Points{{-1, kStartNs + 30 * kSec, 95}}));
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:0/power_w").size(), 2u);
    EXPECT_EQ(s.at("miles/engine/10.0.0.1:30000/sglang_num_running_reqs"),
              (Points{{-1, kStartNs + 32 * kSec, 48}}));
    EXPECT_EQ(s.at("miles/engine/10.0.0.1:30000/sglang_token_usage{model_name=qwen3-4b,tp_rank=0}"),
              (Points{{-1, kStartNs + 32 * kSec, 0.8125}}));
    // Per-process GPU memory (gpu_processes): by pid and the executable's last path component.
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:0/process/4242 python3/mem_mb"),
              (Points{{-1, kStartNs + 35 * kSec, 65536}, {-1, kStartNs + 40 * kSec, 24576}}));
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:0/process/4317 sglang::scheduler/mem_mb"),
              (Points{{-1, kStartNs + 35 * kSec, 5632}}));
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:1/process/4243 pid 4243/mem_mb"),
              (Points{{-1, kStartNs + 40 * kSec, 64000}}));
    // metrics (with the step keys), phases, GPUs, engine, GPU processes
    EXPECT_EQ(s.size(), 8u + 3u + 6u + 2u + 3u);
}

TEST(MilesImport, TruncatedStreamImportsWhatIsWholeAndTheCliStoresItOnce) {
    ScratchDir dir;
    const std::string dump = dir.file("dump");
    fs::copy(fixture(), dump, fs::copy_options::recursive);
    // A GPU sampler's partition cut mid-line (the collector was killed while appending).
    const std::string gpu = dump + "/dashboard/gpu_util/20261206_10.jsonl";
    std::string bytes = readAll(gpu);
    const std::size_t secondLine = bytes.find('\n') + 1;
    writeAll(gpu, bytes.substr(0, secondLine + 20));
    auto sources = runplane::imports::findImportSources(dump);
    ASSERT_TRUE(sources.ok()) << sources.error();
    auto run = runplane::imports::readImportSource((*sources)[0]);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_EQ(run->stopped, gpu + ": stopped at byte " + std::to_string(secondLine) +
                                " (line 2): truncated last line");
    const auto s = bySeries(*run);
    EXPECT_EQ(s.at("miles/gpu/10.0.0.1:0/mem_mb"), (Points{{-1, kStartNs + 30 * kSec, 71234}}));
    EXPECT_EQ(s.count("miles/gpu/10.0.0.1:1/util"), 0u);
    EXPECT_EQ(s.at("eval/gsm8k").size(), 1u);  // the streams after it are still read
    EXPECT_EQ(s.count("miles/engine/10.0.0.1:30000/sglang_num_running_reqs"), 1u);

    // Through the real CLI, twice, on a real history.
    const std::string h = dir.file("h.sqlite");
    const char* bin = std::getenv("RUNPLANE_BINARY_DIR");
    const std::string ctl = std::string(bin != nullptr ? bin : ".") + "/backend/cli/runplanectl";
    auto ran = [&](const std::string& args, std::string* out) {
        FILE* p = ::popen((ctl + " " + args + " 2>&1").c_str(), "r");
        char buf[4096];
        std::size_t n = 0;
        out->clear();
        while (p != nullptr && (n = std::fread(buf, 1, sizeof buf, p)) > 0) {
            out->append(buf, n);
        }
        const int st = p != nullptr ? ::pclose(p) : -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    };
    std::string out;
    EXPECT_EQ(ran("import-runs --history " + h + " " + dump, &out), 1) << out;  // stopped early
    EXPECT_NE(out.find("(miles, "), std::string::npos) << out;
    EXPECT_NE(out.find(gpu + ": stopped at byte"), std::string::npos) << out;
    EXPECT_EQ(ran("import-runs --history " + h + " " + dump, &out), 1) << out;
    EXPECT_NE(out.find("already imported: "), std::string::npos) << out;
    ASSERT_EQ(ran("runs --json --history " + h, &out), 0) << out;
    const auto runs = nlohmann::json::parse(out.substr(0, out.rfind(']') + 1));
    ASSERT_EQ(runs.size(), 1u) << out;
    EXPECT_EQ(runs[0]["name"], "qwen3-4b-grpo-dump");
    EXPECT_EQ(runs[0]["provenance"]["origin"]["format"], "miles");
    ASSERT_EQ(ran("history sql --history " + h +
                      " \"SELECT count(*) AS n FROM v_points WHERE series LIKE 'miles/phase/%'\"",
                  &out),
              0)
        << out;
    EXPECT_NE(out.find("\n3\n"), std::string::npos) << out;
}

}  // namespace
