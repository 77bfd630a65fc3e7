#include "tests/support/netns_hosts.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/daemon_process.h"

namespace runplane::testing {
namespace {

// Names carry the creating process's pid: "rp<pid><letter>" + a suffix, at most 15 characters
// (the kernel's interface name limit): "rp1234567a" + "br" / "v3" / "p3" / "h3".
std::string makeTag() {
    static std::atomic<int> made{0};
    return "rp" + std::to_string(::getpid()) + static_cast<char>('a' + (made++ % 26));
}

// A /24 of 198.18.0.0/15 chosen by pid and harness count, so suites that ctest runs side by side
// do not share a subnet.
std::string subnetPrefix() {
    static std::atomic<int> made{0};
    const int k = static_cast<int>(
        (static_cast<unsigned>(::getpid()) * 7u + static_cast<unsigned>(made++)) % 512u);
    return "198." + std::to_string(18 + k / 256) + "." + std::to_string(k % 256) + ".";
}

std::string commandText(const std::vector<std::string>& argv) {
    std::string text;
    for (const auto& a : argv) {
        text += (text.empty() ? "" : " ") + a;
    }
    return text;
}

// Every process in the network namespace `ns`, killed (its host's PID 1 included).
void killNamespace(const std::string& ns) {
    std::string pids;
    runCommand({"ip", "netns", "pids", ns}, &pids);
    std::istringstream p(pids);
    for (long pid = 0; p >> pid;) {
        ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
}

// Namespaces of harnesses whose process is gone (a test killed mid-way) are removed.
void removeStaleNamespaces() {
    std::string list;
    if (runCommand({"ip", "netns", "list"}, &list) != 0) {
        return;
    }
    static const std::regex kName(R"(^(rp(\d+)[a-z])h\d+)");
    std::istringstream in(list);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, kName)) {
            continue;
        }
        const pid_t owner = static_cast<pid_t>(std::stol(m[2].str()));
        if (owner == ::getpid() || ::kill(owner, 0) == 0) {
            continue;
        }
        const std::string ns = line.substr(0, line.find(' '));
        killNamespace(ns);
        runCommand({"ip", "netns", "del", ns}, nullptr);
        runCommand({"ip", "link", "del", m[1].str() + "br"}, nullptr);
        std::error_code ec;
        std::filesystem::remove_all("/etc/netns/" + ns, ec);
        std::filesystem::remove_all("/tmp/" + ns + "-ray", ec);
    }
}

}  // namespace

std::string NetnsHosts::unavailableReason() {
    if (::geteuid() != 0) {
        return "network namespaces need root (run the suite as root, as CI does)";
    }
    const std::string probe = "rpprobe" + std::to_string(::getpid());
    std::string out;
    if (runCommand({"ip", "netns", "add", probe}, &out) != 0) {
        return "`ip netns add` failed: " + out;
    }
    runCommand({"ip", "netns", "del", probe}, nullptr);
    if (runCommand({"unshare", "--uts", "--pid", "--fork", "--mount-proc", "true"}, &out) != 0) {
        return "`unshare --uts --pid --fork --mount-proc` failed: " + out;
    }
    return "";
}

NetnsHosts::NetnsHosts(int count, const std::string& hostPrefix) {
    removeStaleNamespaces();
    m_tag = makeTag();
    m_bridge = m_tag + "br";
    const std::string net = subnetPrefix();
    m_controllerIp = net + "1";
    if (!run({"ip", "link", "add", m_bridge, "type", "bridge"}) ||
        !run({"ip", "addr", "add", m_controllerIp + "/24", "dev", m_bridge}) ||
        !run({"ip", "link", "set", m_bridge, "up"})) {
        return;
    }
    for (int i = 0; i < count; ++i) {
        Host h;
        const std::string n = std::to_string(i + 1);
        h.ns = m_tag + "h" + n;
        h.ip = net + std::to_string(10 + i + 1);
        h.hostname = hostPrefix + n;
        h.vethOutside = m_tag + "v" + n;
        const std::string inside = m_tag + "p" + n;
        m_hosts.push_back(h);
        if (!run({"ip", "netns", "add", h.ns}) ||
            !run({"ip", "link", "add", h.vethOutside, "type", "veth", "peer", "name", inside}) ||
            !run({"ip", "link", "set", inside, "netns", h.ns}) ||
            !run({"ip", "link", "set", h.vethOutside, "master", m_bridge}) ||
            !run({"ip", "link", "set", h.vethOutside, "up"}) ||
            !run({"ip", "-n", h.ns, "link", "set", inside, "name", kInterface}) ||
            !run({"ip", "-n", h.ns, "addr", "add", h.ip + "/24", "dev", kInterface}) ||
            !run({"ip", "-n", h.ns, "link", "set", kInterface, "up"}) ||
            !run({"ip", "-n", h.ns, "link", "set", "lo", "up"})) {
            return;
        }
    }
    // Every host resolves every other by name, and its own name to its LAN address (as a
    // well-configured cluster does; a test may break one host's file).
    std::string hosts = "127.0.0.1 localhost\n" + m_controllerIp + " controller\n";
    for (const auto& h : m_hosts) {
        hosts += h.ip + " " + h.hostname + "\n";
    }
    for (int i = 0; i < count; ++i) {
        if (!writeHostsFile(i, hosts)) {
            return;
        }
    }
}

NetnsHosts::~NetnsHosts() {
    removeEverything();
}

bool NetnsHosts::run(const std::vector<std::string>& argv) {
    std::string out;
    if (runCommand(argv, &out) == 0) {
        return true;
    }
    if (m_error.empty()) {
        m_error = "`" + commandText(argv) + "` failed: " + out;
    }
    return false;
}

void NetnsHosts::powerOff(int i) {
    killNamespace(ns(i));
}

void NetnsHosts::removeEverything() {
    for (const auto& h : m_hosts) {
        killNamespace(h.ns);
        runCommand({"ip", "netns", "del", h.ns}, nullptr);  // also ends its veth pair
        runCommand({"ip", "link", "del", h.vethOutside}, nullptr);
        std::error_code ec;
        std::filesystem::remove_all("/etc/netns/" + h.ns, ec);
        for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind(h.ns + "-", 0) == 0 && name.size() > 4 &&
                name.compare(name.size() - 4, 4, "-ray") == 0) {
                std::filesystem::remove_all(entry.path(), ec);
            }
        }
    }
    if (!m_bridge.empty()) {
        runCommand({"ip", "link", "del", m_bridge}, nullptr);
    }
}

// `ip` and `unshare` by absolute path: onHost's command may be started with the environment of the
// program it runs (a PATH without /usr/sbin).
static std::string systemTool(const std::string& name) {
    for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
        if (::access((dir + name).c_str(), X_OK) == 0) {
            return dir + name;
        }
    }
    return name;
}

std::vector<std::string> NetnsHosts::onHost(int i, const std::vector<std::string>& argv) const {
    return onHost(i, argv, "");
}

std::vector<std::string> NetnsHosts::onHost(int i, const std::vector<std::string>& argv,
                                            const std::string& container) const {
    // bash is PID 1 of the host's PID namespace: it sets the hostname, runs the program and reaps
    // the orphans that daemonising programs (ray start) leave to init. --kill-child: when unshare
    // dies (the test stops the host), PID 1 dies, and with it every process of the host.
    // Ray keeps its sockets and session files under /tmp/ray: each host gets its own (bound over
    // /tmp/ray in the host's mount namespace), or two workers starting at once on the shared /tmp
    // race for the same socket names.
    static const char* kInit = R"(hostname "$0" || exit 97
mkdir -p /tmp/ray "$1" && mount --bind "$1" /tmp/ray || exit 98
shift
"$@" &
main=$!
while kill -0 "$main" 2>/dev/null; do wait "$main"; done)";
    std::vector<std::string> out{
        systemTool("ip"),
        "netns",
        "exec",
        ns(i),
        systemTool("unshare"),
        "--uts",
        "--pid",
        "--fork",
        "--mount-proc",
        "--kill-child=SIGKILL",
        "--",
        "bash",
        "-c",
        kInit,
        hostname(i),
        "/tmp/" + ns(i) + (container.empty() ? "" : "-" + container) + "-ray"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

bool NetnsHosts::writeHostsFile(int i, const std::string& text) {
    const std::string dir = "/etc/netns/" + ns(i);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream out(dir + "/hosts", std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        m_error = "cannot write " + dir + "/hosts";
        return false;
    }
    return true;
}

bool NetnsHosts::setLinkUp(int i, bool up) {
    return run({"ip", "link", "set", m_hosts.at(static_cast<std::size_t>(i)).vethOutside,
                up ? "up" : "down"});
}

}  // namespace runplane::testing
