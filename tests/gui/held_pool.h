#pragma once
// Does a paint hand work to Qt's global thread pool? Qt 6.4's raster engine splits large span
// fills over QThreadPool::globalInstance() and waits for them (gui/widgets/flat_style.h): with
// the pool's only thread held, such a paint cannot finish before the hold ends.

#include <QElapsedTimer>
#include <QImage>
#include <QSemaphore>
#include <QThreadPool>
#include <QWidget>

namespace runplane::gui::test {

/// Milliseconds a render of `widget` takes while the global pool's only thread is held for
/// `holdMs`: about `holdMs` or more when the paint waited on the pool.
inline qint64 renderWhileThePoolIsHeld(QWidget* widget, int holdMs) {
    QThreadPool* pool = QThreadPool::globalInstance();
    const int oldMax = pool->maxThreadCount();
    pool->setMaxThreadCount(1);
    QSemaphore started;
    QSemaphore release;
    pool->start([&] {
        started.release();
        release.tryAcquire(1, holdMs);
    });
    started.acquire();
    QImage image(widget->size(), QImage::Format_ARGB32_Premultiplied);
    QElapsedTimer clock;
    clock.start();
    widget->render(&image);
    const qint64 elapsed = clock.elapsed();
    release.release();
    pool->waitForDone();
    pool->setMaxThreadCount(oldMax);
    return elapsed;
}

}  // namespace runplane::gui::test
