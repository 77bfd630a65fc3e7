#include "backend/cli/connection_flags.h"

#include <CLI/CLI.hpp>

#include <cstdlib>

#include "backend/control/bearer_token.h"
#include "backend/control/cluster_profile.h"

namespace runplane::cli {

void addConnectionFlags(CLI::App* command, ConnectionFlags& flags) {
    command->add_option("--cluster", flags.cluster,
                        "Cluster profile: NAME (~/.config/runplane/clusters/NAME.yaml) or FILE");
    command->add_option("--tls-ca", flags.tlsCa, "PEM CA that signed the daemons' certificates");
    command->add_option("--tls-cert", flags.tlsCert, "PEM client certificate (mutual TLS)");
    command->add_option("--tls-key", flags.tlsKey, "PEM client private key (mutual TLS)");
    command->add_option("--tls-server-name", flags.tlsServerName,
                        "Check the daemon's certificate against this name instead of the host");
    command->add_option("--token-file", flags.tokenFile,
                        "File holding the bearer token (else $RUNPLANE_TOKEN)");
}

Result<Connection> resolveConnection(const ConnectionFlags& flags) {
    Connection c;
    control::ClusterProfile profile;
    if (!flags.cluster.empty()) {
        auto loaded = control::loadClusterProfile(flags.cluster);
        if (!loaded.ok()) {
            return Error{loaded.error()};
        }
        profile = *loaded;
        c.profileNodes = profile.nodes;
        c.telemetryHz = profile.telemetryHz;
    }
    auto pick = [](const std::string& flag, const std::string& fromProfile) {
        return flag.empty() ? fromProfile : flag;
    };
    c.client.tlsRootCertFile = pick(flags.tlsCa, profile.tlsCa);
    if (!flags.tlsCert.empty() || !flags.tlsKey.empty()) {
        c.client.tlsCertFile = flags.tlsCert;  // a flag pair replaces the profile's pair whole
        c.client.tlsKeyFile = flags.tlsKey;
    } else {
        c.client.tlsCertFile = profile.tlsCert;
        c.client.tlsKeyFile = profile.tlsKey;
    }
    if (c.client.tlsCertFile.empty() != c.client.tlsKeyFile.empty()) {
        return Error{"--tls-cert and --tls-key must be given together"};
    }
    c.client.tlsServerName = pick(flags.tlsServerName, profile.tlsServerName);
    const char* env = std::getenv("RUNPLANE_TOKEN");
    std::string tokenOrigin;  // where the token came from, for an error about it
    if (!flags.tokenFile.empty()) {
        auto t = control::readClientTokenFile(flags.tokenFile, "--token-file");
        if (!t.ok()) {
            return Error{t.error()};
        }
        c.client.bearerToken = *t;
        tokenOrigin = "--token-file " + flags.tokenFile;
    } else if (env && *env) {
        c.client.bearerToken = env;
        if (c.client.bearerToken.size() < 16) {
            return Error{"$RUNPLANE_TOKEN: the token must be at least 16 characters"};
        }
        tokenOrigin = "$RUNPLANE_TOKEN";
    } else if (!profile.tokenFile.empty()) {
        auto t = control::readClientTokenFile(profile.tokenFile, profile.path + ": token_file");
        if (!t.ok()) {
            return Error{t.error()};
        }
        c.client.bearerToken = *t;
        tokenOrigin = profile.path + ": token_file " + profile.tokenFile;
    }
    // gRPC aborts the process on a header value it cannot send (issue 41): say what is wrong
    // and where the token came from instead.
    if (const std::string problem = control::bearerTokenProblem(c.client.bearerToken);
        !problem.empty()) {
        return Error{tokenOrigin + ": " + problem};
    }
    return c;
}

std::string resolveAddress(const std::string& nameOrAddress, const Connection& connection) {
    for (const auto& n : connection.profileNodes) {
        if (!n.name.empty() && n.name == nameOrAddress) {
            return n.address;
        }
    }
    return nameOrAddress;
}

Result<std::vector<std::string>> addressesOrProfile(const std::vector<std::string>& addresses,
                                                    const Connection& connection,
                                                    const std::string& command) {
    std::vector<std::string> out;
    for (const auto& a : addresses) {
        out.push_back(resolveAddress(a, connection));
    }
    for (const auto& n :
         addresses.empty() ? connection.profileNodes : std::vector<control::ClusterNode>{}) {
        out.push_back(n.address);
    }
    if (!out.empty()) {
        return out;
    }
    return Error{"runplanectl " + command +
                 ": give daemon addresses HOST:PORT, or --cluster with a profile listing nodes"};
}

}  // namespace runplane::cli
