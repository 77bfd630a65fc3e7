// runplaned end to end over gRPC: inventory, telemetry from the durable spool (exact resume,
// acknowledgement, restart continuity), health, reflection, Prometheus. issue 2, issue 5
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

using testing::DaemonProcess;
using testing::TempDir;

// Reads batches until `enough` says stop or the deadline passes; returns every record.
std::vector<v1::TelemetryRecord> watch(
    v1::Agent::Stub& stub, std::uint64_t fromSeq,
    const std::function<bool(const std::vector<v1::TelemetryRecord>&)>& enough,
    std::chrono::seconds timeout = std::chrono::seconds(15), double hz = 0) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::WatchTelemetryRequest req;
    req.set_from_seq(fromSeq);
    req.set_sample_hz(hz);
    auto reader = stub.WatchTelemetry(&ctx, req);
    std::vector<v1::TelemetryRecord> out;
    v1::TelemetryBatch batch;
    while (reader->Read(&batch)) {
        for (const auto& r : batch.records()) {
            out.push_back(r);
        }
        if (enough(out)) {
            ctx.TryCancel();
            break;
        }
    }
    reader->Finish();
    return out;
}

std::size_t countSeries(const std::vector<v1::TelemetryRecord>& rs, const std::string& series) {
    std::size_t n = 0;
    for (const auto& r : rs) {
        n += r.has_sample() && r.sample().series() == series;
    }
    return n;
}

TEST(Daemon, GetNodeReportsThisHost) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--node-id", "node-a"});
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_EQ(d.address().rfind("127.0.0.1:", 0), 0u);
    auto stub = testing::agentStub(d);
    grpc::ClientContext ctx;
    v1::NodeInfo info;
    ASSERT_TRUE(stub->GetNode(&ctx, {}, &info).ok());
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    EXPECT_EQ(info.hostname(), host);
    EXPECT_EQ(info.node_id(), "node-a");
    EXPECT_EQ(info.protocol_version(), 1u);
    EXPECT_FALSE(info.daemon_version().empty());
    EXPECT_GT(info.cpu_cores(), 0u);
    EXPECT_GT(info.host_ram_bytes(), 0u);
    EXPECT_FALSE(info.kernel().empty());
    EXPECT_FALSE(info.cpu_arch().empty());
    EXPECT_TRUE(info.gpus().empty());  // --no-gpu
    EXPECT_FALSE(info.gpus_unavailable_reason().empty());
    EXPECT_NE(info.boot_id_hash(), 0u);
}

TEST(Daemon, HealthAndReflectionAreServed) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state");
    ASSERT_TRUE(d.ok()) << d.error();
    auto channel = grpc::CreateChannel(d.address(), grpc::InsecureChannelCredentials());
    // grpc.health.v1.Health/Check with an empty request (service "") -> status SERVING (1),
    // encoded as field 1 varint: 0x08 0x01.
    grpc::GenericStub generic(channel);
    grpc::ClientContext ctx;
    grpc::Slice empty;
    grpc::ByteBuffer request(&empty, 1), response;
    grpc::Status status;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                          std::lock_guard l(mu);
                          status = s;
                          done = true;
                          cv.notify_one();
                      });
    std::unique_lock l(mu);
    cv.wait_for(l, std::chrono::seconds(10), [&] { return done; });
    ASSERT_TRUE(done);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(response.Dump(&slices).ok());
    std::string bytes;
    for (auto& s : slices) {
        bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

TEST(Daemon, WatchTelemetryStreamsHostMemoryWithMinMax) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--sample-hz", "10"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const auto records =
        watch(*stub, 0, [](const auto& rs) { return countSeries(rs, "host.mem.used_bytes") >= 5; });
    ASSERT_GE(countSeries(records, "host.mem.used_bytes"), 5u);
    for (const char* s :
         {"host.mem.total_bytes", "host.mem.available_bytes", "host.mem.page_cache_bytes",
          "host.mem.shmem_bytes", "host.swap.used_bytes"}) {
        EXPECT_GE(countSeries(records, s), 1u) << s;
    }
    std::uint64_t prev = 0;
    for (const auto& r : records) {
        EXPECT_GT(r.seq(), prev) << "seq must strictly increase";
        prev = r.seq();
        if (r.has_sample() && r.sample().series() == "host.mem.used_bytes") {
            EXPECT_LE(r.sample().min(), r.sample().value());
            EXPECT_GE(r.sample().max(), r.sample().value());
            EXPECT_EQ(r.sample().step(), -1);
            EXPECT_GT(r.sample().value(), 0);
        }
        // Every sample carries its unit, from the daemon's vocabulary (host memory: bytes).
        if (r.has_sample() && r.sample().series().rfind("host.", 0) == 0) {
            EXPECT_EQ(r.sample().unit(), v1::UNIT_BYTES) << r.sample().series();
        }
    }
    // The GPU-less host says so once, as an event.
    std::size_t gpuInfo = 0;
    for (const auto& r : records) {
        gpuInfo += r.has_event() && r.event().attrs().count("component") != 0 &&
                   r.event().attrs().at("component") == "gpu";
    }
    EXPECT_EQ(gpuInfo, 1u);
}

// Resume from any seq gives exactly the records from there on, and ack trims.
TEST(Daemon, ResumeFromSeqIsExactAndAckTrims) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--sample-hz", "10"});
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    const auto first = watch(*stub, 0, [](const auto& rs) { return rs.size() >= 40; });
    ASSERT_GE(first.size(), 40u);
    const std::uint64_t from = first[17].seq();
    const auto second = watch(*stub, from, [&](const auto& rs) { return rs.size() >= 20; });
    ASSERT_GE(second.size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(second[i].seq(), from + i);
        // Field for field: protobuf does not fix the wire order of a map's entries.
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(second[i], first[17 + i]))
            << "a replayed record must equal the first delivery:\n"
            << second[i].DebugString() << "vs\n"
            << first[17 + i].DebugString();
    }
    grpc::ClientContext ctx;
    v1::AckTelemetryRequest ack;
    ack.set_committed_through_seq(from);
    v1::AckTelemetryResponse resp;
    ASSERT_TRUE(stub->AckTelemetry(&ctx, ack, &resp).ok());
    EXPECT_EQ(resp.trimmed_through_seq(), from);
    const auto third = watch(*stub, 0, [](const auto& rs) { return !rs.empty(); });
    ASSERT_FALSE(third.empty());
    EXPECT_EQ(third.front().seq(), from + 1) << "acknowledged records are trimmed";
    grpc::ClientContext bad;
    ack.set_committed_through_seq(1u << 30);
    EXPECT_EQ(stub->AckTelemetry(&bad, ack, &resp).error_code(), grpc::StatusCode::OUT_OF_RANGE);
    grpc::ClientContext ahead;
    v1::WatchTelemetryRequest req;
    req.set_from_seq(1u << 30);
    auto reader = stub->WatchTelemetry(&ahead, req);
    v1::TelemetryBatch batch;
    EXPECT_FALSE(reader->Read(&batch));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::OUT_OF_RANGE);
}

// kill -9 mid-stream: after a restart the seq continues, nothing is duplicated or lost.
TEST(Daemon, KillNineRestartKeepsSeqContinuity) {
    TempDir dir;
    const std::string state = dir.path() + "/state";
    std::vector<v1::TelemetryRecord> all;
    {
        DaemonProcess d(state, {"--sample-hz", "10"});
        ASSERT_TRUE(d.ok()) << d.error();
        auto stub = testing::agentStub(d);
        all = watch(*stub, 0, [](const auto& rs) { return rs.size() >= 30; });
        d.kill9();
    }
    ASSERT_GE(all.size(), 30u);
    DaemonProcess d2(state, {"--sample-hz", "10"});
    ASSERT_TRUE(d2.ok()) << d2.error();
    auto stub = testing::agentStub(d2);
    const std::uint64_t resumeFrom = all.back().seq() + 1;
    const auto more = watch(*stub, resumeFrom, [](const auto& rs) { return rs.size() >= 30; });
    ASSERT_GE(more.size(), 30u);
    for (const auto& r : more) {
        all.push_back(r);
    }
    std::set<std::uint64_t> seen;
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_TRUE(seen.insert(all[i].seq()).second) << "duplicate seq " << all[i].seq();
        if (i > 0) {
            EXPECT_EQ(all[i].seq(), all[i - 1].seq() + 1) << "gap at " << i;
        }
    }
}

TEST(Daemon, SpoolBoundProducesGapEvent) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--sample-hz", "10", "--spool-max-mb", "1"});
    ASSERT_TRUE(d.ok()) << d.error();
    // 1 MiB of records at 6 host series x 10 Hz takes too long; shrink the bound with a run
    // that prints many metric lines instead.
    auto stub = testing::agentStub(d);
    grpc::ClientContext ctx;
    v1::StartRunRequest req;
    req.set_run_id("flood");
    req.add_argv("/bin/sh");
    req.add_argv("-c");
    req.add_argv(
        "i=0; while [ $i -lt 12000 ]; do echo \"step $i: {'train/loss': 0.5, "
        "'train/a_rather_long_metric_name_to_fill_the_spool_quickly': $i, "
        "'train/another_long_metric_name_for_volume': 1e-06}\"; i=$((i+1)); done");
    v1::RunStatus st;
    ASSERT_TRUE(stub->StartRun(&ctx, req, &st).ok());
    // Read until a gap was announced and the flood is over (its exit event, then 2 s more for the
    // last log lines), so every gap event covering what this reader missed has been delivered.
    std::optional<std::chrono::steady_clock::time_point> exitSeenAt;
    const auto records = watch(
        *stub, 0,
        [&exitSeenAt](const auto& rs) {
            bool gap = false;
            for (const auto& r : rs) {
                gap = gap || (r.has_event() && r.event().kind() == v1::EVENT_GAP);
                if (!exitSeenAt && r.has_event() && r.event().kind() == v1::EVENT_PROCESS_EXIT) {
                    exitSeenAt = std::chrono::steady_clock::now();
                }
            }
            return gap && exitSeenAt &&
                   std::chrono::steady_clock::now() - *exitSeenAt > std::chrono::seconds(2);
        },
        std::chrono::seconds(40));
    const v1::TelemetryRecord* gap = nullptr;
    for (const auto& r : records) {
        if (r.has_event() && r.event().kind() == v1::EVENT_GAP) {
            gap = &r;
            break;
        }
    }
    ASSERT_NE(gap, nullptr) << "a full spool must announce what it dropped";
    const auto first = std::stoull(gap->event().attrs().at("first_seq"));
    const auto last = std::stoull(gap->event().attrs().at("last_seq"));
    EXPECT_GE(last, first);
    EXPECT_GT(gap->seq(), last);
    // The promise: every seq up to the last one read is either delivered or named by a gap event
    // delivered later. (Which gap the reader meets first depends on how far it has read when the
    // drops happen, so the first gap need not start at seq 1.)
    std::set<std::uint64_t> seen;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
    for (const auto& r : records) {
        seen.insert(r.seq());
        if (r.has_event() && r.event().kind() == v1::EVENT_GAP) {
            gaps.emplace_back(std::stoull(r.event().attrs().at("first_seq")),
                              std::stoull(r.event().attrs().at("last_seq")));
        }
    }
    ASSERT_FALSE(seen.empty());
    for (std::uint64_t seq = 1; seq < *seen.rbegin(); ++seq) {
        const bool named = std::any_of(gaps.begin(), gaps.end(), [seq](const auto& g) {
            return seq >= g.first && seq <= g.second;
        });
        ASSERT_TRUE(seen.count(seq) != 0 || named) << "seq " << seq << " vanished without a gap";
    }
}

TEST(Daemon, PrometheusEndpoint) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--metrics-listen", "127.0.0.1:0"});
    ASSERT_TRUE(d.ok()) << d.error();
    std::string rest;
    ASSERT_TRUE(testing::waitFor(
        [&] {
            rest = d.stdoutRest();
            return rest.find("/metrics") != std::string::npos;
        },
        std::chrono::seconds(5)));
    const auto at = rest.find("http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos);
    const int port = std::atoi(rest.c_str() + at + 17);
    std::string body;
    ASSERT_TRUE(testing::waitFor(
        [&] {
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_port = htons(static_cast<std::uint16_t>(port));
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
                ::close(fd);
                return false;
            }
            const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
            [[maybe_unused]] auto n = ::write(fd, req.data(), req.size());
            body.clear();
            char buf[4096];
            ssize_t k;
            while ((k = ::read(fd, buf, sizeof(buf))) > 0) {
                body.append(buf, static_cast<std::size_t>(k));
            }
            ::close(fd);
            return body.find("node_memory_MemAvailable_bytes ") != std::string::npos;
        },
        std::chrono::seconds(5)))
        << body;
    EXPECT_EQ(body.rfind("HTTP/1.1 200 OK", 0), 0u) << "cpp-httplib answers in HTTP/1.1";
    EXPECT_NE(body.find("# TYPE node_memory_MemTotal_bytes gauge"), std::string::npos);
    EXPECT_NE(body.find("runplane_spool_last_seq"), std::string::npos);
    EXPECT_NE(body.find("process_resident_memory_bytes"), std::string::npos);
}

TEST(Daemon, BadFlagsAreRefusedWithTheFlagNamed) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state", {"--sample-hz", "20"});
    EXPECT_FALSE(d.ok());
    EXPECT_NE(d.error().find("--sample-hz"), std::string::npos) << d.error();
}

// issue #23 item 8: NaN passed the range check (every comparison with NaN is false).
TEST(Daemon, WatchTelemetryRefusesNonFiniteOrNegativeSampleHz) {
    TempDir dir;
    DaemonProcess d(dir.path() + "/state");
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    for (double hz : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::WatchTelemetryRequest req;
        req.set_sample_hz(hz);
        auto reader = stub->WatchTelemetry(&ctx, req);
        v1::TelemetryBatch batch;
        EXPECT_FALSE(reader->Read(&batch)) << hz;
        const grpc::Status st = reader->Finish();
        EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << hz;
        EXPECT_NE(st.error_message().find("sample_hz"), std::string::npos) << st.error_message();
    }
}

// issue #17: every spool has an incarnation id, reported by GetNode and in every batch, kept
// across restarts, new when the state directory is replaced; a from_seq of another incarnation
// or beyond the spool's end is refused with a status that says so.
TEST(Daemon, SpoolIncarnationIsReportedKeptAndChecked) {
    TempDir dir;
    const std::string state = dir.path() + "/state";
    auto incarnationOf = [](v1::Agent::Stub& stub) {
        grpc::ClientContext ctx;
        v1::NodeInfo info;
        EXPECT_TRUE(stub.GetNode(&ctx, {}, &info).ok());
        return info.spool_incarnation();
    };
    auto refusal = [](v1::Agent::Stub& stub, std::uint64_t fromSeq, std::uint64_t incarnation) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::WatchTelemetryRequest req;
        req.set_from_seq(fromSeq);
        req.set_spool_incarnation(incarnation);
        auto reader = stub.WatchTelemetry(&ctx, req);
        v1::TelemetryBatch batch;
        if (!reader->Read(&batch)) {
            return reader->Finish();
        }
        ctx.TryCancel();
        reader->Finish();
        return grpc::Status::OK;
    };
    std::uint64_t first = 0;
    {
        DaemonProcess d(state);
        ASSERT_TRUE(d.ok()) << d.error();
        auto stub = testing::agentStub(d);
        first = incarnationOf(*stub);
        EXPECT_NE(first, 0u);
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        auto reader = stub->WatchTelemetry(&ctx, {});
        v1::TelemetryBatch batch;
        ASSERT_TRUE(reader->Read(&batch));
        EXPECT_EQ(batch.spool_incarnation(), first);
        ctx.TryCancel();
        reader->Finish();
        EXPECT_TRUE(refusal(*stub, 1, first).ok());
        const grpc::Status beyond = refusal(*stub, 1'000'000, first);
        EXPECT_EQ(beyond.error_code(), grpc::StatusCode::OUT_OF_RANGE);
        EXPECT_NE(beyond.error_message().find("beyond"), std::string::npos);
    }
    {
        DaemonProcess d(state);
        ASSERT_TRUE(d.ok()) << d.error();
        EXPECT_EQ(incarnationOf(*testing::agentStub(d)), first) << "kept across a restart";
    }
    std::filesystem::remove_all(state);
    DaemonProcess d(state);
    ASSERT_TRUE(d.ok()) << d.error();
    auto stub = testing::agentStub(d);
    EXPECT_NE(incarnationOf(*stub), first) << "a replaced state directory is a new incarnation";
    const grpc::Status other = refusal(*stub, 1, first);
    EXPECT_EQ(other.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(other.error_message().find("incarnation"), std::string::npos)
        << other.error_message();
}

}  // namespace
}  // namespace runplane::agent
