#pragma once
// Who may scrape /metrics, and over what: the subset of the Prometheus exporter-toolkit web
// configuration (https://prometheus.io/docs/prometheus/latest/configuration/https/) that a
// remote Prometheus server needs, plus a bearer-token file:
//
//   tls_server_config:            # HTTPS (TLS 1.2 or later)
//     cert_file: /etc/runplane/metrics.crt
//     key_file: /etc/runplane/metrics.key
//     client_ca_file: /etc/runplane/ca.pem   # optional: client certificates required
//   basic_auth_users:             # user: bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//     prometheus: $2y$10$...
//   bearer_token_file: /etc/runplane/metrics.token   # Authorization: Bearer <token>
//
// Any other key is an error naming the file, line and key. Off loopback the daemon requires TLS
// and at least one of the three credentials (daemon_options.cpp).
//
// Thread-safety: MetricsAuth::allowed() from any thread.

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/result.h"

namespace runplane::agent {

struct MetricsWebConfig {
    std::string certFile, keyFile, clientCaFile;
    std::map<std::string, std::string> basicAuthUsers;  // user -> bcrypt hash
    std::string bearerTokenFile;
    // The files' contents, read at load time: the daemon may drop root before it serves.
    std::string certPem, keyPem, clientCaPem, bearerToken;
    bool tls() const { return !certFile.empty(); }
    bool authenticates() const {
        return !basicAuthUsers.empty() || !bearerTokenFile.empty() || !clientCaFile.empty();
    }
};

/// Reads and checks a web config file and the files it names (hashes must be bcrypt; the token
/// file's first line, at least 16 characters, is the token).
Result<MetricsWebConfig> loadMetricsWebConfig(const std::string& path);

/// The per-request decision on the Authorization header.
class MetricsAuth {
  public:
    /// `bearerToken` is the token file's content (already read); empty = no bearer auth.
    MetricsAuth(std::map<std::string, std::string> basicAuthUsers, std::string bearerToken);
    /// True when neither basic auth nor a bearer token is configured, or the header carries
    /// valid credentials for one of them.
    bool allowed(const std::string& authorizationHeader) const;
    bool required() const { return !m_users.empty() || !m_bearer.empty(); }

  private:
    bool checkBasic(const std::string& user, const std::string& password) const;

    std::map<std::string, std::string> m_users;
    std::string m_bearer;
    // bcrypt at cost 10 takes ~50 ms; a scrape every 15 s would spend it each time. Remember the
    // digests of credentials that verified (bounded), as exporter-toolkit does.
    mutable std::mutex m_cacheMutex;
    mutable std::set<std::string> m_verified;
};

/// Bounds on a basic_auth_users hash's cost: a check of a wrong password runs bcrypt in full
/// (2^cost rounds, before any authentication), so a high cost is a denial of service by config.
inline constexpr int kMinBcryptCost = 4;
inline constexpr int kMaxBcryptCost = 14;

/// Empty when `hash` is a well-formed bcrypt hash ($2a$/$2b$/$2y$, cost within the bounds,
/// 60 characters); else what is wrong, in a sentence.
std::string bcryptHashProblem(const std::string& hash);

/// Verifies `password` against a crypt(3) hash ($2y$/$2b$ bcrypt). False on any error.
bool verifyBcrypt(const std::string& password, const std::string& hash);

}  // namespace runplane::agent
