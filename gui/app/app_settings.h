#pragma once
// AppSettings: what the GUI remembers between sessions (QSettings, "Runplane/runplane"):
// recent recipe files, daemon addresses, the chosen cluster profile and profiles opened by path,
// the last history file, window geometry and the
// workspace (MainWindow::saveWorkspace: each page's splitters, tabs, table headers, selections).
// Thread-safety: GUI thread only. Tests call QStandardPaths::setTestModeEnabled(true) first so
// they never touch the user's real settings.

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

class QSettings;

namespace runplane::gui {

class AppSettings {
  public:
    static constexpr int kMaxRecentFiles = 10;

    /// Use this INI file instead of the platform's settings store ("" = back to the default).
    /// For tests, which need a store they can throw away and reopen.
    static void setFileOverride(const QString& path);
    /// The store (the override file when one is set).
    static std::unique_ptr<QSettings> open();

    QStringList recentFiles() const;
    /// Moves `path` to the front (deduplicated, at most kMaxRecentFiles).
    void addRecentFile(const QString& path);
    void removeRecentFile(const QString& path);

    QStringList daemonAddresses() const;
    void setDaemonAddresses(const QStringList& addresses);

    /// The cluster profile in use (NAME or FILE; "" = none), restored at the next start.
    QString currentCluster() const;
    void setCurrentCluster(const QString& nameOrFile);
    /// Profiles outside the clusters folder that were used (paths, newest first, at most 10).
    QStringList clusterFiles() const;
    void addClusterFile(const QString& path);

    QString lastHistoryPath() const;
    void setLastHistoryPath(const QString& path);

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
};

}  // namespace runplane::gui
