#include "backend/control/preflight_clients.h"

#include <sys/stat.h>

#include <chrono>
#include <map>
#include <mutex>

namespace runplane::control {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdleLimit = std::chrono::seconds(60);

struct Pooled {
    std::shared_ptr<NodeClient> client;
    Clock::time_point lastUsed;
};

std::mutex& poolMutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, Pooled>& pool() {
    static auto* p = new std::map<std::string, Pooled>();  // never destroyed: no exit-order race
    return *p;
}

// A file's identity for the key: a rotated certificate or key is a new client.
std::string fileStamp(const std::string& path) {
    if (path.empty()) {
        return {};
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return path + "|missing";
    }
    return path + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + "|" + std::to_string(st.st_ino);
}

std::string keyOf(const std::string& address, const NodeClientOptions& o) {
    std::string key;
    for (const std::string& part :
         {address, o.bearerToken, fileStamp(o.tlsRootCertFile), fileStamp(o.tlsCertFile),
          fileStamp(o.tlsKeyFile), o.tlsServerName, o.consumer,
          std::to_string(o.callTimeout.count())}) {
        key += std::to_string(part.size()) + ":" + part;  // length-prefixed: no ambiguity
    }
    return key;
}

}  // namespace

Result<std::shared_ptr<NodeClient>> pooledNodeClient(const std::string& address,
                                                     const NodeClientOptions& options,
                                                     bool* reused) {
    if (reused != nullptr) {
        *reused = false;
    }
    const std::string key = keyOf(address, options);
    const auto now = Clock::now();
    {
        std::lock_guard lock(poolMutex());
        auto& p = pool();
        for (auto it = p.begin(); it != p.end();) {
            it = now - it->second.lastUsed > kIdleLimit ? p.erase(it) : std::next(it);
        }
        if (auto it = p.find(key); it != p.end()) {
            it->second.lastUsed = now;
            if (reused != nullptr) {
                *reused = true;
            }
            return it->second.client;
        }
    }
    auto created = NodeClient::create(address, options);  // outside the lock: reads TLS files
    if (!created) {
        return created;
    }
    std::lock_guard lock(poolMutex());
    auto& p = pool();
    if (p.size() >= kMaxPooledClients) {
        auto oldest = p.begin();
        for (auto it = p.begin(); it != p.end(); ++it) {
            if (it->second.lastUsed < oldest->second.lastUsed) {
                oldest = it;
            }
        }
        p.erase(oldest);
    }
    auto [it, inserted] = p.try_emplace(key, Pooled{*created, now});
    return it->second.client;  // a concurrent caller's, when it got there first
}

void dropPooledNodeClient(const std::string& address, const NodeClientOptions& options) {
    const std::string key = keyOf(address, options);
    std::shared_ptr<NodeClient> dropped;  // destroyed outside the lock
    std::lock_guard lock(poolMutex());
    if (auto it = pool().find(key); it != pool().end()) {
        dropped = std::move(it->second.client);
        pool().erase(it);
    }
}

std::size_t pooledNodeClientCount() {
    std::lock_guard lock(poolMutex());
    return pool().size();
}

}  // namespace runplane::control
