#include "db/history/history.h"
#include "db/history/chunks.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/redact.h"
#include "db/history/history_impl.h"
#include "db/history/schema.h"

namespace runplane::db {

namespace {

std::string nodesToJson(const std::vector<std::string>& nodes) {
    return nlohmann::json(nodes).dump();
}

std::vector<std::string> nodesFromJson(const std::string& text) {
    auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    std::vector<std::string> nodes;
    if (parsed.is_array()) {
        for (const auto& item : parsed) {
            if (item.is_string()) {
                nodes.push_back(item.get<std::string>());
            }
        }
    }
    return nodes;
}

constexpr const char* kRunColumns =
    "id, name, recipe_yaml, provenance_json, status, started_ns, ended_ns, nodes_json, message, "
    "pinned";

RunRecord readRun(const sqlite::Statement& stmt) {
    RunRecord run;
    run.id = RunId{stmt.columnText(0)};
    run.name = stmt.columnText(1);
    run.recipeYaml = stmt.columnText(2);
    run.provenanceJson = stmt.columnText(3);
    run.state = runStateFromString(stmt.columnText(4)).value_or(RunState::DaemonLost);
    run.startedNs = stmt.columnInt(5);
    run.endedNs = stmt.columnInt(6);
    run.nodes = nodesFromJson(stmt.columnText(7));
    run.message = stmt.columnText(8);
    run.pinned = stmt.columnInt(9) != 0;
    return run;
}

// Creates the missing directories above the file 0700 (existing ones are left as they are:
// the history may live in the user's working directory).
Status createPrivateDirectories(const std::string& file) {
    const auto parent = std::filesystem::path(file).parent_path();
    if (parent.empty()) {
        return {};
    }
    std::filesystem::path prefix;
    for (const auto& part : parent) {
        prefix /= part;
        if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
            return Error{file + ": cannot create directory " + prefix.string() + ": " +
                         std::strerror(errno)};
        }
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec)) {
        return Error{file + ": " + parent.string() + " is not a directory"};
    }
    return {};
}

}  // namespace

std::string seriesKey(const std::string& nodeId, const std::string& runId,
                      const std::string& name) {
    std::string key;
    key.reserve(nodeId.size() + runId.size() + name.size() + 2);
    key.append(nodeId).push_back('\0');
    key.append(runId).push_back('\0');
    key.append(name);
    return key;
}

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

History::History(std::unique_ptr<sqlite::Database> db, std::string path)
    : m_impl(std::make_unique<Impl>()), m_path(std::move(path)) {
    m_impl->db = std::move(db);
}

History::~History() {
    if (m_impl && m_impl->db) {
        // A clean close leaves no staged rows of this connection behind; if it fails they stay
        // as orphans (still read exactly once, adopted by the next History alone on the file).
        std::lock_guard lock(m_mutex);
        (void)m_impl->sealAll();
    }
    const int fd = m_impl ? m_impl->lockFd : -1;
    m_impl.reset();  // the connection closes before the lock goes
    if (fd >= 0) {
        ::close(fd);
    }
}

Status History::sealHeads() {
    std::lock_guard lock(m_mutex);
    return m_impl->sealAll();
}

namespace {

// The lock file beside the history (PATH-lock, 0600): every read-write History holds a shared
// flock on it for its life; one that gets the exclusive lock is alone on the file. Not the
// database file itself: closing any descriptor of that file drops the POSIX locks SQLite's
// other connections of this process hold on it (docs/history.md, "Chunks").
Result<int> openLockFile(const std::string& path) {
    const std::string lockPath = path + "-lock";
    const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        return Error{lockPath + ": cannot open the history's lock file: " + std::strerror(errno)};
    }
    return fd;
}

int flockRetrying(int fd, int operation) {
    int rc = 0;
    do {
        rc = ::flock(fd, operation);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

// Takes the shared flock of a read-write History, waiting while another holds it exclusively
// (one adopting staged rows, or any process that took it): every 5 s the wait is said on stderr
// with who holds the lock (issue 41: a writer never waits silently).
int flockSharedSaying(int fd, const std::string& path) {
    const auto start = std::chrono::steady_clock::now();
    auto nextNote = start + std::chrono::seconds(2);
    while (true) {
        if (flockRetrying(fd, LOCK_SH | LOCK_NB) == 0) {
            return 0;
        }
        if (errno != EWOULDBLOCK) {
            return -1;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= nextNote) {
            nextNote = now + std::chrono::seconds(5);
            std::string holders;
            for (const std::string& h : historyLockHolders(path)) {
                holders += (holders.empty() ? "" : "; ") + h;
            }
            std::fprintf(
                stderr,
                "runplane history: %s: waiting %lld s for %s-lock, held exclusively by %s\n",
                path.c_str(),
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::seconds>(now - start).count()),
                path.c_str(),
                holders.empty() ? "another process (not found in /proc/locks)" : holders.c_str());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

}  // namespace

Result<std::unique_ptr<History>> History::open(const std::string& path, OpenOptions options) {
    auto opened = openFile(path, options);
    if (opened.ok() || path.empty()) {
        return opened;
    }
    // Say what is wrong with the file, where, and what to do (issue 41), not only SQLite's
    // "unable to open database file".
    const std::string& error = opened.error();
    if (saysHistoryDamaged(error)) {
        return Error{path + ": the history is damaged (" + error +
                         "). Keep it for inspection; `sqlite3 " + path +
                         " .recover` salvages what is readable, or move it aside and start a "
                         "new history",
                     opened.code()};
    }
    const bool cannotOpen = error.find("unable to open database file") != std::string::npos ||
                            error.find("readonly database") != std::string::npos ||
                            error.find("cannot open the history's lock file") != std::string::npos;
    if (const std::string problem = cannotOpen ? historyWriteProblem(path) : std::string();
        !problem.empty()) {
        return Error{
            options.readOnly
                ? path + ": cannot read the history: " + problem + ", and SQLite must create " +
                      path + "-shm beside a WAL-mode history to read it. Copy " + path + " (and " +
                      path + "-wal if present) to a writable folder and pass the copy to --history"
                : path + ": the history is read-only: " + problem + ". runplane writes to " + path +
                      " and creates " + path + "-wal, " + path + "-shm and " + path +
                      "-lock beside it: make them writable (remount, chmod u+w), or pass "
                      "--history a file in a writable folder (a copy of this one)",
            opened.code()};
    }
    return opened;
}

Result<std::unique_ptr<History>> History::openFile(const std::string& path, OpenOptions options) {
    if (path.empty()) {
        return Error{"history: no file given"};
    }
    std::error_code ec;
    if (options.readOnly && !std::filesystem::exists(path, ec)) {
        return Error{path + ": no such history file"};
    }
    if (!options.readOnly) {
        if (Status s = createPrivateDirectories(path); !s.ok()) {
            return Error{s.error()};
        }
    }
    // Open without switching the journal mode: nothing is written before the file has been
    // recognised as a (current or older) Runplane history.
    registerSamplesView();  // `samples` in SQL reads the chunks (this and later connections)
    sqlite::Database::Options dbOptions;
    dbOptions.readOnly = options.readOnly;
    dbOptions.wal = false;
    dbOptions.busyTimeoutMs = options.busyTimeoutMs;
    dbOptions.ownerOnly = true;  // run provenance is private (docs/security.md)
    auto db = sqlite::Database::open(path, dbOptions);
    if (!db.ok()) {
        return Error{db.error()};
    }
    // SQLite opens a file it may not write read-only without a word; a writer must know now.
    if (!options.readOnly && sqlite3_db_readonly((*db)->handle(), "main") == 1) {
        const std::string problem = historyWriteProblem(path);
        return Error{path + ": the history is read-only: " +
                     (problem.empty() ? std::string("SQLite opened it read-only") : problem) +
                     ". runplane writes to " + path + " and creates " + path + "-wal, " + path +
                     "-shm and " + path +
                     "-lock beside it: make them writable (remount, chmod u+w), or pass "
                     "--history a file in a writable folder (a copy of this one)"};
    }
    // Said once: after the first open the mode is 0600 and there is nothing more to say.
    for (const std::string& note : (*db)->permissionNotes()) {
        std::fprintf(stderr, "runplane history: %s\n", note.c_str());
    }
    if (!options.readOnly) {
        // A brand-new file reclaims the pages that retention frees (docs/history.md);
        // auto_vacuum can only be chosen before the first table exists, and an existing file
        // must not be touched before it is recognised.
        auto tables = (*db)->prepare("SELECT count(*) FROM sqlite_master;");
        if (!tables.ok()) {
            return Error{tables.error()};
        }
        auto row = tables->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        const bool empty = tables->columnInt(0) == 0;
        tables = sqlite::Statement();  // no read transaction may stay open
        if (empty) {
            if (Status s = (*db)->exec("PRAGMA auto_vacuum=INCREMENTAL;"); !s.ok()) {
                return Error{s.error()};
            }
        }
    }
    auto version = applyMigrations(**db, migrations(), options.readOnly);
    if (!version.ok()) {
        return Error{version.error()};
    }
    // Reads map the file's first 256 MiB instead of copying each page through pread (~15 % of
    // a 1 M-point read); writes still go through the WAL. Mapped pages that are touched count
    // as the process' file-backed RSS.
    if (Status s = (*db)->exec("PRAGMA mmap_size=268435456;"); !s.ok()) {
        return Error{s.error()};
    }
    if (!options.readOnly) {
        // Switching a new file to WAL needs an exclusive lock, and SQLite answers "database is
        // locked" at once (no busy handler) while another connection is opening the same new
        // file; retry within the busy timeout. Once the file is WAL the switch is a no-op.
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::milliseconds(std::max(options.busyTimeoutMs, 0));
        for (int attempt = 0;; ++attempt) {
            Status s = (*db)->exec(options.durableCommits
                                       ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                       : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
            if (s.ok()) {
                break;
            }
            if (s.code() != ErrorCode::Busy || std::chrono::steady_clock::now() >= deadline) {
                return s.failure();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 * (attempt + 1), 50)));
        }
    }
    if (!options.readOnly && options.walAutoCheckpointPages >= 0) {
        const std::string pragma =
            "PRAGMA wal_autocheckpoint=" + std::to_string(options.walAutoCheckpointPages) + ";";
        if (Status s = (*db)->exec(pragma); !s.ok()) {
            return s.failure();
        }
    }
    auto history = std::unique_ptr<History>(new History(std::move(*db), path));
    if (!options.readOnly) {
        auto fd = openLockFile(path);
        if (!fd.ok()) {
            return Error{fd.error()};
        }
        history->m_impl->lockFd = *fd;
        if (flockRetrying(*fd, LOCK_EX | LOCK_NB) == 0) {
            // Alone on the file: staged rows are orphans of writers that are gone (a crash, a
            // rolled-back transaction); their samples become sealed chunks. If that fails they
            // stay, still read exactly once.
            if (Status s = history->m_impl->adoptStaged(); !s.ok()) {
                std::fprintf(stderr, "runplane history: %s: staged rows not adopted: %s\n",
                             path.c_str(), s.error().c_str());
            }
        } else if (errno != EWOULDBLOCK) {
            return Error{path + "-lock: flock: " + std::strerror(errno)};
        }
        // Waits while a History adopts (it holds the lock exclusively), saying so.
        if (flockSharedSaying(*fd, path) != 0) {
            return Error{path + "-lock: flock: " + std::strerror(errno)};
        }
    }
    return history;
}

Result<int> History::schemaVersion() {
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare("SELECT max(version) FROM schema_version;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    return static_cast<int>(stmt->columnInt(0));
}

Status History::upsertRun(const RunRecord& run) {
    if (run.id.empty()) {
        return Error{m_path + ": a run needs an id"};
    }
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(
        "INSERT INTO runs(id, name, recipe_yaml, provenance_json, status, started_ns, ended_ns, "
        "nodes_json, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
        "ON CONFLICT(id) DO UPDATE SET name = excluded.name, recipe_yaml = excluded.recipe_yaml, "
        "provenance_json = excluded.provenance_json, status = excluded.status, "
        "started_ns = excluded.started_ns, ended_ns = excluded.ended_ns, "
        "nodes_json = excluded.nodes_json, message = excluded.message;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    // Secrets never reach the file: the recipe snapshot, the provenance (argv, env, the
    // controller's own command line) and the message are redacted here, for every caller
    // (docs/security.md).
    stmt->bind(1, run.id.value())
        .bind(2, redact::redactText(run.name.empty() ? run.id.value() : run.name))
        .bind(3, redact::redactText(run.recipeYaml))
        .bind(4, run.provenanceJson.empty() ? std::string("{}")
                                            : redact::redactJson(run.provenanceJson))
        .bind(5, toString(run.state))
        .bind(6, run.startedNs)
        .bind(7, run.endedNs)
        .bind(8, nodesToJson(run.nodes))
        .bind(9, redact::redactText(run.message));
    return stmt->run();
}

Status History::updateRunState(const RunId& id, RunState state, std::int64_t endedNs,
                               const std::string& message) {
    const std::string& runId = id.value();
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(
        "UPDATE runs SET status = ?2, ended_ns = CASE WHEN ?3 = 0 THEN ended_ns ELSE ?3 END, "
        "message = ?4 WHERE id = ?1;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, runId)
        .bind(2, toString(state))
        .bind(3, endedNs)
        .bind(4, redact::redactText(message));
    if (Status s = stmt->run(); !s.ok()) {
        return s;
    }
    if (m_impl->db->changes() == 0) {
        return Error{m_path + ": no run with id '" + runId + "'"};
    }
    return {};
}

Result<std::optional<RunRecord>> History::run(const RunId& runId) {
    std::lock_guard lock(m_mutex);
    auto stmt =
        m_impl->db->prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, runId.value());
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    if (!*row) {
        return std::optional<RunRecord>();
    }
    return std::optional<RunRecord>(readRun(*stmt));
}

Result<std::vector<RunRecord>> History::listRuns() {
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(std::string("SELECT ") + kRunColumns +
                                    " FROM runs ORDER BY started_ns DESC, id;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    std::vector<RunRecord> runs;
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        runs.push_back(readRun(*stmt));
    }
    return runs;
}

Status History::upsertNode(const NodeRecord& node) {
    if (node.nodeId.empty()) {
        return Error{m_path + ": a node needs a node id"};
    }
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(
        "INSERT INTO nodes(node_id, address, hostname, info_json, last_seen_ns) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(node_id) DO UPDATE SET "
        "address = excluded.address, hostname = excluded.hostname, "
        "info_json = excluded.info_json, last_seen_ns = excluded.last_seen_ns;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, node.nodeId.value())
        .bind(2, node.address)
        .bind(3, node.hostname)
        .bind(4, node.infoJson.empty() ? std::string("{}") : node.infoJson)
        .bind(5, node.lastSeenNs ? node.lastSeenNs : nowNs());
    return stmt->run();
}

std::int64_t History::walBytes() const {
    struct stat st {};
    const std::string wal = m_path + "-wal";
    return ::stat(wal.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}

Result<bool> History::truncateWal() {
    std::lock_guard lock(m_mutex);
    int logFrames = 0;
    int copied = 0;
    // No busy waiting: a reader that still needs the WAL makes this fail at once (the caller
    // tries again later) instead of holding up the writer's next transaction.
    sqlite3* handle = m_impl->db->handle();
    sqlite3_busy_timeout(handle, 0);
    const int rc =
        sqlite3_wal_checkpoint_v2(handle, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &copied);
    sqlite3_busy_timeout(handle, m_impl->db->busyTimeoutMs());
    if (rc == SQLITE_OK) {
        return true;
    }
    if ((rc & 0xff) == SQLITE_BUSY) {
        return false;
    }
    return Error{m_impl->db->lastError()};
}

Result<WalCheckpoint> History::checkpointWal() {
    std::lock_guard lock(m_mutex);
    WalCheckpoint out;
    sqlite3* handle = m_impl->db->handle();
    sqlite3_busy_timeout(handle, 0);
    const int rc = sqlite3_wal_checkpoint_v2(handle, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                             &out.logFrames, &out.backfilledFrames);
    sqlite3_busy_timeout(handle, m_impl->db->busyTimeoutMs());
    if ((rc & 0xff) == SQLITE_BUSY) {
        out.busy = true;
        return out;
    }
    if (rc != SQLITE_OK) {
        return Error{m_impl->db->lastError()};
    }
    return out;
}

ReadSnapshot::ReadSnapshot(sqlite::Database& db) {
    if (sqlite3_get_autocommit(db.handle()) != 0 && db.exec("BEGIN;").ok()) {
        m_db = &db;
    }
}

ReadSnapshot::~ReadSnapshot() {
    if (m_db != nullptr) {
        (void)m_db->exec("COMMIT;");
    }
}

Status History::beginRead() {
    std::lock_guard lock(m_mutex);
    if (sqlite3_get_autocommit(m_impl->db->handle()) == 0) {
        // A read left open (an endRead that failed): end it, the new one starts afresh.
        if (Status s = m_impl->db->exec("COMMIT;"); !s.ok()) {
            return s;
        }
    }
    return m_impl->db->exec("BEGIN;");
}

Status History::endRead() {
    std::lock_guard lock(m_mutex);
    if (sqlite3_get_autocommit(m_impl->db->handle()) != 0) {
        return {};
    }
    return m_impl->db->exec("COMMIT;");
}

Result<std::vector<NodeRecord>> History::listNodes() {
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare(
        "SELECT node_id, address, hostname, info_json, last_seen_ns FROM nodes "
        "ORDER BY address, node_id;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    std::vector<NodeRecord> nodes;
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        nodes.push_back(NodeRecord{NodeId{stmt->columnText(0)}, stmt->columnText(1),
                                   stmt->columnText(2), stmt->columnText(3), stmt->columnInt(4)});
    }
    return nodes;
}

}  // namespace runplane::db
