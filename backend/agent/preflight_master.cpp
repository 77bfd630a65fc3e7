// MASTER_ADDR resolution and reachability from this node (preflight_master.h).
#include "backend/agent/preflight_master.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

namespace runplane::agent {
namespace {

constexpr std::chrono::milliseconds kResolveLimit{2000};
constexpr std::chrono::milliseconds kConnectLimit{2000};

bool isLoopbackAddress(const std::string& a) {
    return a.rfind("127.", 0) == 0 || a == "::1";
}

std::string joinAddresses(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) {
        out += (out.empty() ? "" : ", ") + x;
    }
    return out;
}

}  // namespace

void addCheck(v1::PreflightReport& r, const std::string& id, v1::CheckStatus status,
              const std::string& message, const std::string& detail) {
    auto* c = r.add_checks();
    c->set_id(id);
    c->set_status(status);
    c->set_message(message);
    c->set_detail(detail);
}

bool socketAddress(const std::string& address, int port, sockaddr_storage* out, socklen_t* len) {
    *out = sockaddr_storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(out);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
    if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        *len = sizeof(sockaddr_in);
        return true;
    }
    if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<std::uint16_t>(port));
        *len = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

std::string addressText(const sockaddr* sa) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* a =
        sa->sa_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
    return ::inet_ntop(sa->sa_family, a, text, sizeof(text)) != nullptr ? text : "";
}

Resolved resolveBounded(const std::string& name, std::chrono::milliseconds limit) {
    auto promise = std::make_shared<std::promise<Resolved>>();
    auto answer = promise->get_future();
    std::thread([promise, name] {
        Resolved out;
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* list = nullptr;
        const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &list);
        if (rc != 0) {
            out.error = ::gai_strerror(rc);
        } else {
            for (auto* p = list; p != nullptr; p = p->ai_next) {
                if (p->ai_family != AF_INET && p->ai_family != AF_INET6) {
                    continue;
                }
                const std::string a = addressText(p->ai_addr);
                if (!a.empty() && std::find(out.addresses.begin(), out.addresses.end(), a) ==
                                      out.addresses.end()) {
                    out.addresses.push_back(a);
                }
            }
            ::freeaddrinfo(list);
            std::stable_partition(
                out.addresses.begin(), out.addresses.end(),
                [](const std::string& a) { return a.find(':') == std::string::npos; });
            if (out.addresses.empty()) {
                out.error = "no IPv4 or IPv6 address";
            }
        }
        promise->set_value(std::move(out));
    }).detach();
    if (answer.wait_for(limit) != std::future_status::ready) {
        Resolved late;
        late.error = "no answer within " + std::to_string(limit.count()) +
                     " ms (is a DNS server in /etc/resolv.conf reachable from this node?)";
        return late;
    }
    return answer.get();
}

std::string tcpConnect(const std::string& address, int port, std::chrono::milliseconds limit) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!socketAddress(address, port, &ss, &len)) {
        return "not a numeric address";
    }
    const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return std::string("cannot open a socket: ") + std::strerror(errno);
    }
    std::string why;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        if (errno != EINPROGRESS) {
            why = std::strerror(errno);
        } else {
            pollfd p{fd, POLLOUT, 0};
            const int ready = ::poll(&p, 1, static_cast<int>(limit.count()));
            if (ready == 0) {
                why = "no answer within " + std::to_string(limit.count()) + " ms";
            } else if (ready < 0) {
                why = std::strerror(errno);
            } else {
                int err = 0;
                socklen_t errLen = sizeof(err);
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errLen);
                if (err != 0) {
                    why = std::strerror(err);
                }
            }
        }
    }
    ::close(fd);
    return why;
}

std::vector<std::string> interfaceAddresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return out;
    }
    for (auto* p = list; p != nullptr; p = p->ifa_next) {
        if (p->ifa_addr == nullptr ||
            (p->ifa_addr->sa_family != AF_INET && p->ifa_addr->sa_family != AF_INET6)) {
            continue;
        }
        if (p->ifa_addr->sa_family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(p->ifa_addr)->sin6_addr)) {
            continue;  // fe80::/10 needs a scope: no MASTER_ADDR names one
        }
        const std::string a = addressText(p->ifa_addr);
        if (!a.empty() && std::find(out.begin(), out.end(), a) == out.end()) {
            out.push_back(a);
        }
    }
    ::freeifaddrs(list);
    return out;
}

void checkMasterAddrPeer(v1::PreflightReport& r, const v1::PreflightRequest& req,
                         const std::string& master,
                         const std::function<Resolved(const std::string&)>& resolve) {
    in6_addr probe{};
    const bool isNumeric = ::inet_pton(AF_INET, master.c_str(), &probe) == 1 ||
                           ::inet_pton(AF_INET6, master.c_str(), &probe) == 1;
    Resolved resolved;
    if (isNumeric) {
        resolved.addresses = {master};
        addCheck(r, "net.master_addr.resolves", v1::CHECK_PASS,
                 "MASTER_ADDR=" + master + " is numeric (nothing to resolve)");
    } else {
        resolved = resolve ? resolve(master) : resolveBounded(master, kResolveLimit);
        if (!resolved.error.empty()) {
            addCheck(r, "net.master_addr.resolves", v1::CHECK_FAIL,
                     "MASTER_ADDR=" + master + " does not resolve on this node: " + resolved.error,
                     "add it to this node's /etc/hosts or DNS, or set MASTER_ADDR to the head's "
                     "numeric LAN address");
            return;
        }
        const bool allLoopback =
            std::all_of(resolved.addresses.begin(), resolved.addresses.end(), isLoopbackAddress);
        if (allLoopback) {
            addCheck(r, "net.master_addr.resolves", v1::CHECK_FAIL,
                     "MASTER_ADDR=" + master + " resolves to " + joinAddresses(resolved.addresses) +
                         " (loopback) on this node",
                     "a hosts file maps the name to loopback; remove it from the 127.x line or use "
                     "the head's LAN address");
            return;
        }
        addCheck(r, "net.master_addr.resolves", v1::CHECK_PASS,
                 "MASTER_ADDR=" + master + " resolves to " + joinAddresses(resolved.addresses) +
                     " on this node");
    }
    for (const auto& a : resolved.addresses) {
        r.add_master_addr_resolved(a);
    }
    const int port = static_cast<int>(req.master_probe_port());
    if (port <= 0 || port > 65535) {
        return;
    }
    std::vector<std::string> failures;
    for (const auto& a : resolved.addresses) {
        if (isLoopbackAddress(a)) {
            continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        const std::string why = tcpConnect(a, port, kConnectLimit);
        if (why.empty()) {
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - t0)
                                .count();
            addCheck(r, "net.master_addr.reachable", v1::CHECK_PASS,
                     "MASTER_ADDR=" + master + ": TCP connection from this node to " + a + ":" +
                         std::to_string(port) + " (the rank-0 daemon's port) in " +
                         std::to_string(ms) + " ms");
            return;
        }
        failures.push_back(a + ":" + std::to_string(port) + " (" + why + ")");
    }
    addCheck(
        r, "net.master_addr.reachable", v1::CHECK_FAIL,
        "MASTER_ADDR=" + master +
            ": no TCP connection from this node to the rank-0 daemon's port " + "at " +
            joinAddresses(failures),
        "workers here could not reach the master: MASTER_ADDR is not the rank-0 node's address, "
        "or a firewall between the nodes drops the connection");
}

}  // namespace runplane::agent
