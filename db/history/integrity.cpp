// History: damaged, read-only and locked files (issue 41): what a reader or a writer says when
// the file fails its integrity check, cannot be written, or is locked by another process.
// docs/history.md, "Damaged, read-only or locked histories".
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {
namespace {

// What the history's layers say when the file itself is damaged: SQLite's SQLITE_CORRUPT and
// SQLITE_NOTADB messages, and this library's own for a row that does not decode. The codes
// are lost on some wrapping paths, the sentences are not.
constexpr std::array<std::string_view, 5> kDamagePhrases = {
    "database disk image is malformed",
    "file is not a database",
    ": damaged chunk",
    ": damaged staged row",
    "the history is damaged",
};

std::string modeText(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// The command line of a process, NULs as spaces, at most 120 characters.
std::string commandLine(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string text;
    char c = 0;
    while (text.size() < 120 && in.get(c)) {
        text += c == '\0' ? ' ' : c;
    }
    while (!text.empty() && text.back() == ' ') {
        text.pop_back();
    }
    return text.empty() ? "?" : text;
}

// A file's "MAJ:MIN:INODE" as /proc/locks prints it (hex device numbers); "" when absent.
std::string lockKey(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return {};
    }
    char text[64];
    std::snprintf(text, sizeof text, "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
                  static_cast<unsigned long>(st.st_ino));
    return text;
}

}  // namespace

bool saysHistoryDamaged(std::string_view error) {
    for (const std::string_view phrase : kDamagePhrases) {
        if (error.find(phrase) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

std::string historyWriteProblem(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path file(path);
    const std::string dir = file.has_parent_path() ? file.parent_path().string() : std::string(".");
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
        return dir + " is on a read-only file system";
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && ::access(path.c_str(), W_OK) != 0) {
        return path + " is not writable by this user (mode " + modeText(st.st_mode) +
               ", owner uid " + std::to_string(st.st_uid) + ")";
    }
    if (::access(dir.c_str(), W_OK) != 0 && ::stat(dir.c_str(), &st) == 0) {
        return "its folder " + dir + " is not writable by this user (mode " + modeText(st.st_mode) +
               "), and SQLite and runplane create " + path + "-wal, " + path + "-shm and " + path +
               "-lock beside the file";
    }
    return {};
}

std::vector<std::string> historyLockHolders(const std::string& path) {
    struct Watched {
        std::string key;
        const char* what;
        bool (*held)(const std::string& kind, long start);  // the lock is one writers wait for
    };
    const std::array<Watched, 3> watched = {
        Watched{lockKey(path + "-lock"), "PATH-lock exclusively (writers open after it)",
                [](const std::string& kind, long) { return kind == "FLOCK"; }},
        Watched{
            lockKey(path + "-shm"), "SQLite's write lock",
            [](const std::string& kind, long start) { return kind != "FLOCK" && start == 120; }},
        Watched{lockKey(path), "a write lock on the file itself",
                [](const std::string& kind, long) { return kind != "FLOCK"; }},
    };
    std::vector<std::string> out;
    std::ifstream in("/proc/locks");
    const long self = static_cast<long>(::getpid());
    for (std::string line; std::getline(in, line);) {
        // "1: POSIX  ADVISORY  WRITE 1234 00:2e:5678 120 120"; waiters have "->" after the id.
        std::istringstream fields(line);
        std::string id, kind, mode, access, device, startText;
        long pid = 0;
        if (!(fields >> id >> kind) || kind == "->") {
            continue;
        }
        if (!(fields >> mode >> access >> pid >> device >> startText) || access != "WRITE") {
            continue;
        }
        const long start = std::atol(startText.c_str());
        for (const Watched& w : watched) {
            if (!w.key.empty() && device == w.key && w.held(kind, start) &&
                (pid != self || kind == "FLOCK")) {
                std::string what = w.what;
                if (const auto at = what.find("PATH"); at != std::string::npos) {
                    what.replace(at, 4, path);
                }
                out.push_back("pid " + std::to_string(pid) +
                              (pid == self ? " (this process)" : " (" + commandLine(pid) + ")") +
                              " holds " + what);
            }
        }
    }
    return out;
}

Result<std::vector<std::string>> History::quickCheck(int maxProblems) {
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare("PRAGMA quick_check(" +
                                    std::to_string(std::max(1, maxProblems)) + ");");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    std::vector<std::string> problems;
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        const std::string text = stmt->columnText(0);
        if (text != "ok") {
            problems.push_back(text);
        }
    }
    return problems;
}

}  // namespace runplane::db
