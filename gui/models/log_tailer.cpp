#include "gui/models/log_tailer.h"

#include <QMetaObject>

#include "backend/control/node_client.h"
#include "gui/models/cluster_connection.h"

namespace runplane::gui {

LogTailer::LogTailer(QObject* parent)
    : QObject(parent),
      m_canceller(std::make_unique<control::StreamCanceller>()),
      m_generation(std::make_shared<std::atomic<std::uint64_t>>(0)) {}

LogTailer::~LogTailer() {
    stop();
}

void LogTailer::stop() {
    ++*m_generation;
    if (m_thread.joinable()) {
        m_canceller->cancel();
        m_thread.join();
    }
}

void LogTailer::start(const QString& address, const QString& runId, bool stderrStream) {
    stop();
    m_canceller->reset();
    const std::uint64_t generation = ++*m_generation;
    auto current = m_generation;
    control::StreamCanceller* canceller = m_canceller.get();
    // The active cluster's TLS and token settings (plaintext loopback when none is chosen).
    const control::NodeClientOptions options = activeClientOptions();
    m_thread = std::thread([this, address, runId, stderrStream, generation, current, canceller,
                            options] {
        auto post = [&](auto fn) {
            QMetaObject::invokeMethod(
                this,
                [current, generation, fn = std::move(fn)]() mutable {
                    if (*current == generation) {
                        fn();
                    }
                },
                Qt::QueuedConnection);
        };
        auto client = control::NodeClient::create(address.toStdString(), options);
        if (!client) {
            const QString error = QString::fromStdString(client.error());
            post([this, error] { emit ended(error); });
            return;
        }
        const Status status = (*client)->tailLogs(
            runId.toStdString(),
            stderrStream ? control::LogStreamKind::Stderr : control::LogStreamKind::Stdout, 0, true,
            [&](const control::LogChunkInfo& chunk) {
                if (!chunk.data.empty()) {
                    const QString t = QString::fromUtf8(chunk.data.data(),
                                                        static_cast<qsizetype>(chunk.data.size()));
                    post([this, t] { emit text(t); });
                }
                return *current == generation;
            },
            canceller);
        const QString error = status ? QString() : QString::fromStdString(status.error());
        post([this, error] { emit ended(error); });
    });
}

}  // namespace runplane::gui
