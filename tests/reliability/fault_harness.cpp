#include "tests/reliability/fault_harness.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "db/sqlite/sqlite.h"

namespace runplane::reliability {

std::vector<std::string> stepsRun(int steps, int exitCode) {
    return {"/bin/sh", "-c",
            "i=0; while [ $i -lt " + std::to_string(steps) +
                " ]; do echo \"step $i: {'train/loss': 1.0}\"; i=$((i+1)); sleep 0.1; done; exit " +
                std::to_string(exitCode)};
}

void FaultTest::SetUp() {
    m_history = m_dir.file("history.sqlite");
    m_state = m_dir.file("state");
    m_daemon = std::make_unique<Daemon>(m_state, "node-f", 10);
}

void FaultTest::TearDown() {
    for (auto& i : m_ingestors) {
        i->stop();
    }
    if (m_controller) {
        m_controller->stopAll();
    }
    if (m_daemon) {
        m_daemon->stop();
    }
}

void FaultTest::startDaemon() {
    m_address = m_daemon->start();
    ASSERT_FALSE(m_address.empty()) << m_daemon->error();
}

void FaultTest::submit(const std::string& runId, const std::vector<std::string>& argv) {
    if (!m_controller) {
        control::ControllerOptions o;
        o.historyPath = m_history;
        o.ingestTelemetry = false;
        o.pruneInterval = std::chrono::milliseconds(0);
        m_controller = std::make_unique<control::Controller>(o);
    }
    control::SubmitSpec spec;
    spec.address = m_address;
    spec.run.runId = RunId{runId};
    spec.run.argv = argv;
    auto submitted = m_controller->submitRun(spec);
    ASSERT_TRUE(submitted.ok()) << submitted.error();
}

control::TelemetryIngestor& FaultTest::ingest(const std::string& address) {
    control::IngestorOptions o;
    o.address = address.empty() ? m_address : address;
    o.historyPath = m_history;
    o.backoffInitial = std::chrono::milliseconds(50);
    o.backoffMax = std::chrono::milliseconds(400);
    m_ingestors.push_back(std::make_unique<control::TelemetryIngestor>(o));
    EXPECT_TRUE(m_ingestors.back()->start().ok());
    return *m_ingestors.back();
}

Child FaultTest::watch(const std::string& tag, const std::string& binary,
                       const std::vector<std::string>& env) {
    return Child::spawn(
        {runplane::testing::builtBinary(binary), "watch", m_address, "--history", m_history},
        m_dir.file(tag + ".out"), m_dir.file(tag + ".err"), env);
}

std::int64_t FaultTest::storedCursor() const {
    return runplane::testing::queryInt(
        m_history, "SELECT coalesce(max(last_seq), 0) FROM ingest_cursor WHERE node_id='node-f';");
}

std::optional<db::RunRecord> FaultTest::run(const std::string& runId) const {
    db::OpenOptions o;
    o.readOnly = true;
    auto h = db::History::open(m_history, o);
    if (!h.ok()) {
        return std::nullopt;
    }
    auto r = (*h)->run(RunId{runId});
    return r.ok() && *r ? std::optional<db::RunRecord>(**r) : std::nullopt;
}

bool FaultTest::waitRunEnded(const std::string& runId, std::chrono::milliseconds timeout) const {
    return waitUntil(
        [&] {
            auto r = run(runId);
            return r && r->state != db::RunState::Running;
        },
        timeout, std::chrono::milliseconds(100));
}

std::vector<std::string> FaultTest::exitEvents(const std::string& runId) const {
    std::vector<std::string> out;
    auto db = sqlite::Database::open(m_history);
    if (!db.ok()) {
        return out;
    }
    auto stmt = (*db)->prepare(
        "SELECT attrs_json FROM events WHERE run_id = ?1 AND kind = 'process_exit' ORDER BY seq;");
    if (!stmt.ok()) {
        return out;
    }
    stmt->bind(1, runId);
    while (true) {
        auto row = stmt->step();
        if (!row.ok() || !*row) {
            break;
        }
        out.push_back(stmt->columnText(0));
    }
    return out;
}

std::string FaultTest::integrity(const std::string& path) const {
    auto db = sqlite::Database::open(path.empty() ? m_history : path);
    if (!db.ok()) {
        return db.error();
    }
    auto stmt = (*db)->prepare("PRAGMA integrity_check;");
    if (!stmt.ok()) {
        return stmt.error();
    }
    auto row = stmt->step();
    return row.ok() && *row ? stmt->columnText(0) : std::string("no answer");
}

std::uint64_t FaultTest::expectWholeBatchesOnly(const std::string& copy) const {
    EXPECT_EQ(integrity(copy), "ok") << copy;
    const auto c = runplane::testing::checkContinuity(copy, "node-f");
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_TRUE(c.missing.empty()) << copy;
    EXPECT_EQ(c.rows, c.distinctSeqs) << copy;
    EXPECT_EQ(runplane::testing::queryInt(
                  copy, "SELECT count(*) FROM events WHERE node_id='node-f' AND seq > " +
                            std::to_string(c.cursor) + ";"),
              0)
        << "rows beyond the stored cursor in " << copy;
    return c.cursor;
}

void FaultTest::putBackTheTornCopy(const std::string& cuts, const std::string& path) const {
    std::string cutDir;
    std::getline(std::ifstream(cuts + "/powered-off"), cutDir);
    const std::string name = std::filesystem::path(path).filename().string();
    for (const std::string suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(path + suffix);
        const std::string torn = cutDir + "/torn-0/" + name + suffix;
        if (suffix != "-shm" && std::filesystem::exists(torn)) {
            std::filesystem::copy_file(torn, path + suffix);
        }
    }
}

void FaultTest::watchUntilR1EndsThenCheck(const std::string& tag) {
    Child w = watch(tag);
    ASSERT_TRUE(waitRunEnded("r1")) << w.stderrText();
    w.kill(SIGTERM);
    w.wait(std::chrono::seconds(10));
    expectTrueStatus("r1", db::RunState::Failed, "exit code 3", "exit_code=3");
    expectExactlyOnce();
}

void FaultTest::expectExactlyOnce() const {
    const auto c = runplane::testing::checkContinuity(m_history, "node-f");
    const std::string text = "first " + std::to_string(c.firstSeq) + " cursor " +
                             std::to_string(c.cursor) + " rows " + std::to_string(c.rows) +
                             " distinct " + std::to_string(c.distinctSeqs) + " gaps " +
                             std::to_string(c.gaps.size()) + " missing " +
                             std::to_string(c.missing.size()) + " " + c.error;
    EXPECT_TRUE(c.error.empty()) << text;
    EXPECT_EQ(c.firstSeq, 1u) << text;
    EXPECT_GT(c.cursor, 0u) << text;
    EXPECT_EQ(c.rows, c.distinctSeqs) << "duplicated: " << text;
    EXPECT_TRUE(c.missing.empty()) << "lost: " << text;
    EXPECT_TRUE(c.gaps.empty()) << "gap events: " << text;
    EXPECT_EQ(integrity(), "ok");
}

void FaultTest::expectTrueStatus(const std::string& runId, db::RunState state,
                                 const std::string& message,
                                 const std::string& exitCodeAttr) const {
    auto r = run(runId);
    ASSERT_TRUE(r.has_value()) << runId << " is not in the history";
    EXPECT_EQ(db::toString(r->state), db::toString(state)) << r->message;
    EXPECT_NE(r->message.find(message), std::string::npos) << r->message;
    const auto exits = exitEvents(runId);
    if (exitCodeAttr.empty()) {
        EXPECT_TRUE(exits.empty()) << exits.front();
        return;
    }
    ASSERT_EQ(exits.size(), 1u) << "process_exit events of " << runId;
    auto attrs = nlohmann::json::parse(exits[0], nullptr, false);
    ASSERT_TRUE(attrs.is_object()) << exits[0];
    const auto [key, value] = [&] {
        const auto eq = exitCodeAttr.find('=');
        return std::pair{exitCodeAttr.substr(0, eq), exitCodeAttr.substr(eq + 1)};
    }();
    EXPECT_EQ(attrs.value(key, std::string()), value) << exits[0];
}

pid_t FaultTest::runPid(const std::string& runId, const std::string& key) const {
    std::ifstream in(m_state + "/runs.d/" + runId + "/supervisor.json");
    auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() ? j.value(key, 0) : 0;
}

}  // namespace runplane::reliability
