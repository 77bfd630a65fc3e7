#pragma once
// tests/support: a fault-injecting SQLite VFS for this test process. install() registers a VFS
// that wraps the default one and becomes the default, so every connection the process opens
// afterwards (the in-process TelemetryIngestor's history) goes through it. While a fault is
// armed, writes (xWrite, and xTruncate) or syncs (xSync) of files whose path contains the
// filter fail with the chosen SQLite error, as a full disk (SQLITE_FULL), a failing device
// (SQLITE_IOERR_WRITE) or a failed fsync (SQLITE_IOERR_FSYNC) looks to SQLite. A failed fsync
// may also lose what it was to write (SyncErrorLosesWrites: Linux marks the dirty pages clean
// after a writeback error, so they never reach the disk; PostgreSQL's "fsyncgate"): the file's
// writes since its last good sync are undone in place, as if those pages were evicted at once.

#include <cstdint>
#include <string>
#include <vector>

namespace runplane::testing::faultvfs {

enum class Fault {
    None,
    DiskFull,
    WriteError,
    SyncError,
    /// SyncError, and the file's writes since its last good sync are undone (the file must be
    /// tracked: trackUnsynced before it is opened).
    SyncErrorLosesWrites,
};

/// Registers the VFS as the process default (idempotent).
void install();
/// Arms `fault` for files whose path contains `pathFilter` (e.g. the history file's name).
void arm(Fault fault, const std::string& pathFilter);
void disarm();
/// Calls that failed because of an armed fault since install().
std::uint64_t injected();
/// Writes undone by SyncErrorLosesWrites since install().
std::uint64_t writesLost();

/// Power-cut model: from now on, for files opened afterwards whose path contains `pathFilter`,
/// remembers what each write (and truncation) replaced until the file is next synced (xSync);
/// content a file had when it was opened counts as on disk.
void trackUnsynced(const std::string& pathFilter);
/// Copies the tracked file `path` and its `path` + "-wal" into `toDir` (same file names), as a
/// power cut now would leave them: every write since that file's last sync undone, its size the
/// synced one. Atomic against the tracked writes (they wait). Returns the paths written.
std::vector<std::string> copyAsSynced(const std::string& path, const std::string& toDir);

/// A cut taken by cutMidWrite: DIR/synced/ holds the files as copyAsSynced would have copied
/// them at that moment, DIR/torn-<j>/ as a cut that lost writes out of order would leave them.
struct CutTaken {
    std::string dir;
    std::size_t unsyncedWrites = 0;    // writes to the file and its WAL since their last syncs
    std::size_t unsyncedDbWrites = 0;  // of those, to the file itself (a checkpoint's)
    std::vector<std::size_t> kept;     // of those, how many torn-<j> kept
};
/// Out-of-order power-cut model, for the tracked file `path` and its WAL: at every `everyNth`
/// write to them where two or more are unsynced (mid-transaction, mid-checkpoint), up to
/// `maxCuts` times, copies both into TODIR/cut-<k>/ (see CutTaken): synced/ with every unsynced
/// write undone; torn-<j>/ (j < tornCopies) with each unsynced write kept or lost at random
/// (seeded by k and j), the kept ones applied in their order onto the synced content, as a
/// disk that wrote back some dirty pages and not earlier ones would leave them. The writer
/// waits while a cut is copied.
void cutMidWrite(const std::string& path, const std::string& toDir, int everyNth, int tornCopies,
                 int maxCuts);
std::vector<CutTaken> cutsTaken();
/// cutMidWrite, and the power goes off at the `cutNumber`-th cut: once its copies are written
/// (and TODIR/powered-off names its folder), the process kills itself with SIGKILL.
void powerCutAt(const std::string& path, const std::string& toDir, int everyNth, int tornCopies,
                int cutNumber);

}  // namespace runplane::testing::faultvfs
