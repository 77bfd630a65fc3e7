// Issue 41 (daemon side), the red-team round's spool faults against a real runplaned: a record
// that cannot be read, a WAL deleted after kill -9 (the file rolls back within one
// incarnation), and a damaged spool file at start. docs/reliability.md, "Red-team round
// (issue 41): daemon", lists them.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "runplane/v1/agent.grpc.pb.h"
#include "tests/db/test_util.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace runplane::reliability {
namespace {

using runplane::testing::Daemon;
using runplane::testing::ScratchDir;
using Records = std::vector<v1::TelemetryRecord>;

std::unique_ptr<v1::Agent::Stub> stubOf(const std::string& address) {
    return v1::Agent::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// Records from `from` until `enough` holds (or 20 s); the stream's end status in *status.
Records watch(v1::Agent::Stub& stub, std::uint64_t from, std::uint64_t incarnation,
              const std::function<bool(const Records&)>& enough, grpc::Status* status,
              std::uint64_t* seenIncarnation = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::WatchTelemetryRequest req;
    req.set_from_seq(from);
    req.set_spool_incarnation(incarnation);
    req.set_consumer("red-team");
    auto reader = stub.WatchTelemetry(&ctx, req);
    Records out;
    v1::TelemetryBatch batch;
    bool done = false;
    while (!done && reader->Read(&batch)) {
        if (seenIncarnation != nullptr) {
            *seenIncarnation = batch.spool_incarnation();
        }
        for (const auto& r : batch.records()) {
            out.push_back(r);
        }
        done = enough(out);
    }
    if (done) {
        ctx.TryCancel();
    }
    *status = reader->Finish();
    return out;
}

std::uint64_t maxSeq(const Records& rs) {
    std::uint64_t m = 0;
    for (const auto& r : rs) {
        m = std::max(m, r.seq());
    }
    return m;
}

bool sqlExec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
        sqlite3_close(db);
        return false;
    }
    sqlite3_busy_timeout(db, 5000);
    const bool ok = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

const v1::TelemetryRecord* gapWhy(const Records& rs, const std::string& why) {
    for (const auto& r : rs) {
        if (r.has_event() && r.event().kind() == v1::EVENT_GAP &&
            r.event().attrs().count("why") != 0 && r.event().attrs().at("why") == why) {
            return &r;
        }
    }
    return nullptr;
}

// Item 1, the fault half: one unreadable record made every read fail with DATA_LOSS "corrupt
// spool record after seq N", for good. Now it is read as a gap event and the stream goes on.
TEST(SpoolFaults41, AnUnreadableSpoolRecordIsSkippedWithAGapEvent) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    Daemon daemon(state, "node-u");
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    grpc::Status status;
    auto first = watch(
        *stubOf(daemon.address()), 0, 0, [](const Records& rs) { return maxSeq(rs) >= 20; },
        &status);
    ASSERT_GE(maxSeq(first), 20u);
    daemon.stop();
    ASSERT_TRUE(
        sqlExec(state + "/spool.sqlite", "UPDATE records SET body = x'ffffffff0a' WHERE seq = 10"));
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    const auto rs = watch(
        *stubOf(daemon.address()), 0, 0, [](const Records& v) { return maxSeq(v) >= 25; }, &status);
    EXPECT_NE(status.error_code(), grpc::StatusCode::DATA_LOSS) << status.error_message();
    EXPECT_GE(maxSeq(rs), 25u) << "the stream went on past the damaged record";
    const auto* gap = gapWhy(rs, "unreadable_record");
    ASSERT_NE(gap, nullptr);
    EXPECT_EQ(gap->seq(), 10u);
    EXPECT_EQ(gap->event().attrs().at("first_seq"), "10");
    // It can be acknowledged (and so trimmed) like any record.
    grpc::ClientContext ctx;
    v1::AckTelemetryRequest ack;
    ack.set_committed_through_seq(12);
    ack.set_consumer("red-team");
    v1::AckTelemetryResponse ackReply;
    EXPECT_TRUE(stubOf(daemon.address())->AckTelemetry(&ctx, ack, &ackReply).ok());
    daemon.stop();
}

// Item 7: a WAL deleted (or truncated) after kill -9 rolled the sequence back within the same
// incarnation (seq 550 after 580), so a controller that stored those seqs skipped the new
// records as duplicates. Now the daemon finds the file behind its high-water mark: the seqs
// issued before are never reused, a gap event names them, and its log says so.
TEST(SpoolFaults41, ADeletedWalAfterKill9NeverRollsTheSeqBack) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    const std::string spool = state + "/spool.sqlite";
    Daemon daemon(state, "node-w");
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    grpc::Status status;
    std::uint64_t incarnation = 0;
    auto before = watch(
        *stubOf(daemon.address()), 0, 0, [](const Records& rs) { return maxSeq(rs) >= 15; },
        &status, &incarnation);
    ASSERT_GE(maxSeq(before), 15u);
    ASSERT_NE(incarnation, 0u);
    // The file as a checkpoint leaves it: what a deleted WAL rolls it back to. (A snapshot
    // taken now, put back below, so that no checkpoint of the daemon's own can race the test.)
    const std::string snapshot = dir.file("checkpointed.sqlite");
    ASSERT_TRUE(sqlExec(spool, "VACUUM INTO '" + snapshot + "'"));
    const std::uint64_t checkpointed = maxSeq(before);
    auto later = watch(
        *stubOf(daemon.address()), checkpointed + 1, incarnation,
        [&](const Records& rs) { return maxSeq(rs) >= checkpointed + 20; }, &status);
    const std::uint64_t issued = maxSeq(later);
    ASSERT_GE(issued, checkpointed + 20);
    daemon.kill9();
    std::filesystem::remove(spool + "-wal");
    std::filesystem::remove(spool + "-shm");
    std::filesystem::copy_file(snapshot, spool, std::filesystem::copy_options::overwrite_existing);
    ASSERT_FALSE(daemon.start().empty()) << daemon.error();
    std::uint64_t after = 0;
    const auto rs = watch(
        *stubOf(daemon.address()), 0, incarnation,
        [&](const Records& v) {
            return gapWhy(v, "spool_rolled_back") != nullptr && maxSeq(v) > issued + 5;
        },
        &status, &after);
    ASSERT_EQ(after, incarnation) << "the checkpointed file keeps its incarnation";
    const auto* gap = gapWhy(rs, "spool_rolled_back");
    ASSERT_NE(gap, nullptr) << status.error_message();
    const std::uint64_t lostFirst = std::stoull(gap->event().attrs().at("first_seq"));
    const std::uint64_t lostLast = std::stoull(gap->event().attrs().at("last_seq"));
    EXPECT_LE(lostFirst, issued);
    EXPECT_GE(lostLast, issued) << "every seq a watcher may have stored is covered";
    for (const auto& r : rs) {
        EXPECT_FALSE(r.seq() >= lostFirst && r.seq() <= lostLast)
            << "seq " << r.seq() << " was issued before the kill and is issued again";
    }
    std::string log;
    for (const auto& e : std::filesystem::directory_iterator(state)) {
        if (e.path().extension() == ".err") {
            std::ifstream in(e.path());
            log += std::string(std::istreambuf_iterator<char>(in), {});
        }
    }
    EXPECT_NE(log.find("rolled back: seq " + std::to_string(lostFirst)), std::string::npos) << log;
    daemon.stop();
}

// Item 10 (daemon): a damaged spool stopped the daemon without saying how to recover.
TEST(SpoolFaults41, ADamagedSpoolFileSaysWhichFileAndHowToRecover) {
    ScratchDir dir;
    const std::string state = dir.file("state");
    std::filesystem::create_directories(state);
    std::ofstream(state + "/spool.sqlite") << std::string(8192, '\x5a');
    Daemon daemon(state, "node-d");
    EXPECT_TRUE(daemon.start().empty());
    const std::string& error = daemon.error();
    EXPECT_NE(error.find("spool " + state + "/spool.sqlite"), std::string::npos) << error;
    EXPECT_NE(error.find("to recover: stop runplaned, move " + state + "/spool.sqlite"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("mv " + state + "/spool.sqlite " + state + "/spool.sqlite.damaged"),
              std::string::npos)
        << error;
    // Doing what it says works.
    std::filesystem::rename(state + "/spool.sqlite", state + "/spool.sqlite.damaged");
    EXPECT_FALSE(daemon.start().empty()) << daemon.error();
    daemon.stop();
}

}  // namespace
}  // namespace runplane::reliability
