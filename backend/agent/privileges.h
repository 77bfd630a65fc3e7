#pragma once
// Dropping root. Started as root (a bundle or systemd unit without User=), runplaned reads its
// credentials first and then becomes the service user (--user, default "runplane" when that
// account exists), so nothing a run or a request reaches holds root (docs/security.md).

#include <string>

#include "common/result.h"

namespace runplane::agent {

/// What dropPrivileges did, for the start-up log line.
struct PrivilegeOutcome {
    bool dropped = false;
    std::string user;  // the user the daemon runs as afterwards
    unsigned uid = 0, gid = 0;
};

/// As root: switch to `user` (supplementary groups, gid, uid; then checks that root cannot be
/// regained). `user` empty and not root: nothing to do. `user` empty as root: use "runplane" if it
/// exists, else stay root and say so. Not root with a different `user`: an error naming --user.
Result<PrivilegeOutcome> dropPrivileges(const std::string& user);

}  // namespace runplane::agent
