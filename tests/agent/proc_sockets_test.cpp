// issue 42: the listening TCP sockets of processes from /proc (backend/agent/proc_sockets.h),
// against real sockets of this test process and of real child processes; the table parser on
// rows in the kernel's own format (net/ipv4/tcp_ipv4.c get_tcp4_sock, tcp6: get_tcp6_sock).
#include "backend/agent/proc_sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace runplane::agent {
namespace {

struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

// A TCP socket bound to addr:0; listening when `listen` is true. Returns the fd, *port set.
int tcpSocket(const char* addr, bool listen, int* port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, addr, &a.sin_addr);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        (listen && ::listen(fd, 64) != 0)) {
        return -1;
    }
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    *port = ntohs(a.sin_port);
    return fd;
}

int connectTo(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? fd : -1;
}

const ProcessListener* find(const std::vector<ProcessListener>& ls, int port) {
    for (const auto& l : ls) {
        if (l.socket.port == port) {
            return &l;
        }
    }
    return nullptr;
}

std::size_t fullSize(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().size();
}

// Rows as the kernel prints them: 127.0.0.1:8000 and 0.0.0.0:30000 listening, an established
// connection (the established hash has begun: nothing after it is read), then a LISTEN-looking
// row that must not be reached.
TEST(ProcSockets, ParsesListenRowsAndStopsAtTheEstablishedHash) {
    const std::string v4 =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode                                                     \n"
        "   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        "
        "0 4242 1 0000000000000000 100 0 0 10 0                     \n"
        "   1: 00000000:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
        "0 17 1 0000000000000000 100 0 0 10 0                       \n"
        "   2: 0100007F:1F40 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000  1000        "
        "0 5150 1 0000000000000000 20 4 30 10 -1                    \n"
        "   3: 0100007F:2710 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
        "0 99 1 0000000000000000 100 0 0 10 0                       \n";
    std::size_t bad = 0;
    const auto rows = parseTcpListeners(v4, false, &bad);
    EXPECT_EQ(bad, 0u);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].address, "127.0.0.1");
    EXPECT_EQ(rows[0].port, 8000);
    EXPECT_EQ(rows[0].inode, 4242u);
    EXPECT_EQ(rows[1].address, "0.0.0.0");
    EXPECT_EQ(rows[1].port, 30000);
    EXPECT_EQ(connectAddressOf(rows[1]), "127.0.0.1");

    const std::string v6 =
        "  sl  local_address                         remote_address                        st "
        "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000     0        0 31 1 0000000000000000 100 0 0 10 "
        "0\n"
        "   1: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000     0        0 32 1 0000000000000000 100 0 0 10 "
        "0\n"
        "   2: 0000000000000000FFFF00000500000A:1F92 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000     0        0 33 1 0000000000000000 100 0 0 10 "
        "0\n"
        "   3: garbage\n";
    const auto six = parseTcpListeners(v6, true, &bad);
    ASSERT_EQ(six.size(), 3u);
    EXPECT_EQ(six[0].address, "::");
    EXPECT_EQ(connectAddressOf(six[0]), "127.0.0.1");
    EXPECT_EQ(six[1].address, "::1");
    EXPECT_EQ(connectAddressOf(six[1]), "");  // IPv6 only: not fetched
    EXPECT_EQ(six[2].address, "::ffff:a00:5");
    EXPECT_EQ(connectAddressOf(six[2]), "10.0.0.5");
    EXPECT_EQ(six[2].port, 8082);
    EXPECT_EQ(bad, 1u);
    EXPECT_TRUE(parseTcpListeners("", false).empty());
}

// This process: a listening socket is found with its port and address; a bound socket that does
// not listen, a connected one and an accepted one are not listeners.
TEST(ProcSockets, ListeningSocketOfThisProcess) {
    int port = 0, boundPort = 0;
    Fd listener(tcpSocket("127.0.0.1", true, &port));
    Fd bound(tcpSocket("127.0.0.1", false, &boundPort));
    ASSERT_GE(listener.fd, 0);
    ASSERT_GE(bound.fd, 0);
    Fd client(connectTo(port));
    ASSERT_GE(client.fd, 0);
    Fd accepted(::accept(listener.fd, nullptr, nullptr));
    ASSERT_GE(accepted.fd, 0);

    SocketScanStats stats;
    const auto ls = listeningSocketsOf({::getpid()}, {}, &stats);
    const ProcessListener* l = find(ls, port);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->pid, ::getpid());
    EXPECT_EQ(l->socket.address, "127.0.0.1");
    EXPECT_FALSE(l->socket.v6);
    EXPECT_EQ(connectAddressOf(l->socket), "127.0.0.1");
    EXPECT_EQ(find(ls, boundPort), nullptr);
    EXPECT_EQ(stats.processes, 1u);
    EXPECT_GE(stats.socketFds, 4u);  // listener, bound, client, accepted
    EXPECT_GT(stats.tableBytes, 0u);
    for (const auto& x : ls) {
        EXPECT_EQ(x.pid, ::getpid());
    }

    // A process that does not exist is counted, not guessed.
    SocketScanStats gone;
    EXPECT_TRUE(listeningSocketsOf({999'999'999}, {}, &gone).empty());
    EXPECT_EQ(gone.unreadable, 1u);
    EXPECT_EQ(gone.tableBytes, 0u);  // no socket: the tables are not read
}

// A real child process listening on 0.0.0.0:<ephemeral>, and its own child that inherits the
// socket (as a forked server's workers do): the socket is given once, under the lower pid.
TEST(ProcSockets, ListeningSocketOfARealChildAndItsChild) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        int port = 0;
        const int l = tcpSocket("0.0.0.0", true, &port);
        const pid_t grandchild = ::fork();  // shares l
        if (grandchild == 0) {
            while (true) {
                ::pause();
            }
        }
        const int msg[2] = {port, grandchild};
        (void)!::write(fds[1], msg, sizeof msg);
        (void)l;
        while (true) {
            ::pause();
        }
    }
    ::close(fds[1]);
    int msg[2] = {0, 0};
    ASSERT_EQ(::read(fds[0], msg, sizeof msg), static_cast<ssize_t>(sizeof msg));
    ::close(fds[0]);
    const int port = msg[0];
    const pid_t grandchild = msg[1];

    const auto ls = listeningSocketsOf({grandchild, child});
    const ProcessListener* l = find(ls, port);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->pid, std::min(child, grandchild));
    EXPECT_EQ(l->socket.address, "0.0.0.0");
    EXPECT_EQ(connectAddressOf(l->socket), "127.0.0.1");
    EXPECT_EQ(std::count_if(ls.begin(), ls.end(),
                            [port](const ProcessListener& x) { return x.socket.port == port; }),
              1);
    // Only the grandchild asked: it holds the socket too.
    const auto only = listeningSocketsOf({grandchild});
    ASSERT_NE(find(only, port), nullptr);
    EXPECT_EQ(find(only, port)->pid, grandchild);
    // Not this process's socket.
    EXPECT_EQ(find(listeningSocketsOf({::getpid()}), port), nullptr);

    ::kill(grandchild, SIGKILL);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
}

// Bounds: a process with more fds than maxFdsPerProcess is read up to the bound and counted; with
// established connections on the node the tables are read only up to the established hash.
TEST(ProcSockets, BoundedFdsAndTableReadStopsAtTheEstablishedHash) {
    int port = 0;
    Fd listener(tcpSocket("127.0.0.1", true, &port));
    ASSERT_GE(listener.fd, 0);
    std::vector<std::unique_ptr<Fd>> conns;
    for (int i = 0; i < 200; ++i) {
        conns.push_back(std::make_unique<Fd>(connectTo(port)));
        ASSERT_GE(conns.back()->fd, 0);
        conns.push_back(std::make_unique<Fd>(::accept(listener.fd, nullptr, nullptr)));
    }
    SocketScanStats stats;
    const auto ls = listeningSocketsOf({::getpid()}, {}, &stats);
    ASSERT_NE(find(ls, port), nullptr);
    // 400 established rows (150 bytes each) are in /proc/net/tcp: they were not read.
    const std::size_t full = fullSize("/proc/net/tcp") + fullSize("/proc/net/tcp6");
    EXPECT_GT(full, 400u * 150u);
    EXPECT_LT(stats.tableBytes + 400u * 150u / 2, full) << stats.tableBytes << " of " << full;

    SocketScanLimits few;
    few.maxFdsPerProcess = 10;
    SocketScanStats bounded;
    listeningSocketsOf({::getpid()}, few, &bounded);
    EXPECT_EQ(bounded.fdsRead, 10u);
    EXPECT_EQ(bounded.fdsTruncated, 1u);

    SocketScanLimits one;
    one.maxListeners = 0;
    SocketScanStats dropped;
    EXPECT_TRUE(listeningSocketsOf({::getpid()}, one, &dropped).empty());
    EXPECT_GE(dropped.listenersDropped, 1u);
}

// An incremental read: fd numbers the last read had keep what it said; a new one is read.
TEST(ProcSockets, IncrementalFdReadReadsOnlyNewFdNumbers) {
    const FdTable before = readFdTable("/proc", ::getpid(), 4096, nullptr);
    ASSERT_FALSE(before.empty());
    int port = 0;
    Fd listener(tcpSocket("127.0.0.1", true, &port));
    ASSERT_GE(listener.fd, 0);
    const bool reused = std::any_of(before.begin(), before.end(),
                                    [&](const auto& e) { return e.first == listener.fd; });
    SocketScanStats stats;
    const FdTable after = readFdTable("/proc", ::getpid(), 4096, &stats, &before);
    // The listener's fd and the folder's own fd at most (the folder's may be a reused number).
    EXPECT_LE(stats.fdsRead, 2u);
    const auto it = std::find_if(after.begin(), after.end(),
                                 [&](const auto& e) { return e.first == listener.fd; });
    ASSERT_NE(it, after.end());
    if (!reused) {
        EXPECT_NE(it->second, 0u);  // read: a socket
    }
    SocketScanStats full;
    const FdTable fresh = readFdTable("/proc", ::getpid(), 4096, &full);
    EXPECT_EQ(full.fdsRead, fresh.size());
    const auto f = std::find_if(fresh.begin(), fresh.end(),
                                [&](const auto& e) { return e.first == listener.fd; });
    ASSERT_NE(f, fresh.end());
    EXPECT_NE(f->second, 0u);
}

// The scanner the daemon keeps: a process's fds are read in full when it is new and every 12th
// scan, its new fd numbers when the node has a new LISTEN socket; otherwise they are remembered,
// and a closed listener drops out unread. (Other
// processes on a shared machine open listening sockets too, which forces a full read: the quiet
// case is looked for over several scans.)
TEST(ProcSockets, ScannerRemembersSocketsUntilANewListenerAppears) {
    int port = 0;
    auto listener = std::make_unique<Fd>(tcpSocket("127.0.0.1", true, &port));
    ASSERT_GE(listener->fd, 0);
    ListenerScanner scanner;
    const pid_t self = ::getpid();
    auto first = scanner.scan({self});
    EXPECT_EQ(scanner.lastFdReads(), 1u);
    ASSERT_NE(find(first, port), nullptr);
    bool quiet = false;
    for (int i = 0; i < 50 && !quiet; ++i) {
        const auto again = scanner.scan({self});
        ASSERT_NE(find(again, port), nullptr);
        quiet = scanner.lastFdReads() == 0;
    }
    EXPECT_TRUE(quiet) << "every scan read the fds again";
    // A new listening socket of this process: the node's LISTEN set grew, so the fd numbers the
    // process did not have are read; one on a reused fd number (this very test's scans open and
    // close /proc folders) is found at the latest at the periodic full read (12 scans).
    int port2 = 0;
    Fd second(tcpSocket("127.0.0.1", true, &port2));
    ASSERT_GE(second.fd, 0);
    std::vector<ProcessListener> grown;
    int scans = 0;
    while (scans < 13 && find(grown, port2) == nullptr) {
        grown = scanner.scan({self});
        ++scans;
        EXPECT_NE(find(grown, port), nullptr);
    }
    EXPECT_NE(find(grown, port2), nullptr) << "not found in " << scans << " scans";
    // A closed socket is gone at once.
    listener.reset();
    const auto shrunk = scanner.scan({self});
    EXPECT_EQ(find(shrunk, port), nullptr);
    EXPECT_NE(find(shrunk, port2), nullptr);
    // A pid no longer asked for is forgotten; an empty list reads nothing.
    SocketScanStats none;
    EXPECT_TRUE(scanner.scan({}, &none).empty());
    EXPECT_EQ(none.tableBytes, 0u);
}

}  // namespace
}  // namespace runplane::agent
