// Listening TCP sockets of processes from /proc (proc_sockets.h).
#include "backend/agent/proc_sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <unordered_map>

namespace runplane::agent {
namespace {

bool hexValue(std::string_view s, std::uint64_t& v) {
    if (s.empty() || s.size() > 16) {
        return false;
    }
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    return ec == std::errc() && ptr == s.data() + s.size();
}

// The kernel prints each 32-bit word of the address in host byte order ("%08X" of the raw
// __be32): on a little-endian host 127.0.0.1 reads "0100007F". Each word's bytes are reversed
// back to network order (this daemon runs on the host that printed the table).
bool wordBytes(std::string_view hex8, unsigned char out[4]) {
    std::uint64_t w = 0;
    if (hex8.size() != 8 || !hexValue(hex8, w)) {
        return false;
    }
    const auto word = static_cast<std::uint32_t>(w);
    std::memcpy(out, &word, 4);  // host order in memory = the kernel's bytes
    return true;
}

std::string ipv4Text(const unsigned char b[4]) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    return buf;
}

std::string ipv6Text(const unsigned char b[16]) {
    // Compressed form of the longest run of zero groups (RFC 5952), enough for a log and the
    // wildcard / loopback / mapped tests below.
    std::array<unsigned, 8> g{};
    for (int i = 0; i < 8; ++i) {
        g[static_cast<std::size_t>(i)] = (unsigned{b[2 * i]} << 8) | b[2 * i + 1];
    }
    int bestStart = -1, bestLen = 0;
    for (int i = 0; i < 8;) {
        if (g[static_cast<std::size_t>(i)] != 0) {
            ++i;
            continue;
        }
        int j = i;
        while (j < 8 && g[static_cast<std::size_t>(j)] == 0) {
            ++j;
        }
        if (j - i > bestLen && j - i >= 2) {
            bestStart = i;
            bestLen = j - i;
        }
        i = j;
    }
    std::string out;
    for (int i = 0; i < 8; ++i) {
        if (i == bestStart) {
            out += "::";
            i += bestLen - 1;
            continue;
        }
        if (!out.empty() && out.back() != ':') {
            out += ':';
        }
        char buf[8];
        std::snprintf(buf, sizeof buf, "%x", g[static_cast<std::size_t>(i)]);
        out += buf;
    }
    return out;
}

// One whitespace-separated field after `pos`.
std::string_view nextField(std::string_view line, std::size_t& pos) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) {
        ++pos;
    }
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t') {
        ++pos;
    }
    return line.substr(start, pos - start);
}

// Reads a /proc/net/tcp{,6} table up to its first complete row past the listening section, at
// most maxBytes; the text read.
std::string readTable(const std::string& path, std::size_t maxBytes, SocketScanStats* stats) {
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return text;
    }
    char buf[16384];
    std::size_t checked = 0;  // bytes of text whose complete lines were looked at
    bool headerSeen = false;
    while (text.size() < maxBytes) {
        const ssize_t n = ::read(fd, buf, std::min(sizeof buf, maxBytes - text.size()));
        if (n <= 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        // Stop as soon as a complete row shows the established hash has begun.
        bool done = false;
        std::size_t nl;
        while ((nl = text.find('\n', checked)) != std::string::npos) {
            const std::string_view line(text.data() + checked, nl - checked);
            checked = nl + 1;
            if (!headerSeen) {
                headerSeen = true;
                continue;
            }
            std::size_t pos = 0;
            nextField(line, pos);  // sl
            nextField(line, pos);  // local
            nextField(line, pos);  // remote
            const std::string_view st = nextField(line, pos);
            if (!st.empty() && st != "0A" && st != "03") {
                done = true;
                break;
            }
        }
        if (done) {
            text.resize(checked);
            break;
        }
    }
    ::close(fd);
    if (stats != nullptr) {
        stats->tableBytes += text.size();
    }
    return text;
}

}  // namespace

std::vector<TcpListener> parseTcpListeners(std::string_view table, bool v6,
                                           std::size_t* malformed) {
    std::vector<TcpListener> out;
    std::size_t bad = 0;
    std::size_t start = 0;
    bool header = true;
    while (start < table.size()) {
        auto nl = table.find('\n', start);
        if (nl == std::string_view::npos) {
            nl = table.size();
        }
        const std::string_view line = table.substr(start, nl - start);
        start = nl + 1;
        if (header) {  // "  sl  local_address rem_address   st ..."
            header = false;
            if (line.find("local_address") != std::string_view::npos) {
                continue;
            }
        }
        std::size_t pos = 0;
        const std::string_view sl = nextField(line, pos);
        if (sl.empty()) {
            continue;  // a blank line
        }
        const std::string_view local = nextField(line, pos);
        nextField(line, pos);  // rem_address
        const std::string_view st = nextField(line, pos);
        if (st.size() != 2 || sl.back() != ':') {
            ++bad;
            continue;
        }
        if (st != "0A") {
            if (st == "03") {
                continue;  // an old kernel's request socket in the listening section
            }
            break;  // the established hash: no LISTEN row follows
        }
        for (int i = 0; i < 5; ++i) {  // tx:rx tr:when retrnsmt uid timeout
            nextField(line, pos);
        }
        const std::string_view inodeText = nextField(line, pos);
        const auto colon = local.find(':');
        std::uint64_t port = 0, inode = 0;
        const std::size_t addrHex = v6 ? 32 : 8;
        if (colon != addrHex || !hexValue(local.substr(colon + 1), port) || port > 65535 ||
            std::from_chars(inodeText.data(), inodeText.data() + inodeText.size(), inode).ec !=
                std::errc()) {
            ++bad;
            continue;
        }
        TcpListener l;
        l.port = static_cast<int>(port);
        l.inode = inode;
        l.v6 = v6;
        unsigned char bytes[16];
        bool ok = true;
        for (std::size_t w = 0; w < addrHex / 8 && ok; ++w) {
            ok = wordBytes(local.substr(w * 8, 8), bytes + 4 * w);
        }
        if (!ok) {
            ++bad;
            continue;
        }
        l.address = v6 ? ipv6Text(bytes) : ipv4Text(bytes);
        out.push_back(std::move(l));
    }
    if (malformed != nullptr) {
        *malformed = bad;
    }
    return out;
}

FdTable readFdTable(const std::string& procRoot, pid_t pid, std::size_t maxFds,
                    SocketScanStats* stats, const FdTable* previous) {
    FdTable out;
    const std::string dir = procRoot + "/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        if (stats != nullptr) {
            ++stats->unreadable;
        }
        return out;
    }
    if (stats != nullptr) {
        ++stats->processes;
    }
    const int dfd = ::dirfd(d);
    std::size_t listed = 0, read = 0;
    constexpr std::string_view kSocket = "socket:[";
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (listed >= maxFds) {
            if (stats != nullptr) {
                ++stats->fdsTruncated;
            }
            break;
        }
        ++listed;
        int fd = -1;
        const std::string_view name(e->d_name);
        if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) {
            continue;
        }
        if (previous != nullptr) {
            const auto it = std::lower_bound(previous->begin(), previous->end(),
                                             std::pair<int, std::uint64_t>{fd, 0});
            if (it != previous->end() && it->first == fd) {
                out.push_back(*it);  // seen at the last read: what it was then
                continue;
            }
        }
        ++read;
        char link[64];
        const ssize_t n = ::readlinkat(dfd, e->d_name, link, sizeof link);
        std::uint64_t inode = 0;
        if (n > 0 && static_cast<std::size_t>(n) < sizeof link) {
            const std::string_view target(link, static_cast<std::size_t>(n));
            if (target.starts_with(kSocket) && target.back() == ']') {
                const std::string_view num =
                    target.substr(kSocket.size(), target.size() - kSocket.size() - 1);
                std::uint64_t v = 0;
                const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
                if (ec == std::errc() && ptr == num.data() + num.size()) {
                    inode = v;
                }
            }
        }
        out.emplace_back(fd, inode);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    if (stats != nullptr) {
        stats->fdsRead += read;
        for (const auto& [fd, inode] : out) {
            stats->socketFds += inode != 0 ? 1 : 0;
        }
    }
    return out;
}

std::vector<std::uint64_t> socketInodesOf(const FdTable& table) {
    std::vector<std::uint64_t> out;
    for (const auto& [fd, inode] : table) {
        if (inode != 0) {
            out.push_back(inode);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::uint64_t> processSocketInodes(const std::string& procRoot, pid_t pid,
                                               std::size_t maxFds, SocketScanStats* stats) {
    return socketInodesOf(readFdTable(procRoot, pid, maxFds, stats, nullptr));
}

std::vector<TcpListener> tcpListeners(const std::string& procRoot, std::size_t maxTableBytes,
                                      SocketScanStats* stats) {
    std::vector<TcpListener> out;
    for (const bool v6 : {false, true}) {
        const std::string text =
            readTable(procRoot + (v6 ? "/net/tcp6" : "/net/tcp"), maxTableBytes, stats);
        auto rows = parseTcpListeners(text, v6);
        out.insert(out.end(), std::make_move_iterator(rows.begin()),
                   std::make_move_iterator(rows.end()));
    }
    if (stats != nullptr) {
        stats->tableListeners += out.size();
    }
    return out;
}

std::vector<ProcessListener> listeningSocketsOf(const std::vector<pid_t>& pids,
                                                const SocketScanLimits& limits,
                                                SocketScanStats* stats,
                                                const std::string& procRoot) {
    std::vector<pid_t> sorted = pids;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::unordered_map<std::uint64_t, pid_t> holder;  // inode -> lowest pid
    for (const pid_t pid : sorted) {
        for (const auto inode :
             processSocketInodes(procRoot, pid, limits.maxFdsPerProcess, stats)) {
            holder.emplace(inode, pid);  // ascending pids: the first is the lowest
        }
    }
    std::vector<ProcessListener> out;
    if (holder.empty()) {
        return out;
    }
    for (auto& l : tcpListeners(procRoot, limits.maxTableBytes, stats)) {
        const auto it = holder.find(l.inode);
        if (it == holder.end()) {
            continue;
        }
        if (out.size() >= limits.maxListeners) {
            if (stats != nullptr) {
                ++stats->listenersDropped;
            }
            continue;
        }
        out.push_back(ProcessListener{it->second, std::move(l)});
    }
    std::sort(out.begin(), out.end(), [](const ProcessListener& a, const ProcessListener& b) {
        return a.pid != b.pid ? a.pid < b.pid : a.socket.port < b.socket.port;
    });
    return out;
}

ListenerScanner::ListenerScanner(SocketScanLimits limits, unsigned fullEvery, std::string procRoot)
    : m_limits(limits), m_fullEvery(std::max(fullEvery, 1u)), m_procRoot(std::move(procRoot)) {}

std::vector<ProcessListener> ListenerScanner::scan(const std::vector<pid_t>& pids,
                                                   SocketScanStats* stats) {
    m_lastFdReads = 0;
    std::vector<ProcessListener> out;
    if (pids.empty()) {
        m_held.clear();
        return out;
    }
    std::vector<pid_t> sorted = pids;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    auto table = tcpListeners(m_procRoot, m_limits.maxTableBytes, stats);
    std::vector<std::uint64_t> listening;
    listening.reserve(table.size());
    for (const auto& l : table) {
        listening.push_back(l.inode);
    }
    std::sort(listening.begin(), listening.end());
    listening.erase(std::unique(listening.begin(), listening.end()), listening.end());
    // A LISTEN socket the last call did not see: some process started a server.
    const bool fresh =
        !std::includes(m_listening.begin(), m_listening.end(), listening.begin(), listening.end());
    const bool full = m_calls++ % m_fullEvery == 0;
    std::vector<std::pair<pid_t, FdTable>> held;
    held.reserve(sorted.size());
    auto known = m_held.begin();
    for (const pid_t pid : sorted) {
        while (known != m_held.end() && known->first < pid) {
            ++known;
        }
        const bool seen = known != m_held.end() && known->first == pid;
        if (seen && !full && !fresh) {
            held.emplace_back(pid, std::move(known->second));  // nothing new on the node
            continue;
        }
        // New process or periodic re-read: every fd. A new LISTEN socket somewhere: the fd
        // numbers this process did not have at the last read.
        held.emplace_back(pid, readFdTable(m_procRoot, pid, m_limits.maxFdsPerProcess, stats,
                                           seen && !full ? &known->second : nullptr));
        ++m_lastFdReads;
    }
    m_held = std::move(held);
    m_listening = std::move(listening);
    std::unordered_map<std::uint64_t, pid_t> holder;  // inode -> lowest pid
    for (const auto& [pid, fds] : m_held) {
        for (const auto& [fd, inode] : fds) {
            if (inode != 0 && std::binary_search(m_listening.begin(), m_listening.end(), inode)) {
                holder.emplace(inode, pid);  // ascending pids: the first is the lowest
            }
        }
    }
    for (auto& l : table) {
        const auto it = holder.find(l.inode);
        if (it == holder.end()) {
            continue;
        }
        if (out.size() >= m_limits.maxListeners) {
            if (stats != nullptr) {
                ++stats->listenersDropped;
            }
            continue;
        }
        out.push_back(ProcessListener{it->second, std::move(l)});
        holder.erase(it);  // a socket in both tables (none) or listed twice: once
    }
    std::sort(out.begin(), out.end(), [](const ProcessListener& a, const ProcessListener& b) {
        return a.pid != b.pid ? a.pid < b.pid : a.socket.port < b.socket.port;
    });
    return out;
}

std::string connectAddressOf(const TcpListener& s) {
    if (!s.v6) {
        if (s.address == "0.0.0.0" || s.address.starts_with("127.")) {
            return "127.0.0.1";
        }
        return s.address;
    }
    // "::" accepts IPv4 too unless the socket is IPV6_V6ONLY (not in the table; a refused
    // connect then shows it). "::ffff:a.b.c.d" is an IPv4 address.
    if (s.address == "::") {
        return "127.0.0.1";
    }
    if (s.address.starts_with("::ffff:")) {
        // ipv6Text prints the mapped address as hex groups: ::ffff:7f00:1
        unsigned hi = 0, lo = 0;
        if (std::sscanf(s.address.c_str() + 7, "%x:%x", &hi, &lo) == 2) {
            const unsigned char b[4] = {
                static_cast<unsigned char>(hi >> 8), static_cast<unsigned char>(hi & 0xff),
                static_cast<unsigned char>(lo >> 8), static_cast<unsigned char>(lo & 0xff)};
            TcpListener v4;
            v4.address = ipv4Text(b);
            return connectAddressOf(v4);
        }
    }
    return "";  // ::1 or a global IPv6 address: fetchMetrics speaks IPv4 only
}

}  // namespace runplane::agent
