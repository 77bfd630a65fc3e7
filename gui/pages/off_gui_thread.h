#pragma once
// Blocking work (gRPC calls to every node) off the GUI thread, its result back by value.

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>

#include <thread>
#include <utility>

namespace runplane::gui {

/// Runs `work()` on a thread of its own and queues its result to the application object, where
/// `apply(target, result)` runs on the GUI thread — only if `target` still exists then (the
/// QPointer is read on the GUI thread, where the target is deleted).
template <typename Target, typename Work, typename Apply>
void runOffGuiThread(Target* target, Work work, Apply apply) {
    QPointer<Target> guard(target);
    std::thread([guard, work = std::move(work), apply = std::move(apply)]() mutable {
        auto result = work();
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [guard, apply = std::move(apply), result = std::move(result)]() mutable {
                if (guard) {
                    apply(guard.data(), std::move(result));
                }
            },
            Qt::QueuedConnection);
    }).detach();
}

}  // namespace runplane::gui
