#pragma once
// AppSettings: what the GUI remembers between sessions (QSettings, "Runplane/runplane"):
// recent recipe files, daemon addresses, the last history file, window geometry.
// Thread-safety: GUI thread only. Tests call QStandardPaths::setTestModeEnabled(true) first so
// they never touch the user's real settings.

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace runplane::gui {

class AppSettings {
  public:
    static constexpr int kMaxRecentFiles = 10;

    QStringList recentFiles() const;
    /// Moves `path` to the front (deduplicated, at most kMaxRecentFiles).
    void addRecentFile(const QString& path);
    void removeRecentFile(const QString& path);

    QStringList daemonAddresses() const;
    void setDaemonAddresses(const QStringList& addresses);

    QString lastHistoryPath() const;
    void setLastHistoryPath(const QString& path);

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
};

}  // namespace runplane::gui
