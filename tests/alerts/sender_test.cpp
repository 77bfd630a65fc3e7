// The alert sender against a real HTTP receiver on loopback (cpp-httplib's server) and a real
// history file (issue #48): the payload each destination kind gets, back-off through 500, 429
// with Retry-After and 200, rate limit and quiet period, a receiver that never answers (the
// deadline makes an alert_failed event), and exactly once across a sender killed with SIGKILL
// (real `runplanectl alerts run` children) and with two senders on one history.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "backend/alerts/rules.h"
#include "backend/alerts/sender.h"
#include "db/history/alert_store.h"
#include "db/history/history.h"
#include "tests/alerts/receiver.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace runplane::alerts {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using runplane::testing::Answer;
using runplane::testing::Child;
using runplane::testing::ReceivedRequest;
using runplane::testing::Receiver;
using runplane::testing::ScratchDir;
using runplane::testing::waitUntil;
using runplane::testing::writeAll;

struct Ev {
    std::string kind;
    std::string message;
    db::EventAttrs attrs;
    std::string runId = "r1";
};

class SenderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        history = dir.file("history.sqlite");
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        db::RunRecord run;
        run.id = RunId("r1");
        run.name = "prod-7b";
        run.recipeYaml = "name: qwen-grpo\nframework: miles\nmodel:\n  name: qwen3-8b\n";
        run.startedNs = 1;
        ASSERT_TRUE((*h)->upsertRun(run).ok());
        // The sender starts its cursor at the newest event: set it before anything is stored.
        auto store = db::AlertStore::open(history);
        ASSERT_TRUE(store.ok()) << store.error();
        ASSERT_TRUE((*store)->cursor(unixNowNs()).ok());
    }

    // Stores events as a daemon's batch would (seqs continue per test).
    void ingest(const std::vector<Ev>& events) {
        auto h = db::History::open(history);
        ASSERT_TRUE(h.ok()) << h.error();
        db::IngestBatch batch;
        batch.nodeId = NodeId("node-a");
        batch.incarnation = 1;
        for (const Ev& e : events) {
            db::IngestEvent ie;
            ie.seq = ++seq;
            ie.tNs = unixNowNs();
            ie.runId = RunId(e.runId);
            ie.kind = e.kind;
            ie.message = e.message;
            ie.attrs = e.attrs;
            batch.events.push_back(ie);
        }
        batch.throughSeq = seq;
        auto r = (*h)->ingest(batch);
        ASSERT_TRUE(r.ok()) << r.error();
    }

    std::string writeRules(const std::string& text) {
        const std::string path = dir.file("alerts.yaml");
        writeAll(path, text);
        ::chmod(path.c_str(), 0600);
        return path;
    }

    AlertRules rules(const std::string& text) {
        auto r = loadAlertRules(writeRules(text));
        EXPECT_TRUE(r.ok()) << r.error();
        return r.ok() ? *r : AlertRules{};
    }

    std::unique_ptr<AlertSender> start(AlertRules r) {
        SenderOptions o;
        o.historyPath = history;
        o.rules = std::move(r);
        o.poll = 50ms;
        o.onLog = [this](const std::string& line) {
            std::lock_guard lock(logMutex);
            logs.push_back(line);
        };
        auto s = std::make_unique<AlertSender>(std::move(o));
        EXPECT_TRUE(s->start().ok());
        return s;
    }

    std::vector<db::AlertDelivery> deliveries() {
        auto store = db::AlertStore::open(history);
        EXPECT_TRUE(store.ok());
        auto r = (*store)->recent(1000);
        EXPECT_TRUE(r.ok());
        return r.ok() ? *r : std::vector<db::AlertDelivery>{};
    }

    std::vector<db::EventRecord> events(const std::string& kind) {
        auto h = db::History::open(history);
        db::EventFilter f;
        f.kind = kind;
        auto r = (*h)->listEvents(f);
        EXPECT_TRUE(r.ok());
        return r.ok() ? *r : std::vector<db::EventRecord>{};
    }

    ScratchDir dir;
    std::string history;
    std::uint64_t seq = 0;
    std::mutex logMutex;
    std::vector<std::string> logs;
};

TEST_F(SenderTest, EachDestinationKindGetsItsPayload) {
    Receiver receiver;
    const std::string captured = dir.file("command-stdin.json");
    ::setenv("RP_TEST_DISCORD_URL", receiver.url("/discord/123/SECRETD").c_str(), 1);
    auto sender = start(
        rules("destinations:\n"
              "  - {name: slack, type: slack, url: '" +
              receiver.url("/slack/T0/SECRETS") +
              "'}\n"
              "  - {name: discord, type: discord, url_env: RP_TEST_DISCORD_URL}\n"
              "  - {name: hook, type: webhook, url: '" +
              receiver.url("/hook") +
              "', token: SECRETTOK}\n"
              "  - {name: cmd, type: command, argv: [tee, '" +
              captured +
              "']}\n"
              "rules:\n"
              "  - {name: exits, events: [process_exit], to: [slack, discord, hook, cmd]}\n"));
    ingest({{"process_exit",
             "run r1 exited: exit code 1; see https://wandb.example/run/7",
             {{"exit_code", "1"}, {"term_signal", "0"}, {"pid", "4242"}}},
            {"phase", "rollout", {}}});
    ASSERT_TRUE(waitUntil([&] { return receiver.arrived() >= 3 && sender->stats().sent >= 4; }));
    sender->stop();
    std::map<std::string, ReceivedRequest> byPath;
    for (const auto& r : receiver.requests()) {
        byPath[r.path.substr(0, r.path.find('/', 1))] = r;
    }
    ASSERT_EQ(receiver.requests().size(), 3u);  // the phase event matched no rule

    const json slack = json::parse(byPath.at("/slack").body);
    EXPECT_EQ(slack.at("text"),
              "[ERROR] process_exit (run prod-7b, node node-a): run r1 exited: "
              "exit code 1; see <link>");
    ASSERT_TRUE(slack.at("blocks").is_array());
    EXPECT_EQ(slack["blocks"][0]["type"], "section");
    EXPECT_EQ(slack["blocks"][0]["text"]["type"], "mrkdwn");
    EXPECT_NE(slack["blocks"][1]["text"]["text"].get<std::string>().find("*node* `node-a`"),
              std::string::npos);
    EXPECT_EQ(slack["blocks"].back()["type"], "context");

    const json discord = json::parse(byPath.at("/discord").body);
    EXPECT_EQ(discord.at("content"), slack.at("text"));
    EXPECT_EQ(discord["embeds"][0]["title"], "process_exit");
    EXPECT_EQ(discord["embeds"][0]["color"], 0xE01E5A);
    EXPECT_EQ(discord["allowed_mentions"]["parse"], json::array());

    const ReceivedRequest& hookRequest = byPath.at("/hook");
    EXPECT_EQ(hookRequest.authorization, "Bearer SECRETTOK");
    EXPECT_EQ(hookRequest.idempotencyKey.rfind("runplane-", 0), 0u);
    const json hook = json::parse(hookRequest.body);
    EXPECT_EQ(hook["schema"], "runplane.alert.v1");
    EXPECT_EQ(hook["type"], "event");
    EXPECT_EQ(hook["level"], "error");
    EXPECT_EQ(hook["rule"], "exits");
    EXPECT_EQ(hook["event"]["kind"], "process_exit");
    EXPECT_EQ(hook["event"]["seq"], 1);
    EXPECT_EQ(hook["event"]["attributes"]["pid"], "4242");
    EXPECT_EQ(hook["event"]["numbers"]["exit_code"], 1.0);
    EXPECT_EQ(hook["run"]["name"], "prod-7b");
    EXPECT_EQ(hook["run"]["recipe"], "qwen-grpo");
    EXPECT_EQ(hook["node"]["id"], "node-a");
    EXPECT_EQ(hook["delivery"]["idempotency_key"], hookRequest.idempotencyKey);
    EXPECT_EQ(hook["summary"].get<std::string>().find("://"), std::string::npos);

    const json fromCommand = json::parse(runplane::testing::readAll(captured));
    EXPECT_EQ(fromCommand["event"]["id"], hook["event"]["id"]);
    EXPECT_EQ(fromCommand["summary"], hook["summary"]);

    // What the history keeps of the deliveries names destinations, never their URLs or tokens.
    for (const auto& d : deliveries()) {
        EXPECT_EQ(d.state, db::DeliveryState::Sent) << d.destination << " " << d.result;
        for (const char* secret : {"SECRETS", "SECRETD", "SECRETTOK"}) {
            EXPECT_EQ(d.result.find(secret), std::string::npos);
            EXPECT_EQ(d.payloadJson.find(secret), std::string::npos);
        }
    }
    for (const auto& line : logs) {
        for (const char* secret : {"SECRETS", "SECRETD", "SECRETTOK"}) {
            EXPECT_EQ(line.find(secret), std::string::npos) << line;
        }
    }
}

TEST_F(SenderTest, BacksOffThrough500And429WithRetryAfterUntil200) {
    Receiver receiver([](int n, const ReceivedRequest&) {
        if (n == 0) {
            return Answer{500, "boom", ""};
        }
        if (n == 1) {
            return Answer{429, "rate_limited", "1"};
        }
        return Answer{200, "ok", ""};
    });
    auto sender =
        start(rules("destinations:\n"
                    "  - {name: slack, type: slack, url: '" +
                    receiver.url("/slack/x") +
                    "'}\n"
                    "delivery: {backoff_base: 50ms, backoff_max: 200ms}\n"
                    "rules:\n"
                    "  - {name: stalls, events: [stall], to: slack}\n"));
    ingest({{"stall", "no step for 600 s", {}}});
    ASSERT_TRUE(waitUntil([&] { return sender->stats().sent == 1; }, 15s));
    sender->stop();
    const auto got = receiver.requests();
    ASSERT_EQ(got.size(), 3u);
    // 500: the back-off (25..50 ms here); 429: Retry-After's 1 s wins over the 200 ms cap.
    EXPECT_LT(got[1].at - got[0].at, 900ms);
    EXPECT_GE(got[2].at - got[1].at, 1000ms);
    const auto rows = deliveries();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].state, db::DeliveryState::Sent);
    EXPECT_EQ(rows[0].attempts, 3);
    EXPECT_EQ(rows[0].result, "HTTP 200 ok");
    bool sawRetryAfter = false;
    for (const auto& line : logs) {
        sawRetryAfter = sawRetryAfter ||
                        line.find("HTTP 429 rate_limited (retry after 1.0 s)") != std::string::npos;
    }
    EXPECT_TRUE(sawRetryAfter);
}

TEST_F(SenderTest, RateLimitAndQuietPeriodSuppressButKeepARecord) {
    Receiver receiver;
    auto sender =
        start(rules("destinations:\n"
                    "  - {name: hook, type: webhook, url: '" +
                    receiver.url("/hook") +
                    "'}\n"
                    "rules:\n"
                    "  - {name: limited, events: [nccl_error], rate_limit: 2/1h, to: hook}\n"
                    "  - {name: quiet, events: [stall], quiet: 1h, to: hook}\n"));
    ingest({{"nccl_error", "e1", {}},
            {"nccl_error", "e2", {}},
            {"nccl_error", "e3", {}},
            {"nccl_error", "e4", {}},
            {"nccl_error", "e5", {}},
            {"stall", "s1", {}},
            {"stall", "s2", {}},
            {"stall", "other run", {}, "r2"}});
    ASSERT_TRUE(waitUntil([&] { return sender->stats().sent == 4; }));
    std::this_thread::sleep_for(300ms);  // nothing more comes
    sender->stop();
    std::vector<std::string> messages;
    for (const auto& r : receiver.requests()) {
        messages.push_back(json::parse(r.body)["event"]["message"]);
    }
    EXPECT_EQ(messages, (std::vector<std::string>{"e1", "e2", "s1", "other run"}));
    int suppressed = 0;
    for (const auto& d : deliveries()) {
        if (d.state == db::DeliveryState::Suppressed) {
            ++suppressed;
            EXPECT_TRUE(d.result.rfind("rate limit 2 per", 0) == 0 ||
                        d.result.rfind("quiet period", 0) == 0)
                << d.result;
        }
    }
    EXPECT_EQ(suppressed, 4);
}

TEST_F(SenderTest, AReceiverThatNeverAnswersEndsInAnAlertFailedEventThatIsItselfAlerted) {
    // A socket that listens but never accepts: the request goes out, no answer ever comes.
    const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(silent, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len);
    const std::string silentUrl = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/x";
    Receiver backup;
    auto sender =
        start(rules("destinations:\n"
                    "  - {name: silent, type: webhook, url: '" +
                    silentUrl +
                    "', timeout: 200ms}\n"
                    "  - {name: backup, type: webhook, url: '" +
                    backup.url("/backup") +
                    "'}\n"
                    "delivery: {deadline: 1s, backoff_base: 100ms, backoff_max: 200ms}\n"
                    "rules:\n"
                    "  - {name: ooms, events: [cuda_oom], to: silent}\n"
                    "  - {name: undelivered, events: [alert_failed], to: [backup, silent]}\n"));
    ingest({{"cuda_oom", "CUDA out of memory. Tried to allocate 2.00 GiB", {{"rank", "3"}}}});
    ASSERT_TRUE(waitUntil([&] { return backup.arrived() == 1; }, 20s));
    sender->stop();
    ::close(silent);
    const auto failed = events(db::kAlertFailedKind);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].nodeId.value(), "node-a");
    EXPECT_EQ(failed[0].runId.value(), "r1");
    EXPECT_EQ(db::attrText(failed[0].attrs, "destination"), "silent");
    EXPECT_EQ(db::attrText(failed[0].attrs, "rule"), "ooms");
    EXPECT_GE(failed[0].attrs.at("attempts").get<int>(), 2);
    EXPECT_NE(db::attrText(failed[0].attrs, "last_result").find("deadline passed"),
              std::string::npos);
    const json got = json::parse(backup.requests()[0].body);
    EXPECT_EQ(got["event"]["kind"], "alert_failed");
    EXPECT_EQ(got["rule"], "undelivered");
    // The failure is never sent back to the destination that failed.
    for (const auto& d : deliveries()) {
        if (d.rule == "undelivered") {
            EXPECT_EQ(d.destination, "backup");
        }
    }
}

TEST_F(SenderTest, NoRulesMeansNothingIsStoredOrSent) {
    Receiver receiver;
    auto sender = start(rules("destinations: []\nrules: []\n"));
    ingest({{"cuda_oom", "oom", {}}});
    ASSERT_TRUE(waitUntil([&] {
        auto store = db::AlertStore::open(history);
        auto c = (*store)->cursor(0);
        return c.ok() && *c >= 1;
    }));
    sender->stop();
    EXPECT_TRUE(deliveries().empty());
    EXPECT_EQ(receiver.arrived(), 0);
}

TEST_F(SenderTest, TheQueueIsBoundedAndTheRestWaitsInTheHistory) {
    std::atomic<bool> healthy{false};
    Receiver receiver([&](int, const ReceivedRequest&) {
        return healthy ? Answer{} : Answer{500, "down", ""};
    });
    auto sender =
        start(rules("destinations:\n"
                    "  - {name: hook, type: webhook, url: '" +
                    receiver.url("/hook") +
                    "'}\n"
                    "delivery: {max_pending: 2, backoff_base: 50ms, backoff_max: 100ms}\n"
                    "rules:\n"
                    "  - {name: all, min_level: info, to: hook}\n"));
    ingest({{"stall", "q1", {}},
            {"stall", "q2", {}},
            {"stall", "q3", {}},
            {"stall", "q4", {}},
            {"stall", "q5", {}}});
    ASSERT_TRUE(waitUntil([&] { return receiver.arrived() >= 6; }));
    {
        // Two pending, the cursor after the second event: the other three wait, stored.
        auto store = db::AlertStore::open(history);
        ASSERT_TRUE(store.ok());
        EXPECT_EQ(*(*store)->countPending(), 2);
        EXPECT_EQ(deliveries().size(), 2u);
        std::set<std::string> tried;
        for (const auto& r : receiver.requests()) {
            tried.insert(json::parse(r.body)["event"]["message"].get<std::string>());
        }
        EXPECT_EQ(tried, (std::set<std::string>{"q1", "q2"}));
    }
    healthy = true;
    ASSERT_TRUE(waitUntil([&] { return sender->stats().sent == 5; }));
    sender->stop();
}

TEST_F(SenderTest, AlertsTestSendsToEachDestinationAndPrintsWhatCameBack) {
    Receiver receiver([](int, const ReceivedRequest& r) {
        return r.path.rfind("/slack", 0) == 0 ? Answer{200, "ok", ""}
                                              : Answer{404, "no_such_hook", ""};
    });
    const std::string file = writeRules(
        "destinations:\n"
        "  - {name: slack, type: slack, url: '" +
        receiver.url("/slack/T0/SECRETS") +
        "'}\n"
        "  - {name: gone, type: discord, url: '" +
        receiver.url("/discord/1/SECRETD") +
        "'}\n"
        "  - {name: echo, type: command, argv: [echo, pong]}\n"
        "rules: []\n");
    const auto r = runplane::testing::runCtl({"alerts", "test", "--alerts", file}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;  // one destination did not take it
    EXPECT_NE(r.out.find("slack (slack): delivered - HTTP 200 ok"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gone (discord): NOT delivered - HTTP 404 no_such_hook"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("echo (command): delivered - exit 0: pong"), std::string::npos) << r.out;
    EXPECT_EQ((r.out + r.err).find("SECRET"), std::string::npos) << r.out << r.err;
    ASSERT_EQ(receiver.requests().size(), 2u);
    EXPECT_EQ(json::parse(receiver.requests()[0].body)["text"].get<std::string>().rfind(
                  "[INFO] test alert from runplane", 0),
              0u);

    const auto missing = runplane::testing::runCtl(
        {"alerts", "test", "--alerts", dir.file("none.yaml")}, dir.path());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("none.yaml: no alerts file"), std::string::npos) << missing.err;
}

TEST_F(SenderTest, AlertsStatusShowsTheLastDeliveries) {
    Receiver receiver;
    auto sender =
        start(rules("destinations:\n"
                    "  - {name: hook, type: webhook, url: '" +
                    receiver.url("/hook") +
                    "'}\n"
                    "rules:\n"
                    "  - {name: stalls, events: [stall], to: hook}\n"));
    ingest({{"stall", "no step for 600 s", {}}});
    ASSERT_TRUE(waitUntil([&] { return sender->stats().sent == 1; }));
    const auto r =
        runplane::testing::runCtl({"alerts", "status", "--history", history, "--json"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json status = json::parse(r.out);
    EXPECT_EQ(status["pending"], 0);
    EXPECT_TRUE(status["sender"]["active"].get<bool>());
    ASSERT_EQ(status["deliveries"].size(), 1u);
    EXPECT_EQ(status["deliveries"][0]["rule"], "stalls");
    EXPECT_EQ(status["deliveries"][0]["destination"], "hook");
    EXPECT_EQ(status["deliveries"][0]["state"], "sent");
    EXPECT_EQ(status["deliveries"][0]["result"], "HTTP 200 ok");
    sender->stop();
}

// ---- real `runplanectl alerts run` children

std::map<std::int64_t, int> okByEvent(const Receiver& receiver) {
    std::map<std::int64_t, int> out;
    for (const auto& r : receiver.requests()) {
        if (r.answered == 200) {
            ++out[json::parse(r.body)["event"]["id"].get<std::int64_t>()];
        }
    }
    return out;
}

TEST_F(SenderTest, ExactlyOnceAcrossASenderKilledWithSigkill) {
    std::mutex holdMutex;
    std::condition_variable holdCv;
    bool released = false;
    // The third request is held until the test has killed its sender, then answered 503: the
    // sender never learnt whether it arrived, and its successor sends it again.
    Receiver receiver([&](int n, const ReceivedRequest&) {
        if (n == 2) {
            std::unique_lock lock(holdMutex);
            holdCv.wait_for(lock, 20s, [&] { return released; });
            return Answer{503, "gone", ""};
        }
        return Answer{};
    });
    const std::string file = writeRules(
        "destinations:\n"
        "  - {name: hook, type: webhook, url: '" +
        receiver.url("/hook") +
        "', timeout: 30s}\n"
        "delivery: {backoff_base: 50ms, backoff_max: 100ms}\n"
        "rules:\n"
        "  - {name: all, min_level: info, to: hook}\n");
    const std::string ctl = runplane::testing::builtBinary("backend/cli/runplanectl");
    const std::vector<std::string> argv{ctl,  "alerts",    "run",  "--alerts",
                                        file, "--history", history};
    const std::vector<std::string> env{"RUNPLANE_ALERT_LEASE_SECONDS=1"};
    ingest({{"stall", "a1", {}},
            {"stall", "a2", {}},
            {"stall", "a3", {}},
            {"stall", "a4", {}},
            {"stall", "a5", {}}});
    Child first = Child::spawn(argv, dir.file("a.out"), dir.file("a.err"), env);
    ASSERT_TRUE(waitUntil([&] { return receiver.arrived() == 3; })) << first.stderrText();
    first.kill(SIGKILL);
    ASSERT_EQ(first.wait(5s), 128 + SIGKILL);
    {
        std::lock_guard lock(holdMutex);
        released = true;
    }
    holdCv.notify_all();
    // Stored while no sender runs: the next one sends them.
    ingest({{"stall", "b1", {}}, {"stall", "b2", {}}, {"stall", "b3", {}}});
    Child second = Child::spawn(argv, dir.file("b.out"), dir.file("b.err"), env);
    ASSERT_TRUE(waitUntil([&] { return okByEvent(receiver).size() == 8; }, 30s))
        << second.stderrText();
    std::this_thread::sleep_for(500ms);  // and nothing twice afterwards
    second.kill(SIGTERM);
    EXPECT_EQ(second.wait(10s), 0) << second.stderrText();
    const auto ok = okByEvent(receiver);
    ASSERT_EQ(ok.size(), 8u);
    for (const auto& [eventId, count] : ok) {
        EXPECT_EQ(count, 1) << "event " << eventId;
    }
    EXPECT_EQ(receiver.arrived(), 9);  // 8 accepted + the one held when the sender died
}

TEST_F(SenderTest, TwoSendersOnOneHistoryNeverSendTwice) {
    Receiver receiver;
    const std::string file = writeRules(
        "destinations:\n"
        "  - {name: hook, type: webhook, url: '" +
        receiver.url("/hook") +
        "'}\n"
        "rules:\n"
        "  - {name: all, min_level: info, to: hook}\n");
    const std::string ctl = runplane::testing::builtBinary("backend/cli/runplanectl");
    const std::vector<std::string> argv{ctl,  "alerts",    "run",  "--alerts",
                                        file, "--history", history};
    Child a = Child::spawn(argv, dir.file("a.out"), dir.file("a.err"));
    Child b = Child::spawn(argv, dir.file("b.out"), dir.file("b.err"));
    for (int i = 0; i < 4; ++i) {
        ingest({{"stall", "x" + std::to_string(i), {}},
                {"nccl_error", "y" + std::to_string(i), {}},
                {"stall", "z" + std::to_string(i), {}}});
        std::this_thread::sleep_for(150ms);
    }
    ASSERT_TRUE(waitUntil([&] { return okByEvent(receiver).size() == 12; }))
        << a.stderrText() << b.stderrText();
    std::this_thread::sleep_for(500ms);
    a.kill(SIGTERM);
    b.kill(SIGTERM);
    EXPECT_EQ(a.wait(10s), 0);
    EXPECT_EQ(b.wait(10s), 0);
    EXPECT_EQ(receiver.arrived(), 12);
    const std::string both = a.stderrText() + b.stderrText();
    EXPECT_NE(both.find("another sender holds the lease"), std::string::npos) << both;
}

}  // namespace
}  // namespace runplane::alerts
