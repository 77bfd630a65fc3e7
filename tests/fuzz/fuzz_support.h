#pragma once
// Helpers shared by the fuzz targets: a reader that turns fuzzer bytes into structured values
// (ints, short strings, the rest) without ever reading past the end.

#include <google/protobuf/stubs/logging.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace runplane::fuzz {

class ByteReader {
  public:
    ByteReader(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
    bool empty() const { return m_pos >= m_size; }
    std::uint8_t u8() { return empty() ? 0 : m_data[m_pos++]; }
    std::uint64_t u64() {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) {
            v = (v << 8) | u8();
        }
        return v;
    }
    /// A string of up to 255 bytes (its length is the first byte).
    std::string shortString() { return bytes(u8()); }
    /// A string of up to 65535 bytes (two length bytes).
    std::string longString() {
        const std::size_t n = (std::size_t{u8()} << 8) | u8();
        return bytes(n);
    }
    std::string rest() { return bytes(m_size - m_pos); }

  private:
    std::string bytes(std::size_t n) {
        const std::size_t left = m_pos < m_size ? m_size - m_pos : 0;
        n = n < left ? n : left;
        std::string out(reinterpret_cast<const char*>(m_data + m_pos), n);
        m_pos += n;
        return out;
    }
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

/// Drops protobuf's log lines for the rest of the process. Parsing fuzzed bytes writes "String
/// field ... contains invalid UTF-8" to stderr for many inputs; the lines carry nothing the
/// target checks, and writing them slows every worker and fills its log.
inline void quietProtobuf() {
    static const bool done = [] {
        google::protobuf::SetLogHandler(nullptr);
        return true;
    }();
    (void)done;
}

/// A fresh scratch folder for this process, `/dev/shm/runplane-fuzz-<name>-<pid>` (tmpfs: the
/// targets write SQLite files per input), after removing those of processes that are gone: a
/// fuzzer or replay that exits never cleans up behind itself, so each run removes its
/// predecessors' folders instead.
inline std::string scratchDir(std::string_view name) {
    namespace fs = std::filesystem;
    const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    const std::string prefix = "runplane-fuzz-" + std::string(name) + "-";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
        const std::string leaf = entry.path().filename().string();
        if (!leaf.starts_with(prefix)) {
            continue;
        }
        const std::string pidText = leaf.substr(prefix.size());
        if (pidText.empty() || pidText.find_first_not_of("0123456789") != std::string::npos ||
            pidText.size() > 9) {
            continue;
        }
        const pid_t pid = static_cast<pid_t>(std::stol(pidText));
        if (pid != ::getpid() && ::kill(pid, 0) == -1 && errno == ESRCH) {
            fs::remove_all(entry.path(), ec);
        }
    }
    const fs::path dir = base / (prefix + std::to_string(::getpid()));
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    return dir.string();
}

}  // namespace runplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
