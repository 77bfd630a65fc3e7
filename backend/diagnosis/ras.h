#pragma once
// NCCL's RAS service (NCCL >= 2.24) as a client sees it (issue #44, docs/diagnosis.md): every
// NCCL process of a job runs a RAS thread; one per host answers on localhost:28028 (or
// NCCL_RAS_ADDR) with a line protocol, and its report covers the whole job. Plain C++ sockets, no
// gRPC: the daemon, the CLI and a bare g++ build on a GPU host share this.
//
// Safety: the client connects only to loopback (127.0.0.0/8, ::1, "localhost" taken as
// 127.0.0.1 and never resolved through DNS); every step has one overall deadline and the report
// a byte bound, so a RAS that hangs or floods never hangs its caller.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace runplane::diagnosis {

/// A rank's `status` object. Fields NCCL did not send keep their defaults; `present` is false
/// when the whole object was missing or null (NCCL 2.29.7 can send null, NVIDIA/nccl#2346).
struct RasRankStatus {
    bool present = false;
    std::int64_t initState = 0;   // ncclResult_t of the communicator's init (0 = success)
    std::int64_t asyncError = 0;  // ncclResult_t of ncclCommGetAsyncError (0 = none)
    bool finalizeCalled = false;
    bool destroyFlag = false;
    bool abortFlag = false;
};

struct RasRank {
    std::int64_t rank = -1;
    std::string host;
    std::int64_t pid = 0;
    std::int64_t cudaDev = -1;
    std::int64_t nvmlDev = -1;
    RasRankStatus status;
    /// Operations launched per collective kind ("AllReduce" -> 640), as NCCL names them.
    std::map<std::string, std::uint64_t> collectiveCounts;
};

/// A rank the RAS network could not reach (its process died or does not answer).
struct RasMissingRank {
    std::int64_t rank = -1;
    std::string host;
    std::int64_t pid = 0;
    std::int64_t cudaDev = -1;
    std::int64_t nvmlDev = -1;
    bool unresponsive = false;
    bool consideredDead = false;
};

struct RasCommunicator {
    std::string hash;
    std::int64_t size = 0;
    std::int64_t ranksCount = 0;
    std::int64_t missingRanksCount = 0;
    std::vector<RasRank> ranks;
    std::vector<RasMissingRank> missingRanks;
};

struct RasReport {
    std::string ncclVersion;
    std::int64_t communicatorsCount = 0;
    std::vector<RasCommunicator> communicators;
};

/// A collective kind in which some ranks of a communicator are behind the highest count (a rank
/// without the kind counts 0): what the verdict, its stack order and the GUI call "behind".
struct LaggingKind {
    std::string kind;
    std::uint64_t top = 0;  // the highest count of any rank
    /// (index into the communicator's ranks, that rank's count), in report order.
    std::vector<std::pair<std::size_t, std::uint64_t>> behind;
};

/// Per collective kind, in name order, the ranks below the highest count; kinds in which every
/// rank agrees are left out.
std::vector<LaggingKind> ranksBehind(const RasCommunicator& communicator);

/// Parses `VERBOSE STATUS` in JSON format. Unknown keys are ignored; a key of the wrong type is
/// an error naming its path ("RAS report: communicators[1].ranks[3].pid: expected a number").
Result<RasReport> parseRasReport(std::string_view text);
nlohmann::json toJson(const RasReport& report);
Result<RasReport> rasReportFromJson(const nlohmann::json& j);

/// Where to reach RAS.
struct RasEndpoint {
    std::string host = "127.0.0.1";  // always a loopback literal
    std::uint16_t port = 28028;
    std::string text() const;
};

/// NCCL_RAS_ADDR's value ("host:port", "host", "[::1]:port"; empty: the default
/// localhost:28028). Anything that is not loopback is refused with a sentence naming the value.
Result<RasEndpoint> rasEndpoint(std::string_view ncclRasAddr);

struct RasClientOptions {
    RasEndpoint endpoint;
    /// The whole exchange (connect, handshake, report) must end within this.
    std::chrono::milliseconds timeout{8000};
    /// The report is cut off (an error) beyond this many bytes.
    std::size_t maxBytes = 8u << 20;
};

struct RasFetch {
    std::string raw;  // the report as RAS sent it
    RasReport report;
    std::chrono::milliseconds took{0};
};

/// CLIENT PROTOCOL 2 -> SERVER PROTOCOL 2, SET FORMAT json -> OK, VERBOSE STATUS -> the report
/// until the server closes. Errors say which step failed ("RAS at 127.0.0.1:28028: no answer to
/// CLIENT PROTOCOL 2 within 8 s"); ErrorCode::Unavailable when nothing listens.
Result<RasFetch> fetchRasReport(const RasClientOptions& options);

}  // namespace runplane::diagnosis
