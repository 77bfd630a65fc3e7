#include "gui/models/log_tailer.h"

#include <QMetaObject>

#include <filesystem>

#include "backend/control/node_client.h"
#include "db/history/history.h"
#include "gui/models/cluster_connection.h"

namespace runplane::gui {
namespace {

QString storedLog(const std::string& historyPath, const RunId& runId, bool stderrStream) {
    std::error_code ec;
    if (historyPath.empty() || !std::filesystem::exists(historyPath, ec)) {
        return {};
    }
    db::OpenOptions open;
    open.readOnly = true;
    auto history = db::History::open(historyPath, open);
    if (!history) {
        return {};
    }
    auto stored = (*history)->readRunLog(runId, stderrStream ? "stderr" : "stdout");
    if (!stored) {
        return {};
    }
    const std::string shown = stored->shown();  // holes marked where they are
    return QString::fromUtf8(shown.data(), static_cast<qsizetype>(shown.size()));
}

}  // namespace

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
    const std::string historyPath = m_historyPath.toStdString();
    m_thread = std::thread([this, address, runId, stderrStream, generation, current, canceller,
                            options, historyPath] {
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
        // The daemon could not give the log: show what the history stored, if anything.
        auto fallBack = [&](const QString& why) {
            const QString stored = storedLog(historyPath, RunId{runId.toStdString()}, stderrStream);
            if (stored.isEmpty()) {
                post([this, why] { emit ended(why); });
                return;
            }
            post([this, stored] { emit text(stored); });
            const QString note = why + QStringLiteral("; shown: the output stored in the history");
            post([this, note] { emit ended(note); });
        };
        if (address.isEmpty()) {
            fallBack(QStringLiteral("no daemon address known for this node"));
            return;
        }
        auto client = control::NodeClient::create(address.toStdString(), options);
        if (!client) {
            fallBack(QString::fromStdString(client.error()));
            return;
        }
        bool got = false;
        const Status status = (*client)->tailLogs(
            RunId{runId.toStdString()},
            stderrStream ? control::LogStreamKind::Stderr : control::LogStreamKind::Stdout, 0, true,
            [&](const control::LogChunkInfo& chunk) {
                if (!chunk.data.empty()) {
                    const QString t = QString::fromUtf8(chunk.data.data(),
                                                        static_cast<qsizetype>(chunk.data.size()));
                    post([this, t] { emit text(t); });
                    got = true;
                }
                return *current == generation;
            },
            canceller);
        if (!status && !got && *current == generation) {
            fallBack(QString::fromStdString(status.error()));
            return;
        }
        const QString error = status ? QString() : QString::fromStdString(status.error());
        post([this, error] { emit ended(error); });
    });
}

}  // namespace runplane::gui
