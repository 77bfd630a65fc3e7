#include "tests/support/fault_vfs.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

namespace runplane::testing::faultvfs {
namespace {

// A file of the shim: our header, then the wrapped VFS's own file object.
struct ShimFile {
    sqlite3_file base;
    sqlite3_file* real;
    const char* name;  // valid until xClose (SQLite keeps its file names)
    // How many lost-write sync errors of its path this handle has been told of (see dropUnsynced).
    std::uint64_t syncErrorsSeen;
};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs{};
std::mutex g_mutex;
std::string g_filter;
std::atomic<int> g_fault{static_cast<int>(Fault::None)};
std::atomic<std::uint64_t> g_injected{0};
std::atomic<std::uint64_t> g_writesLost{0};

sqlite3_file* real(sqlite3_file* f) {
    return reinterpret_cast<ShimFile*>(f)->real;
}

// The power-cut model: per tracked path (every connection's file object of one path shares it),
// the bytes each write or truncation replaced since the last sync, oldest first, and the size
// at that sync.
struct Undo {
    sqlite3_int64 offset = 0;
    std::string bytes;          // what the range written or cut held, as far as the file reached
    sqlite3_int64 written = 0;  // a write's length (0: a truncation)
    std::string after;          // what a write wrote (for cuts that keep some writes)
};
struct Tracked {
    sqlite3_int64 syncedSize = 0;
    std::vector<Undo> undo;
    // Lost-write sync errors of this path so far. As Linux reports a writeback error to every
    // descriptor of the file at its next fsync (errseq_t), each handle's next sync fails after
    // one, whichever connection's sync lost the writes.
    std::uint64_t syncErrors = 0;
};
std::mutex g_trackMutex;  // held across a tracked write, so a copy sees none half done
std::string g_trackFilter;
std::map<std::string, Tracked> g_tracked;

bool tracked(sqlite3_file* f) {
    const char* name = reinterpret_cast<ShimFile*>(f)->name;
    return name != nullptr && !g_trackFilter.empty() &&
           std::strstr(name, g_trackFilter.c_str()) != nullptr;
}

sqlite3_int64 fileSize(sqlite3_file* f) {
    sqlite3_int64 size = 0;
    return real(f)->pMethods->xFileSize(real(f), &size) == SQLITE_OK ? size : 0;
}

// Remembers what [offset, offset + n) holds now, as far as the file reaches (beyond its end the
// synced size cuts it off).
void remember(sqlite3_file* f, sqlite3_int64 offset, sqlite3_int64 n, const void* data) {
    const bool isWrite = data != nullptr;
    const sqlite3_int64 end = std::min(offset + n, fileSize(f));
    Undo undo{offset,
              std::string(static_cast<std::size_t>(std::max<sqlite3_int64>(0, end - offset)), '\0'),
              isWrite ? n : 0,
              isWrite ? std::string(static_cast<const char*>(data), static_cast<std::size_t>(n))
                      : std::string()};
    if (undo.bytes.empty() && !isWrite) {
        return;
    }
    if (!undo.bytes.empty()) {
        (void)real(f)->pMethods->xRead(real(f), undo.bytes.data(),
                                       static_cast<int>(undo.bytes.size()), offset);
    }
    g_tracked[reinterpret_cast<ShimFile*>(f)->name].undo.push_back(std::move(undo));
}

// The error for an operation when the armed fault applies to it, else SQLITE_OK.
int injectedError(sqlite3_file* f, bool isSync) {
    const auto fault = static_cast<Fault>(g_fault.load());
    if (fault == Fault::None) {
        return SQLITE_OK;
    }
    {
        const char* name = reinterpret_cast<ShimFile*>(f)->name;
        std::lock_guard lock(g_mutex);
        if (name == nullptr || g_filter.empty() || std::strstr(name, g_filter.c_str()) == nullptr) {
            return SQLITE_OK;
        }
    }
    int rc = SQLITE_OK;
    if (!isSync && fault == Fault::DiskFull) {
        rc = SQLITE_FULL;
    } else if (!isSync && fault == Fault::WriteError) {
        rc = SQLITE_IOERR_WRITE;
    } else if (isSync && (fault == Fault::SyncError || fault == Fault::SyncErrorLosesWrites)) {
        rc = SQLITE_IOERR_FSYNC;
    }
    if (rc != SQLITE_OK) {
        ++g_injected;
    }
    return rc;
}

// Copies `from` to `to` as the disk would hold it after a cut: the synced content, then, where
// `keep` is given, the writes since the last sync that it keeps, in their order (a write that
// reached the disk ahead of earlier ones). Returns how many unsynced writes were kept.
std::size_t copyCut(const std::string& from, const Tracked& t, const std::string& to,
                    std::mt19937_64* keep) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    const int fd = ::open(to.c_str(), O_WRONLY);
    if (fd < 0) {
        return 0;
    }
    for (auto it = t.undo.rbegin(); it != t.undo.rend(); ++it) {
        (void)::pwrite(fd, it->bytes.data(), it->bytes.size(), it->offset);
    }
    (void)::ftruncate(fd, t.syncedSize);
    std::size_t kept = 0;
    for (const Undo& u : t.undo) {
        if (keep == nullptr || (*keep)() % 2 == 0) {
            continue;
        }
        if (u.written == 0) {
            (void)::ftruncate(fd, u.offset);
        } else {
            (void)::pwrite(fd, u.after.data(), u.after.size(), u.offset);
        }
        ++kept;
    }
    ::close(fd);
    return kept;
}

// The copies of copyAsSynced and of cutMidWrite's cuts (keep: which unsynced writes reach the
// disk; none without it), with g_trackMutex held.
std::vector<std::string> copyLocked(const std::string& path, const std::string& toDir,
                                    std::mt19937_64* keep, std::size_t* kept) {
    std::vector<std::string> written;
    for (const std::string& from : {path, path + "-wal"}) {
        const auto found = g_tracked.find(from);
        if (found == g_tracked.end() || !std::filesystem::exists(from)) {
            continue;
        }
        const std::string to = toDir + "/" + std::filesystem::path(from).filename().string();
        const std::size_t n = copyCut(from, found->second, to, keep);
        if (kept != nullptr) {
            *kept += n;
        }
        written.push_back(to);
    }
    return written;
}

// The cuts armed by cutMidWrite, and those taken.
struct MidWriteCuts {
    std::string path;
    std::string toDir;
    int everyNth = 0;
    int tornCopies = 0;
    int maxCuts = 0;
    bool powerOff = false;  // the process kills itself (SIGKILL) after the last cut
    std::uint64_t writes = 0;
    std::vector<CutTaken> taken;
};
MidWriteCuts g_cuts;

std::size_t unsyncedWrites(const std::string& path) {
    std::size_t n = 0;
    for (const std::string& p : {path, path + "-wal"}) {
        if (const auto found = g_tracked.find(p); found != g_tracked.end()) {
            n += found->second.undo.size();
        }
    }
    return n;
}

// Called with g_trackMutex held after each tracked write.
void maybeCutMidWrite(const char* name) {
    MidWriteCuts& c = g_cuts;
    if (c.everyNth <= 0 || static_cast<int>(c.taken.size()) >= c.maxCuts ||
        (name != c.path && name != c.path + "-wal")) {
        return;
    }
    // Only where some writes are unsynced: two at least, so that a cut can keep some, not all.
    if (++c.writes % static_cast<std::uint64_t>(c.everyNth) != 0 || unsyncedWrites(c.path) < 2) {
        return;
    }
    CutTaken cut;
    cut.dir = c.toDir + "/cut-" + std::to_string(c.taken.size());
    cut.unsyncedWrites = unsyncedWrites(c.path);
    if (const auto db = g_tracked.find(c.path); db != g_tracked.end()) {
        cut.unsyncedDbWrites = db->second.undo.size();
    }
    std::filesystem::create_directories(cut.dir + "/synced");
    copyLocked(c.path, cut.dir + "/synced", nullptr, nullptr);
    for (int j = 0; j < c.tornCopies; ++j) {
        const std::string dir = cut.dir + "/torn-" + std::to_string(j);
        std::filesystem::create_directories(dir);
        std::mt19937_64 keep(c.taken.size() * 1000 + static_cast<std::size_t>(j) + 1);
        std::size_t kept = 0;
        copyLocked(c.path, dir, &keep, &kept);
        cut.kept.push_back(kept);
    }
    c.taken.push_back(std::move(cut));
    if (c.powerOff && static_cast<int>(c.taken.size()) == c.maxCuts) {
        std::ofstream(c.toDir + "/powered-off") << c.taken.back().dir << "\n";
        ::kill(::getpid(), SIGKILL);
    }
}

int xClose(sqlite3_file* f) {
    const int rc = real(f)->pMethods ? real(f)->pMethods->xClose(real(f)) : SQLITE_OK;
    f->pMethods = nullptr;
    return rc;
}
int xRead(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
    return real(f)->pMethods->xRead(real(f), p, n, off);
}
int xWrite(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) {
    if (int rc = injectedError(f, false); rc != SQLITE_OK) {
        return rc;
    }
    std::lock_guard lock(g_trackMutex);
    const bool track = tracked(f);
    if (track) {
        remember(f, off, n, p);
    }
    const int rc = real(f)->pMethods->xWrite(real(f), p, n, off);
    if (track && rc == SQLITE_OK) {
        maybeCutMidWrite(reinterpret_cast<ShimFile*>(f)->name);
    }
    return rc;
}
int xTruncate(sqlite3_file* f, sqlite3_int64 size) {
    if (int rc = injectedError(f, false); rc != SQLITE_OK) {
        return rc;
    }
    std::lock_guard lock(g_trackMutex);
    if (tracked(f)) {
        remember(f, size, std::max<sqlite3_int64>(0, fileSize(f) - size), nullptr);
    }
    return real(f)->pMethods->xTruncate(real(f), size);
}

// The pages a failed sync was to write are gone, as if evicted at once: each write since the
// file's last good sync is undone in the file itself, newest first (the bytes it replaced; zeros
// where it had extended the file). The file's size is metadata and stays what it is now, so
// truncations stay and nothing is restored beyond the current end.
void dropUnsynced(sqlite3_file* f) {
    Tracked& t = g_tracked[reinterpret_cast<ShimFile*>(f)->name];
    const sqlite3_int64 size = fileSize(f);
    for (auto it = t.undo.rbegin(); it != t.undo.rend(); ++it) {
        const sqlite3_int64 end = std::min(it->offset + it->written, size);
        if (it->written == 0 || end <= it->offset) {
            continue;
        }
        std::string old(static_cast<std::size_t>(end - it->offset), '\0');
        std::copy_n(it->bytes.begin(), std::min(it->bytes.size(), old.size()), old.begin());
        (void)real(f)->pMethods->xWrite(real(f), old.data(), static_cast<int>(old.size()),
                                        it->offset);
        ++g_writesLost;
    }
    t.undo.clear();
    t.syncedSize = size;
    reinterpret_cast<ShimFile*>(f)->syncErrorsSeen = ++t.syncErrors;
}

// Whether a lost-write sync error of f's path happened since f last heard of one (it hears now).
bool unreportedSyncError(sqlite3_file* f) {
    auto* shim = reinterpret_cast<ShimFile*>(f);
    const auto found = g_tracked.find(shim->name);
    if (found == g_tracked.end() || found->second.syncErrors == shim->syncErrorsSeen) {
        return false;
    }
    shim->syncErrorsSeen = found->second.syncErrors;
    return true;
}

int xSync(sqlite3_file* f, int flags) {
    if (int rc = injectedError(f, true); rc != SQLITE_OK) {
        if (static_cast<Fault>(g_fault.load()) == Fault::SyncErrorLosesWrites) {
            std::lock_guard lock(g_trackMutex);
            if (tracked(f)) {
                dropUnsynced(f);
            }
        }
        return rc;
    }
    std::lock_guard lock(g_trackMutex);
    if (tracked(f) && unreportedSyncError(f)) {
        ++g_injected;
        return SQLITE_IOERR_FSYNC;
    }
    const int rc = real(f)->pMethods->xSync(real(f), flags);
    if (rc == SQLITE_OK && tracked(f)) {
        Tracked& t = g_tracked[reinterpret_cast<ShimFile*>(f)->name];
        t.undo.clear();
        t.syncedSize = fileSize(f);
    }
    return rc;
}
int xFileSize(sqlite3_file* f, sqlite3_int64* size) {
    return real(f)->pMethods->xFileSize(real(f), size);
}
int xLock(sqlite3_file* f, int l) {
    return real(f)->pMethods->xLock(real(f), l);
}
int xUnlock(sqlite3_file* f, int l) {
    return real(f)->pMethods->xUnlock(real(f), l);
}
int xCheckReservedLock(sqlite3_file* f, int* out) {
    return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int xFileControl(sqlite3_file* f, int op, void* arg) {
    return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int xSectorSize(sqlite3_file* f) {
    return real(f)->pMethods->xSectorSize(real(f));
}
int xDeviceCharacteristics(sqlite3_file* f) {
    return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int xShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
    return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
}
int xShmLock(sqlite3_file* f, int offset, int n, int flags) {
    return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void xShmBarrier(sqlite3_file* f) {
    real(f)->pMethods->xShmBarrier(real(f));
}
int xShmUnmap(sqlite3_file* f, int deleteFlag) {
    return real(f)->pMethods->xShmUnmap(real(f), deleteFlag);
}
int xFetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
    return real(f)->pMethods->xFetch(real(f), off, n, out);
}
int xUnfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
    return real(f)->pMethods->xUnfetch(real(f), off, p);
}

const sqlite3_io_methods kMethods = {3,
                                     xClose,
                                     xRead,
                                     xWrite,
                                     xTruncate,
                                     xSync,
                                     xFileSize,
                                     xLock,
                                     xUnlock,
                                     xCheckReservedLock,
                                     xFileControl,
                                     xSectorSize,
                                     xDeviceCharacteristics,
                                     xShmMap,
                                     xShmLock,
                                     xShmBarrier,
                                     xShmUnmap,
                                     xFetch,
                                     xUnfetch};

int xOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* outFlags) {
    auto* shim = reinterpret_cast<ShimFile*>(f);
    shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
    shim->base.pMethods = nullptr;
    shim->name = name;
    shim->syncErrorsSeen = 0;
    const int rc = g_real->xOpen(g_real, name, shim->real, flags, outFlags);
    if (rc == SQLITE_OK && shim->real->pMethods != nullptr) {
        shim->base.pMethods = &kMethods;
        std::lock_guard lock(g_trackMutex);
        if (tracked(f)) {
            const auto found = g_tracked.find(name);
            if (found == g_tracked.end()) {
                g_tracked[name].syncedSize = fileSize(f);  // what it held before is on disk
            } else {
                shim->syncErrorsSeen = found->second.syncErrors;  // errors before it opened
            }
        }
    }
    return rc;
}

// A deleted file's tracked state goes with it (SQLite deletes a WAL when its last connection
// closes, and a journal after each transaction): a file opened later under the same name starts
// empty, not with the writes and synced size of the one that was deleted. The unlink itself
// counts as durable (the model does not bring deleted files back after a cut).
int xDelete(sqlite3_vfs*, const char* name, int syncDir) {
    std::lock_guard lock(g_trackMutex);
    const int rc = g_real->xDelete(g_real, name, syncDir);
    if (rc == SQLITE_OK && name != nullptr) {
        g_tracked.erase(name);
    }
    return rc;
}

}  // namespace

void install() {
    std::lock_guard lock(g_mutex);
    if (g_real != nullptr) {
        return;
    }
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.zName = "runplane-fault";
    g_vfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
    g_vfs.xOpen = xOpen;
    g_vfs.xDelete = xDelete;
    g_vfs.pNext = nullptr;
    sqlite3_vfs_register(&g_vfs, 1);
}

void arm(Fault fault, const std::string& pathFilter) {
    {
        std::lock_guard lock(g_mutex);
        g_filter = pathFilter;
    }
    g_fault = static_cast<int>(fault);
}

void disarm() {
    g_fault = static_cast<int>(Fault::None);
}

std::uint64_t injected() {
    return g_injected.load();
}

std::uint64_t writesLost() {
    return g_writesLost.load();
}

void trackUnsynced(const std::string& pathFilter) {
    std::lock_guard lock(g_trackMutex);
    g_trackFilter = pathFilter;
}

std::vector<std::string> copyAsSynced(const std::string& path, const std::string& toDir) {
    std::lock_guard lock(g_trackMutex);
    return copyLocked(path, toDir, nullptr, nullptr);
}

void cutMidWrite(const std::string& path, const std::string& toDir, int everyNth, int tornCopies,
                 int maxCuts) {
    std::lock_guard lock(g_trackMutex);
    g_cuts = MidWriteCuts{path, toDir, everyNth, tornCopies, maxCuts, false, 0, {}};
}

void powerCutAt(const std::string& path, const std::string& toDir, int everyNth, int tornCopies,
                int cutNumber) {
    std::lock_guard lock(g_trackMutex);
    g_cuts = MidWriteCuts{path, toDir, everyNth, tornCopies, cutNumber, true, 0, {}};
}

std::vector<CutTaken> cutsTaken() {
    std::lock_guard lock(g_trackMutex);
    return g_cuts.taken;
}

}  // namespace runplane::testing::faultvfs
