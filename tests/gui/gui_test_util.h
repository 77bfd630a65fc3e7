#pragma once
// Small helpers shared by the GUI tests.

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QString>
#include <QThread>

#include <cstdlib>
#include <functional>

namespace runplane::gui::test {

/// Processes events until pred() is true or timeoutMs passed; returns pred().
inline bool waitUntil(const std::function<bool()>& pred, int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (!pred()) {
        if (deadline.hasExpired()) {
            return pred();
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(5);
    }
    return true;
}

/// Processes events for ms milliseconds.
inline void pump(int ms) {
    waitUntil([] { return false; }, ms);
}

inline QString envPath(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? QString::fromLocal8Bit(v) : QString();
}

/// Where a test saves its screenshot NAME: $RUNPLANE_SCREENSHOT_DIR (ctest sets it to the build
/// tree's screenshots/, so a test run never edits the checkout); scripts/refresh-screenshots.sh
/// points it at docs/screenshots to refresh the pictures the docs show.
inline QString screenshotPath(const QString& name) {
    QString dir = envPath("RUNPLANE_SCREENSHOT_DIR");
    if (dir.isEmpty()) {
        dir = QDir::tempPath() + QStringLiteral("/runplane-screenshots");
    }
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + name;
}

}  // namespace runplane::gui::test
