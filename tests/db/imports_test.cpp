// Runs imported into the history (issue 49, docs/imports.md): TensorBoard event files written by
// TensorBoard's own writer (tests/db/imports/write_tensorboard_runs.py, in the venv the
// `imports_venv` fixture makes) read back with every point, step and wall time equal; importing
// twice adds nothing; a truncated or damaged file imports what is whole and names where it stopped;
// the CSV / JSON-lines fallback.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <sys/wait.h>

#include "db/history/history.h"
#include "db/imports/run_import.h"
#include "tests/db/test_util.h"

namespace {

namespace fs = std::filesystem;
using runplane::db::History;
using runplane::imports::ImportSource;
using runplane::testing::readAll;
using runplane::testing::ScratchDir;
using runplane::testing::writeAll;

std::string envOr(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : fallback;
}

std::string python() {
    return envOr("RUNPLANE_BINARY_DIR", ".") + "/imports-venv/bin/python";
}

/// Runs the writer script into `dir`; its stdout, the JSON of every point it wrote.
nlohmann::json writeTensorBoardRuns(const std::string& dir) {
    const std::string script =
        envOr("RUNPLANE_SOURCE_DIR", ".") + "/tests/db/imports/write_tensorboard_runs.py";
    const std::string out = dir + ".expected.json";
    const std::string cmd = python() + " " + script + " " + dir + " > " + out;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return nlohmann::json::parse(readAll(out));
}

double hexDouble(const std::string& hex) {
    return std::strtod(hex.c_str(), nullptr);
}

std::unique_ptr<History> openHistory(const std::string& path) {
    auto h = History::open(path);
    EXPECT_TRUE(h.ok()) << (h.ok() ? "" : h.error());
    return std::move(*h);
}

std::vector<runplane::db::SeriesPoint> storedPoints(History& history, const runplane::RunId& run,
                                                    const std::string& name) {
    auto id = history.findSeries(runplane::NodeId{"import"}, run, name);
    EXPECT_TRUE(id.ok() && id->has_value()) << name;
    if (!id.ok() || !id->has_value()) {
        return {};
    }
    runplane::db::SeriesQuery q;
    q.seriesId = **id;
    q.maxBuckets = 1'000'000;
    auto pts = history.querySeries(q);
    EXPECT_TRUE(pts.ok());
    EXPECT_FALSE(pts->decimated);
    return pts->points;
}

struct Expected {
    std::int64_t step;
    double wall;
    double value;
};

/// The byte offsets where each record of an event file starts (the framing, read by the test).
std::vector<std::size_t> recordStarts(const std::string& bytes) {
    std::vector<std::size_t> starts;
    std::size_t at = 0;
    while (at + 12 <= bytes.size()) {
        std::uint64_t len = 0;
        std::memcpy(&len, bytes.data() + at, 8);
        starts.push_back(at);
        at += 12 + len + 4;
    }
    return starts;
}

class TensorBoardImport : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(python()))
            << python()
            << " is missing: the imports_venv fixture (scripts/setup-imports-venv.sh) "
               "makes it";
        expected = writeTensorBoardRuns(dir.file("tb"));
    }
    ScratchDir dir;
    nlohmann::json expected;
};

TEST_F(TensorBoardImport, EveryPointStepAndWallTimeReadsBackEqual) {
    auto sources = runplane::imports::findImportSources(dir.file("tb"));
    ASSERT_TRUE(sources.ok()) << sources.error();
    ASSERT_EQ(sources->size(), 2u);
    auto history = openHistory(dir.file("history.sqlite"));
    std::size_t compared = 0;
    for (const ImportSource& source : *sources) {
        ASSERT_EQ(source.format, "tensorboard");
        auto run = runplane::imports::readImportSource(source);
        ASSERT_TRUE(run.ok()) << run.error();
        EXPECT_EQ(run->stopped, "");
        auto stored = runplane::imports::storeImportedRun(*history, *run, 1);
        ASSERT_TRUE(stored.ok()) << stored.error();
        EXPECT_FALSE(stored->alreadyPresent);

        std::map<std::string, std::vector<Expected>> want;
        for (const auto& p : expected.at(source.name)) {
            want[p[0].get<std::string>()].push_back(
                {p[1].get<std::int64_t>(), hexDouble(p[2]), hexDouble(p[3])});
        }
        EXPECT_EQ(run->series.size(), want.size()) << source.name;
        EXPECT_EQ(stored->samplesInserted, expected.at(source.name).size());
        if (source.name == "tf1") {
            EXPECT_EQ(source.files.size(), 2u);
            EXPECT_EQ(run->skippedValues, 11);  // the histograms: steps 0, 50, ..., 500
        }
        for (auto& [tag, points] : want) {
            std::stable_sort(points.begin(), points.end(),
                             [](const Expected& a, const Expected& b) { return a.wall < b.wall; });
            const auto got = storedPoints(*history, stored->runId, tag);
            ASSERT_EQ(got.size(), points.size()) << source.name << " " << tag;
            for (std::size_t i = 0; i < got.size(); ++i) {
                const Expected& e = points[i];
                SCOPED_TRACE(source.name + " " + tag + " point " + std::to_string(i));
                EXPECT_EQ(got[i].step, e.step);
                // Wall time: seconds x 1e9 rounded to the ns (docs/imports.md), within the
                // double's own resolution of the seconds value.
                EXPECT_EQ(got[i].tNs, static_cast<std::int64_t>(std::nearbyint(e.wall * 1e9)));
                EXPECT_LE(std::abs(static_cast<double>(got[i].tNs) / 1e9 - e.wall), 1e-6);
                if (std::isnan(e.value)) {
                    EXPECT_TRUE(std::isnan(got[i].value));
                } else {
                    EXPECT_EQ(std::memcmp(&got[i].value, &e.value, sizeof(double)), 0)
                        << got[i].value << " != " << e.value;  // bit for bit: -0.0, denormals
                }
                ++compared;
            }
        }
        // The origin is the run's provenance; the run spans its points.
        auto rec = history->run(stored->runId);
        ASSERT_TRUE(rec.ok() && rec->has_value());
        const auto prov = nlohmann::json::parse((*rec)->provenanceJson);
        EXPECT_EQ(prov["origin"]["format"], "tensorboard");
        EXPECT_EQ(prov["origin"]["files"], source.files);
        EXPECT_EQ(prov["origin"]["content_sha256"], run->contentSha256);
        EXPECT_EQ((*rec)->name, source.name);
        EXPECT_EQ((*rec)->state, runplane::db::RunState::Finished);
        EXPECT_TRUE((*rec)->pinned);  // retention keeps last month's imported runs
    }
    EXPECT_EQ(compared, expected.at("tf1").size() + expected.at("tf2").size());
}

TEST_F(TensorBoardImport, ImportingTwiceAddsNothingEvenFromACopy) {
    auto history = openHistory(dir.file("history.sqlite"));
    fs::create_directories(dir.file("copy/renamed"));
    fs::copy(dir.file("tb/tf2"), dir.file("copy/renamed"), fs::copy_options::recursive);
    std::vector<std::string> ids;
    for (const std::string& path : {dir.file("tb/tf2"), dir.file("tb/tf2"), dir.file("copy")}) {
        auto sources = runplane::imports::findImportSources(path);
        ASSERT_TRUE(sources.ok());
        ASSERT_EQ(sources->size(), 1u);
        auto run = runplane::imports::readImportSource(sources->front());
        ASSERT_TRUE(run.ok());
        auto stored = runplane::imports::storeImportedRun(*history, *run, 1);
        ASSERT_TRUE(stored.ok()) << stored.error();
        EXPECT_EQ(stored->alreadyPresent, !ids.empty()) << path;
        EXPECT_EQ(stored->samplesInserted, ids.empty() ? 1200u : 0u);
        ids.push_back(stored->runId.value());
    }
    EXPECT_EQ(ids[0], ids[1]);
    EXPECT_EQ(ids[0], ids[2]);
    EXPECT_EQ(history->listRuns()->size(), 1u);
    auto series = history->listSeries({});
    ASSERT_TRUE(series.ok());
    std::int64_t samples = 0;
    for (const auto& s : *series) {
        samples += s.count;
    }
    EXPECT_EQ(samples, 1200);
}

TEST_F(TensorBoardImport, ATruncatedFileImportsWhatIsWholeAndSaysWhereItStopped) {
    const std::string file = dir.file("cut/events.out.tfevents.1.cut");
    fs::create_directories(dir.file("cut"));
    // The first file of tf1: a file_version record, then one value per event.
    std::vector<fs::path> parts;
    for (const auto& e : fs::directory_iterator(dir.file("tb/tf1"))) {
        parts.push_back(e.path());
    }
    std::sort(parts.begin(), parts.end());
    const std::string bytes = readAll(parts.front().string());
    const auto starts = recordStarts(bytes);
    ASSERT_GT(starts.size(), 200u);
    const std::size_t k = 150;  // cut inside record k
    writeAll(file, bytes.substr(0, starts[k] + 20));
    auto run = runplane::imports::readTensorBoard({"tensorboard", "cut", {file}});
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->stopped, file + ": stopped at byte " + std::to_string(starts[k]) +
                                ": truncated record (" +
                                std::to_string(starts[k + 1] - starts[k] - 16) +
                                " bytes of data, 8 left in the file)");
    EXPECT_EQ(run->records, static_cast<std::int64_t>(k));
    // Records 1..k-1 each hold one value: every one of them is imported, the rest not.
    std::size_t values = run->pointCount() + static_cast<std::size_t>(run->skippedValues);
    EXPECT_EQ(values, k - 1);

    // The same record with one byte of its data changed: its CRC fails there.
    std::string damaged = bytes;
    damaged[starts[k] + 14] = static_cast<char>(damaged[starts[k] + 14] ^ 0x40);
    writeAll(file, damaged);
    auto bad = runplane::imports::readTensorBoard({"tensorboard", "cut", {file}});
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->stopped, file + ": stopped at byte " + std::to_string(starts[k]) +
                                ": record data fails its CRC");
    EXPECT_EQ(bad->pointCount() + static_cast<std::size_t>(bad->skippedValues), k - 1);

    // A damaged length field.
    damaged = bytes;
    damaged[starts[k] + 2] = static_cast<char>(damaged[starts[k] + 2] ^ 0x01);
    writeAll(file, damaged);
    bad = runplane::imports::readTensorBoard({"tensorboard", "cut", {file}});
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->stopped, file + ": stopped at byte " + std::to_string(starts[k]) +
                                ": record header fails its CRC (damaged length)");

    // Stored, the partial run says so in its origin and its import event.
    auto history = openHistory(dir.file("history.sqlite"));
    auto stored = runplane::imports::storeImportedRun(*history, *bad, 1);
    ASSERT_TRUE(stored.ok());
    auto rec = history->run(stored->runId);
    EXPECT_EQ(nlohmann::json::parse((*rec)->provenanceJson)["origin"]["stopped"], bad->stopped);
    runplane::db::EventFilter f;
    f.runId = stored->runId;
    auto events = history->listEvents(f);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ(events->front().kind, "import");
    EXPECT_NE(events->front().message.find(bad->stopped), std::string::npos);
}

TEST(ImportSources, AMissingPathOrAnUnknownFileIsAnErrorNamingIt) {
    ScratchDir dir;
    auto missing = runplane::imports::findImportSources(dir.file("nope"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), dir.file("nope") + ": no such file or folder");
    writeAll(dir.file("notes.txt"), "hello\n");
    auto unknown = runplane::imports::findImportSources(dir.file("notes.txt"));
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().find(dir.file("notes.txt")), std::string::npos);
    auto empty = runplane::imports::findImportSources(dir.path().string());
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.error().find("holds no run"), std::string::npos);
}

}  // namespace

namespace {

std::vector<runplane::imports::ImportedPoint> pointsOf(const runplane::imports::ImportedRun& run,
                                                       const std::string& name) {
    for (const auto& s : run.series) {
        if (s.name == name) {
            return s.points;
        }
    }
    ADD_FAILURE() << "no series " << name;
    return {};
}

TEST(TabularImport, CsvColumnsAreStepWallTimeAndMetrics) {
    ScratchDir dir;
    const std::string file = dir.file("train.csv");
    writeAll(file,
             "step,wall_time,train/loss,\"eval/gsm8k, strict\",note\r\n"
             "0,1796553600.5,2.31,,warmup\r\n"
             "100,1796553700.25,1.02,0.41,\r\n"
             "\r\n"
             "200,1796553800,nan,0.5,\"a \"\"quoted\"\" note\"\r\n");
    auto sources = runplane::imports::findImportSources(file);
    ASSERT_TRUE(sources.ok());
    ASSERT_EQ(sources->front().format, "csv");
    EXPECT_EQ(sources->front().name, "train");
    auto run = runplane::imports::readImportSource(sources->front());
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_EQ(run->stopped, "");
    EXPECT_EQ(run->records, 3);
    ASSERT_EQ(run->series.size(), 3u);  // the text column "note" makes no points
    EXPECT_EQ(run->skippedValues, 2);   // "warmup", the quoted note
    const auto loss = pointsOf(*run, "train/loss");
    ASSERT_EQ(loss.size(), 3u);
    EXPECT_EQ(loss[0].step, 0);
    EXPECT_EQ(loss[0].tNs, 1796553600500000000);
    EXPECT_EQ(loss[0].value, 2.31);
    EXPECT_EQ(loss[1].tNs, 1796553700250000000);
    EXPECT_TRUE(std::isnan(loss[2].value));
    const auto eval = pointsOf(*run, "eval/gsm8k, strict");
    ASSERT_EQ(eval.size(), 2u);  // the empty cell is no point
    EXPECT_EQ(eval[0].step, 100);
    EXPECT_EQ(eval[1].value, 0.5);

    // A short row stops the reading there; the rows before it are kept.
    writeAll(file, "step,loss\n1,0.5\n2\n3,0.25\n");
    run = runplane::imports::readCsv({"csv", "train", {file}});
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->stopped, file + ": stopped at byte 16 (line 3): 1 cells where the header has 2");
    ASSERT_EQ(pointsOf(*run, "loss").size(), 1u);
    // Without a wall-time column a row's time is its step in seconds.
    EXPECT_EQ(pointsOf(*run, "loss")[0].tNs, 1'000'000'000);
}

TEST(TabularImport, JsonLinesFlattenNestedObjectsAndStopAtATruncatedLine) {
    ScratchDir dir;
    const std::string file = dir.file("log.jsonl");
    writeAll(file,
             "{\"_step\": 3, \"_timestamp\": 1796553600.125, \"loss\": 0.5, \"eval\": {\"gsm8k\": "
             "0.25}, \"done\": false, \"tag\": \"x\"}\n"
             "\n"
             "{\"_step\": 4, \"_timestamp\": 1796553601.125, \"loss\": 0.4}\n"
             "{\"_step\": 5, \"loss\": 0.3");
    auto run = runplane::imports::readJsonLines({"jsonl", "log", {file}});
    ASSERT_TRUE(run.ok()) << run.error();
    const std::size_t cut = readAll(file).rfind('{');
    EXPECT_EQ(run->stopped,
              file + ": stopped at byte " + std::to_string(cut) + " (line 4): truncated last line");
    EXPECT_EQ(run->records, 2);
    EXPECT_EQ(run->skippedValues, 1);  // "tag"
    const auto loss = pointsOf(*run, "loss");
    ASSERT_EQ(loss.size(), 2u);
    EXPECT_EQ(loss[1].step, 4);
    EXPECT_EQ(loss[1].tNs, 1796553601125000000);
    EXPECT_EQ(pointsOf(*run, "eval/gsm8k").at(0).value, 0.25);
    EXPECT_EQ(pointsOf(*run, "done").at(0).value, 0.0);

    // Stored and imported again: one run, nothing added the second time.
    auto history = openHistory(dir.file("h.sqlite"));
    auto first = runplane::imports::storeImportedRun(*history, *run, 1);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->samplesInserted, 4u);  // loss x2, eval/gsm8k, done
    auto again = runplane::imports::storeImportedRun(*history, *run, 2);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->alreadyPresent);
    EXPECT_EQ(again->samplesInserted, 0u);
}

}  // namespace

namespace {

/// A real W&B offline run (tests/db/imports/write_wandb_run.py) and what it logged.
class WandbImport : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(python())) << python()
                                          << " is missing: the imports_venv fixture "
                                             "(scripts/setup-imports-venv.sh) makes it";
        const std::string script =
            envOr("RUNPLANE_SOURCE_DIR", ".") + "/tests/db/imports/write_wandb_run.py";
        const std::string cmd =
            python() + " " + script + " " + dir.file("w") + " > " + dir.file("w.json");
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        logged = nlohmann::json::parse(readAll(dir.file("w.json")));
        for (const auto& e : fs::recursive_directory_iterator(dir.file("w"))) {
            if (e.path().extension() == ".wandb") {
                file = e.path().string();
            }
        }
        ASSERT_FALSE(file.empty()) << "no .wandb file under " << dir.file("w");
    }
    ScratchDir dir;
    nlohmann::json logged;
    std::string file;
};

TEST_F(WandbImport, EveryLoggedPointStepAndWallTimeReadsBack) {
    auto sources = runplane::imports::findImportSources(dir.file("w"));
    ASSERT_TRUE(sources.ok()) << sources.error();
    ASSERT_EQ(sources->size(), 1u);
    EXPECT_EQ(sources->front().format, "wandb");
    auto run = runplane::imports::readImportSource(sources->front());
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_EQ(run->stopped, "");
    EXPECT_EQ(run->name, "grpo-qwen-7b");
    EXPECT_EQ(run->extra["config"]["lr"], 1e-6);
    EXPECT_EQ(run->extra["config"]["model"]["name"], "qwen2.5-7b");
    EXPECT_EQ(run->extra["summary"]["best_gsm8k"], 0.58);
    EXPECT_EQ(run->extra["tags"], nlohmann::json::array({"baseline"}));
    EXPECT_EQ(run->extra["history_rows"], 300);
    EXPECT_EQ(run->skippedValues, 300);  // "phase", a text, once per row

    auto history = openHistory(dir.file("h.sqlite"));
    auto stored = runplane::imports::storeImportedRun(*history, *run, 1);
    ASSERT_TRUE(stored.ok()) << stored.error();
    std::map<std::int64_t, std::pair<double, double>> bounds;
    for (const auto& b : logged["bounds"]) {
        bounds[b[0].get<std::int64_t>()] = {b[1].get<double>(), b[2].get<double>()};
    }
    std::map<std::string, std::vector<std::pair<std::int64_t, double>>> want;
    for (const auto& p : logged["points"]) {
        want[p[0].get<std::string>()].push_back({p[1].get<std::int64_t>(), hexDouble(p[2])});
    }
    std::size_t compared = 0;
    for (const auto& [key, points] : want) {
        const auto got = storedPoints(*history, stored->runId, key);
        ASSERT_EQ(got.size(), points.size()) << key;
        for (std::size_t i = 0; i < got.size(); ++i) {
            SCOPED_TRACE(key + " point " + std::to_string(i));
            EXPECT_EQ(got[i].step, points[i].first);
            EXPECT_EQ(got[i].value, points[i].second);
            // W&B stamps _timestamp inside run.log(): between the clock read before and after.
            const auto [before, after] = bounds.at(points[i].first);
            const double t = static_cast<double>(got[i].tNs) / 1e9;
            EXPECT_GE(t, before - 1e-6);
            EXPECT_LE(t, after + 1e-6);
            ++compared;
        }
    }
    EXPECT_EQ(compared, logged["points"].size());
    // Every series of a row shares its time: the row's _timestamp.
    const auto loss = storedPoints(*history, stored->runId, "train/loss");
    const auto reward = storedPoints(*history, stored->runId, "train/reward");
    ASSERT_EQ(loss.size(), reward.size());
    for (std::size_t i = 0; i < loss.size(); ++i) {
        EXPECT_EQ(loss[i].tNs, reward[i].tNs);
    }
    auto again = runplane::imports::storeImportedRun(*history, *run, 2);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->alreadyPresent);
}

TEST_F(WandbImport, ATruncatedOrDamagedLogImportsTheRecordsBeforeIt) {
    auto whole = runplane::imports::readWandb({"wandb", "w", {file}});
    ASSERT_TRUE(whole.ok());
    const std::string bytes = readAll(file);
    const std::string cut = dir.file("cut.wandb");
    auto isPrefix = [&](const runplane::imports::ImportedRun& part) {
        std::size_t points = 0;
        for (const auto& s : part.series) {
            const auto full = pointsOf(*whole, s.name);
            EXPECT_LE(s.points.size(), full.size()) << s.name;
            for (std::size_t i = 0; i < s.points.size() && i < full.size(); ++i) {
                EXPECT_EQ(s.points[i].step, full[i].step);
                EXPECT_EQ(s.points[i].tNs, full[i].tNs);
                EXPECT_EQ(s.points[i].value, full[i].value);
            }
            points += s.points.size();
        }
        return points;
    };
    writeAll(cut, bytes.substr(0, bytes.size() / 2));
    auto part = runplane::imports::readWandb({"wandb", "cut", {cut}});
    ASSERT_TRUE(part.ok()) << part.error();
    EXPECT_EQ(part->stopped.rfind(cut + ": stopped at byte ", 0), 0u) << part->stopped;
    const std::size_t kept = isPrefix(*part);
    EXPECT_GT(kept, 0u);
    EXPECT_LT(kept, whole->pointCount());

    std::string damaged = bytes;
    std::size_t at = bytes.size() / 2;
    if (at % 32768 > 32768 - 16) {  // not into a block's zero trailer
        at -= 32;
    }
    damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
    writeAll(cut, damaged);
    part = runplane::imports::readWandb({"wandb", "cut", {cut}});
    ASSERT_TRUE(part.ok());
    EXPECT_NE(part->stopped.find(cut + ": stopped at byte "), std::string::npos);
    // Mostly "record fails its CRC"; a changed length field says that its record runs past
    // its block or the file instead.
    EXPECT_NE(part->stopped.find(": record "), std::string::npos) << part->stopped;
    EXPECT_GT(isPrefix(*part), 0u);

    writeAll(cut, "not a log");
    auto bad = runplane::imports::readWandb({"wandb", "cut", {cut}});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), cut + ": not a W&B transaction log (no \":W&B\" header)");
}

}  // namespace

namespace {

struct Ran {
    int status = -1;
    std::string out;  // stdout and stderr
};

Ran runCtl(const std::string& args) {
    const std::string cmd =
        envOr("RUNPLANE_BINARY_DIR", ".") + "/backend/cli/runplanectl " + args + " 2>&1";
    Ran r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        r.out.append(buf, n);
    }
    const int status = ::pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

TEST(ImportCli, ImportTwiceThenQueryTheHistoryReadOnly) {
    ScratchDir dir;
    fs::create_directories(dir.file("runs/team-a"));
    writeAll(dir.file("runs/team-a/base.csv"),
             "step,wall_time,eval/gsm8k\n0,1796553600,0.25\n"
             "100,1796553700,0.5\n");
    writeAll(dir.file("runs/cut.jsonl"), "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"lo");
    const std::string h = dir.file("h.sqlite");
    const Ran first = runCtl("import-runs --history " + h + " " + dir.file("runs"));
    EXPECT_EQ(first.status, 1) << first.out;  // one file stopped early
    EXPECT_NE(first.out.find("(csv, 1 series, 2 points)"), std::string::npos) << first.out;
    EXPECT_NE(first.out.find(dir.file("runs/cut.jsonl") +
                             ": stopped at byte 25 (line 2): truncated last line (what came "
                             "before it is imported)"),
              std::string::npos)
        << first.out;
    const Ran second = runCtl("import-runs --history " + h + " " + dir.file("runs"));
    EXPECT_NE(second.out.find("already imported: "), std::string::npos) << second.out;
    EXPECT_EQ(second.out.find("\nimported "), std::string::npos) << second.out;

    const Ran sql = runCtl("history sql --history " + h +
                           " --json \"SELECT name, origin FROM v_runs ORDER BY name\"");
    ASSERT_EQ(sql.status, 0) << sql.out;
    const auto j = nlohmann::json::parse(sql.out.substr(0, sql.out.rfind('}') + 1));
    ASSERT_EQ(j["rows"].size(), 2u) << sql.out;
    EXPECT_EQ(j["rows"][0]["name"], "cut");
    EXPECT_EQ(j["rows"][0]["origin"], "jsonl");
    EXPECT_EQ(j["rows"][1]["name"], "team-a/base");
    EXPECT_EQ(j["rows"][1]["origin"], "csv");

    const Ran text = runCtl("history sql --history " + h +
                            " \"SELECT series, step, value FROM v_points ORDER BY series, step\"");
    EXPECT_EQ(text.status, 0);
    EXPECT_NE(text.out.find("series      step  value\n"
                            "eval/gsm8k     0   0.25\n"
                            "eval/gsm8k   100    0.5\n"
                            "loss           1    0.5\n"),
              std::string::npos)
        << text.out;

    const std::string before = readAll(h);
    const Ran write = runCtl("history sql --history " + h + " \"DELETE FROM runs\"");
    EXPECT_EQ(write.status, 1);
    EXPECT_NE(write.out.find("only SELECT or WITH statements run"), std::string::npos);
    EXPECT_EQ(readAll(h), before);
}

}  // namespace

namespace {

TEST(TabularImport, OddInputIsReadWithoutUndefinedCastsOrThrows) {
    ScratchDir dir;
    const std::string csv = dir.file("odd.csv");
    writeAll(csv, "step,wall_time,m\xff\n1e30,1e300,1\n-inf,9999999999.5,2\n");
    auto run = runplane::imports::readCsv({"csv", "odd\xfe", {csv}});
    ASSERT_TRUE(run.ok());
    ASSERT_EQ(run->series.size(), 1u);
    ASSERT_EQ(run->series[0].points.size(), 2u);
    EXPECT_EQ(run->series[0].points[0].step, -1);  // beyond an int64: no step
    EXPECT_EQ(run->series[0].points[0].tNs, 0);    // beyond an int64 of ns: no time
    EXPECT_EQ(run->series[0].points[1].step, -1);
    EXPECT_EQ(run->series[0].points[1].tNs, 0);  // 9999999999.5 s is past an int64 of ns
    const std::string jsonl = dir.file("odd.jsonl");
    writeAll(jsonl, "{\"step\": 1e30, \"v\": 1}\n{\"step\": 3.7, \"v\": 2}\n");
    auto j = runplane::imports::readJsonLines({"jsonl", "odd", {jsonl}});
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(pointsOf(*j, "v").at(0).step, -1);
    EXPECT_EQ(pointsOf(*j, "v").at(1).step, 3);
    // Stored with a name and a path that are not UTF-8: the provenance is still JSON.
    auto history = openHistory(dir.file("h.sqlite"));
    auto stored = runplane::imports::storeImportedRun(*history, *run, 1);
    ASSERT_TRUE(stored.ok()) << stored.error();
    auto rec = history->run(stored->runId);
    ASSERT_TRUE(rec.ok() && rec->has_value());
    EXPECT_FALSE(nlohmann::json::parse((*rec)->provenanceJson, nullptr, false).is_discarded());
}

}  // namespace
