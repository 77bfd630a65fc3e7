// The diagnosis as one archive for a bug report (issue #44, docs/diagnosis.md "Export"): a real
// diagnosis of a run through real daemons (a Python rank blocked in a known function, RAS from a
// recorded report with a missing rank), with the run's record, recipe and real output in the
// history; `runplanectl diagnose --archive` writes it, and both `tar` and libarchive read the
// files back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/control/diagnose.h"
#include "backend/control/diagnosis_archive.h"
#include "db/history/history.h"
#include "diagnosis_cluster.h"
#include "fake_ras.h"

namespace runplane::diagnosis {
namespace {

using testing::ClusterOptions;
using testing::DiagnosisCluster;
using testing::FakeRas;

std::string fixture(const std::string& name) {
    std::ifstream in(runplane::testing::sourceDir() + "/tests/diagnosis/fixtures/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const char* kRecipe = "name: hung-run\nframework: slime\nmodel: Qwen3-4B\n";

// The run as `runplanectl submit` records it, and its real output (the rank's own stdout).
void recordRun(const std::string& history, const std::vector<std::string>& nodes,
               const std::string& stdoutText) {
    auto h = db::History::open(history);
    ASSERT_TRUE(h.ok()) << h.error();
    db::RunRecord r;
    r.id = RunId("hung-run");
    r.name = "hung-run";
    r.recipeYaml = kRecipe;
    r.provenanceJson = R"({"argv":["python3","blocked_rank.py"]})";
    r.startedNs = 1;
    r.nodes = nodes;
    ASSERT_TRUE((*h)->upsertRun(r).ok());
    ASSERT_TRUE((*h)->appendRunLog(r.id, "stdout", 0, stdoutText).ok());
}

const control::ArchiveFile* find(const std::vector<control::ArchiveFile>& files,
                                 const std::string& suffix) {
    for (const auto& f : files) {
        if (f.path.size() >= suffix.size() &&
            f.path.compare(f.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
            return &f;
        }
    }
    return nullptr;
}

TEST(DiagnosisArchive, ARealDiagnosisExportedAndReadBack) {
    if (!testing::haveVenv()) {
        FAIL() << "no py-spy venv at " << testing::pySpyVenv();
    }
    FakeRas ras(fixture("ras_missing_rank.json"));
    ClusterOptions o;
    o.nodes = 2;
    o.functionOf = [](int i) { return i == 1 ? "all_gather_into_tensor" : "barrier"; };
    o.envOf = [&](int) {
        return std::map<std::string, std::string>{{"NCCL_RAS_ADDR", ras.address()}};
    };
    DiagnosisCluster cluster(o);
    ASSERT_EQ(cluster.start(), "");
    const std::string history = cluster.scratch() + "/history.sqlite";
    const std::string rankOutput =
        runplane::testing::readFile(cluster.stateDir(0) + "/runs.d/hung-run/stdout.log");
    ASSERT_NE(rankOutput.find("rank 0 entering barrier"), std::string::npos) << rankOutput;
    recordRun(history, cluster.addresses(), rankOutput);

    const std::string out = cluster.scratch() + "/bug-report.tar.gz";
    const auto r =
        runplane::testing::runCtl({"diagnose", "hung-run", "--history", history, "--archive", out},
                                  cluster.scratch(), std::chrono::seconds(60));
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.err.find("diagnose: wrote " + out), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));

    // tar reads it: one top folder named after the run and the stored diagnosis.
    const std::string listing = cluster.scratch() + "/listing.txt";
    auto tar = runplane::testing::Child::spawn({"/bin/tar", "-tzf", out}, listing,
                                               cluster.scratch() + "/tar.err");
    ASSERT_EQ(tar.wait(std::chrono::seconds(20)), 0) << tar.stderrText();
    const std::string names = runplane::testing::readFile(listing);
    for (const char* expected :
         {"runplane-diagnosis-hung-run-1/README.txt", "runplane-diagnosis-hung-run-1/verdict.txt",
          "runplane-diagnosis-hung-run-1/diagnosis.json",
          "runplane-diagnosis-hung-run-1/recipe.yaml", "runplane-diagnosis-hung-run-1/run.json",
          "runplane-diagnosis-hung-run-1/events.txt",
          "runplane-diagnosis-hung-run-1/logs/stdout.tail.txt",
          "runplane-diagnosis-hung-run-1/diagnoses.txt", "/stacks.txt", "/ras.txt", "/ras.json",
          "/kernel.log", "/node.json", "/gpus.json", "/output.tail.txt"}) {
        EXPECT_NE(names.find(expected), std::string::npos) << expected << "\n" << names;
    }
    const std::string extracted = cluster.scratch() + "/x";
    std::filesystem::create_directories(extracted);
    auto untar = runplane::testing::Child::spawn({"/bin/tar", "-xzf", out, "-C", extracted},
                                                 cluster.scratch() + "/untar.out",
                                                 cluster.scratch() + "/untar.err");
    ASSERT_EQ(untar.wait(std::chrono::seconds(20)), 0) << untar.stderrText();
    const std::string top = extracted + "/runplane-diagnosis-hung-run-1/";
    EXPECT_EQ(runplane::testing::readFile(top + "recipe.yaml"), kRecipe);

    // libarchive reads the same files; each piece holds what the diagnosis found.
    auto files = control::readArchive(out);
    ASSERT_TRUE(files.ok()) << files.error();
    auto h = db::History::open(history);
    ASSERT_TRUE(h.ok()) << h.error();
    auto stored = (*h)->listDiagnoses(RunId("hung-run"));
    ASSERT_TRUE(stored.ok() && stored->size() == 1u);
    const std::string headline = (*stored)[0].headline;
    ASSERT_NE(find(*files, "/verdict.txt"), nullptr);
    EXPECT_EQ(find(*files, "/verdict.txt")->content.rfind(headline + "\n", 0), 0u);
    EXPECT_EQ(nlohmann::json::parse(find(*files, "/diagnosis.json")->content),
              nlohmann::json::parse((*stored)[0].json));
    EXPECT_EQ(runplane::testing::readFile(top + "diagnosis.json"),
              find(*files, "/diagnosis.json")->content);
    const auto* readme = find(*files, "/README.txt");
    ASSERT_NE(readme, nullptr);
    EXPECT_NE(readme->content.find("verdict:   " + headline), std::string::npos) << readme->content;
    for (const char* said : {"verdict.txt ", "recipe.yaml ", "logs/stdout.tail.txt ",
                             "nodes/*/stacks.txt ", "nodes/*/ras.txt ", "nodes/*/kernel.log "}) {
        EXPECT_NE(readme->content.find(said), std::string::npos) << said << readme->content;
    }
    // The stderr the history never stored is said, not an empty file.
    EXPECT_EQ(find(*files, "/logs/stderr.tail.txt"), nullptr);
    EXPECT_NE(readme->content.find("logs/stderr.tail.txt: the history stored no stderr"),
              std::string::npos)
        << readme->content;
    EXPECT_EQ(find(*files, "/logs/stdout.tail.txt")->content, rankOutput);
    EXPECT_NE(nlohmann::json::parse(find(*files, "/run.json")->content)["nodes"].size(), 0u);
    // Node by node: the stacks name the function each rank is blocked in; RAS names the
    // recorded missing rank.
    std::string stacks;
    std::string rasText;
    int nodeFolders = 0;
    for (const auto& f : *files) {
        if (f.path.find("/nodes/") == std::string::npos) {
            continue;
        }
        if (f.path.size() > 11 && f.path.substr(f.path.size() - 10) == "/node.json") {
            ++nodeFolders;
        }
        if (f.path.find("/stacks.txt") != std::string::npos) {
            stacks += f.content;
        }
        if (f.path.find("/ras.txt") != std::string::npos) {
            rasText += f.content;
        }
    }
    EXPECT_EQ(nodeFolders, 2);
    if (stacks.find("Permission denied") == std::string::npos &&
        stacks.find("Operation not permitted") == std::string::npos) {
        EXPECT_NE(stacks.find("barrier (blocked_rank.py:"), std::string::npos) << stacks;
        EXPECT_NE(stacks.find("all_gather_into_tensor (blocked_rank.py:"), std::string::npos)
            << stacks;
    }
    EXPECT_NE(rasText.find("MISSING rank"), std::string::npos) << rasText;
    EXPECT_NE(rasText.find("communicator 0xb3398875b8b2a063"), std::string::npos) << rasText;

    // The run's status in `runplanectl runs`: the verdict beside the cause, cut in the table,
    // whole with -o wide and in --json.
    const auto runs = runplane::testing::runCtl({"runs", "--history", history}, cluster.scratch());
    ASSERT_EQ(runs.exitCode, 0) << runs.err;
    const auto header = runs.out.substr(0, runs.out.find('\n'));
    EXPECT_NE(header.find("CAUSE"), std::string::npos) << header;
    EXPECT_GT(header.find("DIAGNOSIS"), header.find("CAUSE")) << header;
    EXPECT_NE(runs.out.find(headline.substr(0, 30)), std::string::npos) << runs.out;
    const auto wide =
        runplane::testing::runCtl({"runs", "--history", history, "-o", "wide"}, cluster.scratch());
    EXPECT_NE(wide.out.find(headline), std::string::npos) << wide.out;
    const auto runsJson =
        runplane::testing::runCtl({"runs", "--history", history, "--json"}, cluster.scratch());
    ASSERT_EQ(runsJson.exitCode, 0) << runsJson.err;
    const auto listedRuns = nlohmann::json::parse(runsJson.out);
    ASSERT_EQ(listedRuns.size(), 1u);
    EXPECT_EQ(listedRuns[0]["diagnosis"]["headline"], headline);
    EXPECT_EQ(listedRuns[0]["diagnosis"]["trigger"], "on_demand");
    EXPECT_EQ(listedRuns[0]["diagnosis"]["id"], (*stored)[0].id);

    // After the nodes are gone: the stored diagnosis exported again, chosen by its id.
    cluster.daemon(0).kill9();
    cluster.daemon(1).kill9();
    const std::string again = cluster.scratch() + "/again.tar.gz";
    const auto r2 = runplane::testing::runCtl(
        {"diagnose", "hung-run", "--stored", "--id", "1", "--history", history, "--archive", again},
        cluster.scratch());
    ASSERT_EQ(r2.exitCode, 0) << r2.err;
    auto files2 = control::readArchive(again);
    ASSERT_TRUE(files2.ok()) << files2.error();
    EXPECT_EQ(files2->size(), files->size());
}

TEST(DiagnosisArchive, NothingToExportAndAnUnwritablePlaceAreSaid) {
    runplane::testing::TempDir dir("runplane-diag-archive");
    const std::string history = dir.path() + "/h.sqlite";
    {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
    }
    const auto none = runplane::testing::runCtl(
        {"diagnose", "nope", "--stored", "--history", history, "--archive", dir.path() + "/a.tgz"},
        dir.path());
    EXPECT_EQ(none.exitCode, 1);
    EXPECT_NE(none.err.find("no stored diagnosis of run 'nope'"), std::string::npos) << none.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/a.tgz"));

    // A diagnosis whose only node was unreachable, stored, then exported where it cannot go.
    RunDiagnosis d;
    d.runId = "gone-run";
    d.trigger = "failed";
    d.tUnixNs = 1'700'000'000'000'000'000;
    NodeDiagnosis n;
    n.address = "127.0.0.1:1";
    n.error = "cannot reach runplaned at 127.0.0.1:1";
    d.nodes.push_back(n);
    d.verdict = judge(d.nodes);
    ASSERT_TRUE(control::storeDiagnosis(history, d).ok());
    control::DiagnosisArchiveSource source;
    source.historyPath = history;
    source.runId = RunId("gone-run");
    const std::string bad = dir.path() + "/no-such-dir/a.tar.gz";
    auto failed = control::exportDiagnosisArchive(source, bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().find(bad), std::string::npos) << failed.error();
    // Where it can go: the unreachable node is said, the run's record is said missing.
    auto ok = control::exportDiagnosisArchive(source, dir.path() + "/b.tar.gz");
    ASSERT_TRUE(ok.ok()) << ok.error();
    auto files = control::readArchive(dir.path() + "/b.tar.gz");
    ASSERT_TRUE(files.ok()) << files.error();
    const auto* readme = find(*files, "/README.txt");
    ASSERT_NE(readme, nullptr);
    EXPECT_NE(readme->content.find("the node gave no diagnosis: cannot reach runplaned"),
              std::string::npos)
        << readme->content;
    EXPECT_NE(readme->content.find("the run: no run 'gone-run'"), std::string::npos)
        << readme->content;
    EXPECT_EQ(find(*files, "/recipe.yaml"), nullptr);
    EXPECT_NE(find(*files, "/nodes/01-127.0.0.1_1/node.json"), nullptr);
}

}  // namespace
}  // namespace runplane::diagnosis
