// Alert rules (issue #48): the rules file with its file:line:col errors and its secrets rule,
// the level table and matching, and the back-off formula.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "backend/alerts/alert_event.h"
#include "backend/alerts/rules.h"
#include "backend/alerts/sender.h"
#include "tests/db/test_util.h"

namespace runplane::alerts {
namespace {

using runplane::testing::ScratchDir;
using runplane::testing::writeAll;

constexpr const char* kFull = R"(destinations:
  - name: oncall
    type: slack
    url_env: RP_TEST_SLACK_URL
  - name: team
    type: discord
    url_file: discord.url
  - name: pager
    type: webhook
    url: http://127.0.0.1:9/hook
    token_env: RP_TEST_TOKEN
    timeout: 2s
  - name: local
    type: command
    argv: [/usr/bin/logger, -t, runplane]
delivery:
  deadline: 30m
  backoff_base: 500ms
  backoff_max: 1m
  max_pending: 50
rules:
  - name: failures
    events: [process_exit, cuda_oom]
    run_states: [failed, daemon_lost]
    runs: {names: ["prod-*"], recipes: [qwen*], tags: [framework=miles]}
    min_level: error
    rate_limit: 5/1h
    quiet: 10m
    to: [oncall, pager]
  - name: everything
    min_level: info
    to: local
)";

class RulesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ::setenv("RP_TEST_SLACK_URL", "https://hooks.slack.example/services/T0/B0/SECRETSLACK", 1);
        ::setenv("RP_TEST_TOKEN", "tok-SECRETTOKEN", 1);
        writeAll(dir.file("discord.url"), "https://discord.example/api/webhooks/1/SECRETDISCORD\n");
    }
    std::string writeRules(const std::string& text, mode_t mode) {
        const std::string path = dir.file("alerts.yaml");
        writeAll(path, text);
        ::chmod(path.c_str(), mode);
        return path;
    }
    ScratchDir dir;
};

TEST_F(RulesTest, ReadsEveryDestinationKindAndRuleField) {
    auto rules = loadAlertRules(writeRules(kFull, 0600));
    ASSERT_TRUE(rules.ok()) << rules.error();
    ASSERT_EQ(rules->destinations.size(), 4u);
    EXPECT_EQ(rules->destinations[0].kind, DestinationKind::Slack);
    EXPECT_EQ(rules->destinations[0].url, "https://hooks.slack.example/services/T0/B0/SECRETSLACK");
    EXPECT_EQ(rules->destinations[1].url, "https://discord.example/api/webhooks/1/SECRETDISCORD");
    EXPECT_EQ(rules->destinations[2].token, "tok-SECRETTOKEN");
    EXPECT_DOUBLE_EQ(rules->destinations[2].timeoutSeconds, 2.0);
    EXPECT_EQ(rules->destinations[3].argv,
              (std::vector<std::string>{"/usr/bin/logger", "-t", "runplane"}));
    EXPECT_EQ(rules->delivery.deadlineNs, 1800ll * 1'000'000'000);
    EXPECT_EQ(rules->delivery.backoffBaseNs, 500'000'000);
    EXPECT_EQ(rules->delivery.maxPending, 50);
    ASSERT_EQ(rules->rules.size(), 2u);
    const Rule& r = rules->rules[0];
    EXPECT_EQ(r.events, (std::vector<std::string>{"process_exit", "cuda_oom"}));
    EXPECT_EQ(r.runStates, (std::vector<std::string>{"failed", "daemon_lost"}));
    EXPECT_EQ(r.runNames, (std::vector<std::string>{"prod-*"}));
    EXPECT_EQ(r.minLevel, Level::Error);
    EXPECT_EQ(r.rateCount, 5);
    EXPECT_EQ(r.rateWindowNs, 3600ll * 1'000'000'000);
    EXPECT_EQ(r.quietNs, 600ll * 1'000'000'000);
    EXPECT_EQ(rules->rules[1].to, (std::vector<std::string>{"local"}));
    EXPECT_EQ(rules->secrets().size(), 4u);
}

TEST_F(RulesTest, ErrorsNameFileLineAndColumn) {
    struct Case {
        std::string text;
        std::string where;  // ":line:col: field"
        std::string says;
    };
    const std::vector<Case> cases = {
        {"destinations: []\nrules:\n  - name: a\n    evnts: [stall]\n    to: x\n",
         ":4:5: rules[0].evnts", "unknown key"},
        {"destinations:\n  - name: d\n    type: pager\n    url_env: RP_TEST_TOKEN\nrules: []\n",
         ":3:11: destinations[0].type", "'pager' is not one of"},
        {"destinations:\n  - {name: d, type: command, argv: [true]}\nrules:\n  - to: [nope]\n",
         ":4:10: rules[0].to", "no destination is named 'nope'"},
        {"destinations:\n  - {name: d, type: command, argv: [true]}\nrules:\n  - to: d\n    "
         "rate_limit: lots\n",
         ":5:17: rules[0].rate_limit", "COUNT/DURATION"},
        {"destinations:\n  - {name: d, type: command, argv: [true]}\nrules:\n  - to: d\n    "
         "min_level: loud\n",
         ":5:16: rules[0].min_level", "'loud' is not one of info"},
        {"destinations:\n  - name: d\n    type: slack\n    url_env: RP_TEST_UNSET_VARIABLE\nrules: "
         "[]\n",
         ":4:14: destinations[0].url_env", "RP_TEST_UNSET_VARIABLE is not set"},
        {"destinations:\n  - {name: d, type: command, argv: [true]}\nrules:\n  - to: d\n    "
         "run_states: [crashed]\n",
         ":5:18: rules[0].run_states", "'crashed' is not one of"},
        {"destinations: [\nrules: x\n", ":3:1", "end of sequence"},
    };
    for (const Case& c : cases) {
        const std::string path = writeRules(c.text, 0600);
        auto rules = loadAlertRules(path);
        ASSERT_FALSE(rules.ok()) << c.text;
        EXPECT_EQ(rules.error().rfind(path + c.where, 0), 0u) << rules.error();
        EXPECT_NE(rules.error().find(c.says), std::string::npos) << rules.error();
    }
}

TEST_F(RulesTest, AnInlineSecretInAFileOthersCanReadIsRefused) {
    const std::string text =
        "destinations:\n  - name: hook\n    type: webhook\n    url: http://127.0.0.1:9/SECRETPATH\n"
        "rules: []\n";
    auto readable = loadAlertRules(writeRules(text, 0644));
    ASSERT_FALSE(readable.ok());
    EXPECT_NE(readable.error().find(":4:10: destinations[0].url: a secret written inline"),
              std::string::npos)
        << readable.error();
    EXPECT_EQ(readable.error().find("SECRETPATH"), std::string::npos) << readable.error();
    EXPECT_FALSE(loadAlertRules(writeRules(text, 0640)).ok());
    EXPECT_TRUE(loadAlertRules(writeRules(text, 0600)).ok());
    // From the environment or a file the rules file itself may be world-readable.
    const std::string fromEnv =
        "destinations:\n  - {name: hook, type: slack, url_env: RP_TEST_SLACK_URL}\nrules: []\n";
    EXPECT_TRUE(loadAlertRules(writeRules(fromEnv, 0644)).ok());
}

TEST(AlertText, ScrubRemovesSecretsAndSecretLookingValues) {
    const std::string out = scrub("POST https://hooks.example/T0/SECRET failed; token=abc123",
                                  {"https://hooks.example/T0/SECRET"});
    EXPECT_EQ(out.find("SECRET"), std::string::npos) << out;
    EXPECT_EQ(out.find("abc123"), std::string::npos) << out;
}

db::StoredEvent event(const std::string& kind, db::EventAttrs attrs = {}) {
    db::StoredEvent e;
    e.id = 1;
    e.nodeId = NodeId("node-a");
    e.runId = RunId("r1");
    e.kind = kind;
    e.message = "m";
    e.attrs = std::move(attrs);
    return e;
}

TEST(AlertMatch, LevelsComeFromTheKindTableAndAttributes) {
    EXPECT_EQ(levelOf(event("phase")), Level::Info);
    EXPECT_EQ(levelOf(event("stall")), Level::Warning);
    EXPECT_EQ(levelOf(event("nccl_error")), Level::Error);
    EXPECT_EQ(levelOf(event("cuda_oom")), Level::Critical);  // wt-42's kinds, by name
    EXPECT_EQ(levelOf(event("process_exit", {{"exit_code", "0"}, {"term_signal", "0"}})),
              Level::Info);
    EXPECT_EQ(levelOf(event("process_exit", {{"exit_code", "1"}})), Level::Error);
    EXPECT_EQ(levelOf(event("run_state", {{"state", "RUN_STATE_FAILED"}})), Level::Error);
    EXPECT_EQ(levelOf(event("run_state", {{"state", "RUN_STATE_SUCCEEDED"}})), Level::Info);
    EXPECT_EQ(levelOf(event("memory_alarm", {{"state", "cleared"}})), Level::Info);
    EXPECT_EQ(levelOf(event("memory_alarm", {{"state", "raised"}})), Level::Error);
    EXPECT_EQ(levelOf(event("brand_new_kind", {{"level", "critical"}})), Level::Critical);
    EXPECT_EQ(levelOf(event("brand_new_kind")), Level::Warning);
}

TEST(AlertMatch, RulesMatchKindsStatesRunsAndLevels) {
    Rule r;
    r.runStates = {"failed"};
    r.events = {"cuda_oom"};
    r.minLevel = Level::Warning;
    RunFacts run;
    run.id = "r1";
    run.name = "prod-7b";
    run.recipe = "qwen-grpo";
    run.tags = {"framework=miles", "model=qwen3-8b"};
    EXPECT_TRUE(matches(r, event("cuda_oom"), run));
    EXPECT_TRUE(matches(r, event("run_state", {{"state", "RUN_STATE_FAILED"}}), run));
    EXPECT_FALSE(matches(r, event("run_state", {{"state", "RUN_STATE_SUCCEEDED"}}), run));
    EXPECT_FALSE(matches(r, event("stall"), run));
    r.runNames = {"prod-*"};
    r.recipes = {"qwen*"};
    r.tags = {"framework=miles"};
    EXPECT_TRUE(matches(r, event("cuda_oom"), run));
    r.tags = {"framework=slime"};
    EXPECT_FALSE(matches(r, event("cuda_oom"), run));
    r.tags = {};
    r.runNames = {"dev-*"};
    EXPECT_FALSE(matches(r, event("cuda_oom"), run));
    Rule any;  // no lists: every kind at or above the level
    any.minLevel = Level::Error;
    EXPECT_TRUE(matches(any, event("nccl_error"), run));
    EXPECT_FALSE(matches(any, event("stall"), run));
    any.nodes = {"node-b*"};
    EXPECT_FALSE(matches(any, event("nccl_error"), run));
}

TEST(AlertMatch, RunFactsComeFromTheRecipeSnapshotAndProvenance) {
    db::AlertRunInfo info{"prod-7b",
                          "name: qwen-grpo\nframework: miles\nmodel:\n  name: qwen3-8b\n",
                          R"({"tags":["team=rl"]})", "failed"};
    const RunFacts f = runFacts(event("stall"), info);
    EXPECT_EQ(f.name, "prod-7b");
    EXPECT_EQ(f.recipe, "qwen-grpo");
    EXPECT_EQ(f.state, "failed");
    EXPECT_EQ(f.tags, (std::vector<std::string>{"framework=miles", "model=qwen3-8b", "team=rl"}));
}

TEST(AlertMatch, GlobsAndDurations) {
    EXPECT_TRUE(globMatch("prod-*", "prod-7b"));
    EXPECT_TRUE(globMatch("*-7?", "prod-7b"));
    EXPECT_FALSE(globMatch("prod-*", "dev-7b"));
    EXPECT_TRUE(globMatch("*", ""));
    EXPECT_FALSE(globMatch(std::string(40, '*') + "x", std::string(10000, 'a')));  // bounded time
    EXPECT_EQ(parseDuration("500ms"), 500'000'000);
    EXPECT_EQ(parseDuration("1.5m"), 90'000'000'000);
    EXPECT_EQ(parseDuration("2"), 2'000'000'000);
    EXPECT_FALSE(parseDuration("5 parsecs"));
    EXPECT_FALSE(parseDuration("-1s"));
}

TEST(AlertBackoff, GrowsExponentiallyWithJitterUpToTheCapAndHonoursRetryAfter) {
    DeliverySettings s;
    s.backoffBaseNs = 1'000'000'000;
    s.backoffMaxNs = 60'000'000'000;
    EXPECT_EQ(AlertSender::backoffNs(s, 1, std::nullopt, 0.0), 500'000'000);
    EXPECT_EQ(AlertSender::backoffNs(s, 1, std::nullopt, 1.0), 1'000'000'000);
    EXPECT_EQ(AlertSender::backoffNs(s, 4, std::nullopt, 1.0), 8'000'000'000);
    EXPECT_EQ(AlertSender::backoffNs(s, 4, std::nullopt, 0.0), 4'000'000'000);
    EXPECT_EQ(AlertSender::backoffNs(s, 30, std::nullopt, 1.0), 60'000'000'000);
    EXPECT_EQ(AlertSender::backoffNs(s, 1, 7'000'000'000, 0.5), 7'000'000'000);
}

}  // namespace
}  // namespace runplane::alerts
