#pragma once
// The listening TCP sockets of chosen processes, read from /proc (issue 42: engines whose HTTP
// server starts inside a Ray actor, with a port chosen at run time, show no `--port` on any
// command line). Per process, /proc/PID/fd is listed and each `socket:[INODE]` link kept; the
// inodes are matched against the rows of /proc/net/tcp and /proc/net/tcp6 in state 0A (LISTEN),
// which give the local address and port. Bounded: at most maxFdsPerProcess links read a process,
// at most maxTableBytes read of each table, at most maxListeners returned. The kernel prints the
// listening hash before the established one (net/ipv4/tcp_ipv4.c, tcp_seq_start: LISTENING
// first), so a table is read only until its first row in neither LISTEN nor SYN_RECV: the cost
// does not grow with the node's connections. docs/daemon.md, "Engine metrics".
// Free of Qt and gRPC; not thread-safe (no state).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::agent {

/// One LISTEN row of /proc/net/tcp or tcp6.
struct TcpListener {
    std::uint64_t inode = 0;
    std::string address;  // the local address: "127.0.0.1", "0.0.0.0", "::", "::1", "fe80::..."
    int port = 0;
    bool v6 = false;
};

/// The LISTEN rows of one /proc/net/tcp (v6 false) or tcp6 (v6 true) text, in order. Reading
/// stops at the first row whose state is neither 0A (LISTEN) nor 03 (SYN_RECV): the established
/// hash has begun. A malformed row is skipped and counted in *malformed.
std::vector<TcpListener> parseTcpListeners(std::string_view table, bool v6,
                                           std::size_t* malformed = nullptr);

struct SocketScanLimits {
    std::size_t maxFdsPerProcess = 4096;
    std::size_t maxTableBytes = 4 << 20;
    std::size_t maxListeners = 256;
};

struct SocketScanStats {
    std::size_t processes = 0;         // processes whose fd folder was listed
    std::size_t unreadable = 0;        // fd folder gone or not readable (exited, other user)
    std::size_t fdsRead = 0;           // fd links read
    std::size_t socketFds = 0;         // of them `socket:[N]`
    std::size_t fdsTruncated = 0;      // processes with more than maxFdsPerProcess fds
    std::size_t tableBytes = 0;        // bytes read of /proc/net/tcp + tcp6
    std::size_t tableListeners = 0;    // LISTEN rows in the tables
    std::size_t listenersDropped = 0;  // beyond maxListeners
};

/// The socket inodes among a process's open fds (`/proc/PID/fd/N -> socket:[INODE]`), ascending,
/// at most limits.maxFdsPerProcess links read. Empty when the folder cannot be read.
std::vector<std::uint64_t> processSocketInodes(const std::string& procRoot, pid_t pid,
                                               std::size_t maxFds, SocketScanStats* stats);

/// A process's fds as the last read found them: (fd, socket inode or 0), by fd.
using FdTable = std::vector<std::pair<int, std::uint64_t>>;

/// Reads /proc/PID/fd: every link, or with `previous` only the fd numbers it lacks (the others
/// keep what `previous` says). At most maxFds entries. Empty when the folder cannot be read.
FdTable readFdTable(const std::string& procRoot, pid_t pid, std::size_t maxFds,
                    SocketScanStats* stats, const FdTable* previous = nullptr);

/// The LISTEN rows of procRoot/net/tcp and procRoot/net/tcp6 (the reader's network namespace).
std::vector<TcpListener> tcpListeners(const std::string& procRoot, std::size_t maxTableBytes,
                                      SocketScanStats* stats);

/// A listening socket and the lowest of the given pids that holds it (a forked server shares
/// its socket with its children).
struct ProcessListener {
    pid_t pid = 0;
    TcpListener socket;
};

/// The listening TCP sockets held by `pids`, ordered by pid then port; a socket held by several
/// of them is given once. The tables are not read when no pid holds a socket.
std::vector<ProcessListener> listeningSocketsOf(const std::vector<pid_t>& pids,
                                                const SocketScanLimits& limits = {},
                                                SocketScanStats* stats = nullptr,
                                                const std::string& procRoot = "/proc");

/// listeningSocketsOf, remembering each process's fds between calls (the daemon calls it every
/// 5 s): the tables are read every call; a process's fd links are all read when it is new to the
/// scanner and every fullEvery calls (an fd number closed and reused for a socket, a recycled
/// pid); when the node has a LISTEN socket (inode) it had not at the last call (a server started
/// somewhere), only the fd numbers a process did not have at its last read are read; otherwise
/// none. So the steady cost is the two tables' listening sections, not every engine's fds.
class ListenerScanner {
  public:
    explicit ListenerScanner(SocketScanLimits limits = {}, unsigned fullEvery = 12,
                             std::string procRoot = "/proc");
    std::vector<ProcessListener> scan(const std::vector<pid_t>& pids,
                                      SocketScanStats* stats = nullptr);
    /// Processes whose fd folder the last scan read (in full or only new fd numbers).
    std::size_t lastFdReads() const { return m_lastFdReads; }

  private:
    SocketScanLimits m_limits;
    unsigned m_fullEvery;
    std::string m_procRoot;
    unsigned m_calls = 0;
    std::vector<std::uint64_t> m_listening;  // the node's LISTEN inodes at the last call, sorted
    std::vector<std::pair<pid_t, FdTable>> m_held;  // by pid: its fds at the last read
    std::size_t m_lastFdReads = 0;
};

/// The IPv4 address to connect to for a listener: a wildcard or loopback address gives
/// "127.0.0.1", an IPv4 (or IPv4-mapped) address itself; "" for an IPv6-only address.
std::string connectAddressOf(const TcpListener& socket);

}  // namespace runplane::agent
