#include "gui/models/cluster_connection.h"

#include <QDir>
#include <QFileInfo>

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "backend/control/bearer_token.h"

namespace runplane::gui {

namespace {

std::mutex& activeMutex() {
    static std::mutex m;
    return m;
}
control::NodeClientOptions& activeOptions() {
    static control::NodeClientOptions options;
    return options;
}

}  // namespace

QString ClusterConnection::displayName() const {
    const QFileInfo file(QString::fromStdString(profile.path));
    const QString dir = QDir::cleanPath(QString::fromStdString(control::clusterProfileDir()));
    if (QDir::cleanPath(file.absolutePath()) == dir && file.suffix() == QLatin1String("yaml")) {
        return file.completeBaseName();
    }
    return QString::fromStdString(profile.path);
}

Result<control::NodeClientOptions> clientOptionsFor(const control::ClusterProfile& profile) {
    control::NodeClientOptions o;
    o.tlsRootCertFile = profile.tlsCa;
    o.tlsCertFile = profile.tlsCert;
    o.tlsKeyFile = profile.tlsKey;
    o.tlsServerName = profile.tlsServerName;
    if (!profile.tokenFile.empty()) {
        auto token = control::readClientTokenFile(profile.tokenFile, profile.path + ": token_file");
        if (!token.ok()) {
            return Error{token.error()};
        }
        o.bearerToken = *token;
    } else if (const char* env = std::getenv("RUNPLANE_TOKEN"); env != nullptr && *env != 0) {
        o.bearerToken = env;
        if (o.bearerToken.size() < 16) {
            return Error{"$RUNPLANE_TOKEN: the token must be at least 16 characters"};
        }
    }
    if (const std::string problem = control::bearerTokenProblem(o.bearerToken); !problem.empty()) {
        return Error{(profile.tokenFile.empty()
                          ? std::string("$RUNPLANE_TOKEN")
                          : profile.path + ": token_file " + profile.tokenFile) +
                     ": " + problem};
    }
    return o;
}

Result<ClusterConnection> loadClusterConnection(const QString& nameOrFile) {
    auto profile = control::loadClusterProfile(nameOrFile.toStdString());
    if (!profile.ok()) {
        return Error{profile.error()};
    }
    auto options = clientOptionsFor(*profile);
    if (!options.ok()) {
        return Error{options.error()};
    }
    ClusterConnection c;
    c.profile = std::move(*profile);
    c.options = std::move(*options);
    c.telemetryHz = c.profile.telemetryHz;
    return c;
}

std::string clusterProfileYaml(const control::ClusterProfile& p) {
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap;
    out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
    for (const auto& n : p.nodes) {
        out << YAML::BeginMap << YAML::Key << "address" << YAML::Value << YAML::DoubleQuoted
            << n.address;
        if (!n.name.empty()) {
            out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << n.name;
        }
        if (!n.role.empty()) {
            out << YAML::Key << "role" << YAML::Value << YAML::DoubleQuoted << n.role;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (!p.tlsCa.empty() || !p.tlsCert.empty() || !p.tlsKey.empty() || !p.tlsServerName.empty()) {
        out << YAML::Key << "tls" << YAML::Value << YAML::BeginMap;
        for (auto [key, value] : {std::pair{"ca", &p.tlsCa},
                                  {"cert", &p.tlsCert},
                                  {"key", &p.tlsKey},
                                  {"server_name", &p.tlsServerName}}) {
            if (!value->empty()) {
                out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << *value;
            }
        }
        out << YAML::EndMap;
    }
    if (!p.tokenFile.empty()) {
        out << YAML::Key << "token_file" << YAML::Value << YAML::DoubleQuoted << p.tokenFile;
    }
    if (p.telemetryHz > 0) {
        out << YAML::Key << "telemetry_hz" << YAML::Value << p.telemetryHz;
    }
    out << YAML::EndMap;
    return "# runplane cluster profile written by the runplane GUI (Cluster → Add cluster…).\n"
           "# Read by `runplane --cluster` and `runplanectl --cluster` (docs/daemon.md).\n" +
           std::string(out.c_str()) + "\n";
}

Status writeClusterProfile(const QString& path, const control::ClusterProfile& profile,
                           bool replace) {
    namespace fs = std::filesystem;
    const fs::path file = path.toStdString();
    std::error_code ec;
    if (!replace && fs::exists(file, ec)) {
        return Error{file.string() + " exists; not replaced"};
    }
    const fs::path dir = file.parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec) {
            return Error{dir.string() + ": cannot create the folder: " + ec.message()};
        }
        fs::permissions(dir, fs::perms::owner_all, ec);
    }
    const fs::path tmp = file.string() + ".tmp";
    {
        std::ofstream os(tmp, std::ios::trunc);
        os << clusterProfileYaml(profile);
        if (!os.flush()) {
            return Error{tmp.string() + ": cannot write"};
        }
    }
    fs::permissions(tmp,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                        fs::perms::others_read,
                    ec);
    fs::rename(tmp, file, ec);
    if (ec) {
        return Error{file.string() + ": cannot write: " + ec.message()};
    }
    return {};
}

QStringList listClusterProfileNames() {
    QDir dir(QString::fromStdString(control::clusterProfileDir()));
    QStringList names;
    for (const QFileInfo& f :
         dir.entryInfoList({QStringLiteral("*.yaml")}, QDir::Files | QDir::Readable, QDir::Name)) {
        names << f.completeBaseName();
    }
    return names;
}

QString securityText(const control::NodeClientOptions& o, const QString& address) {
    QString text;
    if (o.tlsRootCertFile.empty()) {
        text = control::isLoopbackAddress(address.toStdString())
                   ? QStringLiteral("plaintext (loopback)")
                   : QStringLiteral("plaintext (refused: not loopback)");
    } else {
        text = o.tlsCertFile.empty() ? QStringLiteral("TLS") : QStringLiteral("mTLS");
    }
    if (!o.bearerToken.empty()) {
        text += QStringLiteral(" + token");
    }
    return text;
}

control::NodeClientOptions activeClientOptions() {
    std::lock_guard lock(activeMutex());
    return activeOptions();
}

void setActiveClientOptions(const control::NodeClientOptions& options) {
    std::lock_guard lock(activeMutex());
    activeOptions() = options;
}

}  // namespace runplane::gui
