#pragma once
// tests/support: a fault-injecting SQLite VFS for this test process. install() registers a VFS
// that wraps the default one and becomes the default, so every connection the process opens
// afterwards (the in-process TelemetryIngestor's history) goes through it. While a fault is
// armed, writes (xWrite, and xTruncate) or syncs (xSync) of files whose path contains the
// filter fail with the chosen SQLite error, as a full disk (SQLITE_FULL), a failing device
// (SQLITE_IOERR_WRITE) or a failed fsync (SQLITE_IOERR_FSYNC) looks to SQLite.

#include <cstdint>
#include <string>

namespace runplane::testing::faultvfs {

enum class Fault { None, DiskFull, WriteError, SyncError };

/// Registers the VFS as the process default (idempotent).
void install();
/// Arms `fault` for files whose path contains `pathFilter` (e.g. the history file's name).
void arm(Fault fault, const std::string& pathFilter);
void disarm();
/// Calls that failed because of an armed fault since install().
std::uint64_t injected();

}  // namespace runplane::testing::faultvfs
