#include "gui/app/app_settings.h"

#include <QSettings>

namespace runplane::gui {

namespace {
QString& overridePath() {
    static QString path;
    return path;
}
std::unique_ptr<QSettings> settings() {
    return AppSettings::open();
}
const QString kRecent = QStringLiteral("design/recentFiles");
const QString kDaemons = QStringLiteral("cluster/daemonAddresses");
const QString kCluster = QStringLiteral("cluster/current");
const QString kClusterFiles = QStringLiteral("cluster/profileFiles");
const QString kHistory = QStringLiteral("history/lastPath");
const QString kGeometry = QStringLiteral("window/geometry");
}  // namespace

void AppSettings::setFileOverride(const QString& path) {
    overridePath() = path;
}

std::unique_ptr<QSettings> AppSettings::open() {
    if (!overridePath().isEmpty()) {
        return std::make_unique<QSettings>(overridePath(), QSettings::IniFormat);
    }
    return std::make_unique<QSettings>(QStringLiteral("Runplane"), QStringLiteral("runplane"));
}

QStringList AppSettings::recentFiles() const {
    return settings()->value(kRecent).toStringList();
}

void AppSettings::addRecentFile(const QString& path) {
    QStringList files = recentFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles) {
        files.removeLast();
    }
    settings()->setValue(kRecent, files);
}

void AppSettings::removeRecentFile(const QString& path) {
    QStringList files = recentFiles();
    files.removeAll(path);
    settings()->setValue(kRecent, files);
}

QStringList AppSettings::daemonAddresses() const {
    return settings()->value(kDaemons).toStringList();
}

void AppSettings::setDaemonAddresses(const QStringList& addresses) {
    settings()->setValue(kDaemons, addresses);
}

QString AppSettings::currentCluster() const {
    return settings()->value(kCluster).toString();
}

void AppSettings::setCurrentCluster(const QString& nameOrFile) {
    settings()->setValue(kCluster, nameOrFile);
}

QStringList AppSettings::clusterFiles() const {
    return settings()->value(kClusterFiles).toStringList();
}

void AppSettings::addClusterFile(const QString& path) {
    QStringList files = clusterFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles) {
        files.removeLast();
    }
    settings()->setValue(kClusterFiles, files);
}

QString AppSettings::lastHistoryPath() const {
    return settings()->value(kHistory).toString();
}

void AppSettings::setLastHistoryPath(const QString& path) {
    settings()->setValue(kHistory, path);
}

QByteArray AppSettings::windowGeometry() const {
    return settings()->value(kGeometry).toByteArray();
}

void AppSettings::setWindowGeometry(const QByteArray& geometry) {
    settings()->setValue(kGeometry, geometry);
}

}  // namespace runplane::gui
