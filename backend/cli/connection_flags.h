#pragma once
// The flags every runplanectl command that talks to a daemon shares: --cluster, --tls-ca,
// --tls-cert, --tls-key, --tls-server-name, --token-file. Explicit flags override the cluster
// profile; the token comes from --token-file, else $RUNPLANE_TOKEN, else the profile's
// token_file — never from the command line.

#include <memory>
#include <string>
#include <vector>

#include "backend/control/cluster_profile.h"
#include "backend/control/node_client.h"
#include "common/result.h"

namespace CLI {
class App;
}

namespace runplane::cli {

struct ConnectionFlags {
    std::string cluster;
    std::string tlsCa, tlsCert, tlsKey, tlsServerName, tokenFile;
};

/// Adds the six flags to `command`, storing into `flags` (which must outlive parsing).
void addConnectionFlags(CLI::App* command, ConnectionFlags& flags);

/// What a command needs to reach its daemons.
struct Connection {
    control::NodeClientOptions client;
    std::vector<control::ClusterNode> profileNodes;  // the --cluster profile's nodes (may be empty)
    double telemetryHz = 0;                          // the profile's telemetry_hz (0: not set)
};

/// Loads the profile (if any), reads the token and merges the flags over the profile.
Result<Connection> resolveConnection(const ConnectionFlags& flags);

/// A node's address: `nameOrAddress` itself, or the address of the profile node of that name.
std::string resolveAddress(const std::string& nameOrAddress, const Connection& connection);

/// `addresses` as given (profile node names resolved), or the profile's nodes when none were
/// given; an error naming the command when both are empty.
Result<std::vector<std::string>> addressesOrProfile(const std::vector<std::string>& addresses,
                                                    const Connection& connection,
                                                    const std::string& command);

}  // namespace runplane::cli
