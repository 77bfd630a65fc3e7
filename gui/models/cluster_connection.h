#pragma once
// How the GUI reaches its daemons (issue 18): a cluster profile (backend/control/cluster_profile.h,
// the same YAML files `runplanectl --cluster` reads) turned into NodeClientOptions, the profile
// written back as YAML from the "Add cluster…" dialog, the words for a node's transport security,
// and the process-wide "active" options that every GUI part talking to a daemon uses (Cluster
// page, Runs → Log tailer).
//
// Thread-safety: activeClientOptions/setActiveClientOptions are guarded by a mutex (the log
// tailer reads them on its own thread); the rest are plain functions.

#include <QString>
#include <QStringList>

#include "backend/control/cluster_profile.h"
#include "backend/control/node_client.h"
#include "common/result.h"

namespace runplane::gui {

/// A profile made ready to connect with: its options (token read from its token_file, else
/// $RUNPLANE_TOKEN) and its default telemetry rate.
struct ClusterConnection {
    control::ClusterProfile profile;
    control::NodeClientOptions options;
    double telemetryHz = 0;  // 0: the daemon's default
    /// "lab" for ~/.config/runplane/clusters/lab.yaml, else the file's path.
    QString displayName() const;
};

/// Loads NAME or FILE (as `runplanectl --cluster`) and reads its token. Errors name the file,
/// line and field (loadClusterProfile) or the token file; the token never appears in them.
Result<ClusterConnection> loadClusterConnection(const QString& nameOrFile);
/// The options of an already loaded profile (reads the token file).
Result<control::NodeClientOptions> clientOptionsFor(const control::ClusterProfile& profile);

/// The profile as YAML that loadClusterProfile reads back to the same values (paths written as
/// given; the token itself is never written, only token_file).
std::string clusterProfileYaml(const control::ClusterProfile& profile);
/// Writes clusterProfileYaml to `path` (0644; the folder is created 0700). Refuses to replace an
/// existing file unless `replace`.
Status writeClusterProfile(const QString& path, const control::ClusterProfile& profile,
                           bool replace);

/// The profiles in clusterProfileDir(), as names (lab for lab.yaml), sorted.
QStringList listClusterProfileNames();

/// A node's transport security in words: "plaintext (loopback)", "plaintext (refused: not
/// loopback)", "TLS", "mTLS", each with " + token" when a bearer token is sent.
QString securityText(const control::NodeClientOptions& options, const QString& address);

/// The options the GUI's daemon connections use now (default: plaintext, loopback only).
control::NodeClientOptions activeClientOptions();
void setActiveClientOptions(const control::NodeClientOptions& options);

}  // namespace runplane::gui
