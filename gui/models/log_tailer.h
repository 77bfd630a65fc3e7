#pragma once
// LogTailer: follows one run's captured stdout or stderr on its node through runplane_control's
// NodeClient::tailLogs, on a thread of its own, and hands the text to the GUI thread in chunks
// (queued calls). start() of another run or stop() cancels the stream; chunks of an old stream
// that are still queued are dropped by generation number.
//
// When the daemon cannot answer (gone, unreachable, or the node's address is unknown), the text
// the controller stored in the history while the run streamed is shown instead, and ended() says
// so (run_log_recorder.h).
//
// Ownership: owns its thread; the destructor cancels and joins (bounded by one RPC round trip).
// Thread-safety: a QObject of the GUI thread; call start/stop from there.

#include <QObject>
#include <QString>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace runplane::control {
class StreamCanceller;
}

namespace runplane::gui {

class LogTailer : public QObject {
    Q_OBJECT
  public:
    explicit LogTailer(QObject* parent = nullptr);
    ~LogTailer() override;

    /// Streams runId's log from the daemon at address from the beginning, following it, with
    /// activeClientOptions() (the chosen cluster's TLS and token; cluster_connection.h).
    /// An empty address skips the daemon and reads the history only.
    void start(const QString& address, const QString& runId, bool stderrStream);
    void stop();
    /// The history the fallback reads (empty: no fallback).
    void setHistoryPath(const QString& path) { m_historyPath = path; }
    bool isRunning() const { return m_thread.joinable(); }

  signals:
    void text(const QString& chunk);
    /// The stream ended: at the end of a finished run's log (error empty) or with an error.
    void ended(const QString& error);

  private:
    QString m_historyPath;
    std::thread m_thread;
    std::unique_ptr<control::StreamCanceller> m_canceller;
    std::shared_ptr<std::atomic<std::uint64_t>> m_generation;
};

}  // namespace runplane::gui
