#pragma once
// Small helpers shared by the GUI tests.

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
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

/// The launch preview's command lines that pass `flag` as a word, trimmed (the runplane-meta
/// block is YAML in `#` comments, not the command line).
inline QStringList linesWithFlag(const QString& preview, const QString& flag) {
    QStringList out;
    const QRegularExpression word(QStringLiteral("(^|[\\s\"'])") +
                                  QRegularExpression::escape(flag) + QStringLiteral("(\\s|$)"));
    for (const QString& line : preview.split(QLatin1Char('\n'))) {
        if (!line.trimmed().startsWith(QLatin1Char('#')) && word.match(line).hasMatch()) {
            out << line.trimmed();
        }
    }
    return out;
}

}  // namespace runplane::gui::test
