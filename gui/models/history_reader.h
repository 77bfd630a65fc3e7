#pragma once
// HistoryReader: the GUI's read access to the run history. One worker thread (SerialWorker)
// that owns one History connection to the file, opened on first use in that thread (WAL lets it
// read while the controller's ingest threads write). Queries are posted with a key; a newer
// query under the same key supersedes the pending one and makes older results stale, so a page
// only ever applies the answer to its latest question.
//
// Ownership: owned by a page (or the report); joins its thread on destruction.
// Thread-safety: call run() from the GUI thread; compute functions run on the worker thread and
// must only use the History they are given.

#include <QObject>
#include <QString>

#include <memory>
#include <type_traits>
#include <utility>

#include "common/result.h"
#include "gui/models/serial_worker.h"

namespace runplane::db {
class History;
}

namespace runplane::gui {

class HistoryReader {
  public:
    explicit HistoryReader(QString path);
    ~HistoryReader();
    HistoryReader(const HistoryReader&) = delete;
    HistoryReader& operator=(const HistoryReader&) = delete;

    const QString& path() const { return m_path; }

    /// Runs compute(History&) -> T on the worker; apply(Result<T>) on context's thread if this is
    /// still the newest query under key. An unopenable history arrives as an error naming the file.
    template <typename Compute, typename Apply>
    std::uint64_t run(const QString& key, QObject* context, Compute compute, Apply apply) {
        using T = std::invoke_result_t<Compute&, db::History&>;
        auto connection = m_connection;
        return m_worker.run(
            key, context,
            [connection, compute = std::move(compute)]() mutable -> Result<T> {
                Result<db::History*> history = connection->get();
                if (!history) {
                    return Error{history.error()};
                }
                return compute(**history);
            },
            std::move(apply));
    }

    /// Drops the connection (next query reopens, e.g. after the file was replaced).
    void reset();
    SerialWorker& worker() { return m_worker; }

    /// The connection, only ever touched on the worker thread.
    class Connection {
      public:
        explicit Connection(std::string path) : m_path(std::move(path)) {}
        ~Connection();
        Result<db::History*> get();
        void close();

      private:
        std::string m_path;
        std::unique_ptr<db::History> m_history;
    };

  private:
    QString m_path;
    std::shared_ptr<Connection> m_connection;
    SerialWorker m_worker;  // last: joined first, before the connection it uses is released
};

}  // namespace runplane::gui
