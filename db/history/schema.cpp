#include "db/history/schema.h"

#include <array>

#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/history/rollup.h"

namespace runplane::db {
namespace {

// Version 1: the foundation schema (docs/history.md explains every table and index).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    recipe_yaml     TEXT NOT NULL DEFAULT '',
    provenance_json TEXT NOT NULL DEFAULT '{}',
    status          TEXT NOT NULL CHECK (status IN
                        ('running', 'finished', 'failed', 'stopped', 'daemon_lost')),
    started_ns      INTEGER NOT NULL,
    ended_ns        INTEGER NOT NULL DEFAULT 0,
    nodes_json      TEXT NOT NULL DEFAULT '[]',
    message         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_started ON runs(started_ns);

CREATE TABLE nodes (
    node_id      TEXT PRIMARY KEY,
    address      TEXT NOT NULL DEFAULT '',
    hostname     TEXT NOT NULL DEFAULT '',
    info_json    TEXT NOT NULL DEFAULT '{}',
    last_seen_ns INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE series (
    id      INTEGER PRIMARY KEY,
    node_id TEXT NOT NULL,
    run_id  TEXT NOT NULL DEFAULT '',
    name    TEXT NOT NULL,
    unit    TEXT NOT NULL DEFAULT '',
    UNIQUE (node_id, run_id, name)
);
CREATE INDEX series_run ON series(run_id, name);

-- Clustered by (series, time): a range read is one sequential walk of the b-tree.
-- (series_id, seq) is unique: a series belongs to one node, so this is (node, seq) for samples.
-- value/min/max are NULL for NaN (SQLite has no NaN; a "loss: nan" line must not block ingest).
CREATE TABLE samples (
    series_id INTEGER NOT NULL,
    t_ns      INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    value     REAL,
    min       REAL,
    max       REAL,
    step      INTEGER NOT NULL DEFAULT -1,
    PRIMARY KEY (series_id, t_ns, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX samples_series_seq ON samples(series_id, seq);

-- seq is NULL for events the controller made itself (detected gaps).
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    node_id    TEXT NOT NULL,
    seq        INTEGER,
    t_ns       INTEGER NOT NULL,
    run_id     TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    message    TEXT NOT NULL DEFAULT '',
    attrs_json TEXT NOT NULL DEFAULT '{}',
    UNIQUE (node_id, seq)
);
CREATE INDEX events_time ON events(t_ns);
CREATE INDEX events_run ON events(run_id, t_ns);

CREATE TABLE ingest_cursor (
    node_id    TEXT PRIMARY KEY,
    last_seq   INTEGER NOT NULL,
    updated_ns INTEGER NOT NULL
);
)sql";

// Version 2: the rollup pyramid for fast decimated reads (db/history/rollup.h), backfilled from
// the samples a version-1 file already holds.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE sample_rollup (
    series_id INTEGER NOT NULL,
    level     INTEGER NOT NULL,
    cell      INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    f_t INTEGER NOT NULL, f_seq INTEGER NOT NULL, f_v REAL, f_mn REAL, f_mx REAL, f_step INTEGER,
    l_t INTEGER NOT NULL, l_seq INTEGER NOT NULL, l_v REAL, l_mn REAL, l_mx REAL, l_step INTEGER,
    n_t INTEGER NOT NULL, n_seq INTEGER NOT NULL, n_v REAL, n_mn REAL, n_mx REAL, n_step INTEGER,
    x_t INTEGER NOT NULL, x_seq INTEGER NOT NULL, x_v REAL, x_mn REAL, x_mx REAL, x_step INTEGER,
    PRIMARY KEY (series_id, level, cell)
) WITHOUT ROWID;
)sql";

// Version 3: spool incarnations (issue #17). A node whose state directory was replaced starts
// its seqs again at 1; the history keeps both incarnations apart: exactly-once is by
// (node, incarnation, seq). Rows from before this version keep incarnation 0.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE ingest_cursor_v3 (
    node_id     TEXT NOT NULL,
    incarnation INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    updated_ns  INTEGER NOT NULL,
    PRIMARY KEY (node_id, incarnation)
);
INSERT INTO ingest_cursor_v3(node_id, incarnation, last_seq, updated_ns)
    SELECT node_id, 0, last_seq, updated_ns FROM ingest_cursor;
DROP TABLE ingest_cursor;
ALTER TABLE ingest_cursor_v3 RENAME TO ingest_cursor;

CREATE TABLE events_v3 (
    id          INTEGER PRIMARY KEY,
    node_id     TEXT NOT NULL,
    incarnation INTEGER NOT NULL DEFAULT 0,
    seq         INTEGER,
    t_ns        INTEGER NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    message     TEXT NOT NULL DEFAULT '',
    attrs_json  TEXT NOT NULL DEFAULT '{}',
    UNIQUE (node_id, incarnation, seq)
);
INSERT INTO events_v3(id, node_id, incarnation, seq, t_ns, run_id, kind, message, attrs_json)
    SELECT id, node_id, 0, seq, t_ns, run_id, kind, message, attrs_json FROM events;
DROP TABLE events;
ALTER TABLE events_v3 RENAME TO events;
CREATE INDEX events_time ON events(t_ns);
CREATE INDEX events_run ON events(run_id, t_ns);

ALTER TABLE samples ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
DROP INDEX samples_series_seq;
CREATE UNIQUE INDEX samples_series_seq ON samples(series_id, incarnation, seq);
)sql";

// Version 4: retention (issue #23). The policy lives in settings (defaults: raw 14 days,
// rollups 365 days); runs can be pinned; series_horizon records, per pruned series, before which
// time raw samples (and the 1 s / 8 s cells) and all rollup cells were deleted, so queries read
// the pruned era from what is left. Nothing is deleted by the migration itself.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO settings(key, value) VALUES ('retention.raw_days', '14'),
                                        ('retention.rollup_days', '365');
ALTER TABLE runs ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
CREATE TABLE series_horizon (
    series_id       INTEGER PRIMARY KEY,
    raw_before_ns   INTEGER NOT NULL DEFAULT 0,
    rollup_before_ns INTEGER NOT NULL DEFAULT 0
);
)sql";

// Version 5: finished runs keep their output (issue #18). Each row is one chunk of a run's stdout
// or stderr as the daemon sent it, zlib-compressed, keyed by its byte offset in the stream; the
// history keeps at most a bound per stream (the tail: the oldest chunks go first).
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE run_logs (
    run_id    TEXT NOT NULL,
    stream    TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    offset    INTEGER NOT NULL,
    raw_bytes INTEGER NOT NULL,
    data      BLOB NOT NULL,
    PRIMARY KEY (run_id, stream, offset)
) WITHOUT ROWID;
)sql";

// Version 6: samples as compressed chunks (issue #21). Each row holds up to 1024 samples of one
// series and incarnation, encoded by chunk_codec.h (delta-of-delta integers, XOR values); the
// backfill converts every row of `samples` and drops the table. `samples` stays readable in SQL
// as a view over the chunks (chunks.h). Exactly-once stays with ingest_cursor. The 1 s and 8 s
// rollup cells go: they cost ~20 bytes a sample, and reads that fine decode the chunks instead.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE chunks (
    id          INTEGER PRIMARY KEY,
    series_id   INTEGER NOT NULL,
    incarnation INTEGER NOT NULL DEFAULT 0,
    t_min       INTEGER NOT NULL,
    t_max       INTEGER NOT NULL,
    seq_min     INTEGER NOT NULL,
    seq_max     INTEGER NOT NULL,
    count       INTEGER NOT NULL,
    data        BLOB NOT NULL
);
-- t_min in the index too: a range query checks both ends without fetching a chunk row.
CREATE INDEX chunks_series_time ON chunks(series_id, t_max, t_min);
DELETE FROM sample_rollup WHERE level < 2;
)sql";

// Version 7 (issue #21): `codec` says how a chunk is encoded (0: the v6 layout; 1: a header
// with the chunk's time unit, chunk_codec.h); `unrolled` counts the chunk's last samples not yet
// merged into the rollup cells (the ingest merges a head chunk's samples once, when it is sealed;
// reads merge the unrolled ones themselves). Every v6 chunk is in the cells already: 0.
constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE chunks ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN unrolled INTEGER NOT NULL DEFAULT 0;
CREATE INDEX chunks_unrolled ON chunks(series_id) WHERE unrolled > 0;
)sql";

// Version 8 (issue #20): `staged` holds what one transaction added for one node (a section per
// series, staged.h) while the writer keeps that node's open chunks in memory, instead of
// rewriting every open chunk row in every transaction. When a head fills, the node's heads are
// written as sealed chunks and its staged rows deleted. Nothing existing is rewritten: v7 head
// chunks with unrolled samples stay readable as they are.
constexpr const char* kSchemaV8 = R"sql(
CREATE TABLE staged (
    id          INTEGER PRIMARY KEY,
    node_id     TEXT NOT NULL,
    incarnation INTEGER NOT NULL,
    codec       INTEGER NOT NULL,
    data        BLOB NOT NULL
);
CREATE INDEX staged_node ON staged(node_id, id);
)sql";

// Version 9 (issue #48): the alert sender's cursor over events.id, its lease (one sender at a
// time per history) and one row per delivery (docs/alerts.md). Nothing existing changes.
constexpr const char* kSchemaV9 = R"sql(
CREATE TABLE alert_cursor (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    last_event_id INTEGER NOT NULL,
    updated_ns    INTEGER NOT NULL
);
CREATE TABLE alert_lease (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    holder     TEXT NOT NULL,
    expires_ns INTEGER NOT NULL
);
CREATE TABLE alert_deliveries (
    id           INTEGER PRIMARY KEY,
    event_id     INTEGER NOT NULL,
    rule         TEXT NOT NULL,
    destination  TEXT NOT NULL,
    quiet_key    TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed', 'suppressed')),
    payload_json TEXT NOT NULL DEFAULT '{}',
    attempts     INTEGER NOT NULL DEFAULT 0,
    created_ns   INTEGER NOT NULL,
    next_ns      INTEGER NOT NULL,
    deadline_ns  INTEGER NOT NULL,
    done_ns      INTEGER NOT NULL DEFAULT 0,
    result       TEXT NOT NULL DEFAULT '',
    UNIQUE (event_id, rule, destination)
);
CREATE INDEX alert_deliveries_pending ON alert_deliveries(next_ns) WHERE state = 'pending';
CREATE INDEX alert_deliveries_rule ON alert_deliveries(rule, created_ns);
CREATE INDEX alert_deliveries_quiet ON alert_deliveries(quiet_key, created_ns);
)sql";

// Version 10 (issue #44): a run's diagnoses, kept after its nodes are gone. `json` is the whole
// document (docs/diagnosis.md, "Format"), `bytes` its length; the history keeps at most
// kDiagnosisMaxBytesPerRun per run (the oldest go first).
constexpr const char* kSchemaV10 = R"sql(
CREATE TABLE run_diagnoses (
    id       INTEGER PRIMARY KEY,
    run_id   TEXT NOT NULL,
    t_ns     INTEGER NOT NULL,
    trigger  TEXT NOT NULL,
    headline TEXT NOT NULL,
    bytes    INTEGER NOT NULL,
    json     TEXT NOT NULL
);
CREATE INDEX run_diagnoses_run ON run_diagnoses(run_id, t_ns);
)sql";

const std::array kMigrations = {
    Migration{1, "foundation: runs, nodes, series, samples, events, ingest_cursor", kSchemaV1},
    Migration{2, "sample_rollup: min/max pyramid for decimated reads", kSchemaV2, &backfillRollups},
    Migration{3, "spool incarnations: exactly-once by (node, incarnation, seq)", kSchemaV3},
    Migration{4, "retention: settings, pinned runs, per-series prune horizon", kSchemaV4},
    Migration{5, "run_logs: finished runs keep their stdout/stderr", kSchemaV5},
    Migration{6, "chunks: samples stored as compressed chunks per series", kSchemaV6,
              &convertSamplesToChunks},
    Migration{7, "chunks: per-chunk time unit; rollup cells merged when a chunk is sealed",
              kSchemaV7},
    Migration{8, "staged: a node's new samples in one row per transaction until a chunk fills",
              kSchemaV8},
    Migration{9, "alerts: the sender's cursor over events, its lease, one row per delivery",
              kSchemaV9},
    Migration{10, "run_diagnoses: a run's hang/failure diagnoses", kSchemaV10},
};

static_assert(std::size(kMigrations) == static_cast<std::size_t>(kSchemaVersion),
              "one migration per version: the last one brings the file to kSchemaVersion");

}  // namespace

std::span<const Migration> migrations() {
    return kMigrations;
}

}  // namespace runplane::db

#include "db/sqlite/sqlite.h"

namespace runplane::db {

namespace {

struct FileVersion {
    std::int64_t tableCount = 0;
    bool hasVersionTable = false;
    int version = 0;
};

// Reads the stored version. The statements are finalized before returning so that no read
// transaction stays open (a pending read would turn a later BEGIN IMMEDIATE into an immediate
// SQLITE_BUSY while another connection is writing).
Result<FileVersion> readVersion(sqlite::Database& db) {
    FileVersion out;
    {
        auto tables = db.prepare(
            "SELECT count(*), coalesce(sum(name = 'schema_version'), 0) FROM sqlite_master "
            "WHERE type = 'table';");
        if (!tables.ok()) {
            return Error{tables.error()};
        }
        auto row = tables->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        out.tableCount = tables->columnInt(0);
        out.hasVersionTable = tables->columnInt(1) > 0;
    }
    if (out.hasVersionTable) {
        auto read = db.prepare("SELECT coalesce(max(version), 0) FROM schema_version;");
        if (!read.ok()) {
            return Error{read.error()};
        }
        auto stepped = read->step();
        if (!stepped.ok()) {
            return Error{stepped.error()};
        }
        out.version = static_cast<int>(read->columnInt(0));
    }
    return out;
}

}  // namespace

Result<int> applyMigrations(sqlite::Database& db, std::span<const Migration> list, bool readOnly) {
    const int latest = list.empty() ? 0 : list.back().version;
    auto found = readVersion(db);
    if (!found.ok()) {
        return Error{found.error()};
    }
    if (!found->hasVersionTable && found->tableCount > 0) {
        return Error{db.path() +
                     ": not a Runplane history (it holds tables but no schema_version); "
                     "refusing to modify it"};
    }
    int version = found->version;
    if (version > latest) {
        return Error{db.path() + ": history schema version " + std::to_string(version) +
                     " is newer than this build understands (" + std::to_string(latest) +
                     "); use a newer runplane, the file was not modified"};
    }
    if (version == latest) {
        return version;
    }
    if (readOnly) {
        return Error{db.path() + ": history schema version " + std::to_string(version) +
                     " needs migrating to " + std::to_string(latest) + "; open it read-write once"};
    }
    for (const Migration& migration : list) {
        if (migration.version <= version) {
            continue;
        }
        sqlite::Transaction tx(db);
        if (!tx.begun().ok()) {
            return Error{tx.begun().error()};
        }
        // Another process may have migrated while we waited for the write lock.
        auto current = readVersion(db);
        if (!current.ok()) {
            return Error{current.error()};
        }
        version = current->version;
        if (version >= migration.version) {
            continue;  // rolled back: nothing was written
        }
        if (version == 0) {
            if (Status s = db.exec("CREATE TABLE IF NOT EXISTS schema_version ("
                                   "version INTEGER NOT NULL, applied_ns INTEGER NOT NULL, "
                                   "description TEXT NOT NULL);");
                !s.ok()) {
                return Error{s.error()};
            }
        }
        if (Status s = db.exec(migration.sql); !s.ok()) {
            return Error{s.error() + " (migration to schema version " +
                         std::to_string(migration.version) + ")"};
        }
        if (migration.backfill) {
            if (Status s = migration.backfill(db); !s.ok()) {
                return Error{s.error() + " (migration to schema version " +
                             std::to_string(migration.version) + ")"};
            }
        }
        auto record = db.prepare(
            "INSERT INTO schema_version(version, applied_ns, description) "
            "VALUES (?1, CAST((julianday('now') - 2440587.5) * 86400000000000 AS INTEGER), ?2);");
        if (!record.ok()) {
            return Error{record.error()};
        }
        record->bind(1, static_cast<std::int64_t>(migration.version))
            .bind(2, std::string_view(migration.description));
        if (Status s = record->run(); !s.ok()) {
            return Error{s.error()};
        }
        if (Status s = tx.commit(); !s.ok()) {
            return Error{s.error()};
        }
        version = migration.version;
    }
    return version;
}

}  // namespace runplane::db
