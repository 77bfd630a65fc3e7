// Kernel log lines for the diagnosis (kernel_log.h).
#include "backend/diagnosis/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>

namespace runplane::diagnosis {
namespace {

constexpr std::size_t kMaxText = 512;

// The number after `key` in `s` (digits only), or -1.
std::int64_t numberAfter(std::string_view s, std::string_view key) {
    const auto at = s.find(key);
    if (at == std::string_view::npos) {
        return -1;
    }
    std::size_t i = at + key.size();
    while (i < s.size() && s[i] == ' ') {
        ++i;
    }
    std::int64_t n = 0;
    bool any = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        n = n * 10 + (s[i] - '0');
        any = true;
        ++i;
    }
    return any ? n : -1;
}

void keep(std::deque<KernelLine>& lines, KernelLine line, std::size_t maxLines, bool& truncated) {
    lines.push_back(std::move(line));
    if (lines.size() > maxLines) {
        lines.pop_front();
        truncated = true;
    }
}

}  // namespace

const std::vector<KernelLineRule>& kernelLineRules() {
    // NVIDIA's driver: "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, ...".
    // The OOM killer: "Out of memory: Killed process 15784 (python3) ..." (older kernels print
    // "Killed process N (...)" on a line of its own); a cgroup's: "Memory cgroup out of memory:
    // Killed process ...". A crash: "python[1234]: segfault at 0 ip ... error 4 in ...".
    static const std::vector<KernelLineRule> rules = {
        {"xid", "NVRM: Xid"},
        {"oom_kill", "Killed process"},
        {"segfault", "segfault at"},
        {"segfault", "general protection fault"},
        {"gpu_lost", "fallen off the bus"},
    };
    return rules;
}

std::optional<KernelLine> classifyKernelMessage(std::string_view message) {
    for (const auto& rule : kernelLineRules()) {
        if (message.find(rule.needle) == std::string_view::npos) {
            continue;
        }
        KernelLine line;
        line.kind = rule.kind;
        line.text = std::string(message.substr(0, kMaxText));
        const std::string kind = rule.kind;
        if (kind == "xid") {
            // "NVRM: Xid (PCI:0000:cb:00): 109, pid=..."
            const auto close = message.find("): ");
            if (close != std::string_view::npos) {
                line.xid = numberAfter(message.substr(close), "): ");
            }
            line.pid = numberAfter(message, "pid=");
        } else if (kind == "oom_kill") {
            line.pid = numberAfter(message, "Killed process ");
        } else if (kind == "segfault") {
            const auto open = message.find('[');
            if (open != std::string_view::npos) {
                line.pid = numberAfter(message.substr(open), "[");
            }
        }
        if (line.pid < 0) {
            line.pid = 0;
        }
        return line;
    }
    return std::nullopt;
}

Result<KernelLogRead> readKmsg(const std::string& path, double sinceBootSeconds,
                               std::size_t maxLines, std::size_t maxRecords) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        std::string why = path + ": " + std::strerror(e);
        if (e == EPERM || e == EACCES) {
            why += " (reading the kernel log needs CAP_SYSLOG or kernel.dmesg_restrict=0)";
        }
        return Error{why};
    }
    KernelLogRead out;
    out.source = path;
    std::deque<KernelLine> kept;
    // Each read returns one record: "prio,seq,usec,flags[,..];message\n" then continuation lines
    // (" KEY=value") that we ignore.
    std::string record(16384, '\0');
    while (out.scanned < maxRecords) {
        const ssize_t n = ::read(fd, record.data(), record.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EPIPE) {  // the record was overwritten while we read: go on
                continue;
            }
            break;  // EAGAIN: everything in the buffer was read
        }
        if (n == 0) {
            break;
        }
        ++out.scanned;
        std::string_view rec(record.data(), static_cast<std::size_t>(n));
        const auto semi = rec.find(';');
        if (semi == std::string_view::npos) {
            continue;
        }
        const std::string_view header = rec.substr(0, semi);
        std::string_view message = rec.substr(semi + 1);
        if (const auto nl = message.find('\n'); nl != std::string_view::npos) {
            message = message.substr(0, nl);
        }
        // header: prio,seq,usec,...
        const auto c1 = header.find(',');
        const auto c2 = c1 == std::string_view::npos ? c1 : header.find(',', c1 + 1);
        if (c2 == std::string_view::npos) {
            continue;
        }
        const std::string usec(header.substr(c2 + 1, header.find(',', c2 + 1) - c2 - 1));
        const double t = std::strtod(usec.c_str(), nullptr) / 1e6;
        if (t < sinceBootSeconds) {
            continue;
        }
        if (auto line = classifyKernelMessage(message)) {
            line->bootSeconds = t;
            keep(kept, std::move(*line), maxLines, out.truncated);
        }
    }
    ::close(fd);
    out.lines.assign(kept.begin(), kept.end());
    return out;
}

KernelLogRead filterDmesgText(std::string_view text, double sinceBootSeconds,
                              std::size_t maxLines) {
    KernelLogRead out;
    out.source = "dmesg";
    std::deque<KernelLine> kept;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) {
            nl = text.size();
        }
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++out.scanned;
        double t = 0;
        if (!line.empty() && line.front() == '[') {
            const auto close = line.find(']');
            if (close == std::string_view::npos) {
                continue;
            }
            t = std::strtod(std::string(line.substr(1, close - 1)).c_str(), nullptr);
            line = line.substr(close + 1);
            while (!line.empty() && line.front() == ' ') {
                line.remove_prefix(1);
            }
        }
        if (t < sinceBootSeconds) {
            continue;
        }
        if (auto k = classifyKernelMessage(line)) {
            k->bootSeconds = t;
            keep(kept, std::move(*k), maxLines, out.truncated);
        }
    }
    out.lines.assign(kept.begin(), kept.end());
    return out;
}

}  // namespace runplane::diagnosis
