#pragma once
// tests/support: test hosts that are hosts (issue 47). N network namespaces joined by veth pairs
// to one bridge, each with its own address in 198.18.0.0/15 (the benchmarking range, RFC 2544),
// its own hostname (a UTS namespace), its own /etc/hosts (`ip netns exec` binds
// /etc/netns/NS/hosts over it) and its own process table (a PID namespace, so `ray stop` on one
// host cannot end another host's Ray). The bridge holds the controller's address (.1), so the test
// process reaches every host the way a controller reaches its nodes: over an interface, never over
// loopback. Everything made is removed on destruction, also after a failed assertion; namespaces
// left by a killed test process are removed by the next harness that starts.
//
// Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and the `ip` and `unshare` commands;
// NetnsHosts::unavailableReason() says why not, so a test can skip with the reason.

#include <string>
#include <vector>

namespace runplane::testing {

class NetnsHosts {
  public:
    /// "" when namespaces can be made here, else why not (not root, no `ip`, no permission).
    static std::string unavailableReason();

    /// Makes `count` hosts named `<hostPrefix>1..N` (hostnames, not namespace names).
    explicit NetnsHosts(int count, const std::string& hostPrefix = "host");
    ~NetnsHosts();
    NetnsHosts(const NetnsHosts&) = delete;
    NetnsHosts& operator=(const NetnsHosts&) = delete;

    /// Made completely; else error() says which command failed and what it printed.
    bool ok() const { return m_error.empty(); }
    const std::string& error() const { return m_error; }

    int count() const { return static_cast<int>(m_hosts.size()); }
    /// Host i (0-based): its namespace, IPv4 address, hostname and interface name inside.
    const std::string& ns(int i) const { return m_hosts.at(static_cast<std::size_t>(i)).ns; }
    const std::string& ip(int i) const { return m_hosts.at(static_cast<std::size_t>(i)).ip; }
    const std::string& hostname(int i) const {
        return m_hosts.at(static_cast<std::size_t>(i)).hostname;
    }
    static constexpr const char* kInterface = "eth0";
    /// The controller's address on the bridge (the test process, in the root namespace).
    const std::string& controllerIp() const { return m_controllerIp; }

    /// argv that runs `argv` as a process of host i: in its network namespace, with its hostname
    /// and hosts file, as PID 1 of its own PID namespace (a bash that reaps orphans and forwards
    /// SIGTERM). When the returned command's process dies, every process of the host dies with
    /// it (the host "powers off").
    std::vector<std::string> onHost(int i, const std::vector<std::string>& argv) const;
    /// The same in another "container" of host i: the host's network, hostname and hosts file,
    /// but a PID namespace and /tmp/ray of its own (named by `container`), as a second container
    /// with host networking has. Processes there are invisible to the host's daemon.
    std::vector<std::string> onHost(int i, const std::vector<std::string>& argv,
                                    const std::string& container) const;

    /// Ends every process of host i at once (SIGKILL), as a power cut would. unshare ignores
    /// SIGTERM while it waits, so this is how a host's processes are stopped.
    void powerOff(int i);

    /// Replaces host i's /etc/hosts (seen only inside it).
    bool writeHostsFile(int i, const std::string& text);
    /// Takes host i's link down (its cable cut) or back up.
    bool setLinkUp(int i, bool up);

  private:
    struct Host {
        std::string ns;
        std::string ip;
        std::string hostname;
        std::string vethOutside;
    };
    bool run(const std::vector<std::string>& argv);
    void removeEverything();

    std::string m_tag;  // unique per harness: names of the bridge, veths and namespaces
    std::string m_bridge;
    std::string m_controllerIp;
    std::vector<Host> m_hosts;
    std::string m_error;
};

}  // namespace runplane::testing
