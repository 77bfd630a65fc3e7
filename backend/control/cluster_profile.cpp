#include "backend/control/cluster_profile.h"

#include "common/credential_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace runplane::control {

namespace {

namespace fs = std::filesystem;

std::string where(const std::string& file, const YAML::Mark& mark) {
    // yaml-cpp counts from 0; editors count from 1.
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Error fieldError(const std::string& file, const YAML::Node& node, const std::string& field,
                 const std::string& what) {
    return Error{where(file, node.Mark()) + ": " + field + ": " + what};
}

Status checkKeys(const std::string& file, const YAML::Node& map, const std::string& context,
                 const std::set<std::string>& allowed) {
    for (const auto& item : map) {
        const std::string key = item.first.Scalar();
        if (!allowed.count(key)) {
            std::string list;
            for (const auto& a : allowed) {
                list += (list.empty() ? "" : ", ") + a;
            }
            return fieldError(file, item.first, context + key,
                              "unknown key (expected " + list + ")");
        }
    }
    return {};
}

Result<std::string> scalar(const std::string& file, const YAML::Node& node,
                           const std::string& field) {
    if (!node.IsScalar() || node.Scalar().empty()) {
        return fieldError(file, node, field, "must be a non-empty string");
    }
    return node.Scalar();
}

std::string resolve(const fs::path& base, const std::string& path) {
    if (path.empty()) {
        return path;
    }
    fs::path p = path;
    if (path.rfind("~/", 0) == 0 && std::getenv("HOME")) {
        p = fs::path(std::getenv("HOME")) / path.substr(2);
    }
    return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

}  // namespace

std::vector<std::string> ClusterProfile::addresses() const {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
        out.push_back(n.address);
    }
    return out;
}

std::string clusterProfileDir() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg && fs::path(xdg).is_absolute()) {
        return (fs::path(xdg) / "runplane" / "clusters").string();
    }
    const char* home = std::getenv("HOME");
    return (fs::path(home && *home ? home : ".") / ".config" / "runplane" / "clusters").string();
}

std::string clusterProfilePath(const std::string& nameOrFile) {
    const bool isFile =
        nameOrFile.find('/') != std::string::npos ||
        (nameOrFile.size() > 5 && nameOrFile.compare(nameOrFile.size() - 5, 5, ".yaml") == 0);
    return isFile ? nameOrFile : (fs::path(clusterProfileDir()) / (nameOrFile + ".yaml")).string();
}

Result<ClusterProfile> loadClusterProfile(const std::string& nameOrFile) {
    const std::string file = clusterProfilePath(nameOrFile);
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        return Error{"--cluster " + nameOrFile + ": no profile at " + file};
    }
    // Regular files only, at most 1 MiB, never blocking on a FIFO (common/credential_file.h).
    auto text = readCredentialFile(file, kConfigFileMaxBytes, "--cluster profile");
    if (!text) {
        return text.failure();
    }
    YAML::Node root;
    try {
        root = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
        return Error{where(file, e.mark) + ": " + e.msg};
    }
    ClusterProfile p;
    p.path = fs::absolute(file).lexically_normal().string();
    const fs::path base = fs::path(p.path).parent_path();
    try {
        if (!root.IsMap()) {
            return fieldError(file, root, "profile", "must be a mapping with nodes:, tls:, ...");
        }
        if (auto s = checkKeys(file, root, "", {"nodes", "tls", "token_file", "telemetry_hz"});
            !s.ok()) {
            return Error{s.error()};
        }
        const YAML::Node nodes = root["nodes"];
        if (nodes && !nodes.IsSequence()) {
            return fieldError(file, nodes, "nodes", "must be a list of {address, name, role}");
        }
        std::set<std::string> seen;
        for (std::size_t i = 0; nodes && i < nodes.size(); ++i) {
            const YAML::Node n = nodes[i];
            const std::string field = "nodes[" + std::to_string(i) + "]";
            ClusterNode node;
            if (n.IsScalar()) {
                node.address = n.Scalar();
            } else if (n.IsMap()) {
                if (auto s = checkKeys(file, n, field + ".", {"address", "name", "role"});
                    !s.ok()) {
                    return Error{s.error()};
                }
                if (!n["address"]) {
                    return fieldError(file, n, field + ".address", "missing");
                }
                auto a = scalar(file, n["address"], field + ".address");
                if (!a.ok()) {
                    return Error{a.error()};
                }
                node.address = *a;
                for (auto [key, out] : {std::pair{"name", &node.name}, {"role", &node.role}}) {
                    if (n[key]) {
                        auto v = scalar(file, n[key], field + "." + key);
                        if (!v.ok()) {
                            return Error{v.error()};
                        }
                        *out = *v;
                    }
                }
            } else {
                return fieldError(file, n, field, "must be HOST:PORT or {address, name, role}");
            }
            const auto colon = node.address.rfind(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == node.address.size()) {
                return fieldError(file, n.IsMap() ? n["address"] : n, field + ".address",
                                  "'" + node.address + "' is not HOST:PORT");
            }
            if (!seen.insert(node.address).second) {
                return fieldError(file, n, field + ".address", node.address + " is listed twice");
            }
            p.nodes.push_back(node);
        }
        if (const YAML::Node tls = root["tls"]) {
            if (!tls.IsMap()) {
                return fieldError(file, tls, "tls",
                                  "must be a mapping {ca, cert, key, server_name}");
            }
            if (auto s = checkKeys(file, tls, "tls.", {"ca", "cert", "key", "server_name"});
                !s.ok()) {
                return Error{s.error()};
            }
            for (auto [key, out] : {std::pair{"ca", &p.tlsCa},
                                    {"cert", &p.tlsCert},
                                    {"key", &p.tlsKey},
                                    {"server_name", &p.tlsServerName}}) {
                if (tls[key]) {
                    auto v = scalar(file, tls[key], std::string("tls.") + key);
                    if (!v.ok()) {
                        return Error{v.error()};
                    }
                    *out = std::string(key) == "server_name" ? *v : resolve(base, *v);
                }
            }
            if (p.tlsCert.empty() != p.tlsKey.empty()) {
                return fieldError(file, tls, "tls", "cert and key must be given together");
            }
        }
        if (const YAML::Node t = root["token_file"]) {
            auto v = scalar(file, t, "token_file");
            if (!v.ok()) {
                return Error{v.error()};
            }
            p.tokenFile = resolve(base, *v);
        }
        if (const YAML::Node hz = root["telemetry_hz"]) {
            double value = 0;
            if (!hz.IsScalar() || !YAML::convert<double>::decode(hz, value) || !(value > 0) ||
                value > 10) {
                return fieldError(file, hz, "telemetry_hz", "must be a number in (0, 10]");
            }
            p.telemetryHz = value;
        }
    } catch (const YAML::Exception& e) {
        return Error{where(file, e.mark) + ": " + e.msg};
    }
    return p;
}

Result<std::string> readClientTokenFile(const std::string& path, const std::string& origin) {
    auto text = readCredentialFile(path, kTokenFileMaxBytes, origin);
    if (!text) {
        return Error{text.error() + " (the token file)"};
    }
    std::string token = text->substr(0, text->find('\n'));
    const auto first = token.find_first_not_of(" \t");
    const auto last = token.find_last_not_of(" \t\r");
    token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
    if (token.size() < 16) {
        return Error{origin + " " + path + ": the token must be at least 16 characters"};
    }
    return token;
}

}  // namespace runplane::control
