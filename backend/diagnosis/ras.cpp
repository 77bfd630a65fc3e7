// NCCL RAS: the report's JSON and the loopback client (ras.h).
#include "backend/diagnosis/ras.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runplane::diagnosis {
namespace {

using nlohmann::json;

// ------------------------------------------------------------------ report parsing

struct Place {
    std::string path;
    Error fail(const std::string& what) const { return Error{"RAS report: " + path + ": " + what}; }
};

// An integer from a number, a bool or a decimal string; NCCL's own names of ncclResult_t
// ("ncclSuccess") read as 0, any other word as -1 (an error whose code we do not know).
bool readInt(const json& v, std::int64_t& out) {
    if (v.is_number_integer()) {
        out = v.get<std::int64_t>();
        return true;
    }
    if (v.is_number_float()) {
        out = static_cast<std::int64_t>(v.get<double>());
        return true;
    }
    if (v.is_boolean()) {
        out = v.get<bool>() ? 1 : 0;
        return true;
    }
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s.empty()) {
            return false;
        }
        char* end = nullptr;
        const long long n = std::strtoll(s.c_str(), &end, 10);
        if (end != nullptr && *end == '\0') {
            out = n;
            return true;
        }
        out = (s == "ncclSuccess" || s == "success" || s == "Success") ? 0 : -1;
        return true;
    }
    return false;
}

Status intField(const json& obj, const char* key, const Place& at, std::int64_t& out) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return {};
    }
    if (!readInt(*it, out)) {
        return Place{at.path + "." + key}.fail("expected a number, got " +
                                               std::string(it->type_name()));
    }
    return {};
}

Status boolField(const json& obj, const char* key, const Place& at, bool& out) {
    std::int64_t n = out ? 1 : 0;
    if (Status s = intField(obj, key, at, n); !s.ok()) {
        return s;
    }
    out = n != 0;
    return {};
}

Status stringField(const json& obj, const char* key, const Place& at, std::string& out) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return {};
    }
    if (it->is_string()) {
        out = it->get<std::string>();
    } else if (it->is_number()) {
        out = it->dump();
    } else {
        return Place{at.path + "." + key}.fail("expected a string, got " +
                                               std::string(it->type_name()));
    }
    return {};
}

Result<RasRank> parseRank(const json& r, const Place& at) {
    RasRank out;
    if (!r.is_object()) {
        return at.fail("expected an object, got " + std::string(r.type_name()));
    }
    for (Status s : {intField(r, "rank", at, out.rank), stringField(r, "host", at, out.host),
                     intField(r, "pid", at, out.pid), intField(r, "cuda_dev", at, out.cudaDev),
                     intField(r, "nvml_dev", at, out.nvmlDev)}) {
        if (!s.ok()) {
            return s.failure();
        }
    }
    if (auto st = r.find("status"); st != r.end() && !st->is_null()) {
        const Place sp{at.path + ".status"};
        if (!st->is_object()) {
            return sp.fail("expected an object, got " + std::string(st->type_name()));
        }
        out.status.present = true;
        for (Status s : {intField(*st, "init_state", sp, out.status.initState),
                         intField(*st, "async_error", sp, out.status.asyncError),
                         boolField(*st, "finalize_called", sp, out.status.finalizeCalled),
                         boolField(*st, "destroy_flag", sp, out.status.destroyFlag),
                         boolField(*st, "abort_flag", sp, out.status.abortFlag)}) {
            if (!s.ok()) {
                return s.failure();
            }
        }
    }
    if (auto cc = r.find("collective_counts"); cc != r.end() && !cc->is_null()) {
        const Place cp{at.path + ".collective_counts"};
        if (!cc->is_object()) {
            return cp.fail("expected an object, got " + std::string(cc->type_name()));
        }
        for (auto it = cc->begin(); it != cc->end(); ++it) {
            std::int64_t n = 0;
            if (!readInt(it.value(), n) || n < 0) {
                return Place{cp.path + "." + it.key()}.fail("expected a count");
            }
            out.collectiveCounts[it.key()] = static_cast<std::uint64_t>(n);
        }
    }
    return out;
}

Result<RasMissingRank> parseMissing(const json& m, const Place& at) {
    RasMissingRank out;
    if (m.is_number_integer()) {  // a bare rank number
        out.rank = m.get<std::int64_t>();
        return out;
    }
    if (!m.is_object()) {
        return at.fail("expected an object or a rank number, got " + std::string(m.type_name()));
    }
    for (Status s : {intField(m, "rank", at, out.rank), stringField(m, "host", at, out.host),
                     intField(m, "pid", at, out.pid), intField(m, "cuda_dev", at, out.cudaDev),
                     intField(m, "nvml_dev", at, out.nvmlDev),
                     boolField(m, "unresponsive", at, out.unresponsive),
                     boolField(m, "considered_dead", at, out.consideredDead)}) {
        if (!s.ok()) {
            return s.failure();
        }
    }
    return out;
}

Result<RasCommunicator> parseCommunicator(const json& c, const Place& at) {
    RasCommunicator out;
    if (!c.is_object()) {
        return at.fail("expected an object, got " + std::string(c.type_name()));
    }
    for (Status s : {stringField(c, "hash", at, out.hash), intField(c, "size", at, out.size),
                     intField(c, "ranks_count", at, out.ranksCount),
                     intField(c, "missing_ranks_count", at, out.missingRanksCount)}) {
        if (!s.ok()) {
            return s.failure();
        }
    }
    if (auto rs = c.find("ranks"); rs != c.end() && !rs->is_null()) {
        if (!rs->is_array()) {
            return Place{at.path + ".ranks"}.fail("expected an array");
        }
        for (std::size_t i = 0; i < rs->size(); ++i) {
            auto rank = parseRank((*rs)[i], Place{at.path + ".ranks[" + std::to_string(i) + "]"});
            if (!rank) {
                return rank.failure();
            }
            out.ranks.push_back(std::move(*rank));
        }
    }
    if (auto ms = c.find("missing_ranks"); ms != c.end() && !ms->is_null()) {
        if (!ms->is_array()) {
            return Place{at.path + ".missing_ranks"}.fail("expected an array");
        }
        for (std::size_t i = 0; i < ms->size(); ++i) {
            auto m = parseMissing((*ms)[i],
                                  Place{at.path + ".missing_ranks[" + std::to_string(i) + "]"});
            if (!m) {
                return m.failure();
            }
            out.missingRanks.push_back(std::move(*m));
        }
    }
    return out;
}

// ------------------------------------------------------------------ the socket

class Socket {
  public:
    explicit Socket(int fd) : m_fd(fd) {}
    ~Socket() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    int fd() const { return m_fd; }

  private:
    int m_fd;
};

using Clock = std::chrono::steady_clock;

int msLeft(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

std::string seconds(std::chrono::milliseconds ms) {
    const auto s = ms.count() / 1000.0;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
}

struct Conversation {
    int fd;
    Clock::time_point deadline;
    std::string where;  // "RAS at 127.0.0.1:28028"
    std::chrono::milliseconds timeout;
    std::size_t maxBytes;
    std::string buffer;  // read but not yet consumed

    Status sendLine(const std::string& line) {
        const std::string data = line + "\n";
        std::size_t sent = 0;
        while (sent < data.size()) {
            pollfd p{fd, POLLOUT, 0};
            const int ready = ::poll(&p, 1, msLeft(deadline));
            if (ready <= 0) {
                return Error{where + ": could not send '" + line + "' within " + seconds(timeout)};
            }
            const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) {
                    continue;
                }
                return Error{where + ": sending '" + line + "': " + std::strerror(errno)};
            }
            sent += static_cast<std::size_t>(n);
        }
        return {};
    }

    // Reads more into buffer; false at EOF. Errors on timeout, socket error or the byte bound.
    Result<bool> readMore(const std::string& waitingFor) {
        if (buffer.size() > maxBytes) {
            return Error{where + ": " + waitingFor + " is larger than " + std::to_string(maxBytes) +
                         " bytes; cut off"};
        }
        for (;;) {
            pollfd p{fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, msLeft(deadline));
            if (ready < 0 && errno == EINTR) {
                continue;
            }
            if (ready <= 0) {
                return Error{where + ": no complete " + waitingFor + " within " + seconds(timeout)};
            }
            char chunk[16384];
            const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) {
                    continue;
                }
                return Error{where + ": reading " + waitingFor + ": " + std::strerror(errno)};
            }
            if (n == 0) {
                return false;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
            return true;
        }
    }

    Result<std::string> readLine(const std::string& answerTo) {
        for (;;) {
            const auto nl = buffer.find('\n');
            if (nl != std::string::npos) {
                std::string line = buffer.substr(0, nl);
                buffer.erase(0, nl + 1);
                if (!line.empty() && line.back() == '\r') {
                    line.pop_back();
                }
                return line;
            }
            auto more = readMore("answer to " + answerTo);
            if (!more) {
                return more.failure();
            }
            if (!*more) {
                return Error{where + ": the connection closed before an answer to " + answerTo};
            }
        }
    }
};

Result<int> connectLoopback(const RasEndpoint& endpoint, Clock::time_point deadline,
                            const std::string& where) {
    sockaddr_storage addr{};
    socklen_t len = 0;
    int family = AF_INET;
    if (endpoint.host.find(':') != std::string::npos) {
        family = AF_INET6;
        auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(endpoint.port);
        if (::inet_pton(AF_INET6, endpoint.host.c_str(), &a6->sin6_addr) != 1) {
            return Error{where + ": not an IPv6 address"};
        }
        len = sizeof(sockaddr_in6);
    } else {
        auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
        a4->sin_family = AF_INET;
        a4->sin_port = htons(endpoint.port);
        if (::inet_pton(AF_INET, endpoint.host.c_str(), &a4->sin_addr) != 1) {
            return Error{where + ": not an IPv4 address"};
        }
        len = sizeof(sockaddr_in);
    }
    const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Error{where + ": socket: " + std::strerror(errno)};
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS) {
        const int e = errno;
        ::close(fd);
        return Error{where + ": " + std::strerror(e) +
                         (e == ECONNREFUSED ? " (no NCCL process with RAS on this host)" : ""),
                     e == ECONNREFUSED ? ErrorCode::Unavailable : ErrorCode::Unspecified};
    }
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, msLeft(deadline));
    int err = 0;
    socklen_t errLen = sizeof err;
    if (ready <= 0) {
        ::close(fd);
        return Error{where + ": connect timed out", ErrorCode::Unavailable};
    }
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errLen);
    if (err != 0) {
        ::close(fd);
        return Error{where + ": " + std::strerror(err) +
                         (err == ECONNREFUSED ? " (no NCCL process with RAS on this host)" : ""),
                     ErrorCode::Unavailable};
    }
    return fd;
}

bool isLoopbackV4(const std::string& host) {
    in_addr a{};
    if (::inet_pton(AF_INET, host.c_str(), &a) != 1) {
        return false;
    }
    return (ntohl(a.s_addr) >> 24) == 127;
}

}  // namespace

// ------------------------------------------------------------------ public

Result<RasReport> rasReportFromJson(const json& j) {
    if (!j.is_object()) {
        return Error{"RAS report: expected a JSON object, got " + std::string(j.type_name())};
    }
    RasReport out;
    const Place top{"$"};
    if (Status s = stringField(j, "nccl_version", top, out.ncclVersion); !s.ok()) {
        return s.failure();
    }
    if (Status s = intField(j, "communicators_count", top, out.communicatorsCount); !s.ok()) {
        return s.failure();
    }
    if (auto cs = j.find("communicators"); cs != j.end() && !cs->is_null()) {
        if (!cs->is_array()) {
            return Error{"RAS report: communicators: expected an array"};
        }
        for (std::size_t i = 0; i < cs->size(); ++i) {
            auto c = parseCommunicator((*cs)[i], Place{"communicators[" + std::to_string(i) + "]"});
            if (!c) {
                return c.failure();
            }
            out.communicators.push_back(std::move(*c));
        }
    }
    return out;
}

Result<RasReport> parseRasReport(std::string_view text) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) {
        const std::size_t shown = std::min<std::size_t>(text.size(), 80);
        return Error{"RAS report: not valid JSON (" + std::to_string(text.size()) +
                     " bytes, starting '" + std::string(text.substr(0, shown)) + "')"};
    }
    return rasReportFromJson(j);
}

json toJson(const RasReport& report) {
    json comms = json::array();
    for (const auto& c : report.communicators) {
        json ranks = json::array();
        for (const auto& r : c.ranks) {
            json counts = json::object();
            for (const auto& [k, v] : r.collectiveCounts) {
                counts[k] = v;
            }
            json rank{{"rank", r.rank},        {"host", r.host},
                      {"pid", r.pid},          {"cuda_dev", r.cudaDev},
                      {"nvml_dev", r.nvmlDev}, {"collective_counts", counts}};
            if (r.status.present) {
                rank["status"] = {{"init_state", r.status.initState},
                                  {"async_error", r.status.asyncError},
                                  {"finalize_called", r.status.finalizeCalled},
                                  {"destroy_flag", r.status.destroyFlag},
                                  {"abort_flag", r.status.abortFlag}};
            } else {
                rank["status"] = nullptr;
            }
            ranks.push_back(std::move(rank));
        }
        json missing = json::array();
        for (const auto& m : c.missingRanks) {
            missing.push_back({{"rank", m.rank},
                               {"host", m.host},
                               {"pid", m.pid},
                               {"cuda_dev", m.cudaDev},
                               {"nvml_dev", m.nvmlDev},
                               {"unresponsive", m.unresponsive},
                               {"considered_dead", m.consideredDead}});
        }
        comms.push_back({{"hash", c.hash},
                         {"size", c.size},
                         {"ranks_count", c.ranksCount},
                         {"missing_ranks_count", c.missingRanksCount},
                         {"ranks", std::move(ranks)},
                         {"missing_ranks", std::move(missing)}});
    }
    return {{"nccl_version", report.ncclVersion},
            {"communicators_count", report.communicatorsCount},
            {"communicators", std::move(comms)}};
}

std::string RasEndpoint::text() const {
    if (host.find(':') != std::string::npos) {
        return "[" + host + "]:" + std::to_string(port);
    }
    return host + ":" + std::to_string(port);
}

Result<RasEndpoint> rasEndpoint(std::string_view value) {
    RasEndpoint out;
    if (value.empty()) {
        return out;
    }
    const std::string text(value);
    std::string host = text;
    std::string port;
    if (text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos) {
            return Error{"NCCL_RAS_ADDR '" + text + "': missing ']'", ErrorCode::InvalidArgument};
        }
        host = text.substr(1, close - 1);
        if (close + 1 < text.size()) {
            if (text[close + 1] != ':') {
                return Error{"NCCL_RAS_ADDR '" + text + "': expected ':' after ']'",
                             ErrorCode::InvalidArgument};
            }
            port = text.substr(close + 2);
        }
    } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        if (text.find(':') != colon) {
            return Error{
                "NCCL_RAS_ADDR '" + text + "': an IPv6 address needs brackets ([::1]:PORT)",
                ErrorCode::InvalidArgument};
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (!port.empty()) {
        char* end = nullptr;
        const long p = std::strtol(port.c_str(), &end, 10);
        if (end == nullptr || *end != '\0' || p < 1 || p > 65535) {
            return Error{"NCCL_RAS_ADDR '" + text + "': port '" + port + "' is not 1..65535",
                         ErrorCode::InvalidArgument};
        }
        out.port = static_cast<std::uint16_t>(p);
    }
    if (host.empty() || host == "localhost") {
        out.host = "127.0.0.1";
    } else if (host == "::1" || isLoopbackV4(host)) {
        out.host = host;
    } else {
        return Error{"NCCL_RAS_ADDR '" + text + "': '" + host +
                         "' is not a loopback address; the diagnosis talks to RAS only on this "
                         "host (127.0.0.0/8, ::1, localhost)",
                     ErrorCode::InvalidArgument};
    }
    return out;
}

Result<RasFetch> fetchRasReport(const RasClientOptions& options) {
    const auto started = Clock::now();
    const auto deadline = started + options.timeout;
    const std::string where = "RAS at " + options.endpoint.text();
    // Re-check: a caller-built endpoint must be loopback too.
    if (!(options.endpoint.host == "::1" || isLoopbackV4(options.endpoint.host))) {
        return Error{where + ": not a loopback address; refused", ErrorCode::InvalidArgument};
    }
    auto fd = connectLoopback(options.endpoint, deadline, where);
    if (!fd) {
        return fd.failure();
    }
    Socket socket(*fd);
    Conversation talk{socket.fd(), deadline, where, options.timeout, options.maxBytes, {}};
    if (Status s = talk.sendLine("CLIENT PROTOCOL 2"); !s.ok()) {
        return s.failure();
    }
    auto hello = talk.readLine("CLIENT PROTOCOL 2");
    if (!hello) {
        return hello.failure();
    }
    if (hello->rfind("SERVER PROTOCOL ", 0) != 0) {
        return Error{where + ": expected 'SERVER PROTOCOL 2', got '" + hello->substr(0, 80) + "'"};
    }
    if (*hello != "SERVER PROTOCOL 2") {
        return Error{where + ": the server speaks '" + hello->substr(0, 80) +
                     "'; this client speaks protocol 2"};
    }
    if (Status s = talk.sendLine("SET FORMAT json"); !s.ok()) {
        return s.failure();
    }
    auto ok = talk.readLine("SET FORMAT json");
    if (!ok) {
        return ok.failure();
    }
    if (*ok != "OK") {
        return Error{where + ": SET FORMAT json answered '" + ok->substr(0, 80) +
                     "' (NCCL older than the JSON format?)"};
    }
    if (Status s = talk.sendLine("VERBOSE STATUS"); !s.ok()) {
        return s.failure();
    }
    for (;;) {
        auto more = talk.readMore("report");
        if (!more) {
            return more.failure();
        }
        if (!*more) {
            break;
        }
    }
    if (talk.buffer.size() > options.maxBytes) {
        return Error{where + ": the report is larger than " + std::to_string(options.maxBytes) +
                     " bytes; cut off"};
    }
    auto report = parseRasReport(talk.buffer);
    if (!report) {
        return Error{where + ": " + report.error()};
    }
    RasFetch out;
    out.raw = std::move(talk.buffer);
    out.report = std::move(*report);
    out.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return out;
}

std::vector<LaggingKind> ranksBehind(const RasCommunicator& communicator) {
    std::map<std::string, std::uint64_t> top;  // kind -> highest count, in name order
    for (const auto& r : communicator.ranks) {
        for (const auto& [kind, n] : r.collectiveCounts) {
            top[kind] = std::max(top[kind], n);
        }
    }
    std::vector<LaggingKind> out;
    for (const auto& [kind, highest] : top) {
        LaggingKind lag{kind, highest, {}};
        for (std::size_t i = 0; i < communicator.ranks.size(); ++i) {
            const auto& counts = communicator.ranks[i].collectiveCounts;
            const auto it = counts.find(kind);
            const std::uint64_t n = it == counts.end() ? 0 : it->second;
            if (n < highest) {
                lag.behind.emplace_back(i, n);
            }
        }
        if (!lag.behind.empty()) {
            out.push_back(std::move(lag));
        }
    }
    return out;
}

}  // namespace runplane::diagnosis
