#pragma once
// Small helpers shared by the GUI tests.

#include <QCoreApplication>
#include <QDeadlineTimer>
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

}  // namespace runplane::gui::test
