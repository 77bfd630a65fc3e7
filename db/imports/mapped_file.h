#pragma once
// A read-only mapping of a whole file, for the importers' readers.
#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "common/result.h"

namespace runplane::imports {

/// A read-only mapping of a whole file.
class MappedFile {
  public:
    static Result<MappedFile> open(const std::string& path) {
        MappedFile f;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return Error{path + ": cannot open: " + std::strerror(errno)};
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            return Error{path + ": not a regular file"};
        }
        f.m_size = static_cast<std::size_t>(st.st_size);
        if (f.m_size > 0) {
            void* p = ::mmap(nullptr, f.m_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                ::close(fd);
                return Error{path + ": cannot map: " + std::strerror(errno)};
            }
            ::madvise(p, f.m_size, MADV_SEQUENTIAL);
            f.m_data = static_cast<const unsigned char*>(p);
        }
        ::close(fd);
        return f;
    }
    MappedFile() = default;
    MappedFile(MappedFile&& o) noexcept
        : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
    MappedFile& operator=(MappedFile&&) = delete;
    MappedFile(const MappedFile&) = delete;
    ~MappedFile() {
        if (m_data != nullptr) {
            ::munmap(const_cast<unsigned char*>(m_data), m_size);
        }
    }
    const unsigned char* data() const { return m_data; }
    std::size_t size() const { return m_size; }

  private:
    const unsigned char* m_data = nullptr;
    std::size_t m_size = 0;
};

}  // namespace runplane::imports
