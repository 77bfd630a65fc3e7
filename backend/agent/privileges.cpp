#include "backend/agent/privileges.h"

#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace runplane::agent {
namespace {

struct Account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
};

std::optional<Account> lookUp(const std::string& name) {
    std::vector<char> buffer(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwnam_r(name.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr) {
        return std::nullopt;
    }
    return Account{found->pw_name, found->pw_uid, found->pw_gid};
}

std::string currentUserName() {
    std::vector<char> buffer(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(::geteuid(), &pw, buffer.data(), buffer.size(), &found) == 0 && found) {
        return found->pw_name;
    }
    return std::to_string(::geteuid());
}

}  // namespace

Result<PrivilegeOutcome> dropPrivileges(const std::string& user) {
    PrivilegeOutcome out;
    if (::geteuid() != 0) {
        out.user = currentUserName();
        out.uid = ::geteuid();
        out.gid = ::getegid();
        if (!user.empty() && user != out.user) {
            return Error{"--user " + user + ": only root can switch users (running as " + out.user +
                         ")"};
        }
        return out;
    }
    const std::string name = user.empty() ? std::string("runplane") : user;
    const auto account = lookUp(name);
    if (!account) {
        if (user.empty()) {
            out.user = "root";  // no service account: stay, the caller logs a warning
            return out;
        }
        return Error{"--user " + user + ": no such user"};
    }
    if (account->uid == 0) {
        out.user = account->name;
        return out;
    }
    if (::initgroups(account->name.c_str(), account->gid) != 0) {
        return Error{"--user " + name + ": initgroups: " + std::strerror(errno)};
    }
    if (::setresgid(account->gid, account->gid, account->gid) != 0) {
        return Error{"--user " + name + ": setresgid: " + std::strerror(errno)};
    }
    if (::setresuid(account->uid, account->uid, account->uid) != 0) {
        return Error{"--user " + name + ": setresuid: " + std::strerror(errno)};
    }
    // Paranoia: if root can be regained, the drop did not happen.
    if (::setuid(0) == 0 || ::geteuid() == 0) {
        return Error{"--user " + name + ": root privileges could be regained; refusing to run"};
    }
    // A setuid transition clears the dumpable flag; keep /proc/self readable for our own
    // collector (it reads /proc/self/stat) and core dumps under the service user.
    ::prctl(PR_SET_DUMPABLE, 1);
    out.dropped = true;
    out.user = account->name;
    out.uid = account->uid;
    out.gid = account->gid;
    return out;
}

}  // namespace runplane::agent
