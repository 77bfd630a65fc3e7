#include "backend/agent/metrics_web_config.h"

#include <crypt.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <tuple>

#include "backend/agent/auth.h"
#include "backend/agent/daemon_config.h"
#include "backend/agent/proc_tree.h"
#include "common/credential_file.h"

namespace runplane::agent {
namespace {

std::string where(const std::string& path, const YAML::Node& node) {
    const YAML::Mark m = node.Mark();
    return m.line >= 0
               ? path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)
               : path;
}

Result<std::string> scalar(const std::string& path, const YAML::Node& node,
                           const std::string& key) {
    if (!node.IsScalar()) {
        return Error{where(path, node) + ": " + key + " must be a string"};
    }
    return node.as<std::string>();
}

std::optional<std::string> base64Decode(const std::string& in) {
    if (in.size() % 4 != 0 || in.size() > 4096) {
        return std::nullopt;
    }
    std::string out(in.size() / 4 * 3, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(in.data()),
                                  static_cast<int>(in.size()));
    if (n < 0) {
        return std::nullopt;
    }
    // EVP_DecodeBlock counts the padding as zero bytes; drop them.
    std::size_t len = static_cast<std::size_t>(n);
    for (std::size_t i = in.size(); i > 0 && in[i - 1] == '=' && len > 0; --i) {
        --len;
    }
    out.resize(len);
    return out;
}

std::string sha256(const std::string& text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

}  // namespace

std::string bcryptHashProblem(const std::string& hash) {
    // $2a$ / $2b$ / $2y$, two cost digits, '$', 22 characters of salt and 31 of hash in
    // bcrypt's base64 alphabet: 60 characters in all.
    const auto b64 = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '/';
    };
    const bool prefix = hash.size() >= 7 && hash[0] == '$' && hash[1] == '2' &&
                        (hash[2] == 'a' || hash[2] == 'b' || hash[2] == 'y') && hash[3] == '$' &&
                        hash[4] >= '0' && hash[4] <= '9' && hash[5] >= '0' && hash[5] <= '9' &&
                        hash[6] == '$';
    bool body = hash.size() == 60;
    for (std::size_t i = 7; body && i < hash.size(); ++i) {
        body = b64(hash[i]);
    }
    if (!prefix || !body) {
        return "not a well-formed bcrypt hash ($2y$<cost>$ and 53 characters of [./A-Za-z0-9], "
               "60 in all; make one with `htpasswd -nbBC 10 USER PASSWORD`)";
    }
    const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
    if (cost < kMinBcryptCost || cost > kMaxBcryptCost) {
        return "bcrypt cost " + std::to_string(cost) + " is outside " +
               std::to_string(kMinBcryptCost) + ".." + std::to_string(kMaxBcryptCost) +
               " (each wrong password costs the daemon 2^cost rounds of CPU; cost 31 takes "
               "days per check)";
    }
    return {};
}

bool verifyBcrypt(const std::string& password, const std::string& hash) {
    if (hash.rfind("$2", 0) != 0 || password.size() > 1024) {
        return false;
    }
    auto data = std::make_unique<crypt_data>();
    const char* out = ::crypt_r(password.c_str(), hash.c_str(), data.get());
    return out != nullptr && out[0] != '*' && constantTimeEquals(out, hash);
}

namespace {
Result<MetricsWebConfig> parseMetricsWebConfig(const std::string& path);
}  // namespace

Result<MetricsWebConfig> loadMetricsWebConfig(const std::string& path) {
    // yaml-cpp throws when a node is read as the wrong kind (a sequence where a key's scalar
    // belongs: found by fuzz_credentials); no exception may leave the loader.
    try {
        return parseMetricsWebConfig(path);
    } catch (const YAML::Exception& e) {
        return Error{path + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": " + e.msg};
    }
}

namespace {
Result<MetricsWebConfig> parseMetricsWebConfig(const std::string& path) {
    auto configText = readCredentialFile(path, kConfigFileMaxBytes, "--metrics-web-config");
    if (!configText) {
        return configText.failure();
    }
    YAML::Node root;
    try {
        root = YAML::Load(*configText);
    } catch (const YAML::Exception& e) {
        return Error{path + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": " + e.msg};
    }
    MetricsWebConfig c;
    if (root.IsNull()) {
        return c;
    }
    if (!root.IsMap()) {
        return Error{where(path, root) + ": the web config must be a mapping"};
    }
    for (const auto& entry : root) {
        const std::string key = entry.first.as<std::string>();
        const YAML::Node& value = entry.second;
        if (key == "tls_server_config") {
            if (!value.IsMap()) {
                return Error{where(path, value) + ": tls_server_config must be a mapping"};
            }
            for (const auto& t : value) {
                const std::string tkey = t.first.as<std::string>();
                auto text = scalar(path, t.second, "tls_server_config." + tkey);
                if (!text) {
                    return Error{text.error()};
                }
                if (tkey == "cert_file") {
                    c.certFile = *text;
                } else if (tkey == "key_file") {
                    c.keyFile = *text;
                } else if (tkey == "client_ca_file") {
                    c.clientCaFile = *text;
                } else if (tkey == "min_version") {
                    if (*text != "TLS12" && *text != "TLS13") {
                        return Error{where(path, t.second) +
                                     ": tls_server_config.min_version must be TLS12 or TLS13 "
                                     "(older versions are not served)"};
                    }
                } else {
                    return Error{where(path, t.first) + ": unknown key 'tls_server_config." + tkey +
                                 "' (cert_file, key_file, client_ca_file, min_version)"};
                }
            }
            if (c.certFile.empty() != c.keyFile.empty()) {
                return Error{where(path, value) +
                             ": tls_server_config needs both cert_file and key_file"};
            }
        } else if (key == "basic_auth_users") {
            if (!value.IsMap()) {
                return Error{where(path, value) + ": basic_auth_users must be a mapping"};
            }
            for (const auto& u : value) {
                const std::string user = u.first.as<std::string>();
                auto hash = scalar(path, u.second, "basic_auth_users." + user);
                if (!hash) {
                    return Error{hash.error()};
                }
                if (hash->rfind("$2", 0) != 0) {
                    return Error{where(path, u.second) + ": basic_auth_users." + user +
                                 " must be a bcrypt hash ($2y$...), not a password"};
                }
                if (std::string why = bcryptHashProblem(*hash); !why.empty()) {
                    return Error{where(path, u.second) + ": basic_auth_users." + user + ": " + why};
                }
                c.basicAuthUsers[user] = *hash;
            }
        } else if (key == "bearer_token_file") {
            auto text = scalar(path, value, key);
            if (!text) {
                return Error{text.error()};
            }
            c.bearerTokenFile = *text;
        } else {
            return Error{where(path, entry.first) + ": unknown key '" + key +
                         "' (tls_server_config, basic_auth_users, bearer_token_file)"};
        }
    }
    const std::tuple<const char*, const std::string*, std::string*> files[] = {
        {"tls_server_config.cert_file", &c.certFile, &c.certPem},
        {"tls_server_config.key_file", &c.keyFile, &c.keyPem},
        {"tls_server_config.client_ca_file", &c.clientCaFile, &c.clientCaPem}};
    for (const auto& [key, file, content] : files) {
        if (file->empty()) {
            continue;
        }
        auto pem = readCredentialFile(*file, kPemFileMaxBytes, key);
        if (!pem) {
            return Error{path + ": " + pem.error()};
        }
        *content = std::move(*pem);
    }
    if (!c.bearerTokenFile.empty()) {
        auto token = readTokenFile(c.bearerTokenFile);
        if (!token) {
            return Error{path + ": bearer_token_file: " + token.error()};
        }
        c.bearerToken = std::move(*token);
    }
    return c;
}
}  // namespace

MetricsAuth::MetricsAuth(std::map<std::string, std::string> basicAuthUsers, std::string bearerToken)
    : m_users(std::move(basicAuthUsers)), m_bearer(std::move(bearerToken)) {}

bool MetricsAuth::checkBasic(const std::string& user, const std::string& password) const {
    const auto it = m_users.find(user);
    if (it == m_users.end()) {
        return false;
    }
    const std::string digest = sha256(user + '\0' + password);
    {
        std::lock_guard lock(m_cacheMutex);
        if (m_verified.count(digest) != 0) {
            return true;
        }
    }
    if (!verifyBcrypt(password, it->second)) {
        return false;
    }
    std::lock_guard lock(m_cacheMutex);
    if (m_verified.size() >= 64) {
        m_verified.clear();
    }
    m_verified.insert(digest);
    return true;
}

bool MetricsAuth::allowed(const std::string& header) const {
    if (!required()) {
        return true;
    }
    constexpr std::string_view kBearer = "Bearer ", kBasic = "Basic ";
    if (!m_bearer.empty() && header.rfind(kBearer, 0) == 0) {
        return constantTimeEquals(std::string_view(header).substr(kBearer.size()), m_bearer);
    }
    if (!m_users.empty() && header.rfind(kBasic, 0) == 0) {
        const auto decoded = base64Decode(header.substr(kBasic.size()));
        if (!decoded) {
            return false;
        }
        const auto colon = decoded->find(':');
        if (colon == std::string::npos) {
            return false;
        }
        return checkBasic(decoded->substr(0, colon), decoded->substr(colon + 1));
    }
    return false;
}

}  // namespace runplane::agent
