// TelemetryIngestor against a scripted Agent: exactly-once storage, resume from the cursor,
// explicit gaps, and clear failures. The real daemon is exercised in tests/integration.
#include "backend/control/telemetry_ingestor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "db/history/history.h"
#include "db/sqlite/sqlite.h"
#include "tests/control/fake_agent.h"
#include "tests/db/test_util.h"

namespace runplane::control {
namespace {

using runplane::testing::FakeAgent;
using runplane::testing::sampleRecord;
using runplane::testing::ScratchDir;

template <typename Pred>
bool waitFor(Pred&& pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pred();
}

std::int64_t scalar(const std::string& path, const std::string& sql) {
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << (stmt.ok() ? "" : stmt.error());
    EXPECT_TRUE(stmt->step().ok());
    return stmt->columnInt(0);
}

std::vector<v1::TelemetryRecord> records(std::uint64_t first, std::uint64_t last) {
    std::vector<v1::TelemetryRecord> out;
    for (std::uint64_t seq = first; seq <= last; ++seq) {
        out.push_back(sampleRecord(seq, "host.mem.used_bytes", static_cast<double>(seq)));
    }
    return out;
}

IngestorOptions optionsFor(const std::string& address, const std::string& history) {
    IngestorOptions options;
    options.address = address;
    options.historyPath = history;
    options.backoffInitial = std::chrono::milliseconds(20);
    options.backoffMax = std::chrono::milliseconds(100);
    return options;
}

TEST(Ingestor, StoresAcksAndDeliversAfterCommit) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    agent.setRecords(records(1, 30), 7);
    const std::string address = agent.start();
    std::atomic<std::uint64_t> seenCursor{0};
    std::atomic<bool> visible{true};
    IngestorCallbacks callbacks;
    callbacks.onTelemetry = [&](const TelemetryUpdate& update) {
        // Delivered after the commit: another connection already sees the rows.
        if (scalar(history, "SELECT count(*) FROM samples;") <
            static_cast<std::int64_t>(update.cursor)) {
            visible = false;
        }
        seenCursor = update.cursor;
    };
    TelemetryIngestor ingestor(optionsFor(address, history), callbacks);
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return agent.lastAck() == 30; })) << agent.lastAck();
    ingestor.stop();
    EXPECT_EQ(ingestor.status().state, IngestState::Stopped);
    EXPECT_EQ(seenCursor.load(), 30u);
    EXPECT_TRUE(visible.load());
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 30);
    EXPECT_EQ(scalar(history, "SELECT last_seq FROM ingest_cursor WHERE node_id='fake-node';"), 30);
    ASSERT_TRUE(ingestor.status().node.has_value());
    EXPECT_EQ(ingestor.status().node->hostname, "fakehost");
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM nodes WHERE address='" + address + "';"), 1);
}

// deriveEvents (issue 43: watch's role alarms): the events it returns for a batch are stored with
// that batch (seq NULL, controller-made) and delivered live with it; it sees each batch once.
TEST(Ingestor, DerivedEventsAreStoredAndDeliveredWithTheirBatch) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    agent.setRecords(records(1, 30), 7);
    const std::string address = agent.start();
    std::atomic<int> batches{0}, liveDerived{0};
    IngestorOptions options = optionsFor(address, history);
    options.deriveEvents = [&](const db::IngestBatch& batch) {
        ++batches;
        db::IngestEvent e;
        e.tNs = batch.samples.empty() ? 1 : batch.samples.back().tNs;
        e.kind = "memory_alarm";
        e.message = "derived from " + std::to_string(batch.samples.size()) + " samples";
        e.attrs = db::eventAttrs({{"source", "plan"}});
        return std::vector<db::IngestEvent>{e};
    };
    IngestorCallbacks callbacks;
    callbacks.onTelemetry = [&](const TelemetryUpdate& update) {
        for (const auto& e : update.events) {
            liveDerived += e.seq == 0 && e.kind == "memory_alarm" ? 1 : 0;
        }
    };
    TelemetryIngestor ingestor(options, callbacks);
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return agent.lastAck() == 30; })) << agent.lastAck();
    ingestor.stop();
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 30);
    EXPECT_EQ(scalar(history,
                     "SELECT count(*) FROM events WHERE kind='memory_alarm' AND seq IS "
                     "NULL AND attrs_json LIKE '%plan%';"),
              batches.load());
    EXPECT_GE(batches.load(), 1);
    EXPECT_EQ(liveDerived.load(), batches.load());
}

// A listener that asks for some series gets only those live; the history gets every one.
TEST(Ingestor, LiveUpdatesCarryOnlyTheSamplesAskedFor) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    std::vector<v1::TelemetryRecord> script;
    for (std::uint64_t seq = 1; seq <= 20; ++seq) {
        script.push_back(sampleRecord(seq, seq % 2 == 0 ? "host.mem.used_bytes" : "gpu.0.util",
                                      static_cast<double>(seq)));
    }
    agent.setRecords(script, 6);
    const std::string address = agent.start();
    std::mutex mutex;
    std::vector<std::string> live;
    std::uint64_t lastCursor = 0;
    IngestorCallbacks callbacks;
    callbacks.onTelemetry = [&](const TelemetryUpdate& update) {
        std::lock_guard lock(mutex);
        for (const LiveSample& s : update.samples) {
            live.push_back(s.sample.series);
        }
        lastCursor = update.cursor;
    };
    callbacks.liveSample = [](const std::string& series, const RunId&) {
        return series == "host.mem.used_bytes";
    };
    TelemetryIngestor ingestor(optionsFor(address, history), callbacks);
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return agent.lastAck() == 20; })) << agent.lastAck();
    ingestor.stop();
    std::lock_guard lock(mutex);
    EXPECT_EQ(live, std::vector<std::string>(10, "host.mem.used_bytes"));
    EXPECT_EQ(lastCursor, 20u);
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 20);
}

TEST(Ingestor, ResumesFromTheCursorAndNeverStoresTwice) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    agent.setRecords(records(1, 25), 10);
    agent.setIgnoreFromSeq(true);  // a misbehaving daemon that re-sends everything each time
    const std::string address = agent.start();
    TelemetryIngestor ingestor(optionsFor(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    // The fake ends the stream after each pass; the ingestor reconnects and resumes.
    ASSERT_TRUE(waitFor([&] { return agent.watchCalls() >= 3; }));
    ingestor.stop();
    const auto froms = agent.fromSeqs();
    EXPECT_EQ(froms[0], 0u);  // nothing stored yet: oldest kept
    EXPECT_EQ(froms[1], 26u);
    EXPECT_EQ(froms[2], 26u);
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 25);
    EXPECT_GE(ingestor.status().reconnects, 2u);
    // A second ingestor on the same history resumes at the stored cursor.
    TelemetryIngestor again(optionsFor(address, history));
    ASSERT_TRUE(again.start().ok());
    ASSERT_TRUE(waitFor([&] { return agent.watchCalls() >= 4; }));
    again.stop();
    EXPECT_EQ(agent.fromSeqs()[3], 26u);
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 25);
}

TEST(Ingestor, HoleIsStoredAsAnExplicitGapEvent) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    auto script = records(1, 10);
    auto tail = records(15, 20);
    script.insert(script.end(), tail.begin(), tail.end());
    agent.setRecords(script, 4);
    const std::string address = agent.start();
    TelemetryIngestor ingestor(optionsFor(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return agent.lastAck() == 20; }));
    ingestor.stop();
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 16);
    EXPECT_EQ(scalar(history,
                     "SELECT count(*) FROM events WHERE kind='gap' AND seq IS NULL "
                     "AND json_extract(attrs_json, '$.first_seq')='11' "
                     "AND json_extract(attrs_json, '$.last_seq')='14';"),
              1);
    EXPECT_EQ(ingestor.status().gapsRecorded, 1u);
}

TEST(Ingestor, OtherProtocolVersionIsReportedAndNothingStored) {
    ScratchDir dir;
    const std::string history = dir.file("h.sqlite");
    FakeAgent agent;
    agent.setProtocolVersion(3);
    agent.setRecords(records(1, 5), 5);
    const std::string address = agent.start();
    TelemetryIngestor ingestor(optionsFor(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return ingestor.status().reconnects >= 1; }));
    const IngestorStatus status = ingestor.status();
    ingestor.stop();
    EXPECT_EQ(status.lastError,
              "daemon at " + address + " speaks protocol v3, this controller speaks v1");
    EXPECT_EQ(agent.watchCalls(), 0);
    EXPECT_EQ(scalar(history, "SELECT count(*) FROM samples;"), 0);
}

TEST(Ingestor, CorruptHistoryFailsClearlyAndIsUntouched) {
    ScratchDir dir;
    const std::string history = dir.file("corrupt.sqlite");
    runplane::testing::writeAll(history, std::string(4096, '\x07'));
    const std::string before = runplane::testing::readAll(history);
    FakeAgent agent;
    const std::string address = agent.start();
    TelemetryIngestor ingestor(optionsFor(address, history));
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return ingestor.status().state == IngestState::Failed; }));
    EXPECT_NE(ingestor.status().lastError.find(history), std::string::npos);
    ingestor.stop();
    EXPECT_EQ(runplane::testing::readAll(history), before);
    EXPECT_EQ(agent.watchCalls(), 0);
}

TEST(Ingestor, StopIsPromptWhileTheDaemonIsUnreachable) {
    ScratchDir dir;
    IngestorOptions options = optionsFor("127.0.0.1:1", dir.file("h.sqlite"));
    options.backoffInitial = std::chrono::milliseconds(5000);
    TelemetryIngestor ingestor(options);
    ASSERT_TRUE(ingestor.start().ok());
    ASSERT_TRUE(waitFor([&] { return ingestor.status().state == IngestState::Backoff; }));
    EXPECT_EQ(ingestor.status().lastError,
              "cannot reach runplaned at 127.0.0.1:1: connection refused");
    const auto t0 = std::chrono::steady_clock::now();
    ingestor.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

}  // namespace
}  // namespace runplane::control
