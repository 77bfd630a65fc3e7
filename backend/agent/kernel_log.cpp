// Host OOM kills from the kernel log, matched to runs by pid (kernel_log.h).
#include "backend/agent/kernel_log.h"

#include <fcntl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

constexpr int kSyslogActionReadAll = 3;
constexpr int kSyslogActionSizeBuffer = 10;

// `key=value` out of the comma-separated `oom-kill:` record.
std::string fieldOf(std::string_view record, std::string_view key) {
    std::size_t from = 0;
    while (from <= record.size()) {
        auto comma = record.find(',', from);
        if (comma == std::string_view::npos) {
            comma = record.size();
        }
        const std::string_view piece = record.substr(from, comma - from);
        if (piece.size() > key.size() && piece.starts_with(key) && piece[key.size()] == '=') {
            return std::string(piece.substr(key.size() + 1, 256));
        }
        from = comma + 1;
    }
    return "";
}

void splitLines(std::string_view text, std::vector<std::string>& out) {
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            nl = text.size();
        }
        if (nl > start) {
            out.emplace_back(text.substr(start, nl - start));
        }
        start = nl + 1;
    }
}

class KmsgSource final : public KernelLogSource {
  public:
    KmsgSource(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
    ~KmsgSource() override { ::close(m_fd); }
    KmsgSource(const KmsgSource&) = delete;
    KmsgSource& operator=(const KmsgSource&) = delete;

    std::vector<std::string> poll() override {
        std::vector<std::string> lines;
        std::size_t total = 0;
        char buf[8192];
        while (total < kMaxPollBytes) {
            const ssize_t n = ::read(m_fd, buf, sizeof buf);
            if (n < 0) {
                if (errno == EINTR || errno == EPIPE) {
                    continue;  // EPIPE: records overwritten before we read them; go on
                }
                break;  // EAGAIN: nothing more now
            }
            if (n == 0) {
                break;
            }
            total += static_cast<std::size_t>(n);
            // One record per read: `prefix;text\n` then ` KEY=value` continuation lines.
            std::string_view rec(buf, static_cast<std::size_t>(n));
            const auto semi = rec.find(';');
            if (semi == std::string_view::npos) {
                continue;
            }
            rec.remove_prefix(semi + 1);
            const auto nl = rec.find('\n');
            lines.emplace_back(rec.substr(0, nl));
        }
        return lines;
    }
    std::string describe() const override { return m_path; }

  private:
    int m_fd;
    std::string m_path;
};

class KernelRingSource final : public KernelLogSource {
  public:
    explicit KernelRingSource(std::string last) : m_last(std::move(last)) {}

    static Result<std::string> readRing() {
        int size = ::klogctl(kSyslogActionSizeBuffer, nullptr, 0);
        if (size <= 0) {
            size = 1 << 18;
        }
        std::string buf(static_cast<std::size_t>(std::min(size, 1 << 24)), '\0');
        const int n = ::klogctl(kSyslogActionReadAll, buf.data(), static_cast<int>(buf.size()));
        if (n < 0) {
            return Error{std::string("syslog(2) READ_ALL: ") + std::strerror(errno)};
        }
        buf.resize(static_cast<std::size_t>(n));
        return buf;
    }

    std::vector<std::string> poll() override {
        std::vector<std::string> lines;
        auto ring = readRing();
        if (!ring) {
            return lines;
        }
        std::vector<std::string> all;
        splitLines(*ring, all);
        // The lines after the last one seen; all of them when it has left the ring.
        std::size_t from = 0;
        for (std::size_t i = all.size(); i-- > 0;) {
            if (all[i] == m_last) {
                from = i + 1;
                break;
            }
        }
        std::size_t total = 0;
        for (std::size_t i = from; i < all.size() && total < kMaxPollBytes; ++i) {
            total += all[i].size();
            lines.push_back(all[i]);
        }
        if (!lines.empty()) {
            m_last = lines.back();
        }
        return lines;
    }
    std::string describe() const override { return "syslog(2)"; }

  private:
    std::string m_last;
};

class FileSource final : public KernelLogSource {
  public:
    FileSource(std::string path, std::uint64_t offset, ino_t inode)
        : m_path(std::move(path)), m_offset(offset), m_inode(inode) {}

    std::vector<std::string> poll() override {
        std::vector<std::string> lines;
        const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return lines;
        }
        struct stat st {};
        if (::fstat(fd, &st) == 0) {
            if (st.st_ino != m_inode || static_cast<std::uint64_t>(st.st_size) < m_offset) {
                m_inode = st.st_ino;  // rotated or truncated: the new file from its start
                m_offset = 0;
                m_partial.clear();
            }
        }
        std::string buf(kMaxPollBytes, '\0');
        const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(m_offset));
        ::close(fd);
        if (n <= 0) {
            return lines;
        }
        buf.resize(static_cast<std::size_t>(n));
        m_offset += static_cast<std::uint64_t>(n);
        m_partial += buf;
        const auto lastNl = m_partial.rfind('\n');
        if (lastNl == std::string::npos) {
            if (m_partial.size() > kMaxPollBytes) {
                m_partial.clear();  // no kernel line is this long
            }
            return lines;
        }
        splitLines(std::string_view(m_partial).substr(0, lastNl), lines);
        m_partial.erase(0, lastNl + 1);
        return lines;
    }
    std::string describe() const override { return m_path; }

  private:
    std::string m_path;
    std::uint64_t m_offset;
    ino_t m_inode;
    std::string m_partial;
};

}  // namespace

std::optional<KernelOomKill> parseKernelOomLine(std::string_view line) {
    if (line.size() > 64 * 1024) {
        return std::nullopt;
    }
    KernelOomKill kill;
    if (const auto p = logfmt::find(line, "oom-kill:"); p != std::string_view::npos) {
        const std::string_view rec = line.substr(p + 9);
        const std::string pid = fieldOf(rec, "pid");
        if (pid.empty() || pid.size() > 10 ||
            pid.find_first_not_of("0123456789") != std::string::npos) {
            return std::nullopt;
        }
        kill.pid = std::stoll(pid);
        kill.name = fieldOf(rec, "task");
        if (auto c = fieldOf(rec, "constraint"); !c.empty()) {
            kill.attrs["constraint"] = c;
        }
        if (auto m = fieldOf(rec, "task_memcg"); !m.empty()) {
            kill.attrs["memcg"] = m;
        }
        return kill;
    }
    // The `Killed process` line: the same reader as a run's own output (oom.cpp).
    LineView view;
    view.text = line;
    view.body = line;
    ParsedLogLine parsed;
    if (!recognizeHostOomKernel(view, parsed) || parsed.events.empty()) {
        return std::nullopt;
    }
    auto& attrs = parsed.events.front().attrs;
    const std::string& pid = attrs["pid"];
    if (pid.empty() || pid.size() > 10) {
        return std::nullopt;
    }
    kill.pid = std::stoll(pid);
    kill.name = attrs["name"];
    kill.killedLine = true;
    for (const char* key : {"rss_bytes", "anon_rss_bytes"}) {
        if (auto it = attrs.find(key); it != attrs.end()) {
            kill.attrs[key] = it->second;
        }
    }
    if (logfmt::find(line, "Memory cgroup out of memory") != std::string_view::npos) {
        kill.attrs["constraint"] = "CONSTRAINT_MEMCG";
    }
    return kill;
}

Result<std::unique_ptr<KernelLogSource>> openKmsg(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return Error{path + ": " + std::strerror(errno)};
    }
    if (::lseek(fd, 0, SEEK_END) < 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        return Error{path + ": seek to its end: " + why};
    }
    return std::unique_ptr<KernelLogSource>(std::make_unique<KmsgSource>(fd, path));
}

Result<std::unique_ptr<KernelLogSource>> openKernelRing() {
    auto ring = KernelRingSource::readRing();
    if (!ring) {
        return Error{ring.error()};
    }
    std::vector<std::string> lines;
    splitLines(*ring, lines);
    return std::unique_ptr<KernelLogSource>(
        std::make_unique<KernelRingSource>(lines.empty() ? std::string() : lines.back()));
}

Result<std::unique_ptr<KernelLogSource>> openKernelLogFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error{path + ": " + std::strerror(errno)};
    }
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    ::close(fd);
    if (rc != 0 || !S_ISREG(st.st_mode)) {
        return Error{path + ": not a regular file"};
    }
    return std::unique_ptr<KernelLogSource>(
        std::make_unique<FileSource>(path, static_cast<std::uint64_t>(st.st_size), st.st_ino));
}

Result<std::unique_ptr<KernelLogSource>> openKernelLog(const std::string& spec) {
    if (spec == "off") {
        return std::unique_ptr<KernelLogSource>();
    }
    if (spec != "auto") {
        return openKernelLogFile(spec);
    }
    auto kmsg = openKmsg();
    if (kmsg) {
        return kmsg;
    }
    auto ring = openKernelRing();
    if (ring) {
        return ring;
    }
    return Error{kmsg.error() + "; " + ring.error()};
}

void KernelOomMatcher::notePid(std::int64_t pid, const std::string& runId, std::int64_t nowNs) {
    auto& seen = m_pids[pid];
    seen.runId = runId;
    seen.lastNs = nowNs;
}

std::vector<std::pair<std::string, LogEvent>> KernelOomMatcher::emit(const KernelOomKill& kill,
                                                                     const std::string& via) {
    std::vector<std::pair<std::string, LogEvent>> out;
    const auto it = m_pids.find(kill.pid);
    if (it == m_pids.end()) {
        return out;  // not a process of any run
    }
    const std::string pid = std::to_string(kill.pid);
    LogEvent ev = logfmt::makeEvent(LogEventKind::HostOom, "");
    ev.attrs = kill.attrs;
    ev.attrs["source"] = "kernel_log";
    ev.attrs["via"] = via;
    ev.attrs["pid"] = pid;
    ev.attrs["name"] = kill.name;
    std::string summary = "host OOM: kernel killed pid " + pid + " (" + kill.name;
    if (auto rss = kill.attrs.find("rss_bytes"); rss != kill.attrs.end()) {
        summary += ", " + logfmt::formatSize(std::strtod(rss->second.c_str(), nullptr)) + " RSS";
    }
    summary += ")";
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.emplace_back(it->second.runId, std::move(ev));
    return out;
}

std::vector<std::pair<std::string, LogEvent>> KernelOomMatcher::match(
    const std::vector<std::string>& lines, std::int64_t nowNs, const std::string& via) {
    std::vector<std::pair<std::string, LogEvent>> out;
    auto append = [&out](std::vector<std::pair<std::string, LogEvent>> more) {
        for (auto& e : more) {
            out.push_back(std::move(e));
        }
    };
    // `oom-kill:` lines held since the last call whose `Killed process` line never came.
    for (const auto& [pid, kill] : m_pendingOomKill) {
        append(emit(kill, via));
    }
    m_pendingOomKill.clear();
    for (const auto& line : lines) {
        auto kill = parseKernelOomLine(line);
        if (!kill) {
            continue;
        }
        if (!kill->killedLine) {
            if (m_pendingOomKill.size() < 1024) {
                m_pendingOomKill[kill->pid] = std::move(*kill);
            }
            continue;
        }
        if (auto held = m_pendingOomKill.find(kill->pid); held != m_pendingOomKill.end()) {
            for (const auto& [k, v] : held->second.attrs) {
                kill->attrs.try_emplace(k, v);
            }
            m_pendingOomKill.erase(held);
        }
        append(emit(*kill, via));
    }
    // Forget pids not seen for a while (their numbers get reused).
    for (auto it = m_pids.begin(); it != m_pids.end();) {
        it = nowNs - it->second.lastNs > kPidMemoryNs ? m_pids.erase(it) : std::next(it);
    }
    return out;
}

}  // namespace runplane::agent
