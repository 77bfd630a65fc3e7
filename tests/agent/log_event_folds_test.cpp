// issue 42: one failure, one event. A failure told twice a few lines apart (the rows of
// eventFolds(), backend/agent/log_event_folds.cpp) gives one event carrying both tellings'
// details; real pastes from public issues (tests/agent/fixtures/logs, each headed by its source).
#include "backend/agent/log_event_folds.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "backend/agent/log_metrics.h"
#include "tests/agent/log_fixture_replay.h"

namespace runplane::agent {
namespace {

using test::fixtureLines;

std::vector<LogEvent> replayLines(const std::vector<std::string>& lines) {
    std::vector<LogEvent> events;
    test::replayLines(lines, [&events](ParsedLogLine p) {
        for (auto& e : p.events) {
            events.push_back(std::move(e));
        }
    });
    return events;
}

std::string attr(const LogEvent& e, const std::string& key) {
    const auto it = e.attrs.find(key);
    return it == e.attrs.end() ? std::string() : it->second;
}

TEST(LogEventFolds, EveryRowIsNamedAndHasAWindow) {
    ASSERT_FALSE(eventFolds().empty());
    for (const auto& f : eventFolds()) {
        EXPECT_FALSE(f.name.empty());
        EXPECT_GT(f.window, 0) << f.name;
        EXPECT_LE(f.window, 100) << f.name << ": a short window of lines";
    }
}

// PeterGriffinJin/Search-R1#45: `ray.exceptions.RayTaskError(ActorDiedError): ray::main_task()
// (pid=109108, ...)`, the task's frames, then `ray.exceptions.ActorDiedError: The actor died
// unexpectedly before finishing this task.`: one crash, named by the cause.
TEST(LogEventFolds, RayTaskErrorAndItsCauseLineAreOneCrash) {
    const auto events = replayLines(fixtureLines("crash_ray_task_actor_died_searchr1_45.log"));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, LogEventKind::Crash);
    EXPECT_EQ(attr(events[0], "exception"), "ray.exceptions.ActorDiedError");
    EXPECT_EQ(attr(events[0], "summary"),
              "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this "
              "task.");
    EXPECT_EQ(attr(events[0], "ray_task"),
              "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=109108, "
              "ip=10.226.129.21)");
    EXPECT_EQ(events[0].message, attr(events[0], "summary"));
}

// Two different failures stay two events: a task's RayTaskError(ValueError) (Mini-o3#21) then
// another actor's ActorDiedError (hkust-nlp/simpleRL-reason#25), both real tracebacks.
TEST(LogEventFolds, ADifferentExceptionAfterARayTaskErrorIsItsOwnCrash) {
    auto lines = fixtureLines("crash_ray_task_error_minio3_21.log");
    const auto other = fixtureLines("crash_ray_task_actor_died_searchr1_45.log");
    // The Search-R1 frames and ActorDiedError line without its own RayTaskError head line.
    for (const auto& l : other) {
        if (!l.starts_with("ray.exceptions.RayTaskError")) {
            lines.push_back(l);
        }
    }
    const auto events = replayLines(lines);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(attr(events[0], "exception"), "ray.exceptions.RayTaskError(ValueError)");
    EXPECT_EQ(attr(events[1], "exception"), "ray.exceptions.ActorDiedError");
    EXPECT_EQ(attr(events[0], "ray_task"), "");
}

// ArjunaCluster/ArjunaUsers#52: bash's `line 28:  8156 Killed  python3 main.py ...` then
// `slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup.`: one host OOM,
// with bash's pid and command and Slurm's figures.
TEST(LogEventFolds, ShellKillAndSlurmsOomKillLineAreOneHostOom) {
    const auto events = replayLines(fixtureLines("host_oom_shell_slurm_job_arjuna_52.log"));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, LogEventKind::HostOom);
    EXPECT_EQ(attr(events[0], "source"), "shell");
    EXPECT_EQ(attr(events[0], "pid"), "8156");
    EXPECT_EQ(attr(events[0], "name"), "python3");
    EXPECT_EQ(attr(events[0], "oom_kill_events"), "1");
    EXPECT_EQ(attr(events[0], "slurm_step"), "191.batch");
    EXPECT_EQ(attr(events[0], "confirmed_by"), "slurm");
    EXPECT_EQ(events[0].message,
              "host OOM: pid 8156 (python3) killed by SIGKILL; Slurm saw 1 OOM kill in the job's "
              "cgroup (step 191.batch)");
}

// Beyond the window the restatement is a failure of its own, and a held kill still goes out (at
// the end of the window or of the stream).
TEST(LogEventFolds, ARestatementBeyondTheWindowIsItsOwnEvent) {
    const auto paste = fixtureLines("host_oom_shell_slurm_job_arjuna_52.log");
    ASSERT_EQ(paste.size(), 2u);
    std::vector<std::string> lines{paste[0]};
    // The interactive run of the same issue printed epoch lines; ten of its kind in between.
    for (int i = 0; i < 10; ++i) {
        lines.push_back("Epoch: [0][415/1736]\t Loss 0.5844 MAE 0.6568 RMSE 0.7644");
    }
    lines.push_back(paste[1]);
    const auto events = replayLines(lines);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(attr(events[0], "source"), "shell");
    EXPECT_EQ(attr(events[0], "confirmed_by"), "");
    EXPECT_EQ(attr(events[1], "source"), "slurm");
    // Alone, the kill goes out at the end of the stream.
    EXPECT_EQ(replayLines({paste[0]}).size(), 1u);
}

// Slurm's oom-kill line in each of its versions' wordings (docs/daemon.md, `host_oom_slurm`): one
// host OOM with Slurm's count and step, and srun's `task N: Out Of Memory` after it is no second
// failure.
struct SlurmOomCase {
    const char* fixture;
    const char* count;
    const char* step;
};

class LogSlurmOom : public ::testing::TestWithParam<SlurmOomCase> {};

TEST_P(LogSlurmOom, OneHostOomWithSlurmsCountAndStep) {
    const auto events = replayLines(fixtureLines(GetParam().fixture));
    std::string messages;
    for (const auto& e : events) {
        messages += e.message + "\n";
    }
    ASSERT_EQ(events.size(), 1u) << messages;
    EXPECT_EQ(events[0].kind, LogEventKind::HostOom);
    EXPECT_EQ(attr(events[0], "source"), "slurm");
    EXPECT_EQ(attr(events[0], "oom_kill_events"), GetParam().count);
    EXPECT_EQ(attr(events[0], "slurm_step"), GetParam().step);
}

INSTANTIATE_TEST_SUITE_P(
    Wordings, LogSlurmOom,
    ::testing::Values(SlurmOomCase{"host_oom_slurm_in_step_hafs_101.log", "1", "3495064.0"},
                      SlurmOomCase{"host_oom_slurm_stepid_snakemake_371.log", "2", "JOBID.13"}),
    [](const ::testing::TestParamInfo<SlurmOomCase>& param) {
        std::string name = param.param.fixture;
        name = name.substr(0, name.find('.'));
        for (char& c : name) {
            if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
                c = '_';
            }
        }
        return name;
    });

}  // namespace
}  // namespace runplane::agent
