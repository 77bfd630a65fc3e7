#include "backend/agent/workdir.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace runplane::agent {
namespace {

std::string canonical(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr) {
        return {};
    }
    return buf;
}

bool isUnder(const std::string& path, const std::string& root) {
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           (root == "/" || path[root.size()] == '/');
}

// Checks on the request text alone, before any system call: a NUL would cut the path where the
// kernel reads it, and a deep path costs every later realpath() time in proportion to its
// depth (2,000 levels took 95 s of daemon CPU before these bounds).
Status checkWorkdirText(const std::string& requested) {
    if (requested.find('\0') != std::string::npos) {
        return Error{"workdir contains a NUL byte at character " +
                     std::to_string(requested.find('\0') + 1) + " (refused, as in argv and env)"};
    }
    if (requested.size() > kMaxWorkdirBytes) {
        return Error{"workdir is " + std::to_string(requested.size()) + " bytes long; at most " +
                     std::to_string(kMaxWorkdirBytes) + " are allowed"};
    }
    std::size_t depth = 0, pos = 0;
    while (pos <= requested.size()) {
        std::size_t next = requested.find('/', pos);
        if (next == std::string::npos) {
            next = requested.size();
        }
        const std::size_t length = next - pos;
        if (length > kMaxWorkdirComponentBytes) {
            return Error{"workdir component " + std::to_string(depth + 1) + " is " +
                         std::to_string(length) + " bytes long; at most " +
                         std::to_string(kMaxWorkdirComponentBytes) + " are allowed"};
        }
        const std::string_view part(requested.data() + pos, length);
        if (!part.empty() && part != ".") {
            ++depth;
        }
        pos = next + 1;
    }
    if (depth > kMaxWorkdirDepth) {
        return Error{"workdir has " + std::to_string(depth) + " levels; at most " +
                     std::to_string(kMaxWorkdirDepth) + " are allowed under the run root"};
    }
    return {};
}

}  // namespace

Status validateRunId(const std::string& runId) {
    if (runId.empty() || runId.size() > 128) {
        return Error{"run_id must be 1-128 characters, got " + std::to_string(runId.size())};
    }
    if (runId[0] == '.' || runId[0] == '-') {
        return Error{"run_id '" + runId + "' must not start with '.' or '-'"};
    }
    for (std::size_t i = 0; i < runId.size(); ++i) {
        const char c = runId[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) {
            return Error{"run_id '" + runId + "': character " + std::to_string(i + 1) +
                         " is not one of [A-Za-z0-9._-]"};
        }
    }
    return {};
}

Status makeDirectories(const std::string& path, unsigned mode) {
    if (path.empty()) {
        return Error{"empty directory path"};
    }
    std::string cur;
    std::size_t pos = 0;
    while (pos <= path.size()) {
        std::size_t next = path.find('/', pos);
        if (next == std::string::npos) {
            next = path.size();
        }
        cur = path.substr(0, next);
        pos = next + 1;
        if (cur.empty()) {
            continue;
        }
        if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
            return Error{cur + ": cannot create directory: " + std::strerror(errno)};
        }
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Error{path + ": not a directory"};
    }
    return {};
}

Result<std::string> confineWorkdir(const std::string& root, const std::string& requested,
                                   const std::string& fallback) {
    if (Status s = checkWorkdirText(requested); !s.ok()) {
        return s.failure();
    }
    if (Status s = makeDirectories(root, 0750); !s.ok()) {
        return Error{"run root " + s.error()};
    }
    const std::string rootReal = canonical(root);
    if (rootReal.empty()) {
        return Error{"run root " + root + ": " + std::strerror(errno)};
    }
    std::string rel = requested.empty() ? fallback : requested;
    if (!rel.empty() && rel[0] == '/') {
        // Absolute: allowed only when it names a place inside the root (lexically and really).
        std::string rootPrefix = rootReal;
        if (isUnder(rel, root)) {
            rel = rel.substr(root.size());
        } else if (isUnder(rel, rootPrefix)) {
            rel = rel.substr(rootPrefix.size());
        } else {
            return Error{"workdir '" + requested + "' is an absolute path outside the run root " +
                         rootReal};
        }
    }
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= rel.size()) {
        std::size_t next = rel.find('/', pos);
        if (next == std::string::npos) {
            next = rel.size();
        }
        const std::string part = rel.substr(pos, next - pos);
        pos = next + 1;
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            return Error{"workdir '" + requested +
                         "' contains '..'; it must stay under the run root"};
        }
        parts.push_back(part);
    }
    if (parts.empty()) {
        return Error{"workdir '" + requested + "' names the run root itself; use a subdirectory"};
    }
    std::size_t total = rootReal.size();
    for (const auto& part : parts) {
        total += 1 + part.size();
    }
    if (total >= PATH_MAX) {
        return Error{"workdir: the path under the run root " + rootReal + " would be " +
                     std::to_string(total) + " bytes long, more than the system's PATH_MAX (" +
                     std::to_string(PATH_MAX) + ")"};
    }
    std::string cur = rootReal;
    for (const auto& part : parts) {
        const std::string next = cur + "/" + part;
        if (::mkdir(next.c_str(), 0750) != 0 && errno != EEXIST) {
            return Error{"workdir " + next + ": cannot create: " + std::strerror(errno)};
        }
        // Resolve before descending, so nothing is ever created outside the root.
        const std::string real = canonical(next);
        if (real.empty()) {
            return Error{"workdir " + next + ": " + std::strerror(errno) +
                         " (a dangling symlink?)"};
        }
        if (!isUnder(real, rootReal)) {
            return Error{"workdir '" + requested + "': component '" + part + "' resolves to " +
                         real + ", outside the run root " + rootReal + " (symlink escape)"};
        }
        struct stat st {};
        if (::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            return Error{"workdir " + next + ": not a directory"};
        }
        cur = real;
    }
    return cur;
}

Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        return Error{tmp + ": " + std::strerror(errno)};
    }
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            return Error{tmp + ": " + std::strerror(err)};
        }
        done += static_cast<std::size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return Error{path + ": " + std::strerror(err)};
    }
    return {};
}

}  // namespace runplane::agent
