#include "common/credential_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace runplane {
namespace {

const char* kindOf(mode_t mode) {
    if (S_ISDIR(mode)) {
        return "a directory";
    }
    if (S_ISFIFO(mode)) {
        return "a FIFO (named pipe)";
    }
    if (S_ISCHR(mode)) {
        return "a character device";
    }
    if (S_ISBLK(mode)) {
        return "a block device";
    }
    if (S_ISSOCK(mode)) {
        return "a socket";
    }
    return "not a regular file";
}

}  // namespace

Result<std::string> readCredentialFile(const std::string& path, std::size_t maxBytes,
                                       const std::string& what) {
    const std::string name = (what.empty() ? "" : what + " ") + path;
    if (path.empty()) {
        return Error{name + ": empty path"};
    }
    if (path.find('\0') != std::string::npos) {
        return Error{name + ": the path contains a NUL byte"};
    }
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        return Error{name + ": cannot open: " + std::strerror(errno)};
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return Error{name + ": cannot stat: " + std::strerror(err)};
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error{name + ": " + kindOf(st.st_mode) + ", not a regular file; give a file"};
    }
    if (static_cast<std::uint64_t>(st.st_size) > maxBytes) {
        ::close(fd);
        return Error{name + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(maxBytes) + " allowed for this file"};
    }
    std::string out;
    out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[8192];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return Error{name + ": cannot read: " + std::strerror(err)};
        }
        if (n == 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > maxBytes) {
            ::close(fd);
            return Error{name + ": grew past the " + std::to_string(maxBytes) +
                         " bytes allowed for this file while it was read"};
        }
    }
    ::close(fd);
    return out;
}

}  // namespace runplane
