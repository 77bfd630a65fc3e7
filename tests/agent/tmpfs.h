#pragma once
// Test helper: a small tmpfs mounted on a fresh directory, for disk-full tests. Mounting needs
// CAP_SYS_ADMIN (root here and in CI); ok() is false with the reason in error() otherwise, and
// tests GTEST_SKIP with it. Unmounted lazily on destruction (supervisors may still hold files).
// fill() writes a file until the filesystem reports ENOSPC.

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace runplane::agent::testing {

class Tmpfs {
  public:
    Tmpfs(std::string path, const std::string& size) : m_path(std::move(path)) {
        ::mkdir(m_path.c_str(), 0700);
        const std::string opts = "size=" + size + ",mode=0700";
        if (::mount("tmpfs", m_path.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
            m_error = "cannot mount a " + size + " tmpfs on " + m_path + " (" +
                      std::strerror(errno) +
                      "); disk-full tests need root or CAP_SYS_ADMIN, as in CI";
            return;
        }
        m_mounted = true;
    }
    ~Tmpfs() {
        if (m_mounted) {
            ::umount2(m_path.c_str(), MNT_DETACH);
        }
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    bool ok() const { return m_mounted; }
    const std::string& error() const { return m_error; }
    const std::string& path() const { return m_path; }

    /// Appends zeros to `name` until the disk is full; returns the bytes written.
    std::size_t fill(const std::string& name) const {
        const int fd =
            ::open((m_path + "/" + name).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
            return 0;
        }
        static const char zeros[4096] = {};
        std::size_t total = 0;
        for (std::size_t chunk : {sizeof(zeros), std::size_t{512}, std::size_t{1}}) {
            while (true) {
                const ssize_t n = ::write(fd, zeros, chunk);
                if (n <= 0) {
                    break;
                }
                total += static_cast<std::size_t>(n);
            }
        }
        ::close(fd);
        return total;
    }

  private:
    std::string m_path;
    std::string m_error;
    bool m_mounted = false;
};

}  // namespace runplane::agent::testing
