#include "gui/models/history_reader.h"

#include "common/thread_role.h"
#include "db/history/history.h"

namespace runplane::gui {

HistoryReader::HistoryReader(QString path)
    : m_path(std::move(path)), m_connection(std::make_shared<Connection>(m_path.toStdString())) {
    // Named so that per-thread CPU (top -H, /proc/PID/task) tells the GUI's history reads from
    // the rest (docs/performance.md "Load"), and below the GUI thread where the process asked
    // for it (common/thread_role.h); it starts no threads that would inherit either.
    m_worker.post(QStringLiteral("__name"), [] { threads::enterBackground("history-reader"); });
}

HistoryReader::~HistoryReader() {
    // The worker's destructor (a member declared last, destroyed first) joins the thread; the
    // connection is then released here on the GUI thread, which no longer races with it.
}

void HistoryReader::reset() {
    auto connection = m_connection;
    m_worker.post(QStringLiteral("__reset"), [connection] { connection->close(); });
}

HistoryReader::Connection::~Connection() = default;

Result<db::History*> HistoryReader::Connection::get() {
    if (!m_history) {
        auto opened = db::History::open(m_path);
        if (!opened) {
            return Error{opened.error()};
        }
        m_history = std::move(*opened);
    }
    return m_history.get();
}

void HistoryReader::Connection::close() {
    m_history.reset();
}

}  // namespace runplane::gui
