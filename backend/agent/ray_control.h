#pragma once
// Ray bring-up on this node, as the frameworks do it by hand (domain.md, frameworks.md §4.3):
// `ray start --head ...` on the head, `ray start --address=HEAD:PORT ...` on workers,
// `ray status` for the cluster's GPU total, `ray stop [--force]`. argv only, never a shell.
// Each call blocks until the command ends (timeouts: start/stop 120 s, status 30 s).

#include <string>
#include <vector>

#include "common/result.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// The argv RayStart runs for a request; errors name the field (e.g. "head_address: ...").
Result<std::vector<std::string>> rayStartArgv(const v1::RayStartRequest& request);
Result<v1::RayCommandResult> rayStart(const v1::RayStartRequest& request);
v1::RayClusterStatus rayStatus();
v1::RayCommandResult rayStop(const v1::RayStopRequest& request);

/// Parses `ray status` output: GPU total from the "a/b GPU" usage line, alive nodes from the
/// "Active:" section. Exposed for tests.
void parseRayStatus(const std::string& text, v1::RayClusterStatus* out);

/// The raylets on this host as their command lines say (`--gcs-address`, `--node_ip_address`,
/// `--cluster-id`, with either dash or underscore spellings): which Ray cluster this node really
/// joined. Appended to out's local_raylets (at most 64). Exposed for tests.
void readLocalRaylets(const std::string& procRoot, v1::RayClusterStatus* out);
v1::RayletInfo parseRayletArgs(const std::vector<std::string>& args);

}  // namespace runplane::agent
