#pragma once
// Cluster profiles: one YAML file naming a cluster's daemons and how to reach them securely
// (docs/daemon.md, "Secured cluster in five minutes"). yaml-cpp stays in the .cpp.

#include <string>
#include <vector>

#include "common/result.h"

namespace runplane::control {

struct ClusterNode {
    std::string address;  // HOST:PORT
    std::string name;     // optional display name
    std::string role;     // optional, e.g. "head" or "worker"
};

/// A loaded profile; every path is absolute (relative ones resolved against the profile's folder).
struct ClusterProfile {
    std::string path;
    std::vector<ClusterNode> nodes;
    std::string tlsCa, tlsCert, tlsKey, tlsServerName;
    std::string tokenFile;
    double telemetryHz = 0;  // 0: not set

    std::vector<std::string> addresses() const;
};

/// $XDG_CONFIG_HOME/runplane/clusters (default ~/.config/runplane/clusters).
std::string clusterProfileDir();

/// A --cluster value: a file when it contains '/' or ends in .yaml, else
/// clusterProfileDir()/NAME.yaml.
std::string clusterProfilePath(const std::string& nameOrFile);

/// Loads and validates a profile. Errors name FILE:LINE:COLUMN and the field.
Result<ClusterProfile> loadClusterProfile(const std::string& nameOrFile);

/// Reads a bearer token file (first line, trimmed, at least 16 characters). `origin` names where
/// the path came from (a flag or a profile) in the error; the token itself never appears.
Result<std::string> readClientTokenFile(const std::string& path, const std::string& origin);

}  // namespace runplane::control
