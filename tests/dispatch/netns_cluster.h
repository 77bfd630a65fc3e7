#pragma once
// The namespace-host suites' cluster (issue 47): NetnsHosts (tests/support/netns_hosts.h) with one
// runplaned per host, secured as `runplanectl cluster init` makes it (TLS with client certificates
// and a token: the daemons listen off loopback), and the client that reaches them.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/control/cluster_certs.h"
#include "backend/control/node_client.h"
#include "tests/dispatch/node_process.h"
#include "tests/support/netns_hosts.h"

namespace runplane::dispatch_testing {

inline std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
        s.pop_back();
    }
    return s;
}

// A runplaned on namespace host i; the host is powered off before the daemon object goes, so
// nothing of it (Ray included) outlives the test.
class HostDaemon : public NodeProcess {
  public:
    HostDaemon(runplane::testing::NetnsHosts& hosts, int i, const std::string& stateDir,
               const std::string& pki, const std::map<std::string, std::string>& env)
        : NodeProcess(stateDir, hosts.hostname(i), hosts.ip(i) + ":0", env,
                      {"--tls-cert", pki + "/server-" + hosts.ip(i) + ".pem", "--tls-key",
                       pki + "/server-" + hosts.ip(i) + ".key", "--tls-client-ca", pki + "/ca.pem",
                       "--token-file", pki + "/token"},
                      hosts.onHost(i, {})),
          m_hosts(hosts),
          m_index(i) {}
    ~HostDaemon() { m_hosts.powerOff(m_index); }
    HostDaemon(const HostDaemon&) = delete;
    HostDaemon& operator=(const HostDaemon&) = delete;

  private:
    runplane::testing::NetnsHosts& m_hosts;
    int m_index;
};

// Hosts secured as `runplanectl cluster init` makes them, one daemon each, and the client that
// reaches them.
struct SecuredHosts {
    explicit SecuredHosts(int count) : hosts(count, "node") {}
    bool start(const std::map<std::string, std::string>& daemonEnv, std::string* error) {
        if (!hosts.ok()) {
            *error = hosts.error();
            return false;
        }
        runplane::control::ClusterInitOptions init;
        init.outDir = dir.path() + "/pki";
        init.name = "netns";
        for (int i = 0; i < hosts.count(); ++i) {
            init.hosts.push_back(hosts.ip(i));
        }
        if (!runplane::control::initCluster(init).ok()) {
            *error = "cluster init failed";
            return false;
        }
        client.callTimeout = std::chrono::seconds(150);
        client.tlsRootCertFile = init.outDir + "/ca.pem";
        client.tlsCertFile = init.outDir + "/client.pem";
        client.tlsKeyFile = init.outDir + "/client.key";
        client.bearerToken = trimmed(readFile(init.outDir + "/token"));
        for (int i = 0; i < hosts.count(); ++i) {
            daemons.push_back(std::make_unique<HostDaemon>(
                hosts, i, dir.path() + "/state-" + hosts.hostname(i), init.outDir, daemonEnv));
            if (!daemons.back()->ok()) {
                *error = daemons.back()->error();
                return false;
            }
        }
        return true;
    }
    std::vector<std::string> addresses() const {
        std::vector<std::string> out;
        for (const auto& d : daemons) {
            out.push_back(d->address());
        }
        return out;
    }
    runplane::testing::NetnsHosts hosts;
    ScratchDir dir;
    runplane::control::NodeClientOptions client;
    std::vector<std::unique_ptr<HostDaemon>> daemons;  // destroyed before hosts
};

}  // namespace runplane::dispatch_testing
