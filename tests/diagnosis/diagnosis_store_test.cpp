// Diagnoses stored with their run (issue #44): the per-run bound of the history's run_diagnoses
// table, the 4 MiB bound of one stored document, and a run's node addresses from the history.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <tuple>

#include "backend/control/diagnose.h"
#include "backend/plan/recipe.h"
#include "db/history/history.h"
#include "tests/support/daemon_process.h"

namespace runplane::diagnosis {
namespace {

using runplane::testing::TempDir;

TEST(DiagnosisStore, KeepsTheNewestWithinTheBoundPerRun) {
    TempDir dir("runplane-diag-store");
    auto h = db::History::open(dir.file("h.sqlite"));
    ASSERT_TRUE(h.ok()) << h.error();
    EXPECT_EQ(*(*h)->schemaVersion(), db::kSchemaVersion);
    const std::string doc(3000, 'x');
    for (int i = 0; i < 5; ++i) {
        auto id = (*h)->addDiagnosis(RunId("r"), 100 + i, "stall", "headline " + std::to_string(i),
                                     doc, 8000);
        ASSERT_TRUE(id.ok()) << id.error();
    }
    ASSERT_TRUE((*h)->addDiagnosis(RunId("other"), 1, "failed", "x", doc, 8000).ok());
    auto kept = (*h)->listDiagnoses(RunId("r"));
    ASSERT_TRUE(kept.ok()) << kept.error();
    ASSERT_EQ(kept->size(), 2u);  // 2 x 3000 <= 8000 < 3 x 3000
    EXPECT_EQ((*kept)[0].headline, "headline 4");
    EXPECT_EQ((*kept)[1].headline, "headline 3");
    EXPECT_EQ((*kept)[0].json, doc);
    // One larger than the bound is still kept (the newest never goes), alone.
    ASSERT_TRUE(
        (*h)->addDiagnosis(RunId("r"), 200, "on_demand", "big", std::string(9000, 'y'), 8000).ok());
    kept = (*h)->listDiagnoses(RunId("r"), false);
    ASSERT_EQ(kept->size(), 1u);
    EXPECT_EQ((*kept)[0].headline, "big");
    EXPECT_EQ((*kept)[0].json, "");  // a listing leaves the documents out
    EXPECT_EQ((*h)->listDiagnoses(RunId("other"))->size(), 1u);
}

TEST(DiagnosisStore, AStoredDocumentIsBoundedAndReadsBack) {
    TempDir dir("runplane-diag-store");
    RunDiagnosis d;
    d.runId = "big-run";
    d.trigger = "stall";
    for (int n = 0; n < 16; ++n) {
        NodeDiagnosis node;
        node.address = "127.0.0.1:" + std::to_string(7000 + n);
        for (int p = 0; p < 64; ++p) {
            ProcessStacks s;
            s.pid = p;
            for (int t = 0; t < 16; ++t) {
                ThreadStack th;
                th.threadName = t == 0 ? "MainThread" : "t" + std::to_string(t);
                for (int f = 0; f < 40; ++f) {
                    th.frames.push_back({"function_" + std::to_string(f), "module.py", f});
                }
                s.threads.push_back(th);
            }
            node.stacks.push_back(s);
        }
        d.nodes.push_back(node);
    }
    d.verdict = judge(d.nodes);
    auto id = control::storeDiagnosis(dir.file("h.sqlite"), d);
    ASSERT_TRUE(id.ok()) << id.error();
    auto h = db::History::open(dir.file("h.sqlite"));
    auto stored = (*h)->listDiagnoses(RunId("big-run"));
    ASSERT_EQ(stored->size(), 1u);
    EXPECT_LE((*stored)[0].json.size(), control::kDiagnosisMaxDocumentBytes);
    auto back = runDiagnosisFromJson(nlohmann::json::parse((*stored)[0].json));
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->nodes.size(), 16u);
    EXPECT_EQ(back->verdict.headline, d.verdict.headline);
    EXPECT_TRUE(nlohmann::json::parse((*stored)[0].json).contains("trimmed"));
}

TEST(DiagnosisStore, ARunsNodeAddressesComeFromTheHistory) {
    TempDir dir("runplane-diag-store");
    const std::string path = dir.file("h.sqlite");
    {
        auto h = db::History::open(path);
        db::NodeRecord node;
        node.nodeId = NodeId("node-a");
        node.address = "127.0.0.1:7070";
        ASSERT_TRUE((*h)->upsertNode(node).ok());
        db::RunRecord run;
        run.id = RunId("r1");
        run.name = "r1";
        run.nodes = {"node-a", "127.0.0.1:7071", "node-unknown"};
        ASSERT_TRUE((*h)->upsertRun(run).ok());
    }
    auto a = control::runNodeAddresses(path, RunId("r1"));
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_EQ(*a, (std::vector<std::string>{"127.0.0.1:7070", "127.0.0.1:7071"}));
    auto none = control::runNodeAddresses(path, RunId("nope"));
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.code(), ErrorCode::NotFound);
}

// Three past runs of the recipe spent 100, 120 and 110 s in train: median 110 s, limit
// max(330, 710) = 710 s. The running run's train phase is past it at 711 s, not at 700 s.
TEST(PhaseOverrun, ThePhaseRuleOverTheHistory) {
    TempDir dir("runplane-diag-store");
    const std::string path = dir.file("h.sqlite");
    const std::int64_t s = 1000000000LL;
    {
        auto h = db::History::open(path);
        db::IngestBatch batch;
        batch.nodeId = NodeId("n");
        std::uint64_t seq = 0;
        auto phase = [&](const std::string& run, std::int64_t t, const std::string& name) {
            db::IngestEvent e;
            e.seq = ++seq;
            e.tNs = t;
            e.runId = RunId(run);
            e.kind = "phase";
            e.attrs = db::eventAttrs({{"phase", name}});
            batch.events.push_back(e);
        };
        const std::vector<int> trainSeconds = {100, 120, 110};
        for (int i = 0; i < 3; ++i) {
            db::RunRecord r;
            r.id = RunId("past" + std::to_string(i));
            r.name = r.id.value();
            r.recipeYaml = "model: x\n";
            r.state = db::RunState::Finished;
            const std::int64_t t0 = (i + 1) * 10000 * s;
            r.startedNs = t0;
            phase(r.id.value(), t0, "rollout");
            phase(r.id.value(), t0 + 50 * s, "train");
            phase(r.id.value(), t0 + (50 + trainSeconds[i]) * s, "done");
            r.endedNs = t0 + (60 + trainSeconds[i]) * s;
            ASSERT_TRUE((*h)->upsertRun(r).ok());
        }
        db::RunRecord other;  // another recipe: not a peer
        other.id = RunId("other");
        other.name = "other";
        other.recipeYaml = "model: y\n";
        other.startedNs = 1;
        other.endedNs = 2 * s;
        phase("other", 1, "train");
        ASSERT_TRUE((*h)->upsertRun(other).ok());
        db::RunRecord now;
        now.id = RunId("now");
        now.name = "now";
        now.recipeYaml = "model: x\n";
        now.startedNs = 100000 * s;
        phase("now", 100000 * s, "rollout");
        phase("now", 100100 * s, "train");
        ASSERT_TRUE((*h)->upsertRun(now).ok());
        batch.throughSeq = seq;
        ASSERT_TRUE((*h)->ingest(batch).ok());
    }
    auto within = control::checkPhaseOverrun(path, RunId("now"), (100100 + 700) * s);
    ASSERT_TRUE(within.ok()) << within.error();
    EXPECT_FALSE(within->has_value());
    auto past = control::checkPhaseOverrun(path, RunId("now"), (100100 + 711) * s);
    ASSERT_TRUE(past.ok()) << past.error();
    ASSERT_TRUE(past->has_value());
    EXPECT_EQ((*past)->phase, "train");
    EXPECT_DOUBLE_EQ((*past)->limit.medianSeconds, 110);
    EXPECT_DOUBLE_EQ((*past)->limit.limitSeconds, 710);
    EXPECT_EQ((*past)->limit.samples, 3u);
    // rollout lasted 50 s three times before: limit 650 s, and the run left rollout anyway.
    EXPECT_FALSE(control::checkPhaseOverrun(path, RunId("past0"), 200000 * s)->has_value());
}

TEST(PhaseOverrun, TheLimitNeedsThreePastOccurrences) {
    EXPECT_FALSE(phaseLimit({10, 20}).has_value());
    const auto l = phaseLimit({600, 1200, 900, 3000});
    ASSERT_TRUE(l.has_value());
    EXPECT_DOUBLE_EQ(l->medianSeconds, 1050);
    EXPECT_DOUBLE_EQ(l->limitSeconds, 3150);  // 3 x median beats median + 10 min
    const auto spans = phaseSpans({{0, "rollout"}, {5, "train"}, {9, "done"}}, 20);
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[1].phase, "train");
    EXPECT_EQ(spans[1].endNs, 9);
}

// The run's own earlier occurrences count (an RL loop repeats its phases); a timer's end edge
// closes its phase; every rank's marker of one occurrence is one occurrence; the trigger fires
// once per episode, again for a later occurrence that overruns.
TEST(PhaseOverrun, TheRunsOwnPhasesOncePerEpisode) {
    TempDir dir("runplane-diag-store");
    const std::string path = dir.file("h.sqlite");
    const std::int64_t s = 1000000000LL;
    std::uint64_t seq = 0;
    auto ingest =
        [&](const std::vector<std::tuple<std::int64_t, std::string, std::string, std::string>>&
                events) {
            auto h = db::History::open(path);
            ASSERT_TRUE(h.ok()) << h.error();
            db::IngestBatch batch;
            batch.nodeId = NodeId("n");
            for (const auto& [t, phase, rank, edge] : events) {
                db::IngestEvent e;
                e.seq = ++seq;
                e.tNs = t * s;
                e.runId = RunId("loop");
                e.kind = "phase";
                std::map<std::string, std::string> attrs = {{"phase", phase}};
                if (!rank.empty()) {
                    attrs["rank"] = rank;
                }
                if (!edge.empty()) {
                    attrs["edge"] = edge;
                }
                e.attrs = db::eventAttrs(attrs);
                batch.events.push_back(e);
            }
            batch.throughSeq = seq;
            ASSERT_TRUE((*h)->ingest(batch).ok());
        };
    {
        auto h = db::History::open(path);
        db::RunRecord r;
        r.id = RunId("loop");
        r.name = "loop";
        r.startedNs = 1000 * s;
        ASSERT_TRUE((*h)->upsertRun(r).ok());
    }
    // Three rollout/train rounds, each marker printed by ranks 0 and 1 (one occurrence);
    // train takes 20 s, rollout 10 s; then train again (a timer that has not ended).
    std::vector<std::tuple<std::int64_t, std::string, std::string, std::string>> events;
    std::int64_t t = 1000;
    for (int round = 0; round < 3; ++round) {
        events.push_back({t, "rollout", "0", ""});
        events.push_back({t, "rollout", "1", ""});
        events.push_back({t + 10, "train", "0", "start"});
        events.push_back({t + 10, "train", "1", "start"});
        events.push_back({t + 30, "train", "0", "end"});
        events.push_back({t + 30, "train", "1", "end"});
        t += 30;
    }
    events.push_back({t, "train", "0", "start"});  // 1090
    ingest(events);
    diagnosis::PhaseRule rule;
    rule.marginSeconds = 5;  // limit max(3 x 20, 20 + 5) = 60 s
    auto within = control::checkPhaseOverrun(path, RunId("loop"), (t + 59) * s, rule);
    ASSERT_TRUE(within.ok()) << within.error();
    EXPECT_FALSE(within->has_value());
    auto past = control::checkPhaseOverrun(path, RunId("loop"), (t + 61) * s, rule);
    ASSERT_TRUE(past.ok()) << past.error();
    ASSERT_TRUE(past->has_value());
    EXPECT_EQ((*past)->phase, "train");
    EXPECT_EQ((*past)->ownSamples, 3u);
    EXPECT_DOUBLE_EQ((*past)->limit.medianSeconds, 20);
    EXPECT_DOUBLE_EQ((*past)->limit.limitSeconds, 60);
    EXPECT_EQ((*past)->startNs, t * s);
    // The default margin (10 min) holds it back.
    EXPECT_FALSE(control::checkPhaseOverrun(path, RunId("loop"), (t + 61) * s)->has_value());

    std::vector<std::string> fired;
    std::mutex mutex;
    control::DiagnosisTrigger::Options o;
    o.historyPath = path;
    o.phaseRule = rule;
    o.addressesOf = [](const RunId&) { return std::vector<std::string>(); };
    o.onDone = [&](const RunId&, const std::string& trigger, const Result<RunDiagnosis>&) {
        std::lock_guard lock(mutex);
        fired.push_back(trigger);
    };
    {
        control::DiagnosisTrigger trigger(o);
        EXPECT_FALSE(trigger.checkPhase(RunId("loop"), (t + 59) * s).has_value());
        EXPECT_TRUE(trigger.checkPhase(RunId("loop"), (t + 61) * s).has_value());
        EXPECT_FALSE(trigger.checkPhase(RunId("loop"), (t + 120) * s).has_value());  // same one
        // The timer ends after 200 s: no current phase, nothing to check.
        ingest({{t + 200, "train", "0", "end"}});
        EXPECT_FALSE(trigger.checkPhase(RunId("loop"), (t + 400) * s).has_value());
        // A later occurrence that overruns is a new episode.
        ingest({{t + 210, "train", "0", "start"}});
        EXPECT_FALSE(trigger.checkPhase(RunId("loop"), (t + 260) * s).has_value());
        EXPECT_TRUE(trigger.checkPhase(RunId("loop"), (t + 300) * s).has_value());
    }
    EXPECT_EQ(fired, (std::vector<std::string>{"phase_overrun", "phase_overrun"}));
}

}  // namespace
}  // namespace runplane::diagnosis

namespace runplane::diagnosis {
namespace {

using runplane::testing::TempDir;

std::string smokeRecipe() {
    return runplane::testing::readFile(runplane::testing::sourceDir() +
                                       "/recipes/smoke-local.yaml");
}

// The recipe's expected phase durations (analysis.phase_seconds) stand in for the median while
// the history has fewer than three occurrences of the phase; the history's median wins once it
// has them (docs/diagnosis.md "Phase overrun").
TEST(PhaseOverrun, ThePlansExpectedDurationWhenThereIsNoHistory) {
    const std::string base = smokeRecipe();
    ASSERT_FALSE(base.empty());
    ASSERT_EQ(base.find("\nanalysis:"), std::string::npos);
    const std::string planned = base +
                                "\nanalysis:\n  phase_seconds:\n    rollout: 5\n"
                                "    train: 20\n";
    // The field parses, round-trips and is refused when it is not a positive number.
    auto parsed = plan::parseRecipe(planned, "planned.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    const std::vector<std::pair<std::string, double>> expected = {{"rollout", 5}, {"train", 20}};
    EXPECT_EQ(parsed->analysis.phaseSeconds, expected);
    auto again = plan::parseRecipe(plan::writeRecipe(*parsed), "written.yaml");
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(again->analysis.phaseSeconds, expected);
    auto bad =
        plan::parseRecipe(base + "\nanalysis:\n  phase_seconds:\n    train: -3\n", "bad.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("bad.yaml:"), std::string::npos) << bad.error();
    EXPECT_NE(bad.error().find("analysis.phase_seconds.train"), std::string::npos) << bad.error();
    auto word =
        plan::parseRecipe(base + "\nanalysis:\n  phase_seconds:\n    train: long\n", "word.yaml");
    ASSERT_FALSE(word.ok());
    EXPECT_NE(word.error().find("analysis.phase_seconds.train"), std::string::npos) << word.error();

    TempDir dir("runplane-phase-plan");
    const std::string path = dir.file("h.sqlite");
    const std::int64_t s = 1000000000LL;
    std::uint64_t seq = 0;
    auto addRun = [&](const std::string& id, const std::string& recipe,
                      const std::vector<std::pair<std::int64_t, std::string>>& phases) {
        auto h = db::History::open(path);
        ASSERT_TRUE(h.ok()) << h.error();
        db::RunRecord r;
        r.id = RunId(id);
        r.name = id;
        r.startedNs = 1000 * s;
        r.recipeYaml = recipe;
        ASSERT_TRUE((*h)->upsertRun(r).ok());
        db::IngestBatch batch;
        batch.nodeId = NodeId("n");
        for (const auto& [t, phase] : phases) {
            db::IngestEvent e;
            e.seq = ++seq;
            e.tNs = t * s;
            e.runId = RunId(id);
            e.kind = "phase";
            e.attrs = db::eventAttrs({{"phase", phase}});
            batch.events.push_back(e);
        }
        batch.throughSeq = seq;
        ASSERT_TRUE((*h)->ingest(batch).ok());
    };
    // A first run of the recipe: rollout, then train from t = 1005; no history of either.
    addRun("first", planned, {{1000, "rollout"}, {1005, "train"}});
    // The same events under a recipe without the field.
    addRun("unplanned", base, {{1000, "rollout"}, {1005, "train"}});
    PhaseRule rule;
    rule.marginSeconds = 5;  // plan: max(3 x 20, 20 + 5) = 60 s
    auto within = control::checkPhaseOverrun(path, RunId("first"), (1005 + 59) * s, rule);
    ASSERT_TRUE(within.ok()) << within.error();
    EXPECT_FALSE(within->has_value());
    auto past = control::checkPhaseOverrun(path, RunId("first"), (1005 + 61) * s, rule);
    ASSERT_TRUE(past.ok()) << past.error();
    ASSERT_TRUE(past->has_value());
    EXPECT_EQ((*past)->phase, "train");
    EXPECT_TRUE((*past)->limit.fromPlan);
    EXPECT_DOUBLE_EQ((*past)->limit.medianSeconds, 20);
    EXPECT_DOUBLE_EQ((*past)->limit.limitSeconds, 60);
    EXPECT_EQ((*past)->limit.samples, 0u);
    const std::string line = control::DiagnosisTrigger::describe(**past);
    EXPECT_NE(line.find("phase 'train' has lasted 61 s, past its limit 60 s (expected 20 s by the "
                        "recipe's analysis.phase_seconds"),
              std::string::npos)
        << line;
    // The default margin (10 min): max(60, 620) = 620 s.
    EXPECT_FALSE(control::checkPhaseOverrun(path, RunId("first"), (1005 + 619) * s)->has_value());
    EXPECT_TRUE(control::checkPhaseOverrun(path, RunId("first"), (1005 + 621) * s)->has_value());
    // No expectation, no history: never an overrun.
    auto unplanned =
        control::checkPhaseOverrun(path, RunId("unplanned"), (1005 + 100000) * s, rule);
    ASSERT_TRUE(unplanned.ok()) << unplanned.error();
    EXPECT_FALSE(unplanned->has_value());

    // Three earlier runs of the recipe whose train took 100 s: the history's median (limit
    // max(300, 105) = 300 s) wins over the plan's 20 s.
    for (const char* id : {"h1", "h2", "h3"}) {
        addRun(id, planned, {{1000, "rollout"}, {1005, "train"}, {1105, "done"}});
        auto h = db::History::open(path);
        ASSERT_TRUE((*h)->updateRunState(RunId(id), db::RunState::Finished, 1105 * s, "").ok());
    }
    auto learned = control::checkPhaseOverrun(path, RunId("first"), (1005 + 61) * s, rule);
    ASSERT_TRUE(learned.ok()) << learned.error();
    EXPECT_FALSE(learned->has_value());
    auto longPast = control::checkPhaseOverrun(path, RunId("first"), (1005 + 301) * s, rule);
    ASSERT_TRUE(longPast.ok() && longPast->has_value());
    EXPECT_FALSE((*longPast)->limit.fromPlan);
    EXPECT_DOUBLE_EQ((*longPast)->limit.medianSeconds, 100);
    EXPECT_EQ((*longPast)->limit.samples, 3u);
}

}  // namespace
}  // namespace runplane::diagnosis
